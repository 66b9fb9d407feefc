/**
 * The ledger side of enterprise releases, payouts and rulings (ARCHITECTURE rule 2;
 * decision 0019). Every posting is in its deal's currency, on that currency's accounts
 * (decision 0023). Each posting has a key unique to its business event, so a second one is
 * refused by the ledger; sandbox deals never post (spec 4.5 rule 4). The milestone account
 * holds `amount - refunded_amount` while money is held, `returned_amount` once released.
 *
 *   release      milestone -(amount - refunded)   buyer fees held -buyer_fee
 *                payouts in flight +(payout_amount - refunded)   enterprise fees +platform fee share
 *   re-release   milestone -returned              payouts in flight +returned
 *   settled      payouts in flight -amount        payouts sent +amount
 *   failed       payouts in flight -amount        milestone +amount (back to its held balance)
 *   refund       milestone -held                  buyer fees held -buyer_fee   refunds sent +(held + buyer_fee)
 *   split        milestone -(held - release_amount)   refunds sent +(held - release_amount)
 *   (held = amount - refunded_amount: a second ruling after a split refunds what is left)
 */
import type { Db } from '../db.js';
import { post, type PostingLine } from '../ledger/index.js';
import type { MilestoneRow } from '../deals/repo.js';
import type { DisbursementRow } from './repo.js';

const nonZero = (lines: PostingLine[]): PostingLine[] => lines.filter((l) => l.amount !== 0);

/** First release of an approved live milestone: its held money to payouts in flight, the fee to the platform. */
export async function postRelease(trx: Db, m: MilestoneRow, currency: string, releaseNo: number): Promise<void> {
  const held = m.amount - m.refunded_amount;
  await post(trx, {
    kind: 'enterprise.milestone_released',
    refType: 'deal_milestone',
    refId: m.id,
    postingKey: `ent-release:${m.id}:${releaseNo}`,
    memo: `Release of milestone ${m.id}`,
    lines: nonZero([
      { account: { milestoneId: m.id, currency }, amount: -held },
      { account: { system: 'enterpriseFeesHeld', currency }, amount: -m.buyer_fee },
      { account: { system: 'enterprisePayoutsInFlight', currency }, amount: m.payout_amount - m.refunded_amount },
      { account: { system: 'enterpriseFees', currency }, amount: m.buyer_fee + m.seller_fee },
    ]),
  });
}

/** A retry of returned payouts: what failed payouts brought back to the milestone goes out again. */
export async function postReRelease(trx: Db, m: MilestoneRow, currency: string, amount: number, releaseNo: number): Promise<void> {
  await post(trx, {
    kind: 'enterprise.payout_retried',
    refType: 'deal_milestone',
    refId: m.id,
    postingKey: `ent-release:${m.id}:${releaseNo}`,
    memo: `Payouts of milestone ${m.id} sent again`,
    lines: [
      { account: { milestoneId: m.id, currency }, amount: -amount },
      { account: { system: 'enterprisePayoutsInFlight', currency }, amount },
    ],
  });
}

export async function postSettled(trx: Db, d: DisbursementRow): Promise<void> {
  await post(trx, {
    kind: 'enterprise.payout_settled',
    refType: 'disbursement',
    refId: d.id,
    postingKey: `ent-settle:${d.id}`,
    memo: `Payout ${d.id} settled`,
    lines: [
      { account: { system: 'enterprisePayoutsInFlight', currency: d.currency }, amount: -d.amount },
      { account: { system: 'enterprisePayoutsSent', currency: d.currency }, amount: d.amount },
    ],
  });
}

export async function postFailed(trx: Db, d: DisbursementRow): Promise<void> {
  await post(trx, {
    kind: 'enterprise.payout_failed',
    refType: 'disbursement',
    refId: d.id,
    postingKey: `ent-fail:${d.id}`,
    memo: `Payout ${d.id} failed; back to milestone ${d.milestone_id}`,
    lines: [
      { account: { system: 'enterprisePayoutsInFlight', currency: d.currency }, amount: -d.amount },
      { account: { milestoneId: d.milestone_id, currency: d.currency }, amount: d.amount },
    ],
  });
}

/**
 * A ruling's refund to the workspace: all that is still held (with the buyer fee: no fee on
 * refunded money), or the part a split does not release. `m` is the milestone after the
 * ruling: its `refunded_amount` only grows, so it keys each refund of the milestone once.
 */
export async function postRefund(trx: Db, m: MilestoneRow, currency: string, refunded: number, withBuyerFee: boolean): Promise<void> {
  await post(trx, {
    kind: 'enterprise.milestone_refunded',
    refType: 'deal_milestone',
    refId: m.id,
    postingKey: `ent-refund:${m.id}:${m.refunded_amount}`,
    memo: `Ruling on milestone ${m.id}: refund to the workspace`,
    lines: nonZero([
      { account: { milestoneId: m.id, currency }, amount: -refunded },
      { account: { system: 'enterpriseFeesHeld', currency }, amount: withBuyerFee ? -m.buyer_fee : 0 },
      { account: { system: 'enterpriseRefunds', currency }, amount: refunded + (withBuyerFee ? m.buyer_fee : 0) },
    ]),
  });
}
