/**
 * The escrow fee taken at release (consumer spec 4.2): the `escrow_fee` setting
 * { percent_bp, min_idr, max_idr? }, or 1% with a Rp2.000 floor when the setting is absent
 * or invalid. Whole rupiah, rounded down, never more than the escrow amount.
 */
import type { Db } from '../db.js';
import { assertRupiah } from '../money.js';
import { setting } from './repo.js';

export interface EscrowFeeRule {
  /** Basis points of the amount (100 = 1%). */
  percentBp: number;
  minIdr: number;
  /** Null: uncapped. */
  maxIdr: number | null;
}

export const FALLBACK_ESCROW_FEE: EscrowFeeRule = { percentBp: 100, minIdr: 2000, maxIdr: null };

const isCount = (v: unknown, max = Number.MAX_SAFE_INTEGER): v is number => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= max;

/** The rule from a settings value, or the fallback when it is missing or invalid. */
export function escrowFeeRule(value: unknown): EscrowFeeRule {
  if (typeof value !== 'object' || value === null) return FALLBACK_ESCROW_FEE;
  const v = value as Record<string, unknown>;
  if (!isCount(v.percent_bp, 10_000) || !isCount(v.min_idr)) return FALLBACK_ESCROW_FEE;
  if (v.max_idr !== undefined && v.max_idr !== null && (!isCount(v.max_idr) || v.max_idr < v.min_idr)) return FALLBACK_ESCROW_FEE;
  return { percentBp: v.percent_bp, minIdr: v.min_idr, maxIdr: (v.max_idr) ?? null };
}

export function escrowFee(amount: number, rule: EscrowFeeRule): number {
  assertRupiah(amount, 'escrow amount');
  // amount <= 5e8 and percent_bp <= 1e4: the product stays far inside the safe range.
  let fee = Math.floor((amount * rule.percentBp) / 10_000);
  fee = Math.max(fee, rule.minIdr);
  if (rule.maxIdr !== null) fee = Math.min(fee, rule.maxIdr);
  return Math.min(fee, amount);
}

/** The settings key of the rule. */
export const ESCROW_FEE_SETTING = 'escrow_fee';

export async function loadEscrowFeeRule(trx: Db): Promise<EscrowFeeRule> {
  return escrowFeeRule(await setting(trx, ESCROW_FEE_SETTING));
}
