/**
 * Withdrawal fee and limits (consumer spec 2 "Withdrawal configuration" and 4.4; decision
 * 0008). Pure arithmetic on whole rupiah; every computed amount is rounded down.
 *
 * Order: the configured rule (percentage of the amount, or a fixed fee), then its floor
 * and cap (a cap of 0 means withdrawals are free), then the loyalty discount percent, then
 * the one voucher that takes off the most (ties to the earliest expiry, then the oldest
 * grant). When `withdraw_fee` is missing or invalid the fallback applies: fixed Rp5.000,
 * floor Rp2.500, cap Rp25.000, no loyalty discount. Same for `withdraw_limits`.
 */
import type { Db } from '../db.js';
import { assertRupiah } from '../money.js';
import { setting } from './repo.js';

export interface WithdrawFeeRule {
  type: 'percentage' | 'fixed';
  /** As configured: percent of the amount (0.5 = 0.5%) or whole rupiah. */
  value: number;
  /** The percentage in basis points (value x 100); 0 for a fixed fee. */
  percentBp: number;
  minIdr: number;
  /** 0: withdrawals are free. */
  maxIdr: number;
  /** 0 to 100. */
  loyaltyDiscountPercent: number;
}

export interface WithdrawLimits {
  minIdr: number;
  maxIdr: number;
  stepIdr: number;
}

export const FALLBACK_WITHDRAW_FEE: WithdrawFeeRule = Object.freeze({
  type: 'fixed',
  value: 5000,
  percentBp: 0,
  minIdr: 2500,
  maxIdr: 25_000,
  loyaltyDiscountPercent: 0,
});

export const FALLBACK_WITHDRAW_LIMITS: WithdrawLimits = Object.freeze({ minIdr: 50_000, maxIdr: 100_000_000, stepIdr: 1000 });

/**
 * Loyalty (decision 0008): a user with at least this many escrows released to them as
 * seller, or this many paid withdrawals, gets the configured loyalty discount.
 */
export const LOYALTY_MIN_RELEASED_ESCROWS = 5;
export const LOYALTY_MIN_PAID_WITHDRAWALS = 3;

const isCount = (v: unknown, max = Number.MAX_SAFE_INTEGER): v is number => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= max;

/** Basis points of a percentage given with at most two decimals (0 to 100), else null. */
function basisPoints(v: unknown): number | null {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 100) return null;
  const bp = Math.round(v * 100);
  return Math.abs(v * 100 - bp) < 1e-6 ? bp : null;
}

const own = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);

/**
 * The rule from a `withdraw_fee` settings value { type, value, min_idr, max_idr,
 * loyalty_discount_percent? }, or the fallback when it is missing or any field is invalid.
 */
export function withdrawFeeRule(raw: unknown): WithdrawFeeRule {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return FALLBACK_WITHDRAW_FEE;
  const v = raw as Record<string, unknown>;
  if (!isCount(v.min_idr) || !isCount(v.max_idr)) return FALLBACK_WITHDRAW_FEE;
  if (v.max_idr !== 0 && v.max_idr < v.min_idr) return FALLBACK_WITHDRAW_FEE;
  let loyalty = 0;
  if (own(v, 'loyalty_discount_percent')) {
    if (!isCount(v.loyalty_discount_percent, 100)) return FALLBACK_WITHDRAW_FEE;
    loyalty = v.loyalty_discount_percent;
  }
  const base = { minIdr: v.min_idr, maxIdr: v.max_idr, loyaltyDiscountPercent: loyalty };
  if (v.type === 'fixed') {
    if (!isCount(v.value)) return FALLBACK_WITHDRAW_FEE;
    return { type: 'fixed', value: v.value, percentBp: 0, ...base };
  }
  if (v.type === 'percentage') {
    const bp = basisPoints(v.value);
    if (bp === null) return FALLBACK_WITHDRAW_FEE;
    return { type: 'percentage', value: bp / 100, percentBp: bp, ...base };
  }
  return FALLBACK_WITHDRAW_FEE;
}

/** The limits from a `withdraw_limits` settings value { min_idr, max_idr, step_idr }, or the fallback. */
export function withdrawLimits(raw: unknown): WithdrawLimits {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return FALLBACK_WITHDRAW_LIMITS;
  const v = raw as Record<string, unknown>;
  if (!isCount(v.min_idr) || !isCount(v.max_idr) || !isCount(v.step_idr)) return FALLBACK_WITHDRAW_LIMITS;
  if (v.min_idr < 1 || v.step_idr < 1 || v.max_idr < v.min_idr) return FALLBACK_WITHDRAW_LIMITS;
  return { minIdr: v.min_idr, maxIdr: v.max_idr, stepIdr: v.step_idr };
}

/** floor(amount * parts / whole) without leaving the safe-integer range on the way. */
function share(amount: number, parts: number, whole: number): number {
  return Number((BigInt(amount) * BigInt(parts)) / BigInt(whole));
}

/** The configured rule with its floor and cap, before any discount. */
export function baseFee(amount: number, rule: WithdrawFeeRule): number {
  assertRupiah(amount, 'withdrawal amount');
  if (rule.maxIdr === 0) return 0;
  const raw = rule.type === 'percentage' ? share(amount, rule.percentBp, 10_000) : rule.value;
  return Math.min(Math.max(raw, rule.minIdr), rule.maxIdr);
}

/** What the loyalty discount takes off a fee (rounded down). */
export function loyaltyDiscount(fee: number, percent: number): number {
  return share(fee, percent, 100);
}

/** A user's unused voucher, as the fee needs it. */
export interface VoucherOffer {
  redemptionId: string;
  percentOff: number | null;
  amountOff: number | null;
  maxDiscountAmount: number | null;
  expiresAt: Date | null;
  /** When the user got it (the last tie-break). */
  grantedAt: Date;
}

/** What one voucher takes off a fee: never more than the fee, nor than its own maximum. */
export function voucherDiscount(fee: number, v: Pick<VoucherOffer, 'percentOff' | 'amountOff' | 'maxDiscountAmount'>): number {
  let d = v.percentOff !== null ? share(fee, v.percentOff, 100) : (v.amountOff ?? 0);
  if (v.maxDiscountAmount !== null) d = Math.min(d, v.maxDiscountAmount);
  return Math.max(0, Math.min(d, fee));
}

const expiryMs = (v: VoucherOffer) => (v.expiresAt === null ? Number.POSITIVE_INFINITY : v.expiresAt.getTime());

/**
 * The voucher that takes off the most; ties go to the earliest expiry (no expiry counts as
 * last), then the oldest grant, then the redemption id. None when no voucher takes
 * anything off (a voucher is never spent on a fee that is already 0).
 */
export function bestVoucher(fee: number, vouchers: readonly VoucherOffer[]): { voucher: VoucherOffer; discount: number } | null {
  let best: { voucher: VoucherOffer; discount: number } | null = null;
  for (const v of vouchers) {
    const discount = voucherDiscount(fee, v);
    if (discount <= 0) continue;
    if (best === null || discount > best.discount) {
      best = { voucher: v, discount };
      continue;
    }
    if (discount < best.discount) continue;
    const [a, b] = [expiryMs(v), expiryMs(best.voucher)];
    const earlier =
      a < b ||
      (a === b && (v.grantedAt.getTime() < best.voucher.grantedAt.getTime() ||
        (v.grantedAt.getTime() === best.voucher.grantedAt.getTime() && v.redemptionId < best.voucher.redemptionId)));
    if (earlier) best = { voucher: v, discount };
  }
  return best;
}

export interface FeeQuote {
  amount: number;
  /** The rule after its floor and cap. */
  base: number;
  loyaltyDiscount: number;
  voucherDiscount: number;
  /** The redemption the fee would consume, or null. */
  voucherRedemptionId: string | null;
  fee: number;
  /** amount - fee (zero or negative when the fee takes it all: FEE_EXCEEDS_AMOUNT). */
  net: number;
}

/** The whole fee of a withdrawal: rule, floor/cap, loyalty, then the best voucher. */
export function quoteFee(amount: number, rule: WithdrawFeeRule, options: { loyal: boolean; vouchers?: readonly VoucherOffer[] }): FeeQuote {
  const base = baseFee(amount, rule);
  const loyalty = options.loyal ? loyaltyDiscount(base, rule.loyaltyDiscountPercent) : 0;
  const afterLoyalty = base - loyalty;
  const best = bestVoucher(afterLoyalty, options.vouchers ?? []);
  const voucher = best?.discount ?? 0;
  const fee = afterLoyalty - voucher;
  return {
    amount,
    base,
    loyaltyDiscount: loyalty,
    voucherDiscount: voucher,
    voucherRedemptionId: best?.voucher.redemptionId ?? null,
    fee,
    net: amount - fee,
  };
}

export async function loadWithdrawFeeRule(trx: Db): Promise<WithdrawFeeRule> {
  return withdrawFeeRule(await setting(trx, 'withdraw_fee'));
}

export async function loadWithdrawLimits(trx: Db): Promise<WithdrawLimits> {
  return withdrawLimits(await setting(trx, 'withdraw_limits'));
}
