/**
 * Enterprise deals (enterprise spec 2 Deal, Milestone, Deal fee; 3; 4.4; D7): creating a
 * deal from milestones or a template with its fee priced at creation, reading and listing
 * with the status and totals computed from milestones, draft edits that re-spread the fee
 * with the rate taken at creation, activation (the fee freezes; a live workspace whose
 * counterparty is not verified waits in terms_review), and cancellation. Milestone moves
 * (fund, evidence, dispute) are in moves.ts; what other features call when a workspace goes
 * live or a counterparty is verified is in lifecycle.ts. Every write appends its event in
 * the same transaction; all SQL is in repo.ts.
 */
import { clock } from '../clock.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import type { WorkspaceActor } from '../enterprise/access.js';
import { counterpartyById } from '../enterprise/counterparties-repo.js';
import { lockWorkspace, type WorkspaceRow } from '../enterprise/repo.js';
import { dealErrors } from './errors.js';
import { dealEvent } from './events.js';
import { lockDeal } from './lock.js';
import { detail, type DealDetail } from './read.js';
import { defaultAllocation, pricingFor } from './fee-terms.js';
import { dealFee, resolveAllocation, type Allocation } from './fees.js';
import * as repo from './repo.js';
import type { DealRow, DealWithNames, MilestoneRow, NewMilestone } from './repo.js';
import { MILESTONE_TRANSITIONS, canMove, dealStatus, type DealStatus } from './states.js';
import { templateMilestones } from './templates.js';
import { approvalsFor, dueAt, feeColumns, respread } from './terms.js';

export type { DealDetail } from './read.js';
export { closeSandboxDeals, releaseTermsReview } from './lifecycle.js';
export { disputeMilestone, fundMilestone, submitEvidence, type DisputeInput, type EvidenceInput, type FundInput } from './moves.js';

export const MAX_MILESTONES = 20;

export interface MilestoneInput {
  title: string;
  amount: number;
  required_evidence?: string | null;
  due_offset_days?: number | null;
}

export interface DealInput {
  title: string;
  description?: string | null;
  counterparty_id: string;
  external_ref?: string | null;
  currency: string;
  template_id?: string;
  total_amount?: number;
  milestones?: MilestoneInput[];
  fee_allocation?: Allocation;
  fee_buyer_percent?: number;
}


function allocationOf(input: { fee_allocation?: Allocation; fee_buyer_percent?: number }, fallback: { allocation: Allocation; buyerPercent: number }) {
  const r = resolveAllocation({ allocation: input.fee_allocation, buyerPercent: input.fee_buyer_percent }, fallback);
  if (!r.ok) throw dealErrors.invalidField(input.fee_allocation === undefined ? 'fee_buyer_percent' : 'fee_allocation', r.reason);
  return r;
}

const fourEyes = (w: WorkspaceRow): number => Number(w.four_eyes_threshold);

// ---- Create, read, list ------------------------------------------------------------------

/** POST /deals (D7): milestones, or a template with total_amount; the fee priced now with the workspace's pricing and trailing volume. */
export async function createDeal(trx: Db | undefined, actor: WorkspaceActor, seen: WorkspaceRow, input: DealInput): Promise<DealDetail> {
  return inTransaction(trx, async (t) => {
    // The workspace as it is now, locked: a KYB approval that committed since the request
    // began has closed the sandbox, and a new deal must not be a sandbox deal after that.
    const workspace = (await lockWorkspace(t, seen.id)) ?? seen;
    const cp = isUuid(input.counterparty_id) ? await counterpartyById(t, input.counterparty_id) : undefined;
    if (!cp || cp.workspace_id !== workspace.id) throw dealErrors.counterpartyNotFound();
    const entered: MilestoneInput[] =
      input.template_id !== undefined ? await templateMilestones(t, workspace.id, input.template_id, input.total_amount!) : input.milestones!;
    const alloc = allocationOf(input, defaultAllocation(workspace));
    const isTest = workspace.is_sandbox;
    const { pricing, trailingVolume } = await pricingFor(t, workspace, isTest);
    const fee = dealFee({ amounts: entered.map((m) => m.amount), currency: input.currency, allocation: alloc.allocation, buyerPercent: alloc.buyerPercent, pricing, trailingVolume });
    const now = clock.now();
    const deal = await repo.insertDeal(t, {
      workspace_id: workspace.id,
      reference: await repo.nextReference(t, workspace.id),
      title: input.title,
      description: input.description || null,
      external_ref: input.external_ref || null,
      currency: input.currency,
      counterparty_id: cp.id,
      owner_id: actor.userId,
      is_test: isTest,
      ...feeColumns(fee, alloc.allocation),
      created_at: now,
      updated_at: now,
    });
    const rows: NewMilestone[] = entered.map((m, i) => {
      const s = fee.milestones[i]!;
      return {
        deal_id: deal.id,
        workspace_id: workspace.id,
        sequence_no: i + 1,
        title: m.title,
        required_evidence: m.required_evidence || null,
        amount: m.amount,
        due_at: dueAt(now, m.due_offset_days),
        approvals_required: approvalsFor(m.amount, deal.currency, fourEyes(workspace)),
        buyer_fee: s.buyerFee,
        seller_fee: s.sellerFee,
        funding_amount: s.fundingAmount,
        payout_amount: s.payoutAmount,
        created_at: now,
        updated_at: now,
      };
    });
    await repo.insertMilestones(t, rows);
    await dealEvent(t, actor, deal, 'deal.created', `Deal ${deal.reference} "${deal.title}" created`, { amount: fee.totalAmount });
    return detail(t, workspace, deal.id);
  });
}

export async function getDeal(actor: WorkspaceActor, workspace: WorkspaceRow, dealId: string): Promise<DealDetail> {
  const deal = isUuid(dealId) ? await repo.dealById(db, actor.workspaceId, dealId) : undefined;
  if (!deal) throw dealErrors.dealNotFound();
  return detail(db, workspace, deal.id);
}

export interface DealListItem {
  deal: DealWithNames;
  milestones: MilestoneRow[];
  status: DealStatus;
}

/**
 * GET /deals: newest first, filtered by the deal status and by `q` (title or reference),
 * filtered and paged in SQL (repo.listDealsPage, over the `deal_statuses` rollup); only the
 * page's deals have their milestones read, and each item's status and totals are computed
 * from them as on every other read.
 */
export async function listDeals(actor: WorkspaceActor, q: { status?: DealStatus; q?: string; page: number; limit: number }): Promise<{ items: DealListItem[]; total: number }> {
  const { deals, total } = await repo.listDealsPage(db, actor.workspaceId, { status: q.status, q: q.q, limit: q.limit, offset: (q.page - 1) * q.limit });
  const milestones = await repo.milestonesOfDeals(db, deals.map((d) => d.id));
  const byDeal = new Map<string, MilestoneRow[]>();
  for (const m of milestones) byDeal.set(m.deal_id, [...(byDeal.get(m.deal_id) ?? []), m]);
  const items = deals.map((deal) => {
    const ms = byDeal.get(deal.id) ?? [];
    return { deal, milestones: ms, status: dealStatus(deal, ms) };
  });
  return { items, total };
}

// ---- Draft edits ---------------------------------------------------------------------------

function assertDraft(deal: DealRow, milestones: MilestoneRow[]): void {
  if (deal.cancelled_at !== null || deal.activated_at !== null || deal.fee_frozen || dealStatus(deal, milestones) !== 'draft') throw dealErrors.notDraft();
}

async function writeSpread(trx: Db, deal: DealRow, milestones: MilestoneRow[], allocation?: Allocation, buyerPercent?: number): Promise<void> {
  const spread = respread(deal, milestones, allocation, buyerPercent);
  await repo.updateDeal(trx, deal.id, { ...spread.deal, updated_at: clock.now() });
  for (const m of spread.milestones) await repo.updateMilestone(trx, m.id, { ...m, updated_at: clock.now() });
}

export interface DealPatch {
  title?: string;
  description?: string | null;
  external_ref?: string | null;
  fee_allocation?: Allocation;
  fee_buyer_percent?: number;
}

/** PATCH /deals/:id (draft only): details, and the split (the fee is re-spread with the rate taken at creation). */
export async function updateDeal(trx: Db | undefined, actor: WorkspaceActor, workspace: WorkspaceRow, dealId: string, patch: DealPatch): Promise<DealDetail> {
  return inTransaction(trx, async (t) => {
    const { deal, milestones } = await lockDeal(t, actor, dealId);
    assertDraft(deal, milestones);
    const { fee_allocation, fee_buyer_percent, ...details } = patch;
    // An empty text clears the field, as create stores it: null.
    const cleared = Object.fromEntries(Object.entries(details).map(([k, v]) => [k, v === '' ? null : v]));
    if (Object.keys(cleared).length > 0) await repo.updateDeal(t, deal.id, { ...cleared, updated_at: clock.now() });
    if (fee_allocation !== undefined || fee_buyer_percent !== undefined) {
      const alloc = allocationOf(patch, { allocation: deal.fee_allocation, buyerPercent: deal.fee_buyer_percent });
      await writeSpread(t, deal, milestones, alloc.allocation, alloc.buyerPercent);
    }
    await dealEvent(t, actor, deal, 'deal.updated', `Deal ${deal.reference} updated`);
    return detail(t, workspace, deal.id);
  });
}

/** POST /deals/:id/milestones (draft deals): one more milestone, at the end; the fee re-spread. */
export async function addMilestone(trx: Db | undefined, actor: WorkspaceActor, workspace: WorkspaceRow, dealId: string, input: MilestoneInput): Promise<DealDetail> {
  return inTransaction(trx, async (t) => {
    const { deal, milestones } = await lockDeal(t, actor, dealId);
    assertDraft(deal, milestones);
    if (milestones.length >= MAX_MILESTONES) throw dealErrors.tooManyMilestones(MAX_MILESTONES);
    const now = clock.now();
    await repo.insertMilestones(t, [
      {
        deal_id: deal.id,
        workspace_id: deal.workspace_id,
        sequence_no: milestones.length + 1,
        title: input.title,
        required_evidence: input.required_evidence || null,
        amount: input.amount,
        due_at: dueAt(deal.created_at, input.due_offset_days),
        approvals_required: approvalsFor(input.amount, deal.currency, fourEyes(workspace)),
        // Placeholder shares, replaced by the re-spread below in the same transaction.
        buyer_fee: 0,
        seller_fee: 0,
        funding_amount: input.amount,
        payout_amount: input.amount,
        created_at: now,
        updated_at: now,
      },
    ]);
    await writeSpread(t, deal, await repo.milestonesOf(t, deal.id));
    await dealEvent(t, actor, deal, 'deal.updated', `Milestone "${input.title}" added to deal ${deal.reference}`);
    return detail(t, workspace, deal.id);
  });
}

/** PATCH /deals/:id/milestones/:mid (draft milestones of draft deals); the fee re-spread. */
export async function updateMilestone(
  trx: Db | undefined,
  actor: WorkspaceActor,
  workspace: WorkspaceRow,
  dealId: string,
  milestoneId: string,
  patch: Partial<MilestoneInput>,
): Promise<DealDetail> {
  return inTransaction(trx, async (t) => {
    const { deal, milestones } = await lockDeal(t, actor, dealId);
    const m = milestones.find((x) => x.id === milestoneId);
    if (!m) throw dealErrors.milestoneNotFound();
    if (m.status !== 'draft') throw dealErrors.milestoneNotDraft();
    assertDraft(deal, milestones);
    const changes: Partial<MilestoneRow> = { updated_at: clock.now() };
    if (patch.title !== undefined) changes.title = patch.title;
    if (patch.required_evidence !== undefined) changes.required_evidence = patch.required_evidence || null;
    if (patch.due_offset_days !== undefined) changes.due_at = dueAt(deal.created_at, patch.due_offset_days);
    if (patch.amount !== undefined) changes.approvals_required = approvalsFor(patch.amount, deal.currency, fourEyes(workspace));
    await repo.updateMilestone(t, m.id, changes);
    // A new amount is written by the re-spread, in the same row update as its shares (the shares check needs both).
    if (patch.amount !== undefined) await writeSpread(t, deal, milestones.map((x) => (x.id === m.id ? { ...x, amount: patch.amount! } : x)));
    await dealEvent(t, actor, deal, 'deal.updated', `Milestone ${m.sequence_no} of deal ${deal.reference} updated`);
    return detail(t, workspace, deal.id);
  });
}

// ---- Activate and cancel -------------------------------------------------------------------

/**
 * POST /deals/:id/activate (D7): the fee freezes and every draft milestone awaits funding;
 * on a live workspace whose counterparty is not KYB-verified the deal waits in
 * terms_review (milestones stay draft) until the counterparty is verified (lifecycle.ts).
 */
export async function activateDeal(trx: Db | undefined, actor: WorkspaceActor, workspace: WorkspaceRow, dealId: string): Promise<DealDetail> {
  return inTransaction(trx, async (t) => {
    const { deal, milestones } = await lockDeal(t, actor, dealId);
    if (deal.cancelled_at !== null || deal.activated_at !== null || dealStatus(deal, milestones) !== 'draft') throw dealErrors.cannotActivate();
    const now = clock.now();
    const waits = !deal.is_test && deal.counterparty_kyb_status !== 'verified';
    await repo.updateDeal(t, deal.id, { fee_frozen: true, activated_at: now, terms_review: waits, updated_at: now });
    for (const m of milestones) await repo.updateMilestone(t, m.id, { approvals_required: approvalsFor(m.amount, deal.currency, fourEyes(workspace)) });
    if (!waits) await repo.moveDealMilestones(t, deal.id, MILESTONE_TRANSITIONS.activate, { updated_at: now });
    await dealEvent(t, actor, deal, 'deal.updated', waits ? `Deal ${deal.reference} activated; waiting for the counterparty's verification` : `Deal ${deal.reference} activated`);
    return detail(t, workspace, deal.id);
  });
}

/** POST /deals/:id/cancel: while no milestone is funded (409 NOT_CANCELLABLE), not twice (409 INVALID_STATE). */
export async function cancelDeal(trx: Db | undefined, actor: WorkspaceActor, workspace: WorkspaceRow, dealId: string): Promise<DealDetail> {
  return inTransaction(trx, async (t) => {
    const { deal, milestones } = await lockDeal(t, actor, dealId);
    // Cancelled by the deal, or already by its milestones (every one cancelled when the workspace went live).
    if (deal.cancelled_at !== null || dealStatus(deal, milestones) === 'cancelled') throw dealErrors.alreadyCancelled();
    if (milestones.some((m) => m.status !== 'cancelled' && !canMove(m.status, 'cancel'))) throw dealErrors.notCancellable();
    const now = clock.now();
    await repo.moveDealMilestones(t, deal.id, MILESTONE_TRANSITIONS.cancel, { updated_at: now });
    await repo.updateDeal(t, deal.id, { cancelled_at: now, terms_review: false, updated_at: now });
    await dealEvent(t, actor, deal, 'deal.cancelled', `Deal ${deal.reference} cancelled`);
    return detail(t, workspace, deal.id);
  });
}
