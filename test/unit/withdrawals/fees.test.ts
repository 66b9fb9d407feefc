/**
 * The withdrawal fee (consumer spec 4.4, decision 0008): tables for percentage and fixed
 * rules, floor, cap, a zero cap, loyalty, voucher choice and ties; the fallback for every
 * invalid settings value; fast-check properties (never negative, never above the base, the
 * best voucher really is the best, an accepted fee is below the amount).
 */
import { expect } from 'chai';
import fc from 'fast-check';
import {
  baseFee,
  bestVoucher,
  FALLBACK_WITHDRAW_FEE,
  FALLBACK_WITHDRAW_LIMITS,
  quoteFee,
  voucherDiscount,
  withdrawFeeRule,
  withdrawLimits,
  type VoucherOffer,
  type WithdrawFeeRule,
} from '../../../shared/withdrawals/fees.js';

const runs = { numRuns: 2000 };
const at = (iso: string) => new Date(iso);

function offer(id: string, o: Partial<VoucherOffer>): VoucherOffer {
  return {
    redemptionId: id,
    percentOff: null,
    amountOff: null,
    maxDiscountAmount: null,
    expiresAt: null,
    grantedAt: at('2026-11-01T00:00:00.000Z'),
    ...o,
  };
}

describe('withdrawal fee: the fallback (fixed Rp5.000, floor Rp2.500, cap Rp25.000)', () => {
  it('is exactly the spec fallback', () => {
    expect(FALLBACK_WITHDRAW_FEE).to.deep.equal({ type: 'fixed', value: 5000, percentBp: 0, minIdr: 2500, maxIdr: 25_000, loyaltyDiscountPercent: 0 });
    for (const amount of [1, 50_000, 100_000, 1_000_000, 100_000_000]) expect(baseFee(amount, FALLBACK_WITHDRAW_FEE), `amount ${amount}`).to.equal(5000);
  });

  const invalid: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['a string', '{"type":"fixed","value":1000,"min_idr":0,"max_idr":5000}'],
    ['a number', 5000],
    ['an array', [{ type: 'fixed' }]],
    ['an empty object', {}],
    ['type missing', { value: 1000, min_idr: 0, max_idr: 5000 }],
    ['unknown type', { type: 'percent', value: 1, min_idr: 0, max_idr: 5000 }],
    ['fixed value negative', { type: 'fixed', value: -1, min_idr: 0, max_idr: 5000 }],
    ['fixed value fractional', { type: 'fixed', value: 1000.5, min_idr: 0, max_idr: 5000 }],
    ['fixed value as a string', { type: 'fixed', value: '1000', min_idr: 0, max_idr: 5000 }],
    ['percentage above 100', { type: 'percentage', value: 100.5, min_idr: 0, max_idr: 5000 }],
    ['percentage negative', { type: 'percentage', value: -0.5, min_idr: 0, max_idr: 5000 }],
    ['percentage with three decimals', { type: 'percentage', value: 0.125, min_idr: 0, max_idr: 5000 }],
    ['percentage NaN', { type: 'percentage', value: Number.NaN, min_idr: 0, max_idr: 5000 }],
    ['min_idr missing', { type: 'fixed', value: 1000, max_idr: 5000 }],
    ['min_idr as a string', { type: 'fixed', value: 1000, min_idr: '0', max_idr: 5000 }],
    ['max_idr missing', { type: 'fixed', value: 1000, min_idr: 0 }],
    ['max_idr null', { type: 'fixed', value: 1000, min_idr: 0, max_idr: null }],
    ['max_idr below min_idr', { type: 'fixed', value: 1000, min_idr: 3000, max_idr: 2999 }],
    ['max_idr negative', { type: 'fixed', value: 1000, min_idr: 0, max_idr: -1 }],
    ['loyalty above 100', { type: 'fixed', value: 1000, min_idr: 0, max_idr: 5000, loyalty_discount_percent: 101 }],
    ['loyalty fractional', { type: 'fixed', value: 1000, min_idr: 0, max_idr: 5000, loyalty_discount_percent: 12.5 }],
    ['loyalty null', { type: 'fixed', value: 1000, min_idr: 0, max_idr: 5000, loyalty_discount_percent: null }],
  ];
  for (const [name, value] of invalid) {
    it(`falls back for ${name}`, () => {
      expect(withdrawFeeRule(value)).to.equal(FALLBACK_WITHDRAW_FEE);
    });
  }

  it('reads valid values exactly (loyalty missing means 0)', () => {
    expect(withdrawFeeRule({ type: 'percentage', value: 0.5, min_idr: 2500, max_idr: 25_000 })).to.deep.equal({
      type: 'percentage',
      value: 0.5,
      percentBp: 50,
      minIdr: 2500,
      maxIdr: 25_000,
      loyaltyDiscountPercent: 0,
    });
    expect(withdrawFeeRule({ type: 'fixed', value: 7500, min_idr: 0, max_idr: 0, loyalty_discount_percent: 100 })).to.deep.equal({
      type: 'fixed',
      value: 7500,
      percentBp: 0,
      minIdr: 0,
      maxIdr: 0,
      loyaltyDiscountPercent: 100,
    });
    // A zero cap with any floor is valid: withdrawals are free.
    expect(withdrawFeeRule({ type: 'fixed', value: 5000, min_idr: 2500, max_idr: 0 }).maxIdr).to.equal(0);
    expect(withdrawFeeRule({ type: 'percentage', value: 0.07, min_idr: 0, max_idr: 1 }).percentBp).to.equal(7);
  });
});

describe('withdrawal fee: tables', () => {
  const pct = (value: number, min = 2500, max = 25_000, loyalty = 0) => withdrawFeeRule({ type: 'percentage', value, min_idr: min, max_idr: max, loyalty_discount_percent: loyalty });
  const fixed = (value: number, min = 2500, max = 25_000, loyalty = 0) => withdrawFeeRule({ type: 'fixed', value, min_idr: min, max_idr: max, loyalty_discount_percent: loyalty });

  it('percentage: rounded down, then the floor and the cap', () => {
    const cases: [WithdrawFeeRule, number, number][] = [
      [pct(1), 100_000, 2500], // 1,000 -> floor
      [pct(1), 250_000, 2500],
      [pct(1), 250_100, 2501],
      [pct(1), 1_000_000, 10_000],
      [pct(1), 2_500_000, 25_000],
      [pct(1), 3_000_000, 25_000], // 30,000 -> cap
      [pct(0.5), 1_000_000, 5000],
      [pct(0.5), 1_000_199, 5000], // 5,000.995 rounded down
      [pct(0.25, 0, 1_000_000), 1_234_567, 3086], // 3,086.4175
      [pct(0.07, 0, 1_000_000), 100_000_000, 70_000],
      [pct(100, 0, 1_000_000_000), 123_456, 123_456],
    ];
    for (const [rule, amount, fee] of cases) expect(baseFee(amount, rule), `${rule.value}% of ${amount}`).to.equal(fee);
  });

  it('fixed: the value between the floor and the cap', () => {
    expect(baseFee(100_000, fixed(7500))).to.equal(7500);
    expect(baseFee(100_000, fixed(1000))).to.equal(2500);
    expect(baseFee(100_000, fixed(30_000))).to.equal(25_000);
    expect(baseFee(100_000, fixed(0, 0))).to.equal(0);
  });

  it('a cap of 0 makes every withdrawal free, whatever the rule and the floor', () => {
    for (const rule of [pct(1, 2500, 0), fixed(5000, 2500, 0), fixed(99_999, 50_000, 0)]) {
      for (const amount of [1, 50_000, 10_000_000]) expect(quoteFee(amount, rule, { loyal: true }).fee).to.equal(0);
    }
  });

  it('loyalty: a percent off the capped fee, rounded down, only for loyal users', () => {
    expect(quoteFee(100_000, fixed(5000, 2500, 25_000, 50), { loyal: true })).to.include({ base: 5000, loyaltyDiscount: 2500, fee: 2500, net: 97_500 });
    expect(quoteFee(100_000, fixed(5000, 2500, 25_000, 50), { loyal: false })).to.include({ base: 5000, loyaltyDiscount: 0, fee: 5000 });
    expect(quoteFee(100_000, fixed(5000, 2500, 25_000, 33), { loyal: true })).to.include({ loyaltyDiscount: 1650, fee: 3350 });
    // 0.7% of 1,234,500 = 8,641 (8,641.5 down); 33% of it = 2,851 (2,851.53 down).
    expect(quoteFee(1_234_500, pct(0.7, 0, 25_000, 33), { loyal: true })).to.include({ base: 8641, loyaltyDiscount: 2851, fee: 5790 });
    expect(quoteFee(100_000, fixed(5000, 2500, 25_000, 100), { loyal: true })).to.include({ fee: 0, net: 100_000 });
  });

  it('the voucher comes after the loyalty discount', () => {
    const rule = fixed(5000, 2500, 25_000, 50);
    const q = quoteFee(100_000, rule, { loyal: true, vouchers: [offer('r1', { amountOff: 2000 })] });
    // 5,000 -> loyalty 2,500 -> voucher 2,000 -> 500 (voucher first would give 1,500).
    expect(q).to.deep.equal({ amount: 100_000, base: 5000, loyaltyDiscount: 2500, voucherDiscount: 2000, voucherRedemptionId: 'r1', fee: 500, net: 99_500 });
  });

  it('voucher discounts: percent (rounded down), amount, each capped by its maximum and by the fee', () => {
    expect(voucherDiscount(5000, { percentOff: 100, amountOff: null, maxDiscountAmount: null })).to.equal(5000);
    expect(voucherDiscount(5000, { percentOff: 33, amountOff: null, maxDiscountAmount: null })).to.equal(1650);
    expect(voucherDiscount(4999, { percentOff: 50, amountOff: null, maxDiscountAmount: null })).to.equal(2499);
    expect(voucherDiscount(5000, { percentOff: 50, amountOff: null, maxDiscountAmount: 1000 })).to.equal(1000);
    expect(voucherDiscount(5000, { percentOff: null, amountOff: 2000, maxDiscountAmount: null })).to.equal(2000);
    expect(voucherDiscount(5000, { percentOff: null, amountOff: 10_000, maxDiscountAmount: null })).to.equal(5000);
    expect(voucherDiscount(5000, { percentOff: null, amountOff: 10_000, maxDiscountAmount: 3000 })).to.equal(3000);
    expect(voucherDiscount(0, { percentOff: 100, amountOff: null, maxDiscountAmount: null })).to.equal(0);
  });

  it('chooses the voucher that takes off the most', () => {
    const vouchers = [offer('half', { percentOff: 50 }), offer('three', { amountOff: 3000 }), offer('capped', { percentOff: 100, maxDiscountAmount: 2000 })];
    expect(bestVoucher(5000, vouchers)).to.deep.equal({ voucher: vouchers[1], discount: 3000 });
    // On a larger fee the percentage wins.
    expect(bestVoucher(20_000, vouchers)?.voucher.redemptionId).to.equal('half');
  });

  it('ties go to the earliest expiry, no expiry counting as last, then the oldest grant, then the id', () => {
    const late = offer('late', { amountOff: 2500, expiresAt: at('2026-12-10T00:00:00.000Z') });
    const early = offer('early', { percentOff: 50, expiresAt: at('2026-12-05T00:00:00.000Z') });
    const never = offer('never', { amountOff: 2500 });
    expect(bestVoucher(5000, [late, never, early])?.voucher.redemptionId).to.equal('early');
    expect(bestVoucher(5000, [never, late])?.voucher.redemptionId).to.equal('late');
    const older = offer('b-older', { amountOff: 2500, grantedAt: at('2026-10-01T00:00:00.000Z') });
    const newer = offer('a-newer', { amountOff: 2500 });
    expect(bestVoucher(5000, [newer, older])?.voucher.redemptionId).to.equal('b-older');
    expect(bestVoucher(5000, [offer('y', { amountOff: 2500 }), offer('x', { amountOff: 2500 })])?.voucher.redemptionId).to.equal('x');
    // A larger discount beats an earlier expiry.
    expect(bestVoucher(5000, [early, offer('more', { amountOff: 2600 })])?.voucher.redemptionId).to.equal('more');
  });

  it('spends no voucher on a fee that is already 0', () => {
    const q = quoteFee(100_000, fixed(5000, 2500, 0), { loyal: false, vouchers: [offer('r1', { percentOff: 100 })] });
    expect(q).to.include({ fee: 0, voucherDiscount: 0, voucherRedemptionId: null });
  });
});

describe('withdrawal limits', () => {
  it('reads valid values and falls back for invalid ones', () => {
    expect(FALLBACK_WITHDRAW_LIMITS).to.deep.equal({ minIdr: 50_000, maxIdr: 100_000_000, stepIdr: 1000 });
    expect(withdrawLimits({ min_idr: 10_000, max_idr: 5_000_000, step_idr: 5000 })).to.deep.equal({ minIdr: 10_000, maxIdr: 5_000_000, stepIdr: 5000 });
    for (const bad of [undefined, null, 'x', [], {}, { min_idr: 0, max_idr: 10, step_idr: 1 }, { min_idr: 10, max_idr: 9, step_idr: 1 }, { min_idr: 10, max_idr: 100, step_idr: 0 }, { min_idr: '10', max_idr: 100, step_idr: 1 }, { min_idr: 10, max_idr: 100.5, step_idr: 1 }]) {
      expect(withdrawLimits(bad), JSON.stringify(bad)).to.equal(FALLBACK_WITHDRAW_LIMITS);
    }
  });
});

describe('withdrawal fee: properties', () => {
  const rawRule = fc.record({
    type: fc.constantFrom('percentage', 'fixed'),
    bp: fc.integer({ min: 0, max: 10_000 }),
    fixed: fc.integer({ min: 0, max: 1_000_000 }),
    min: fc.integer({ min: 0, max: 100_000 }),
    extra: fc.integer({ min: 0, max: 1_000_000 }),
    zeroCap: fc.boolean(),
    loyalty: fc.integer({ min: 0, max: 100 }),
  });
  const rule = rawRule.map((r) =>
    withdrawFeeRule({
      type: r.type,
      value: r.type === 'percentage' ? r.bp / 100 : r.fixed,
      min_idr: r.min,
      max_idr: r.zeroCap ? 0 : r.min + r.extra,
      loyalty_discount_percent: r.loyalty,
    }),
  );
  const voucher = fc
    .record({
      id: fc.uuid(),
      percent: fc.option(fc.integer({ min: 1, max: 100 }), { nil: null }),
      amount: fc.integer({ min: 1, max: 100_000 }),
      max: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: null }),
      expires: fc.option(fc.integer({ min: 0, max: 365 }), { nil: null }),
      granted: fc.integer({ min: 0, max: 365 }),
    })
    .map((v) =>
      offer(v.id, {
        percentOff: v.percent,
        amountOff: v.percent === null ? v.amount : null,
        maxDiscountAmount: v.max,
        expiresAt: v.expires === null ? null : new Date(Date.UTC(2026, 0, 1) + v.expires * 86_400_000),
        grantedAt: new Date(Date.UTC(2025, 0, 1) + v.granted * 86_400_000),
      }),
    );
  const amount = fc.integer({ min: 1, max: 1_000_000_000 });
  const vouchers = fc.array(voucher, { maxLength: 6 });

  it('the fee is a whole number, never negative, never above the capped rule; fee + net = amount', () => {
    fc.assert(
      fc.property(amount, rule, fc.boolean(), vouchers, (a, r, loyal, vs) => {
        const q = quoteFee(a, r, { loyal, vouchers: vs });
        expect(Number.isSafeInteger(q.fee)).to.equal(true);
        expect(q.fee).to.be.at.least(0);
        expect(q.fee).to.be.at.most(q.base);
        expect(q.base).to.be.at.most(r.maxIdr);
        if (r.maxIdr === 0) expect(q.fee).to.equal(0);
        expect(q.fee + q.net).to.equal(a);
        expect(q.base - q.loyaltyDiscount - q.voucherDiscount).to.equal(q.fee);
        expect(q.voucherDiscount === 0).to.equal(q.voucherRedemptionId === null);
      }),
      runs,
    );
  });

  it('an accepted fee (below the amount) leaves a positive net; a fee at or above it is what the service refuses', () => {
    fc.assert(
      fc.property(amount, rule, fc.boolean(), vouchers, (a, r, loyal, vs) => {
        const q = quoteFee(a, r, { loyal, vouchers: vs });
        if (q.fee < a) {
          expect(q.net).to.be.greaterThan(0);
          expect(q.fee).to.be.below(a);
        } else expect(q.net).to.be.at.most(0);
      }),
      runs,
    );
  });

  it('the chosen voucher takes off at least as much as any other; loyalty and vouchers never raise the fee', () => {
    fc.assert(
      fc.property(amount, rule, fc.boolean(), vouchers, (a, r, loyal, vs) => {
        const q = quoteFee(a, r, { loyal, vouchers: vs });
        const afterLoyalty = q.base - q.loyaltyDiscount;
        for (const v of vs) expect(voucherDiscount(afterLoyalty, v)).to.be.at.most(q.voucherDiscount);
        expect(q.fee).to.be.at.most(quoteFee(a, r, { loyal, vouchers: [] }).fee);
        expect(q.fee).to.be.at.most(quoteFee(a, r, { loyal: false, vouchers: vs }).fee);
      }),
      runs,
    );
  });

  it('the choice does not depend on the order of the vouchers', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), vouchers, (fee, vs) => {
        const a = bestVoucher(fee, vs);
        const b = bestVoucher(fee, [...vs].reverse());
        expect(a?.voucher.redemptionId ?? null).to.equal(b?.voucher.redemptionId ?? null);
      }),
      runs,
    );
  });

  it('for any settings value at all: the fallback, or a rule that is itself valid', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.anything(), fc.record({ type: fc.constantFrom('fixed', 'percentage', 'x'), value: fc.anything(), min_idr: fc.anything(), max_idr: fc.anything(), loyalty_discount_percent: fc.anything() })),
        (value) => {
          const r = withdrawFeeRule(value);
          if (r === FALLBACK_WITHDRAW_FEE) return;
          expect(Number.isSafeInteger(r.minIdr) && r.minIdr >= 0).to.equal(true);
          expect(Number.isSafeInteger(r.maxIdr) && (r.maxIdr === 0 || r.maxIdr >= r.minIdr)).to.equal(true);
          expect(Number.isSafeInteger(r.loyaltyDiscountPercent) && r.loyaltyDiscountPercent >= 0 && r.loyaltyDiscountPercent <= 100).to.equal(true);
          expect(Number.isSafeInteger(r.percentBp) && r.percentBp >= 0 && r.percentBp <= 10_000).to.equal(true);
        },
      ),
      runs,
    );
  });

  it('refuses an amount that is not a whole number of rupiah', () => {
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => baseFee(bad, FALLBACK_WITHDRAW_FEE), String(bad)).to.throw(RangeError);
    }
  });
});
