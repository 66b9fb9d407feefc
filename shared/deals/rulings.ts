/**
 * Staff rulings on disputed milestones (D10 `milestones/:id/resolve-dispute`; decision
 * 0019), in the feed with the operator label:
 *  - release: disputed -> approved; finance then releases it by the normal path (splits to
 *    verified payout instructions);
 *  - refund: disputed -> cancelled; everything held (with the buyer fee: the platform earns
 *    nothing on refunded money) goes back to the workspace;
 *  - split: `release_amount` of the milestone's amount stays for the counterparty (it is
 *    released by the normal path, paying release_amount - seller_fee; the platform fee is
 *    earned as on any release) and the rest is refunded to the workspace now.
 * The deal's status follows from its milestones.
 */
import { clock } from '../clock.js';
import { inTransaction, type Db } from '../db.js';
import type { StaffActor } from '../actors.js';
import { isUuid } from '../ids.js';
import { errors } from '../errors.js';
import { operatorLabel } from '../enterprise/events.js';
import { lockWorkspace } from '../enterprise/repo.js';
import { postRefund } from '../payouts/postings.js';
import { recordStaffAction } from '../staff/audit.js';
import { dealErrors } from './errors.js';
import { dealEvent } from './events.js';
import { milestoneExtras, type MilestoneExtras } from './extras.js';
import { transition } from './moves.js';
import * as repo from './repo.js';
import type { MilestoneRow } from './repo.js';
import { dealStatus, type DealStatus } from './states.js';

export interface RulingInput {
  outcome: 'release' | 'refund' | 'split';
  release_amount?: number;
}

export interface Ruled {
  milestone: MilestoneRow;
  extras: MilestoneExtras;
  dealStatus: DealStatus;
}

/** POST /v1/admin/enterprise/milestones/:id/resolve-dispute: 409 CONCURRENT_MODIFICATION unless disputed. */
export async function resolveDispute(trx: Db | undefined, staff: StaffActor, milestoneId: string, input: RulingInput): Promise<Ruled> {
  return inTransaction(trx, async (t) => {
    const owner = isUuid(milestoneId) ? await repo.milestoneOwner(t, milestoneId) : undefined;
    if (!owner) throw dealErrors.milestoneNotFound();
    await lockWorkspace(t, owner.workspace_id);
    const deal = (await repo.dealById(t, owner.workspace_id, owner.deal_id, true))!;
    const milestones = await repo.milestonesOf(t, deal.id);
    const m = milestones.find((x) => x.id === milestoneId)!;
    if (m.status !== 'disputed') throw dealErrors.concurrent();
    const now = clock.now();
    const ruling = { ruling: input.outcome, ruled_at: now };
    let moved: MilestoneRow;
    let summary: string;
    if (input.outcome === 'release') {
      moved = await transition(t, m, 'rule_release', { ...ruling, approved_at: m.approved_at ?? now });
      summary = `Dispute on milestone ${m.sequence_no} of deal ${deal.reference} ruled: released to the counterparty`;
    } else if (input.outcome === 'refund') {
      // Whatever is still held (an earlier split ruling may have refunded part already).
      moved = await transition(t, m, 'rule_refund', { ...ruling, refunded_amount: m.amount });
      if (!deal.is_test) await postRefund(t, moved, deal.currency, m.amount - m.refunded_amount, true);
      summary = `Dispute on milestone ${m.sequence_no} of deal ${deal.reference} ruled: refunded to the workspace`;
    } else {
      const release = input.release_amount!;
      const held = m.amount - m.refunded_amount;
      // The counterparty's part must pay out at least 1 after its fee share, and a split leaves something to refund.
      if (release >= held || release - m.seller_fee < 1) {
        throw errors.invalidField('release_amount', `must be more than the seller fee (${m.seller_fee}) and less than the amount held (${held})`);
      }
      const refunded = held - release;
      moved = await transition(t, m, 'rule_split', { ...ruling, approved_at: m.approved_at ?? now, refunded_amount: m.refunded_amount + refunded });
      if (!deal.is_test) await postRefund(t, moved, deal.currency, refunded, false);
      summary = `Dispute on milestone ${m.sequence_no} of deal ${deal.reference} ruled: ${release} to the counterparty, ${refunded} refunded to the workspace`;
    }
    await recordStaffAction(t, {
      actorId: staff.actorId,
      action: 'milestone.dispute_resolved',
      targetType: 'deal_milestone',
      targetId: m.id,
      note: staff.note ?? null,
      details: { outcome: input.outcome, release_amount: input.release_amount ?? null },
      ip: staff.ip,
    });
    await dealEvent(t, null, deal, 'milestone.dispute_resolved', summary, {
      entityType: 'milestone',
      entityId: m.id,
      amount: input.outcome === 'split' ? input.release_amount! : m.amount - m.refunded_amount,
      actorLabel: await operatorLabel(t),
    });
    const after = milestones.map((x) => (x.id === moved.id ? moved : x));
    return { milestone: moved, extras: await milestoneExtras(t, [moved]), dealStatus: dealStatus(deal, after) };
  });
}
