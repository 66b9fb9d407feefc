/**
 * The service fee (consumer spec 4.8 quote and config; issue 11): percentage rounded down
 * or fixed, then the floor, then the optional cap; exact integer arithmetic. Properties
 * checked against BigInt arithmetic over the whole price range.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { DEFAULT_ORDER_CONFIG, ITEM_PRICE_CEILING, orderConfig, quote, serviceFee, type OrderConfig } from '../../../shared/orders/fees.js';

const price = fc.integer({ min: 0, max: ITEM_PRICE_CEILING });
const config = fc
  .record({
    fee_type: fc.constantFrom('percentage' as const, 'fixed' as const),
    milli: fc.integer({ min: 0, max: 100_000 }),
    fixed: fc.integer({ min: 0, max: 10_000_000 }),
    fee_min_idr: fc.integer({ min: 0, max: 1_000_000 }),
    cap: fc.option(fc.integer({ min: 0, max: 100_000_000 }), { nil: null }),
  })
  .map(({ fee_type, milli, fixed, fee_min_idr, cap }) => ({
    fee_type,
    fee_value: fee_type === 'percentage' ? milli / 1000 : fixed,
    fee_min_idr,
    fee_max_idr: cap === null ? null : Math.max(cap, fee_min_idr),
  }));

function expected(p: number, c: Pick<OrderConfig, 'fee_type' | 'fee_value' | 'fee_min_idr' | 'fee_max_idr'>): number {
  let fee = c.fee_type === 'percentage' ? Number((BigInt(p) * BigInt(Math.round(c.fee_value * 1000))) / 100_000n) : c.fee_value;
  fee = Math.max(fee, c.fee_min_idr);
  if (c.fee_max_idr !== null) fee = Math.min(fee, c.fee_max_idr);
  return fee;
}

describe('payment-service orders: fee arithmetic', () => {
  it('matches exact arithmetic: percentage rounded down (or fixed), floor, then cap; total = price + fee', () => {
    fc.assert(
      fc.property(price, config, (p, c) => {
        const fee = serviceFee(p, c);
        expect(fee).to.equal(expected(p, c));
        expect(Number.isSafeInteger(fee) && fee >= 0).to.equal(true);
        if (c.fee_max_idr !== null) expect(fee).to.be.at.most(c.fee_max_idr);
        else expect(fee).to.be.at.least(c.fee_min_idr);
        const q = quote(p, { ...DEFAULT_ORDER_CONFIG, ...c });
        expect(q).to.deep.equal({ itemPrice: p, serviceFee: fee, total: p + fee });
      }),
      { numRuns: 2000 },
    );
  });

  it('never decreases as the price grows', () => {
    fc.assert(
      fc.property(price, price, config, (a, b, c) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(serviceFee(lo, c)).to.be.at.most(serviceFee(hi, c));
      }),
      { numRuns: 1000 },
    );
  });

  it('known values: 5% of 200,000; 2.5% of 123,457 rounds down; 0.7% reads exactly; floor and cap', () => {
    expect(serviceFee(200_000, DEFAULT_ORDER_CONFIG)).to.equal(10_000);
    expect(serviceFee(20_000, DEFAULT_ORDER_CONFIG)).to.equal(5000);
    expect(serviceFee(123_457, { fee_type: 'percentage', fee_value: 2.5, fee_min_idr: 0, fee_max_idr: null })).to.equal(3086);
    expect(serviceFee(1_000_000, { fee_type: 'percentage', fee_value: 0.7, fee_min_idr: 0, fee_max_idr: null })).to.equal(7000);
    expect(serviceFee(10_000_000, { fee_type: 'percentage', fee_value: 2.5, fee_min_idr: 1000, fee_max_idr: 50_000 })).to.equal(50_000);
    expect(serviceFee(5, { fee_type: 'fixed', fee_value: 7500, fee_min_idr: 0, fee_max_idr: 5000 })).to.equal(5000);
    expect(() => serviceFee(-1, DEFAULT_ORDER_CONFIG)).to.throw(RangeError);
    expect(() => serviceFee(1.5, DEFAULT_ORDER_CONFIG)).to.throw(RangeError);
  });

  it('an invalid setting falls back: unknown fields keep defaults, a cap under the floor or max under min takes the defaults whole', () => {
    expect(orderConfig(null)).to.deep.equal(DEFAULT_ORDER_CONFIG);
    expect(orderConfig({ fee_value: -1 }).fee_value).to.equal(DEFAULT_ORDER_CONFIG.fee_value);
    expect(orderConfig({ fee_type: 'percentage', fee_value: 101 }).fee_value).to.equal(DEFAULT_ORDER_CONFIG.fee_value);
    expect(orderConfig({ fee_min_idr: 10_000, fee_max_idr: 5000 })).to.deep.equal(DEFAULT_ORDER_CONFIG);
    expect(orderConfig({ min_item_price_idr: 10, max_item_price_idr: 5 })).to.deep.equal(DEFAULT_ORDER_CONFIG);
    expect(orderConfig({ enabled: 'yes', sla_hours: 0 })).to.deep.include({ enabled: true, sla_hours: 24 });
  });
});
