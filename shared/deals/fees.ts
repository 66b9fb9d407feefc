/**
 * The enterprise platform fee (enterprise spec section 2 "Deal fee", "Template", "Milestone";
 * section 4.5 rules 1-7; issue 26): one pure module, no I/O. Callers bring the operator's
 * pricing and the trailing volume; nothing here reads the database, the clock or config.
 *
 * Every figure is whole rupiah (or whole units of the deal currency). Products that can leave
 * the safe-integer range (a deal total up to 20 x 50,000,000,000 times a rate or a share) are
 * computed with BigInt; every division rounds down.
 *
 * Pipeline of a deal:
 *  1. `feeRate(pricing, trailingVolume)`: the rate, minimum and tier in force at creation
 *     (kept with the deal: rule 5 re-spreads draft edits with them, rule 6 keeps pricing
 *     changes away from existing deals).
 *  2. `platformFee`: max(floor(total x rate), minimum [IDR only]), capped at total - n.
 *  3. `splitFee`: buyer (workspace) and seller (counterparty) parts; the seller takes the odd
 *     rupiah (rule 1).
 *  4. `spread`: each milestone floor(part x amount / total), the last the remainder (rule 3),
 *     with funding_amount = amount + buyer_fee and payout_amount = amount - seller_fee (rule 2).
 * `dealFee` does all four; `overrideAllocation` is rule 6's staff override.
 *
 * Inputs are checked and impossible ones throw RangeError: request bodies are validated with
 * joi before they get here, so a throw is a programmer error, not a client error.
 */
import { assertRupiah, sumRupiah } from '../money.js';

// ---- Types and defaults -------------------------------------------------------------------

export interface PricingTier {
  /** Released IDR volume over the trailing window from which this tier applies (inclusive). */
  minVolume: number;
  /** Basis points (100 = 1%). */
  rateBp: number;
}

/** Operator pricing of a workspace (set by staff only, never through the API). */
export interface Pricing {
  /** Base rate in basis points, 0 to 10,000. */
  rateBp: number;
  /** Minimum fee in rupiah; applies to IDR deals only. */
  minFee: number;
  /** Volume tiers, any order. */
  tiers: PricingTier[];
}

/** 2% with a Rp5.000 minimum, no tiers. */
export const DEFAULT_PRICING: Pricing = Object.freeze({ rateBp: 200, minFee: 5000, tiers: Object.freeze([]) as unknown as PricingTier[] });

/** Trailing window over which released volume is counted for tiers ("Fee terms" volume_window_days). */
export const VOLUME_WINDOW_DAYS = 30;

export type Allocation = 'buyer' | 'seller' | 'split';
export const ALLOCATIONS: readonly Allocation[] = ['buyer', 'seller', 'split'];

/** Who pays the buyer part and who bears the seller part ("Deal fee" payer / payee). */
export const FEE_PAYER = 'workspace';
export const FEE_PAYEE = 'counterparty';

/** The rate a deal was priced with, fixed when it is created. */
export interface FeeRate {
  rateBp: number;
  /** The pricing minimum taken at creation; it is applied only when the deal currency is IDR. */
  minFee: number;
  /** The volume tier whose rate is in force, or null for the base rate. */
  tier: { minVolume: number } | null;
  /** The trailing released volume the tier was chosen from (the caller's figure, as given). */
  volumeBasis: number;
}

export interface FeeSplit {
  buyerFee: number;
  sellerFee: number;
  buyerPercent: number;
  sellerPercent: number;
}

/** One milestone's fee shares (section 2 "Milestone"). */
export interface MilestoneShare {
  amount: number;
  buyerFee: number;
  sellerFee: number;
  /** amount + buyerFee: what the workspace funds. */
  fundingAmount: number;
  /** amount - sellerFee: what the release splits add up to; always at least 1. */
  payoutAmount: number;
}

/** Everything of section 2 "Deal fee" the engine knows (the caller adds `frozen`, `is_test`). */
export interface DealFee extends FeeRate, FeeSplit {
  /** rateBp / 100, e.g. 2 for 200 bp, 1.25 for 125 bp. */
  ratePercent: number;
  totalAmount: number;
  platformFee: number;
  allocation: Allocation;
  fundingTotal: number;
  payoutTotal: number;
  payer: typeof FEE_PAYER;
  payee: typeof FEE_PAYEE;
  /** One per milestone, in the order of the amounts given. */
  milestones: MilestoneShare[];
}

// ---- Checks -------------------------------------------------------------------------------

const BP_PER_UNIT = 10_000;

function assertBp(rateBp: number, what: string): void {
  if (!Number.isSafeInteger(rateBp) || rateBp < 0 || rateBp > BP_PER_UNIT) {
    throw new RangeError(`${what} must be a whole number of basis points from 0 to 10000, got ${rateBp}`);
  }
}

function assertCount(n: number, what: string): void {
  assertRupiah(n, what);
  if (n < 0) throw new RangeError(`${what} must not be negative, got ${n}`);
}

function assertPercent(p: number, what: string): void {
  if (!Number.isSafeInteger(p) || p < 0 || p > 100) throw new RangeError(`${what} must be a whole percent from 0 to 100, got ${p}`);
}

/** Positive whole amounts, at least one; answers their total. */
function checkAmounts(amounts: readonly number[]): number {
  if (amounts.length === 0) throw new RangeError('a deal needs at least one milestone amount');
  amounts.forEach((a, i) => {
    assertRupiah(a, `amounts[${i}]`);
    if (a < 1) throw new RangeError(`amounts[${i}] must be at least 1, got ${a}`);
  });
  return sumRupiah(amounts);
}

function checkPricing(pricing: Pricing): void {
  assertBp(pricing.rateBp, 'pricing.rateBp');
  assertCount(pricing.minFee, 'pricing.minFee');
  if (!Array.isArray(pricing.tiers)) throw new RangeError('pricing.tiers must be an array');
  pricing.tiers.forEach((t, i) => {
    assertCount(t.minVolume, `pricing.tiers[${i}].minVolume`);
    assertBp(t.rateBp, `pricing.tiers[${i}].rateBp`);
  });
}

function checkAllocation(allocation: Allocation, buyerPercent: number): void {
  if (!ALLOCATIONS.includes(allocation)) throw new RangeError(`allocation must be buyer, seller or split, got ${String(allocation)}`);
  assertPercent(buyerPercent, 'buyerPercent');
  if (allocation === 'buyer' && buyerPercent !== 100) throw new RangeError(`allocation buyer means buyerPercent 100, got ${buyerPercent}`);
  if (allocation === 'seller' && buyerPercent !== 0) throw new RangeError(`allocation seller means buyerPercent 0, got ${buyerPercent}`);
}

/** Three letters; IDR (any case) is the only currency with a minimum fee and tiered volume. */
function isIdr(currency: string): boolean {
  if (typeof currency !== 'string' || !/^[A-Za-z]{3}$/.test(currency)) throw new RangeError(`currency must be three letters, got ${String(currency)}`);
  return currency.toUpperCase() === 'IDR';
}

/** floor(a x b / c) for non-negative whole numbers, exact at any size. */
function mulDiv(a: number, b: number, c: number): number {
  return Number((BigInt(a) * BigInt(b)) / BigInt(c));
}

// ---- Rate ---------------------------------------------------------------------------------

/**
 * Rate in force: the highest tier reached by trailing released IDR volume (sandbox volume
 * only for sandbox deals is the caller's concern: it passes the right volume).
 *
 * Rates never rise with volume: the rate is the lowest of the base rate and the rates of every
 * tier reached (minVolume <= trailingVolume). So a tier priced above the base rate is ignored,
 * and in a table that is not monotone (e.g. 1M -> 1.5%, 10M -> 1.8%) reaching the higher tier
 * never raises the rate back (20M still pays 1.5%). With a sensible table (rates falling as
 * minVolume rises) this is exactly "the highest tier reached".
 * `tier` is the reached tier that sets the rate (among reached tiers with that same rate, the
 * one with the largest minVolume), or null when no tier at or below the base rate is reached.
 */
export function rateInForce(pricing: Pricing, trailingVolume: number): { rateBp: number; tier: { minVolume: number } | null } {
  checkPricing(pricing);
  assertCount(trailingVolume, 'trailingVolume');
  let rateBp = pricing.rateBp;
  let tier: { minVolume: number } | null = null;
  const reached = pricing.tiers.filter((t) => t.minVolume <= trailingVolume && t.rateBp <= pricing.rateBp);
  for (const t of reached) {
    if (t.rateBp < rateBp || (t.rateBp === rateBp && (tier === null || t.minVolume > tier.minVolume))) {
      rateBp = t.rateBp;
      tier = { minVolume: t.minVolume };
    }
  }
  return { rateBp, tier };
}

/** The rate, minimum and tier a new deal takes (and keeps: rules 5 and 6). */
export function feeRate(pricing: Pricing, trailingVolume: number): FeeRate {
  const { rateBp, tier } = rateInForce(pricing, trailingVolume);
  return { rateBp, minFee: pricing.minFee, tier, volumeBasis: trailingVolume };
}

// ---- Fee, split, spread -------------------------------------------------------------------

/**
 * The fee of a deal: max(floor(total x rate), minimum [IDR only]), never above
 * total - (number of milestones) so each milestone pays out at least 1.
 * Independent of the order of the amounts.
 */
export function platformFee(input: { amounts: readonly number[]; currency: string; rateBp: number; minFee: number }): number {
  const total = checkAmounts(input.amounts);
  assertBp(input.rateBp, 'rateBp');
  assertCount(input.minFee, 'minFee');
  let fee = mulDiv(total, input.rateBp, BP_PER_UNIT);
  if (isIdr(input.currency)) fee = Math.max(fee, input.minFee);
  return Math.min(fee, total - input.amounts.length);
}

/**
 * The buyer (workspace) and seller (counterparty) parts of a fee: buyerFee =
 * floor(fee x buyerPercent / 100), and the seller takes the rest, so the odd rupiah goes to
 * the counterparty (rule 1). `buyer` must come with 100 and `seller` with 0 (section 4.5
 * table); `resolveAllocation` turns a request body into an agreeing pair.
 */
export function splitFee(fee: number, allocation: Allocation, buyerPercent: number): FeeSplit {
  assertCount(fee, 'fee');
  checkAllocation(allocation, buyerPercent);
  const buyerFee = mulDiv(fee, buyerPercent, 100);
  return { buyerFee, sellerFee: fee - buyerFee, buyerPercent, sellerPercent: 100 - buyerPercent };
}

/** `part` over the amounts: floor(part x amount / total) each, the remainder on the last (rule 3). */
function shareOut(amounts: readonly number[], total: number, part: number): number[] {
  const shares = amounts.map((a) => mulDiv(part, a, total));
  let given = 0;
  for (let i = 0; i < shares.length - 1; i++) given += shares[i]!;
  shares[shares.length - 1] = part - given;
  return shares;
}

/**
 * Per-milestone shares: buyer and seller parts each spread as floor(part x amount / total)
 * per milestone with the remainder on the last (rule 3); fundingAmount = amount + buyerFee,
 * payoutAmount = amount - sellerFee (rule 2).
 *
 * Every payout stays at least 1. The floors alone guarantee that for every milestone but the
 * last (sellerFee < total); the last one's remainder (up to n - 1 rupiah above its exact share)
 * can only overflow it when the seller part is nearly the whole total (a rate near 100%, or a
 * minimum fee close to the deal total; at 10,000 or more per milestone, above about 99.8% of
 * it), never with real pricing. Then the last milestone's seller share is cut to amount - 1
 * and the overflow moves to the milestones before it, from the last towards the first, each up
 * to its own amount - 1. Throws when sellerFee > total - n (no spread can keep every payout at
 * least 1); platformFee never yields such a part.
 */
export function spread(amounts: readonly number[], buyerFee: number, sellerFee: number): MilestoneShare[] {
  const total = checkAmounts(amounts);
  assertCount(buyerFee, 'buyerFee');
  assertCount(sellerFee, 'sellerFee');
  if (sellerFee > total - amounts.length) {
    throw new RangeError(`sellerFee ${sellerFee} leaves a milestone without a payout (at most ${total - amounts.length} for ${amounts.length} milestones totalling ${total})`);
  }
  const buyer = shareOut(amounts, total, buyerFee);
  const seller = shareOut(amounts, total, sellerFee);
  let overflow = 0;
  for (let i = amounts.length - 1; i >= 0; i--) {
    const cap = amounts[i]! - 1;
    if (seller[i]! > cap) {
      overflow += seller[i]! - cap;
      seller[i] = cap;
    }
  }
  for (let i = amounts.length - 1; i >= 0 && overflow > 0; i--) {
    const take = Math.min(amounts[i]! - 1 - seller[i]!, overflow);
    seller[i] = seller[i]! + take;
    overflow -= take;
  }
  return amounts.map((amount, i) => share(amount, buyer[i]!, seller[i]!));
}

function share(amount: number, buyerFee: number, sellerFee: number): MilestoneShare {
  return { amount, buyerFee, sellerFee, fundingAmount: amount + buyerFee, payoutAmount: amount - sellerFee };
}

// ---- Everything together ------------------------------------------------------------------

interface DealFeeBase {
  /** Milestone amounts in sequence order (the last takes the remainders). */
  amounts: readonly number[];
  currency: string;
  allocation: Allocation;
  buyerPercent: number;
}

/**
 * A new deal or a preview passes `pricing` and `trailingVolume` (released IDR volume over the
 * trailing 30 days; the sandbox volume for sandbox deals). A draft deal being edited passes
 * the `rate` it took at creation (rule 5); a stored DealFee is itself a FeeRate.
 */
export type DealFeeInput = DealFeeBase & ({ pricing: Pricing; trailingVolume: number } | { rate: FeeRate });

/** The whole "Deal fee" of section 2 with the per-milestone shares of section 4.5. */
export function dealFee(input: DealFeeInput): DealFee {
  let rate: FeeRate;
  if ('rate' in input) {
    rate = input.rate;
    assertBp(rate.rateBp, 'rate.rateBp');
    assertCount(rate.minFee, 'rate.minFee');
    assertCount(rate.volumeBasis, 'rate.volumeBasis');
    if (rate.tier !== null) assertCount(rate.tier.minVolume, 'rate.tier.minVolume');
  } else {
    rate = feeRate(input.pricing, input.trailingVolume);
  }
  const totalAmount = checkAmounts(input.amounts);
  const fee = platformFee({ amounts: input.amounts, currency: input.currency, rateBp: rate.rateBp, minFee: rate.minFee });
  const split = splitFee(fee, input.allocation, input.buyerPercent);
  return {
    rateBp: rate.rateBp,
    ratePercent: rate.rateBp / 100,
    minFee: rate.minFee,
    tier: rate.tier === null ? null : { minVolume: rate.tier.minVolume },
    volumeBasis: rate.volumeBasis,
    totalAmount,
    platformFee: fee,
    allocation: input.allocation,
    ...split,
    fundingTotal: totalAmount + split.buyerFee,
    payoutTotal: totalAmount - split.sellerFee,
    payer: FEE_PAYER,
    payee: FEE_PAYEE,
    milestones: spread(input.amounts, split.buyerFee, split.sellerFee),
  };
}

/**
 * The allocation of a create or preview body (`fee_allocation` and/or `fee_buyer_percent`,
 * which must agree) or the workspace default when neither is given:
 * - buyer: percent absent or 100; seller: percent absent or 0; split: percent required;
 * - a percent alone means split at that percent.
 * Answers { ok: false, reason } when they disagree, so the route can answer 400 INVALID_BODY.
 */
export function resolveAllocation(
  requested: { allocation?: Allocation | undefined; buyerPercent?: number | undefined },
  fallback: { allocation: Allocation; buyerPercent: number },
): { ok: true; allocation: Allocation; buyerPercent: number } | { ok: false; reason: string } {
  const { allocation, buyerPercent } = requested;
  if (buyerPercent !== undefined) assertPercent(buyerPercent, 'buyerPercent');
  if (allocation === undefined) {
    if (buyerPercent === undefined) {
      checkAllocation(fallback.allocation, fallback.buyerPercent);
      return { ok: true, allocation: fallback.allocation, buyerPercent: fallback.buyerPercent };
    }
    return { ok: true, allocation: 'split', buyerPercent };
  }
  if (!ALLOCATIONS.includes(allocation)) throw new RangeError(`allocation must be buyer, seller or split, got ${String(allocation)}`);
  if (allocation === 'split') {
    return buyerPercent === undefined ? { ok: false, reason: 'fee_buyer_percent is required with split' } : { ok: true, allocation, buyerPercent };
  }
  const implied = allocation === 'buyer' ? 100 : 0;
  if (buyerPercent !== undefined && buyerPercent !== implied) {
    return { ok: false, reason: `fee_allocation ${allocation} means fee_buyer_percent ${implied}` };
  }
  return { ok: true, allocation, buyerPercent: implied };
}

// ---- Rule 6: the staff override of one deal's split ---------------------------------------

/**
 * Whether a milestone's fee shares are still open, by milestone status: open while no money
 * of the milestone has moved, i.e. `draft` and `awaiting_funding`. From funding on (funded,
 * evidence_submitted, revision_requested, approved, disputed, released) the buyer share has
 * been paid in with the funding and the seller share is bound to the held money (and withheld
 * at release), so both shares are fixed. A `cancelled` milestone is fixed too: no money will
 * ever move for it, so nothing is moved onto it.
 */
export function feeSharesOpen(milestoneStatus: string): boolean {
  return milestoneStatus === 'draft' || milestoneStatus === 'awaiting_funding';
}

export interface OverrideMilestone {
  amount: number;
  buyerFee: number;
  sellerFee: number;
  /** feeSharesOpen(status) of the milestone. */
  open: boolean;
}

export interface FeeOverride extends FeeSplit {
  allocation: Allocation;
  platformFee: number;
  fundingTotal: number;
  payoutTotal: number;
  /** In the order given; fixed milestones are returned unchanged. */
  milestones: MilestoneShare[];
  /**
   * True when the deal's parts are exactly splitFee(platformFee, allocation, buyerPercent).
   * False when fixed shares make that impossible (e.g. seller-pays switched to buyer-pays
   * after a milestone was funded: its seller share stays); the parts are then as close to it
   * as the open milestones allow, and buyerPercent / sellerPercent still state the agreed split.
   */
  exact: boolean;
}

/**
 * Rule 6: one deal's split overridden by the operator. The platform fee (and rate) never
 * changes; only the split does, and only through shares still open (`feeSharesOpen`: the
 * milestone is not yet funded).
 *
 * - Fixed milestones keep both their shares exactly.
 * - Target parts: splitFee(platformFee, allocation, buyerPercent). The open milestones absorb
 *   the difference: open seller part = target seller part - fixed seller shares, open buyer
 *   part = the rest of the fee still open (platformFee - all fixed shares).
 * - If that is impossible the open seller part is clamped to [0, min(open fee, open amounts
 *   - open count)] (no negative share, every payout at least 1) and `exact` is false.
 * - The open parts are spread over the open milestones with `spread` (floors, the remainder
 *   on the last open milestone).
 * So buyer shares still sum to buyerFee, seller shares to sellerFee, and buyerFee + sellerFee
 * = platformFee. With every milestone open (and a fee from dealFee) this is dealFee's spread
 * for the new split.
 * Throws when the given shares are inconsistent (negative, a payout below 1, or not summing to
 * platformFee).
 */
export function overrideAllocation(input: {
  milestones: readonly OverrideMilestone[];
  platformFee: number;
  allocation: Allocation;
  buyerPercent: number;
}): FeeOverride {
  const ms = input.milestones;
  checkAmounts(ms.map((m) => m.amount));
  assertCount(input.platformFee, 'platformFee');
  let given = 0;
  ms.forEach((m, i) => {
    assertCount(m.buyerFee, `milestones[${i}].buyerFee`);
    assertCount(m.sellerFee, `milestones[${i}].sellerFee`);
    if (m.amount - m.sellerFee < 1) throw new RangeError(`milestones[${i}] pays out less than 1`);
    if (typeof m.open !== 'boolean') throw new RangeError(`milestones[${i}].open must be a boolean`);
    given += m.buyerFee + m.sellerFee;
  });
  if (given !== input.platformFee) throw new RangeError(`milestone shares sum to ${given}, not the platform fee ${input.platformFee}`);
  const target = splitFee(input.platformFee, input.allocation, input.buyerPercent);

  const open = ms.filter((m) => m.open);
  const fixedBuyer = ms.reduce((s, m) => s + (m.open ? 0 : m.buyerFee), 0);
  const fixedSeller = ms.reduce((s, m) => s + (m.open ? 0 : m.sellerFee), 0);
  const openFee = input.platformFee - fixedBuyer - fixedSeller;
  const openCapacity = open.reduce((s, m) => s + m.amount - 1, 0);
  const wantedSeller = target.sellerFee - fixedSeller;
  const openSeller = Math.max(0, Math.min(wantedSeller, openFee, openCapacity));
  const openBuyer = openFee - openSeller;

  const respread = open.length === 0 ? [] : spread(open.map((m) => m.amount), openBuyer, openSeller);
  let k = 0;
  const milestones = ms.map((m) => (m.open ? respread[k++]! : share(m.amount, m.buyerFee, m.sellerFee)));
  const buyerFee = fixedBuyer + openBuyer;
  const sellerFee = fixedSeller + openSeller;
  const totalAmount = sumRupiah(ms.map((m) => m.amount));
  return {
    allocation: input.allocation,
    platformFee: input.platformFee,
    buyerFee,
    sellerFee,
    buyerPercent: target.buyerPercent,
    sellerPercent: target.sellerPercent,
    fundingTotal: totalAmount + buyerFee,
    payoutTotal: totalAmount - sellerFee,
    milestones,
    exact: sellerFee === target.sellerFee,
  };
}

// ---- Templates ----------------------------------------------------------------------------

/**
 * Template percentages to amounts (section 2 "Template"): each share floor(total x pct / 100),
 * the remainder on the last milestone. Percentages are whole numbers 1 to 100 summing to
 * exactly 100. The result sums to `total`; checking each amount against the milestone limits
 * (10,000 to 50,000,000,000) is the caller's job.
 */
export function amountsFromPercentages(total: number, pcts: readonly number[]): number[] {
  assertRupiah(total, 'total');
  if (total < 1) throw new RangeError(`total must be at least 1, got ${total}`);
  if (pcts.length === 0) throw new RangeError('at least one percentage is needed');
  let sum = 0;
  pcts.forEach((p, i) => {
    assertPercent(p, `pcts[${i}]`);
    if (p < 1) throw new RangeError(`pcts[${i}] must be at least 1, got ${p}`);
    sum += p;
  });
  if (sum !== 100) throw new RangeError(`percentages must sum to 100, got ${sum}`);
  return shareOut(pcts, 100, total);
}
