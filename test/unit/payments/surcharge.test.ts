/**
 * The gateway surcharge (issue 8; spec 2 "Gateway method entry": fee_percent 0.5 means 0.5%):
 * ceil(amount * fee_percent / 100) + fee_fixed in whole rupiah. Properties of surchargeOf are
 * checked against an independent BigInt computation; percentMilli reads the decimal text.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { percentMilli, surchargeOf } from '../../../shared/payments/surcharge.js';

const MAX_AMOUNT = 500_000_000;
const runs = { numRuns: 3000 };

/** numeric(6,3) text as Postgres gives it ("0.700"), or trimmed ("0.7"), for thousandths 0..100000. */
const percentText = fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.constantFrom('padded', 'trimmed', 'integer-when-whole')).map(([milli, style]) => {
  const whole = Math.floor(milli / 1000);
  const frac = String(milli % 1000).padStart(3, '0');
  if (style === 'padded') return { milli, text: `${whole}.${frac}` };
  if (style === 'integer-when-whole' && milli % 1000 === 0) return { milli, text: String(whole) };
  const trimmed = frac.replace(/0+$/, '');
  return { milli, text: trimmed === '' ? `${whole}.0` : `${whole}.${trimmed}` };
});

const amount = fc.integer({ min: 0, max: MAX_AMOUNT });
const feeFixed = fc.integer({ min: 0, max: 10_000_000 });

/** ceil(amount * milli / 100000) + fixed, in BigInt (written here independently). */
function expected(amountIdr: number, milli: number, fixed: number): number {
  const product = BigInt(amountIdr) * BigInt(milli);
  const q = product / 100_000n;
  const ceil = product % 100_000n === 0n ? q : q + 1n;
  return Number(ceil + BigInt(fixed));
}

describe('payments surcharge: percentMilli', () => {
  const cases: [string | number, number][] = [
    ['0.7', 700],
    ['0.700', 700],
    ['0.70', 700],
    ['1', 1000],
    ['1.5', 1500],
    ['100', 100_000],
    ['100.000', 100_000],
    ['0', 0],
    ['0.000', 0],
    ['0.001', 1],
    ['99.999', 99_999],
    [' 2.5 ', 2500],
    [0.7, 700],
    [0.5, 500],
    [100, 100_000],
    [0, 0],
  ];
  for (const [input, milli] of cases) {
    it(`${JSON.stringify(input)} -> ${milli}`, () => {
      expect(percentMilli(input)).to.equal(milli);
    });
  }

  for (const bad of ['101', '100.001', '0.0001', '-1', '-0.5', 'abc', '', '1e2', '0x10', '1,5', '.5', '5.', '1000', '1.2.3', 'NaN', 'Infinity', 101, -1, Number.NaN, Number.POSITIVE_INFINITY, 0.0001, 0.0004, 1e-7, 0.1 + 0.2]) {
    it(`rejects ${typeof bad === 'string' ? JSON.stringify(bad) : `the number ${String(bad)}`}`, () => {
      expect(() => percentMilli(bad)).to.throw(RangeError);
    });
  }

  it('reads every numeric(6,3) value from 0 to 100 as its thousandths', () => {
    fc.assert(
      fc.property(percentText, ({ milli, text }) => {
        expect(percentMilli(text), text).to.equal(milli);
      }),
      runs,
    );
  });
});

describe('payments surcharge: surchargeOf', () => {
  it('the cases of the brief: 0.7% of 150,000 = 1,050; 0.5% of 10,001 = 51 (rounded up); fee_fixed added; 0%', () => {
    expect(surchargeOf(150_000, { fee_percent: '0.7', fee_fixed: 0 })).to.equal(1050);
    expect(surchargeOf(150_000, { fee_percent: '0.700', fee_fixed: 0 })).to.equal(1050);
    expect(surchargeOf(10_001, { fee_percent: '0.5', fee_fixed: 0 })).to.equal(51);
    expect(surchargeOf(10_000, { fee_percent: '0.5', fee_fixed: 0 })).to.equal(50);
    expect(surchargeOf(150_000, { fee_percent: '0.7', fee_fixed: 4000 })).to.equal(5050);
    expect(surchargeOf(150_000, { fee_percent: '0.7', fee_fixed: '4000' })).to.equal(5050);
    expect(surchargeOf(150_000, { fee_percent: '0', fee_fixed: 0 })).to.equal(0);
    expect(surchargeOf(150_000, { fee_percent: '0.000', fee_fixed: 2500 })).to.equal(2500);
    expect(surchargeOf(1, { fee_percent: '0.001', fee_fixed: 0 })).to.equal(1);
    expect(surchargeOf(0, { fee_percent: '2', fee_fixed: 0 })).to.equal(0);
    expect(surchargeOf(MAX_AMOUNT, { fee_percent: '100', fee_fixed: 0 })).to.equal(MAX_AMOUNT);
    expect(surchargeOf(MAX_AMOUNT, { fee_percent: '99.999', fee_fixed: 7 })).to.equal(499_995_000 + 7);
  });

  it('is an integer, at least fee_fixed, and exactly the ceiling (BigInt reference)', () => {
    fc.assert(
      fc.property(amount, percentText, feeFixed, (a, { milli, text }, fixed) => {
        const s = surchargeOf(a, { fee_percent: text, fee_fixed: fixed });
        expect(Number.isSafeInteger(s)).to.equal(true);
        expect(s).to.be.at.least(fixed);
        expect(s, `${a} at ${text}% + ${fixed}`).to.equal(expected(a, milli, fixed));
        // The ceiling: never under the exact fee, and less than one rupiah over it.
        const exactTimes100k = BigInt(a) * BigInt(milli);
        const percentPart = BigInt(s - fixed);
        expect(percentPart * 100_000n >= exactTimes100k).to.equal(true);
        expect((percentPart - 1n) * 100_000n < exactTimes100k).to.equal(true);
      }),
      runs,
    );
  });

  it('the percent may come as a number too (the same answer as its text)', () => {
    fc.assert(
      fc.property(amount, fc.integer({ min: 0, max: 100_000 }), feeFixed, (a, milli, fixed) => {
        const asNumber = milli / 1000;
        expect(surchargeOf(a, { fee_percent: asNumber, fee_fixed: fixed })).to.equal(expected(a, milli, fixed));
      }),
      runs,
    );
  });

  it('is monotone in the amount (a larger amount never pays a smaller surcharge)', () => {
    fc.assert(
      fc.property(amount, amount, percentText, feeFixed, (x, y, { text }, fixed) => {
        const [lo, hi] = x <= y ? [x, y] : [y, x];
        const fees = { fee_percent: text, fee_fixed: fixed };
        expect(surchargeOf(lo, fees)).to.be.at.most(surchargeOf(hi, fees));
      }),
      runs,
    );
  });

  it('is monotone in the percent', () => {
    fc.assert(
      fc.property(amount, fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 100_000 }), (a, p, q) => {
        const [lo, hi] = p <= q ? [p, q] : [q, p];
        expect(surchargeOf(a, { fee_percent: lo / 1000, fee_fixed: 0 })).to.be.at.most(surchargeOf(a, { fee_percent: hi / 1000, fee_fixed: 0 }));
      }),
      runs,
    );
  });

  it('0% is exactly fee_fixed', () => {
    fc.assert(
      fc.property(amount, feeFixed, fc.constantFrom('0', '0.0', '0.000', 0), (a, fixed, zero) => {
        expect(surchargeOf(a, { fee_percent: zero, fee_fixed: fixed })).to.equal(fixed);
      }),
      runs,
    );
  });

  it('100% is the amount plus fee_fixed', () => {
    fc.assert(
      fc.property(amount, feeFixed, (a, fixed) => {
        expect(surchargeOf(a, { fee_percent: '100', fee_fixed: fixed })).to.equal(a + fixed);
      }),
      runs,
    );
  });

  it('refuses amounts and fixed fees that are not whole rupiah, and bad percents', () => {
    expect(() => surchargeOf(1000.5, { fee_percent: '1', fee_fixed: 0 })).to.throw(RangeError);
    expect(() => surchargeOf(Number.NaN, { fee_percent: '1', fee_fixed: 0 })).to.throw(RangeError);
    expect(() => surchargeOf(1000, { fee_percent: '1', fee_fixed: 0.5 })).to.throw(RangeError);
    expect(() => surchargeOf(1000, { fee_percent: '1', fee_fixed: 'x' })).to.throw(RangeError);
    expect(() => surchargeOf(1000, { fee_percent: '101', fee_fixed: 0 })).to.throw(RangeError);
    expect(() => surchargeOf(1000, { fee_percent: '-1', fee_fixed: 0 })).to.throw(RangeError);
  });
});
