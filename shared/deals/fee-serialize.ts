/** Spec shapes of the platform fee answers (enterprise spec 2 "Fee terms", "Deal fee"; 4.5 preview answer). */
import type { FeePreview, FeeTerms } from './fee-terms.js';
import { VOLUME_WINDOW_DAYS, type DealFee, type MilestoneShare } from './fees.js';

/** Basis points as a percent: 200 -> 2, 125 -> 1.25. */
export const percentOf = (bp: number): number => bp / 100;

/** GET /v1/enterprise/fees (and the answer of PUT /fees/default-allocation). */
export function serializeFeeTerms(t: FeeTerms) {
  return {
    rate_bp: t.pricing.rateBp,
    rate_percent: percentOf(t.pricing.rateBp),
    min_fee: t.pricing.minFee,
    tiers: t.pricing.tiers.map((tier) => ({ min_volume: tier.minVolume, rate_bp: tier.rateBp, rate_percent: percentOf(tier.rateBp) })),
    default_allocation: t.allocation,
    default_buyer_percent: t.buyerPercent,
    default_seller_percent: 100 - t.buyerPercent,
    uses_platform_rate: t.usesPlatformRate,
    uses_platform_min: t.usesPlatformMin,
    volume_window_days: VOLUME_WINDOW_DAYS,
    trailing_volume: t.trailingVolume,
    rate_in_force_bp: t.inForce.rateBp,
    rate_in_force_percent: percentOf(t.inForce.rateBp),
    tier_in_force: t.inForce.tier === null ? null : { min_volume: t.inForce.tier.minVolume },
    can_edit_default_allocation: t.canEditDefaultAllocation,
    pricing_set_by: t.pricingSetBy,
  };
}

/** One milestone's fee shares (section 2 "Milestone", 4.5 preview `milestones`). */
export function serializeMilestoneShare(m: MilestoneShare) {
  return { amount: m.amount, buyer_fee: m.buyerFee, seller_fee: m.sellerFee, funding_amount: m.fundingAmount, payout_amount: m.payoutAmount };
}

/**
 * The figures of section 2 "Deal fee" the engine computes (a deal's `fee` adds `frozen`;
 * the preview adds `total_amount`, `milestones` and `is_test`).
 */
export function serializeFeeFigures(f: DealFee) {
  return {
    rate_bp: f.rateBp,
    rate_percent: f.ratePercent,
    min_fee: f.minFee,
    tier: f.tier === null ? null : { min_volume: f.tier.minVolume },
    volume_basis: f.volumeBasis,
    platform_fee: f.platformFee,
    allocation: f.allocation,
    buyer_percent: f.buyerPercent,
    seller_percent: f.sellerPercent,
    buyer_fee: f.buyerFee,
    seller_fee: f.sellerFee,
    funding_total: f.fundingTotal,
    payout_total: f.payoutTotal,
    payer: f.payer,
    payee: f.payee,
  };
}

/** POST /v1/enterprise/fees/preview. */
export function serializePreview(p: FeePreview) {
  return {
    total_amount: p.totalAmount,
    ...serializeFeeFigures(p),
    milestones: p.milestones.map(serializeMilestoneShare),
    is_test: p.isTest,
  };
}
