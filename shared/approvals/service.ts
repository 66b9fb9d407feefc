/**
 * Enterprise approvals (enterprise spec 2 Approval item, 3 milestone table, 4.6; D7 Decide).
 *
 * Each submit-evidence opens an approval round (deals/moves.ts): `approvals_required`
 * pending slots (1, or 2 for a four-eyes milestone; fixed at activation, never recomputed
 * here). A decision is one row of milestone_decisions, one per person and round, final
 * once saved:
 *   - approve fills the round's lowest pending slot; the last slot filled approves the
 *     milestone (milestone.approved), an earlier one is recorded (milestone.approval_recorded)
 *     and the milestone stays evidence_submitted;
 *   - reject or revision sends the milestone back to revision_requested and closes the round:
 *     its approved slots stay as they were, the slots nobody filled are dropped (so the
 *     milestone's `approvals` show what happened in that round); the next submit-evidence
 *     opens a fresh round needing the full count again, where anyone may decide anew.
 * The evidence submitter never decides (403 FORBIDDEN, whatever their role); a second
 * decision of one person in a round is 409 INVALID_STATE (the unique constraint
 * milestone_decisions_once is the backstop); a milestone not in evidence_submitted is 409
 * CONCURRENT_MODIFICATION, as every milestone move answers.
 *
 * A decision locks as every deal write does (workspace row, then the deal row), so two
 * decisions on one milestone run one after the other: of two approvals of a one-approval
 * milestone the second finds it approved (409); of two different approvers of a four-eyes
 * milestone the second fills the second slot and approves it.
 */
import { clock } from '../clock.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { actorUnderLock, type WorkspaceActor } from '../enterprise/access.js';
import { feedPage, type EventRow } from '../enterprise/events-repo.js';
import { lockWorkspace } from '../enterprise/repo.js';
import { rankOf } from '../enterprise/states.js';
import { dealEvent } from '../deals/events.js';
import { milestoneExtras, type ApprovalSlotRow, type DocumentRow } from '../deals/extras.js';
import { transition } from '../deals/moves.js';
import * as deals from '../deals/repo.js';
import type { DealWithNames, MilestoneRow } from '../deals/repo.js';
import { canMove } from '../deals/states.js';
import { dealErrors } from '../deals/errors.js';
import { evidenceOf } from '../documents/service.js';
import { approvalErrors } from './errors.js';
import * as repo from './repo.js';
import type { ApprovalItemRow, DestinationRow } from './repo.js';
import type { DecideInput, ListQuery } from './schemas.js';

/** The decided list looks this far back (spec 4.6: "decisions in the last 30 days"). */
export const DECIDED_WINDOW_DAYS = 30;
/** Events of the milestone and its deal shown in `how_we_got_here`. */
export const HISTORY_EVENTS = 20;

/** GET /approvals/:milestoneId and the answer of a decision (serialize.ts shapes it). */
export interface ApprovalDetail {
  item: ApprovalItemRow;
  milestone: MilestoneRow;
  /** Every milestone of the deal (progress and what remains). */
  milestones: MilestoneRow[];
  /** Slots of the current round. */
  slots: ApprovalSlotRow[];
  destination: DestinationRow | null;
  /** The milestone's own events and its deal's, newest first. */
  events: EventRow[];
  evidence: DocumentRow[];
}

// ---- Reads -----------------------------------------------------------------------------------

/** GET /approvals: the open queue (oldest evidence first), or with status=decided the rounds decided in the last 30 days (newest decision first). */
export async function listApprovals(actor: WorkspaceActor, q: ListQuery): Promise<repo.Paged<ApprovalItemRow>> {
  if (q.status === 'decided') {
    const since = new Date(clock.nowMs() - DECIDED_WINDOW_DAYS * 86_400_000);
    return repo.decided(db, actor.workspaceId, actor.userId, since, q.page, q.limit);
  }
  return repo.queue(db, actor.workspaceId, actor.userId, q.page, q.limit);
}

/**
 * The overview's needs_you (enterprise spec 4.9): open queue items the caller can decide
 * (finance and above; not their own evidence; not decided by them in this round), oldest
 * first, at most `limit`, with the total. Below finance (a read key acts as a viewer) nothing.
 */
export async function needsYou(actor: WorkspaceActor, limit: number): Promise<repo.Paged<ApprovalItemRow>> {
  if (rankOf(actor.role) < rankOf('finance')) return { rows: [], total: 0 };
  return repo.decidable(db, actor.workspaceId, actor.userId, limit);
}

/** GET /approvals/:milestoneId: a milestone of the workspace in any status; 404 NOT_FOUND otherwise. */
export async function getApproval(actor: WorkspaceActor, milestoneId: string): Promise<ApprovalDetail> {
  return readDetail(db, actor, milestoneId);
}

async function readDetail(trx: Db, actor: WorkspaceActor, milestoneId: string): Promise<ApprovalDetail> {
  const item = isUuid(milestoneId) ? await repo.itemById(trx, actor.workspaceId, actor.userId, milestoneId) : undefined;
  if (!item) throw approvalErrors.notFound();
  const milestones = await deals.milestonesOf(trx, item.deal_id);
  const milestone = milestones.find((m) => m.id === milestoneId)!;
  const extras = await milestoneExtras(trx, [milestone]);
  const destination = await repo.destinationOf(trx, actor.workspaceId, item.counterparty_id);
  const feed = await feedPage(trx, actor.workspaceId, { after: 0, order: 'desc', limit: 100, deal_id: item.deal_id });
  const events = feed.filter((e) => e.entity_id === milestoneId || e.entity_type === 'deal').slice(0, HISTORY_EVENTS);
  const evidence = await evidenceOf(trx, milestone);
  return { item, milestone, milestones, slots: extras.approvals.get(milestoneId) ?? [], destination: destination ?? null, events, evidence };
}

// ---- Decide ----------------------------------------------------------------------------------

/**
 * The milestone's deal found in the caller's workspace and locked in the order of lockDeal
 * (deals/lock.ts): the workspace row, then the deal row; then its milestones. 404 NOT_FOUND
 * for a malformed id or another workspace's milestone.
 */
async function lockMilestone(trx: Db, actor: WorkspaceActor, milestoneId: string): Promise<{ deal: DealWithNames; milestone: MilestoneRow }> {
  if (!isUuid(milestoneId)) throw approvalErrors.notFound();
  await lockWorkspace(trx, actor.workspaceId);
  // Issue 42: the caller's authority again, under the lock member writes take (a demotion, removal or revoked key in flight is seen).
  await actorUnderLock(trx, actor, 'finance');
  const owner = await deals.milestoneOwner(trx, milestoneId);
  const deal = owner && owner.workspace_id === actor.workspaceId ? await deals.dealById(trx, actor.workspaceId, owner.deal_id, true) : undefined;
  if (!deal) throw approvalErrors.notFound();
  const milestone = (await deals.milestonesOf(trx, deal.id)).find((m) => m.id === milestoneId);
  if (!milestone) throw approvalErrors.notFound();
  return { deal, milestone };
}

/** POST /approvals/:milestoneId/decide (finance): approve, reject or revision; answers the detail after the decision. */
export async function decide(trx: Db | undefined, actor: WorkspaceActor, milestoneId: string, input: DecideInput): Promise<ApprovalDetail> {
  return inTransaction(trx, async (t) => {
    const { deal, milestone } = await lockMilestone(t, actor, milestoneId);
    // Section 3: decisions start from evidence_submitted only (approve and both send-backs share it).
    if (!canMove(milestone.status, 'approve')) throw dealErrors.concurrent();
    if (milestone.evidence_submitted_by === actor.userId) throw approvalErrors.submitter();
    const round = milestone.approval_round;
    if ((await repo.decisionOf(t, milestone.id, round, actor.userId)) !== undefined) throw approvalErrors.alreadyDecided();
    const now = clock.now();
    const note = input.note ? input.note : null;
    const saved = await repo.insertDecision(t, {
      milestone_id: milestone.id,
      deal_id: deal.id,
      workspace_id: deal.workspace_id,
      round,
      decision: input.decision,
      decided_by: actor.userId,
      note,
      decided_at: now,
    });
    if (!saved) throw approvalErrors.alreadyDecided();
    if (input.decision === 'approve') await approve(t, actor, deal, milestone, note, now);
    else await sendBack(t, actor, deal, milestone, input.decision);
    return readDetail(t, actor, milestone.id);
  });
}

async function approve(trx: Db, actor: WorkspaceActor, deal: DealWithNames, m: MilestoneRow, note: string | null, now: Date): Promise<void> {
  const slot = await repo.fillLowestSlot(trx, m.id, m.approval_round, actor.userId, note, now);
  // Every evidence_submitted milestone has its round's slots; none pending would mean the round is already full.
  if (!slot) throw dealErrors.concurrent();
  const where = `milestone ${m.sequence_no} of deal ${deal.reference}`;
  if ((await repo.pendingSlots(trx, m.id, m.approval_round)) === 0) {
    await transition(trx, m, 'approve', { approved_at: now });
    await dealEvent(trx, actor, deal, 'milestone.approved', `Approved ${where}`, { entityType: 'milestone', entityId: m.id, amount: m.amount });
    return;
  }
  await deals.updateMilestone(trx, m.id, { updated_at: now });
  await dealEvent(trx, actor, deal, 'milestone.approval_recorded', `Approval ${slot.slot} of ${m.approvals_required} recorded for ${where}`, {
    entityType: 'milestone',
    entityId: m.id,
    amount: m.amount,
  });
}

async function sendBack(trx: Db, actor: WorkspaceActor, deal: DealWithNames, m: MilestoneRow, decision: 'reject' | 'revision'): Promise<void> {
  await transition(trx, m, 'request_revision', {});
  await repo.dropPendingSlots(trx, m.id, m.approval_round);
  const where = `milestone ${m.sequence_no} of deal ${deal.reference}`;
  const [event, summary] = decision === 'reject' ? ['milestone.rejected', `Rejected ${where}`] : ['milestone.revision_requested', `Revision requested for ${where}`];
  await dealEvent(trx, actor, deal, event, summary, { entityType: 'milestone', entityId: m.id });
}
