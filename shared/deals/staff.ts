/**
 * Staff moves on deals (decisions D9, D10): confirming a live milestone's funding, which
 * posts the money to the ledger, and one deal's fee-allocation override with a reason
 * (spec 4.5 rule 6). Both are recorded in the staff audit and in the workspace's feed
 * with the operator label and no actor.
 */
import { NO_SEARCH, type QueueCursor, type StaffSearch } from '../staff/queue.js';
import type { Knex } from 'knex';
import { clock } from '../clock.js';
import { inTransaction, type Db } from '../db.js';
import type { StaffActor } from '../actors.js';
import { isUuid } from '../ids.js';
import { operatorLabel } from '../enterprise/events.js';
import { lockWorkspace, workspaceById, type WorkspaceRow } from '../enterprise/repo.js';
import { post } from '../ledger/index.js';
import { recordStaffAction } from '../staff/audit.js';
import { dealErrors } from './errors.js';
import { dealEvent } from './events.js';
import { feeSharesOpen, overrideAllocation, resolveAllocation, type Allocation } from './fees.js';
import * as repo from './repo.js';
import type { DealWithNames, MilestoneRow } from './repo.js';
import { transition, type Funded } from './moves.js';
import { detail, type DealDetail } from './read.js';
import { dealStatus } from './states.js';

/** The deal (locked, after its workspace: the order every deal write takes) as staff reach it. */
async function lockForStaff(trx: Knex.Transaction, workspaceId: string, dealId: string): Promise<{ workspace: WorkspaceRow; deal: DealWithNames; milestones: MilestoneRow[] }> {
  const workspace = (await lockWorkspace(trx, workspaceId))!;
  const deal = (await repo.dealById(trx, workspaceId, dealId, true))!;
  return { workspace, deal, milestones: await repo.milestonesOf(trx, dealId) };
}

/**
 * POST /v1/admin/enterprise/milestones/:id/confirm-funding: the money for a live milestone
 * arrived. The milestone moves awaiting_funding -> funded (409 CONCURRENT_MODIFICATION
 * otherwise; 409 INVALID_STATE for a sandbox deal, which the workspace funds itself), and
 * one posting with the key `ent-fund:<milestone>` moves funding_amount from the enterprise
 * funding account to the milestone (its amount) and the buyer fees held (its buyer fee).
 */
export async function confirmFunding(trx: Db | undefined, staff: StaffActor, milestoneId: string): Promise<Funded> {
  return inTransaction(trx, async (t) => {
    const owner = isUuid(milestoneId) ? await repo.milestoneOwner(t, milestoneId) : undefined;
    if (!owner) throw dealErrors.milestoneNotFound();
    const { deal, milestones } = await lockForStaff(t, owner.workspace_id, owner.deal_id);
    const milestone = milestones.find((m) => m.id === milestoneId)!;
    if (deal.is_test) throw dealErrors.sandboxNotConfirmed();
    const moved = await transition(t, milestone, 'confirm_funding', { funded_at: clock.now(), funding_method: 'wire' });
    await post(t, {
      kind: 'enterprise.milestone_funded',
      refType: 'deal_milestone',
      refId: moved.id,
      postingKey: `ent-fund:${moved.id}`,
      memo: `Funding of milestone ${moved.sequence_no} of deal ${deal.reference}`,
      lines: [
        { account: { system: 'enterpriseFunding', currency: deal.currency }, amount: -moved.funding_amount },
        { account: { milestoneId: moved.id, currency: deal.currency }, amount: moved.amount },
        ...(moved.buyer_fee > 0 ? [{ account: { system: 'enterpriseFeesHeld' as const, currency: deal.currency }, amount: moved.buyer_fee }] : []),
      ],
    });
    await recordStaffAction(t, { actorId: staff.actorId, action: 'milestone.funding_confirmed', targetType: 'deal_milestone', targetId: moved.id, note: staff.note ?? null, ip: staff.ip });
    await dealEvent(t, null, deal, 'milestone.funded', `Funding of milestone ${moved.sequence_no} of deal ${deal.reference} confirmed`, {
      entityType: 'milestone',
      entityId: moved.id,
      amount: moved.funding_amount,
      actorLabel: await operatorLabel(t),
    });
    return { milestone: moved, dealStatus: dealStatus(deal, milestones.map((m) => (m.id === moved.id ? moved : m))) };
  });
}

export interface OverrideInput {
  fee_allocation?: Allocation;
  fee_buyer_percent?: number;
  reason: string;
}

/**
 * POST /v1/admin/enterprise/deals/:id/fee-allocation (D9, rule 6): changes one deal's split
 * at both parties' request. The platform fee stays; only shares still open (milestones
 * not yet funded) are recomputed, so no money already funded or withheld moves. A split
 * that open shares cannot reach exactly is refused (409 INVALID_STATE), as is a cancelled
 * deal. Recorded as deal.fee_allocation_overridden with the reason.
 */
export async function overrideFeeAllocation(trx: Db | undefined, staff: StaffActor, dealId: string, input: OverrideInput): Promise<DealDetail> {
  return inTransaction(trx, async (t) => {
    const workspaceId = isUuid(dealId) ? await repo.dealWorkspace(t, dealId) : undefined;
    if (!workspaceId) throw dealErrors.dealNotFound();
    const { workspace, deal, milestones } = await lockForStaff(t, workspaceId, dealId);
    // Cancelled by the deal, or by its milestones (a sandbox deal closed when its workspace went live), as cancelDeal reads it.
    if (deal.cancelled_at !== null || dealStatus(deal, milestones) === 'cancelled') throw dealErrors.alreadyCancelled();
    // A closed sandbox deal with released milestones: the cancelled ones took their shares along, nothing is open.
    if (milestones.some((m) => m.status === 'cancelled')) throw dealErrors.overrideUnreachable();
    const alloc = resolveAllocation({ allocation: input.fee_allocation, buyerPercent: input.fee_buyer_percent }, { allocation: deal.fee_allocation, buyerPercent: deal.fee_buyer_percent });
    if (!alloc.ok) throw dealErrors.invalidField(input.fee_allocation === undefined ? 'fee_buyer_percent' : 'fee_allocation', alloc.reason);
    const live = milestones.filter((m) => m.status !== 'cancelled');
    const result = overrideAllocation({
      milestones: live.map((m) => ({ amount: m.amount, buyerFee: m.buyer_fee, sellerFee: m.seller_fee, open: feeSharesOpen(m.status) })),
      platformFee: deal.platform_fee,
      allocation: alloc.allocation,
      buyerPercent: alloc.buyerPercent,
    });
    if (!result.exact) throw dealErrors.overrideUnreachable();
    const now = clock.now();
    await repo.updateDeal(t, deal.id, {
      fee_allocation: alloc.allocation,
      fee_buyer_percent: alloc.buyerPercent,
      buyer_fee: result.buyerFee,
      seller_fee: result.sellerFee,
      updated_at: now,
    });
    for (const [i, m] of live.entries()) {
      const s = result.milestones[i]!;
      if (s.buyerFee !== m.buyer_fee || s.sellerFee !== m.seller_fee) {
        await repo.updateMilestone(t, m.id, { buyer_fee: s.buyerFee, seller_fee: s.sellerFee, funding_amount: s.fundingAmount, payout_amount: s.payoutAmount, updated_at: now });
      }
    }
    await recordStaffAction(t, {
      actorId: staff.actorId,
      action: 'deal.fee_allocation_overridden',
      targetType: 'deal',
      targetId: deal.id,
      note: staff.note ?? null,
      details: { reason: input.reason, from: { allocation: deal.fee_allocation, buyer_percent: deal.fee_buyer_percent }, to: { allocation: alloc.allocation, buyer_percent: alloc.buyerPercent } },
      ip: staff.ip,
    });
    await dealEvent(t, null, deal, 'deal.fee_allocation_overridden', `Fee split of deal ${deal.reference} changed to ${alloc.allocation} (${alloc.buyerPercent}% workspace): ${input.reason}`, {
      actorLabel: await operatorLabel(t),
    });
    return detail(t, workspace, deal.id);
  });
}

/** The console's list: live milestones awaiting funding confirmation, oldest activation first. */
export async function awaitingConfirmation(trx: Db, page: QueueCursor = {}, by: StaffSearch = NO_SEARCH) {
  return repo.awaitingConfirmation(trx, page, by);
}

/** The console's list: disputed milestones waiting for a ruling (rulings.ts), oldest dispute first. */
export async function disputedForStaff(trx: Db, page: QueueCursor = {}, by: StaffSearch = NO_SEARCH) {
  return repo.disputedForStaff(trx, page, by);
}

/** A deal as the operator console shows it: its answer (read.ts `detail`) and its workspace. */
export interface StaffDeal extends DealDetail {
  workspace: WorkspaceRow;
}

/** Any workspace's deal by id, for staff (no workspace actor): 404 NOT_FOUND for an id that names no deal. */
export async function dealForStaff(trx: Db, dealId: string): Promise<StaffDeal> {
  const workspaceId = isUuid(dealId) ? await repo.dealWorkspace(trx, dealId) : undefined;
  const workspace = workspaceId ? await workspaceById(trx, workspaceId) : undefined;
  if (!workspace) throw dealErrors.dealNotFound();
  return { ...(await detail(trx, workspace, dealId)), workspace };
}
