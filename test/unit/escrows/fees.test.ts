/**
 * The escrow fee (consumer spec 4.2): fast-check properties of escrowFee over every valid
 * rule, and the fallback (1%, floor Rp2.000, uncapped) for every invalid settings value.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { escrowFee, escrowFeeRule, FALLBACK_ESCROW_FEE, type EscrowFeeRule } from '../../../shared/escrows/fees.js';

const MAX_AMOUNT = 500_000_000;

/** A valid `escrow_fee` settings value, as an operator would store it (snake_case). */
const rawRule = fc
  .record({
    percent_bp: fc.integer({ min: 0, max: 10_000 }),
    min_idr: fc.integer({ min: 0, max: 1_000_000_000 }),
    extra: fc.option(fc.integer({ min: 0, max: 1_000_000_000 }), { nil: undefined }),
    explicitNull: fc.boolean(),
  })
  .map(({ percent_bp, min_idr, extra, explicitNull }) => {
    const value: Record<string, number | null> = { percent_bp, min_idr };
    if (extra !== undefined) value.max_idr = min_idr + extra;
    else if (explicitNull) value.max_idr = null;
    return value;
  });

const rule: fc.Arbitrary<EscrowFeeRule> = rawRule.map((raw) => escrowFeeRule(raw));
const amount = fc.integer({ min: 0, max: MAX_AMOUNT });
const runs = { numRuns: 2000 };

describe('escrow fee: escrowFeeRule reads valid settings values', () => {
  it('keeps every field of a valid value (max_idr missing or null means uncapped)', () => {
    fc.assert(
      fc.property(rawRule, (raw) => {
        const parsed = escrowFeeRule(raw);
        expect(parsed).to.deep.equal({
          percentBp: raw.percent_bp,
          minIdr: raw.min_idr,
          maxIdr: raw.max_idr ?? null,
        });
      }),
      runs,
    );
  });

  it('reads the examples exactly', () => {
    expect(escrowFeeRule({ percent_bp: 250, min_idr: 5000 })).to.deep.equal({ percentBp: 250, minIdr: 5000, maxIdr: null });
    expect(escrowFeeRule({ percent_bp: 0, min_idr: 0, max_idr: 0 })).to.deep.equal({ percentBp: 0, minIdr: 0, maxIdr: 0 });
    expect(escrowFeeRule({ percent_bp: 10_000, min_idr: 100, max_idr: 100 })).to.deep.equal({ percentBp: 10_000, minIdr: 100, maxIdr: 100 });
  });
});

describe('escrow fee: properties of escrowFee', () => {
  it('is a whole number between 0 and the amount', () => {
    fc.assert(
      fc.property(amount, rule, (a, r) => {
        const fee = escrowFee(a, r);
        expect(Number.isSafeInteger(fee), `fee ${fee}`).to.equal(true);
        expect(fee).to.be.at.least(0);
        expect(fee).to.be.at.most(a);
      }),
      runs,
    );
  });

  it('is at least min(minIdr, amount) and at most maxIdr when set', () => {
    fc.assert(
      fc.property(amount, rule, (a, r) => {
        const fee = escrowFee(a, r);
        expect(fee).to.be.at.least(Math.min(r.minIdr, a));
        if (r.maxIdr !== null) expect(fee).to.be.at.most(r.maxIdr);
      }),
      runs,
    );
  });

  it('equals floor(amount * percent_bp / 10000) between the floor, the cap and the amount', () => {
    fc.assert(
      fc.property(amount, rule, (a, r) => {
        const fee = escrowFee(a, r);
        const pct = Math.floor((a * r.percentBp) / 10_000);
        const bounded = Math.max(pct, r.minIdr);
        const capped = r.maxIdr === null ? bounded : Math.min(bounded, r.maxIdr);
        expect(fee).to.equal(Math.min(capped, a));
      }),
      runs,
    );
  });

  it('splits the amount exactly: fee + seller share == amount, the share never negative', () => {
    fc.assert(
      fc.property(amount, rule, (a, r) => {
        const fee = escrowFee(a, r);
        const sellerAmount = a - fee;
        expect(sellerAmount).to.be.at.least(0);
        expect(fee + sellerAmount).to.equal(a);
      }),
      runs,
    );
  });

  it('is monotone non-decreasing in the amount', () => {
    fc.assert(
      fc.property(amount, amount, rule, (x, y, r) => {
        const [lo, hi] = x <= y ? [x, y] : [y, x];
        expect(escrowFee(lo, r)).to.be.at.most(escrowFee(hi, r));
      }),
      runs,
    );
  });

  it('is monotone for neighbouring amounts (step of one rupiah)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_AMOUNT - 1 }), rule, (a, r) => {
        expect(escrowFee(a, r)).to.be.at.most(escrowFee(a + 1, r));
      }),
      runs,
    );
  });

  it('refuses an amount that is not a whole number of rupiah', () => {
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => escrowFee(bad, FALLBACK_ESCROW_FEE), String(bad)).to.throw(RangeError);
    }
  });
});

describe('escrow fee: the fallback rule (1%, floor Rp2.000, uncapped)', () => {
  it('is exactly 1% with a 2,000 floor', () => {
    expect(FALLBACK_ESCROW_FEE).to.deep.equal({ percentBp: 100, minIdr: 2000, maxIdr: null });
    const cases: [number, number][] = [
      [10_000, 2000],
      [150_000, 2000],
      [199_999, 2000],
      [200_000, 2000],
      [200_099, 2000],
      [200_100, 2001],
      [1_000_000, 10_000],
      [1_000_099, 10_000],
      [500_000_000, 5_000_000],
    ];
    for (const [a, fee] of cases) expect(escrowFee(a, FALLBACK_ESCROW_FEE), `amount ${a}`).to.equal(fee);
  });

  it('never exceeds a tiny amount', () => {
    expect(escrowFee(1500, FALLBACK_ESCROW_FEE)).to.equal(1500);
    expect(escrowFee(0, FALLBACK_ESCROW_FEE)).to.equal(0);
  });

  it('follows a configured rule: 2.5% with a 5,000 floor', () => {
    const r = escrowFeeRule({ percent_bp: 250, min_idr: 5000 });
    expect(escrowFee(150_000, r)).to.equal(5000);
    expect(escrowFee(200_000, r)).to.equal(5000);
    expect(escrowFee(200_040, r)).to.equal(5001);
    expect(escrowFee(1_000_000, r)).to.equal(25_000);
    expect(escrowFee(1_000_039, r)).to.equal(25_000);
  });

  it('caps at max_idr', () => {
    const r = escrowFeeRule({ percent_bp: 100, min_idr: 2000, max_idr: 50_000 });
    expect(escrowFee(4_000_000, r)).to.equal(40_000);
    expect(escrowFee(500_000_000, r)).to.equal(50_000);
  });

  const invalid: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['a number', 100],
    ['a string', '{"percent_bp":250,"min_idr":5000}'],
    ['a boolean', true],
    ['an array', [250, 5000]],
    ['an empty object', {}],
    ['percent_bp missing', { min_idr: 5000 }],
    ['min_idr missing', { percent_bp: 250 }],
    ['negative percent_bp', { percent_bp: -1, min_idr: 5000 }],
    ['non-integer percent_bp', { percent_bp: 2.5, min_idr: 5000 }],
    ['percent_bp above 10000', { percent_bp: 10_001, min_idr: 5000 }],
    ['percent_bp as a string', { percent_bp: '250', min_idr: 5000 }],
    ['percent_bp NaN', { percent_bp: Number.NaN, min_idr: 5000 }],
    ['percent_bp Infinity', { percent_bp: Number.POSITIVE_INFINITY, min_idr: 5000 }],
    ['negative min_idr', { percent_bp: 250, min_idr: -1 }],
    ['non-integer min_idr', { percent_bp: 250, min_idr: 5000.5 }],
    ['min_idr beyond the safe range', { percent_bp: 250, min_idr: 2 ** 53 }],
    ['min_idr as a string', { percent_bp: 250, min_idr: '5000' }],
    ['max_idr below min_idr', { percent_bp: 250, min_idr: 5000, max_idr: 4999 }],
    ['negative max_idr', { percent_bp: 250, min_idr: 0, max_idr: -1 }],
    ['non-integer max_idr', { percent_bp: 250, min_idr: 5000, max_idr: 9000.5 }],
    ['max_idr as a string', { percent_bp: 250, min_idr: 5000, max_idr: '9000' }],
  ];
  for (const [name, value] of invalid) {
    it(`falls back for ${name}`, () => {
      const r = escrowFeeRule(value);
      expect(r).to.deep.equal(FALLBACK_ESCROW_FEE);
      expect(escrowFee(150_000, r)).to.equal(2000);
      expect(escrowFee(1_000_000, r)).to.equal(10_000);
    });
  }

  it('for any value at all: the fallback, or a rule that is itself valid', () => {
    const isCount = (v: number) => Number.isSafeInteger(v) && v >= 0;
    fc.assert(
      fc.property(fc.oneof(fc.anything(), rawRule, fc.record({ percent_bp: fc.anything(), min_idr: fc.anything(), max_idr: fc.anything() })), (value) => {
        const r = escrowFeeRule(value);
        if (r === FALLBACK_ESCROW_FEE) return;
        expect(isCount(r.percentBp) && r.percentBp <= 10_000, `percentBp ${r.percentBp}`).to.equal(true);
        expect(isCount(r.minIdr), `minIdr ${r.minIdr}`).to.equal(true);
        if (r.maxIdr !== null) expect(isCount(r.maxIdr) && r.maxIdr >= r.minIdr, `maxIdr ${r.maxIdr}`).to.equal(true);
      }),
      runs,
    );
  });

  it('any invalid percent_bp falls back', () => {
    const badPercent = fc.oneof(
      fc.integer({ max: -1 }),
      fc.integer({ min: 10_001 }),
      fc.double({ noInteger: true }),
      fc.string(),
      fc.constant(null),
      fc.boolean(),
    );
    fc.assert(
      fc.property(badPercent, fc.integer({ min: 0, max: 100_000 }), (p, m) => {
        expect(escrowFeeRule({ percent_bp: p, min_idr: m })).to.deep.equal(FALLBACK_ESCROW_FEE);
      }),
      runs,
    );
  });

  it('any max_idr below min_idr falls back', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 1_000_000 }), (min, gap) => {
        fc.pre(min - gap >= 0);
        expect(escrowFeeRule({ percent_bp: 100, min_idr: min, max_idr: min - gap })).to.deep.equal(FALLBACK_ESCROW_FEE);
      }),
      runs,
    );
  });
});
