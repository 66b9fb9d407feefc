/**
 * A deal's terms while it is a draft: the milestones as entered, their fee shares
 * re-spread with the rate and minimum the deal took at creation (spec 4.5 rule 5), and the
 * approvals each milestone needs (two at or above the workspace's four-eyes threshold).
 * Pure functions over rows; the service writes what they answer.
 */
import { dealFee, type Allocation, type DealFee } from './fees.js';
import type { DealRow, MilestoneRow } from './repo.js';

/** The fee-rate fields a deal keeps from its creation. */
export function rateOf(deal: Pick<DealRow, 'fee_rate_bp' | 'fee_min' | 'fee_tier_min_volume' | 'fee_volume_basis'>) {
  return {
    rateBp: deal.fee_rate_bp,
    minFee: deal.fee_min,
    tier: deal.fee_tier_min_volume === null ? null : { minVolume: deal.fee_tier_min_volume },
    volumeBasis: deal.fee_volume_basis,
  };
}

/** The deal's fee columns for a computed fee. */
export function feeColumns(fee: DealFee, allocation: Allocation) {
  return {
    fee_rate_bp: fee.rateBp,
    fee_min: fee.minFee,
    fee_tier_min_volume: fee.tier?.minVolume ?? null,
    fee_volume_basis: fee.volumeBasis,
    fee_allocation: allocation,
    fee_buyer_percent: fee.buyerPercent,
    platform_fee: fee.platformFee,
    buyer_fee: fee.buyerFee,
    seller_fee: fee.sellerFee,
  };
}

/** Re-spreads a draft deal's fee over its live milestones (in sequence order) with the deal's own rate. */
export function respread(deal: DealRow, milestones: Pick<MilestoneRow, 'id' | 'amount' | 'status'>[], allocation: Allocation = deal.fee_allocation, buyerPercent = deal.fee_buyer_percent) {
  const live = milestones.filter((m) => m.status !== 'cancelled');
  const fee = dealFee({ amounts: live.map((m) => m.amount), currency: deal.currency, allocation, buyerPercent, rate: rateOf(deal) });
  return {
    deal: feeColumns(fee, allocation),
    milestones: live.map((m, i) => {
      const s = fee.milestones[i]!;
      // The amount goes with its shares: deal_milestones_shares checks them together on every row write.
      return { id: m.id, amount: m.amount, buyer_fee: s.buyerFee, seller_fee: s.sellerFee, funding_amount: s.fundingAmount, payout_amount: s.payoutAmount };
    }),
  };
}

/**
 * Two different approvers at or above the workspace's four-eyes threshold, one below it.
 * The threshold is in rupiah: a milestone in another currency cannot be compared with it
 * without a rate, and the operator has set none, so it always needs two (fail-safe;
 * decision 0023).
 */
export const approvalsFor = (amount: number, currency: string, fourEyesThreshold: number): 1 | 2 =>
  currency !== 'IDR' || amount >= fourEyesThreshold ? 2 : 1;

/** A milestone's due date: the deal's creation plus its offset in days (none without an offset). */
export function dueAt(createdAt: Date, offsetDays: number | null | undefined): Date | null {
  if (offsetDays === null || offsetDays === undefined) return null;
  return new Date(createdAt.getTime() + offsetDays * 86_400_000);
}
