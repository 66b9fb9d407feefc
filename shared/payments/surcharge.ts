/**
 * The gateway surcharge the buyer pays on top of the escrow amount: `fee_percent` of the
 * amount (0.5 means 0.5%), rounded UP to the whole rupiah so the gateway's cost is never
 * under-collected, plus `fee_fixed`. Integer arithmetic only: the percent is read from its
 * decimal text as thousandths of a percent.
 */
import { assertRupiah } from '../money.js';

export interface GatewayFees {
  /** numeric(6,3) as Postgres returns it, e.g. "0.700", or a number. */
  fee_percent: string | number;
  fee_fixed: number | string;
}

/** "0.7" / "0.700" / 0.7 -> 700 (thousandths of a percent). Throws on anything else. */
export function percentMilli(value: string | number): number {
  const text = typeof value === 'number' ? String(value) : value.trim();
  const m = /^([0-9]{1,3})(?:\.([0-9]{1,3}))?$/.exec(text);
  if (!m) throw new RangeError(`fee_percent ${String(value)} is not a percentage with at most 3 decimals`);
  const milli = Number(m[1]) * 1000 + Number((m[2] ?? '').padEnd(3, '0'));
  if (milli > 100_000) throw new RangeError(`fee_percent ${String(value)} is above 100`);
  return milli;
}

export function surchargeOf(amount: number, fees: GatewayFees): number {
  assertRupiah(amount, 'amount');
  const fixed = assertRupiah(Number(fees.fee_fixed), 'fee_fixed');
  const milli = percentMilli(fees.fee_percent);
  // ceil(amount * milli / 100000) without floats: amount <= 5e8, milli <= 1e5 -> product <= 5e13.
  const product = amount * milli;
  const percentPart = Math.floor(product / 100_000) + (product % 100_000 === 0 ? 0 : 1);
  return percentPart + fixed;
}
