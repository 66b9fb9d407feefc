/**
 * Milestone moves of section 3 that the workspace makes: fund in the sandbox (finance),
 * submit evidence and dispute (operator). Each is one compare-and-set `transition` from the
 * state table (states.ts) on the locked deal, with its event in the same transaction.
 * Sandbox funding moves no money (spec 4.5 rule 4); live funding is confirmed by staff.
 */
import { clock } from '../clock.js';
import { allOfDeal } from '../documents/service.js';
import { inTransaction, type Db } from '../db.js';
import type { WorkspaceActor } from '../enterprise/access.js';
import type { WorkspaceRow } from '../enterprise/repo.js';
import { dealErrors } from './errors.js';
import { dealEvent } from './events.js';
import { mailApprovalNeeded } from './mail.js';
import * as repo from './repo.js';
import type { DealWithNames, MilestoneRow } from './repo.js';
import { MILESTONE_TRANSITIONS, dealStatus, type DealStatus, type MilestoneTransitionName } from './states.js';
import { lockDeal } from './lock.js';
import { detail, type DealDetail } from './read.js';

/** The one compare-and-set of a milestone move: 409 CONCURRENT_MODIFICATION when it is not in a from-state (any more). */
export async function transition(trx: Db, milestone: MilestoneRow, name: MilestoneTransitionName, changes: Partial<MilestoneRow>): Promise<MilestoneRow> {
  const moved = await repo.moveMilestone(trx, milestone.id, MILESTONE_TRANSITIONS[name], { ...changes, updated_at: clock.now() });
  if (!moved) throw dealErrors.concurrent();
  return moved;
}

async function milestoneOf(trx: Db, actor: WorkspaceActor, dealId: string, milestoneId: string): Promise<{ deal: DealWithNames; milestones: MilestoneRow[]; milestone: MilestoneRow }> {
  const { deal, milestones } = await lockDeal(trx, actor, dealId);
  const milestone = milestones.find((m) => m.id === milestoneId);
  if (!milestone) throw dealErrors.milestoneNotFound();
  return { deal, milestones, milestone };
}

export interface FundInput {
  method: 'qris' | 'va' | 'ewallet' | 'wire' | 'sandbox';
  reference?: string;
}

export interface Funded {
  milestone: MilestoneRow;
  dealStatus: DealStatus;
}

/** POST .../fund (sandbox only): 403 LIVE_FUNDING_IS_PLATFORM_CONFIRMED on a live workspace, 409 LIVE_DEAL_IN_SANDBOX for a live deal. */
export async function fundMilestone(trx: Db | undefined, actor: WorkspaceActor, workspace: WorkspaceRow, dealId: string, milestoneId: string, input: FundInput): Promise<Funded> {
  if (!workspace.is_sandbox) throw dealErrors.liveFunding();
  return inTransaction(trx, async (t) => {
    const { deal, milestones, milestone } = await milestoneOf(t, actor, dealId, milestoneId);
    if (!deal.is_test) throw dealErrors.liveDealInSandbox();
    // Whatever method the body names, sandbox money is recorded as sandbox (4.4).
    const moved = await transition(t, milestone, 'fund', { funded_at: clock.now(), funding_method: 'sandbox', funding_reference: input.reference ?? null });
    await dealEvent(t, actor, deal, 'milestone.funded', `Milestone ${moved.sequence_no} of deal ${deal.reference} funded (sandbox)`, {
      entityType: 'milestone',
      entityId: moved.id,
      amount: moved.funding_amount,
    });
    return { milestone: moved, dealStatus: dealStatus(deal, milestones.map((m) => (m.id === moved.id ? moved : m))) };
  });
}

export interface EvidenceInput {
  summary: string;
  document_ids?: string[];
}

/** POST .../submit-evidence (funded or revision_requested): the summary and documents of this deal only. */
export async function submitEvidence(trx: Db | undefined, actor: WorkspaceActor, workspace: WorkspaceRow, dealId: string, milestoneId: string, input: EvidenceInput): Promise<DealDetail> {
  return inTransaction(trx, async (t) => {
    const { deal, milestone } = await milestoneOf(t, actor, dealId, milestoneId);
    // Only documents of this deal (same workspace) may be named (D7); kept in evidence_document_ids (jsonb).
    const documentIds = input.document_ids ?? [];
    if (!(await allOfDeal(t, deal.workspace_id, deal.id, documentIds))) throw dealErrors.documentNotOfDeal();
    const moved = await transition(t, milestone, 'submit_evidence', {
      evidence_summary: input.summary,
      // A jsonb column takes JSON text (pg would send a JS array as a Postgres array literal); it reads back as the array.
      evidence_document_ids: JSON.stringify(documentIds) as unknown as string[],
      evidence_submitted_at: clock.now(),
      evidence_submitted_by: actor.userId,
      approval_round: milestone.approval_round + 1,
    });
    // Each submission opens a new approval round with its empty slots (1, or 2 for four-eyes).
    await repo.openApprovalRound(t, moved);
    await dealEvent(t, actor, deal, 'milestone.evidence_submitted', `Evidence submitted for milestone ${moved.sequence_no} of deal ${deal.reference}`, {
      entityType: 'milestone',
      entityId: moved.id,
    });
    await mailApprovalNeeded(t, deal, moved, actor.userId);
    return detail(t, workspace, deal.id);
  });
}

export interface DisputeInput {
  reason: string;
}

/** POST .../dispute (funded, evidence_submitted or approved): the deal becomes disputed. */
export async function disputeMilestone(trx: Db | undefined, actor: WorkspaceActor, workspace: WorkspaceRow, dealId: string, milestoneId: string, input: DisputeInput): Promise<DealDetail> {
  return inTransaction(trx, async (t) => {
    const { deal, milestone } = await milestoneOf(t, actor, dealId, milestoneId);
    const moved = await transition(t, milestone, 'dispute', { disputed_at: clock.now(), dispute_reason: input.reason });
    await dealEvent(t, actor, deal, 'milestone.disputed', `Milestone ${moved.sequence_no} of deal ${deal.reference} disputed`, {
      entityType: 'milestone',
      entityId: moved.id,
      amount: moved.amount,
    });
    return detail(t, workspace, deal.id);
  });
}
