/**
 * The payment-service configuration (consumer spec 4.8 config) read from the `jasabayar`
 * setting, and the service fee: percentage (of the item price, rounded down to the whole
 * rupiah) or fixed, then the floor, then the optional cap. Integer arithmetic only: a
 * percentage is read as thousandths of a percent (2.5 -> 2500).
 */
import type { Db } from '../db.js';
import * as repo from './repo.js';

export interface OrderConfig {
  enabled: boolean;
  fee_type: 'percentage' | 'fixed';
  /** Percent when percentage (up to three decimals), IDR when fixed. */
  fee_value: number;
  fee_min_idr: number;
  fee_max_idr: number | null;
  sla_hours: number;
  min_item_price_idr: number;
  max_item_price_idr: number;
}

export const DEFAULT_ORDER_CONFIG: OrderConfig = {
  enabled: true,
  fee_type: 'percentage',
  fee_value: 5,
  fee_min_idr: 5_000,
  fee_max_idr: null,
  sla_hours: 24,
  min_item_price_idr: 10_000,
  max_item_price_idr: 100_000_000,
};

/** The largest item price any configuration may allow (keeps every product far inside 2^53). */
export const ITEM_PRICE_CEILING = 1_000_000_000_000;

const isCount = (v: unknown, max = ITEM_PRICE_CEILING): v is number => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= max;

/**
 * The configuration from a settings value; each field that is missing or invalid takes its
 * default, and a combination that cannot hold (cap under floor, max under min) falls back whole.
 */
export function orderConfig(value: unknown): OrderConfig {
  if (typeof value !== 'object' || value === null) return DEFAULT_ORDER_CONFIG;
  const v = value as Record<string, unknown>;
  const d = DEFAULT_ORDER_CONFIG;
  const feeType = v.fee_type === 'percentage' || v.fee_type === 'fixed' ? v.fee_type : d.fee_type;
  const feeValueOk =
    typeof v.fee_value === 'number' &&
    (feeType === 'percentage' ? v.fee_value >= 0 && v.fee_value <= 100 && Number.isInteger(Math.round(v.fee_value * 1000)) : isCount(v.fee_value));
  const c: OrderConfig = {
    enabled: typeof v.enabled === 'boolean' ? v.enabled : d.enabled,
    fee_type: feeType,
    fee_value: feeValueOk ? (v.fee_value as number) : feeType === d.fee_type ? d.fee_value : 0,
    fee_min_idr: isCount(v.fee_min_idr) ? v.fee_min_idr : d.fee_min_idr,
    fee_max_idr: v.fee_max_idr === null ? null : isCount(v.fee_max_idr) ? v.fee_max_idr : d.fee_max_idr,
    sla_hours: isCount(v.sla_hours, 24 * 365) && v.sla_hours > 0 ? v.sla_hours : d.sla_hours,
    min_item_price_idr: isCount(v.min_item_price_idr) ? v.min_item_price_idr : d.min_item_price_idr,
    max_item_price_idr: isCount(v.max_item_price_idr) ? v.max_item_price_idr : d.max_item_price_idr,
  };
  if (c.fee_max_idr !== null && c.fee_max_idr < c.fee_min_idr) return DEFAULT_ORDER_CONFIG;
  if (c.max_item_price_idr < c.min_item_price_idr) return DEFAULT_ORDER_CONFIG;
  return c;
}

/** The service fee for an item price (whole rupiah, never negative). */
export function serviceFee(itemPrice: number, c: Pick<OrderConfig, 'fee_type' | 'fee_value' | 'fee_min_idr' | 'fee_max_idr'>): number {
  if (!isCount(itemPrice)) throw new RangeError(`item price must be a whole rupiah amount, got ${String(itemPrice)}`);
  let fee: number;
  if (c.fee_type === 'percentage') {
    const milli = Math.round(c.fee_value * 1000); // thousandths of a percent, at most 100000
    // itemPrice <= 1e12 and milli <= 1e5: the product stays below 2^53.
    fee = Math.floor((itemPrice * milli) / 100_000);
  } else {
    fee = c.fee_value;
  }
  fee = Math.max(fee, c.fee_min_idr);
  if (c.fee_max_idr !== null) fee = Math.min(fee, c.fee_max_idr);
  return fee;
}

export interface Quote {
  itemPrice: number;
  serviceFee: number;
  total: number;
}

export function quote(itemPrice: number, c: OrderConfig): Quote {
  const fee = serviceFee(itemPrice, c);
  return { itemPrice, serviceFee: fee, total: itemPrice + fee };
}

export { ORDER_SETTING_KEY } from './repo.js';

export async function loadOrderConfig(trx: Db): Promise<OrderConfig> {
  return orderConfig(await repo.orderSettings(trx));
}
