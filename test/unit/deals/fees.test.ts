/**
 * The enterprise platform fee engine (enterprise spec 4.5, issue 26), checked two ways:
 * 1. a table of cases worked out by hand (the arithmetic is in a comment beside each case);
 * 2. fast-check properties over random deals (1-20 milestones of 10,000..50,000,000,000,
 *    random allocation, currency IDR/USD and pricing, including absurd pricing that hits the
 *    total - n cap), plus tiny deals below the API limits to stress the payout >= 1 guard.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import {
  DEFAULT_PRICING,
  amountsFromPercentages,
  dealFee,
  feeRate,
  feeSharesOpen,
  overrideAllocation,
  platformFee,
  rateInForce,
  resolveAllocation,
  splitFee,
  spread,
  type Allocation,
  type DealFee,
  type Pricing,
} from '../../../shared/deals/fees.js';

const sum = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0);
const shares = (fee: DealFee): { b: number[]; s: number[] } => ({ b: fee.milestones.map((m) => m.buyerFee), s: fee.milestones.map((m) => m.sellerFee) });

const idr = (amounts: number[], allocation: Allocation = 'buyer', buyerPercent = 100, pricing: Pricing = DEFAULT_PRICING, trailingVolume = 0): DealFee =>
  dealFee({ amounts, currency: 'IDR', allocation, buyerPercent, pricing, trailingVolume });

// ---- 1. Hand-computed table ---------------------------------------------------------------

describe('deal fee engine: hand-computed cases', () => {
  describe('rate and minimum', () => {
    it('default pricing is 2% with a Rp5.000 minimum and no tiers', () => {
      expect(DEFAULT_PRICING).to.deep.equal({ rateBp: 200, minFee: 5000, tiers: [] });
    });

    it('charges 2% by default', () => {
      // 1,000,000 x 200 / 10,000 = 20,000 >= 5,000; cap 1,000,000 - 1 = 999,999 -> 20,000.
      const fee = idr([1_000_000]);
      expect(fee).to.deep.include({ rateBp: 200, ratePercent: 2, minFee: 5000, tier: null, volumeBasis: 0, totalAmount: 1_000_000, platformFee: 20_000 });
      // buyer pays: funding 1,000,000 + 20,000; payout untouched.
      expect(fee).to.deep.include({ allocation: 'buyer', buyerPercent: 100, sellerPercent: 0, buyerFee: 20_000, sellerFee: 0, fundingTotal: 1_020_000, payoutTotal: 1_000_000, payer: 'workspace', payee: 'counterparty' });
      expect(fee.milestones).to.deep.equal([{ amount: 1_000_000, buyerFee: 20_000, sellerFee: 0, fundingAmount: 1_020_000, payoutAmount: 1_000_000 }]);
    });

    it('applies the Rp5.000 minimum to IDR deals', () => {
      // 100,000 x 2% = 2,000 < 5,000 -> 5,000; seller pays: payout 100,000 - 5,000 = 95,000.
      const fee = idr([100_000], 'seller', 0);
      expect(fee).to.deep.include({ platformFee: 5000, buyerFee: 0, sellerFee: 5000, fundingTotal: 100_000, payoutTotal: 95_000 });
      expect(fee.milestones[0]).to.deep.equal({ amount: 100_000, buyerFee: 0, sellerFee: 5000, fundingAmount: 100_000, payoutAmount: 95_000 });
      // Around the break-even 250,000 (x 2% = exactly 5,000):
      // 249,999 x 200 / 10,000 = 4,999.98 -> 4,999 < 5,000 -> 5,000
      expect(platformFee({ amounts: [249_999], currency: 'IDR', rateBp: 200, minFee: 5000 })).to.equal(5000);
      // 250,000 -> 5,000 (rate and minimum agree)
      expect(platformFee({ amounts: [250_000], currency: 'IDR', rateBp: 200, minFee: 5000 })).to.equal(5000);
      // 250,050 -> 5,001 (the rate wins)
      expect(platformFee({ amounts: [250_050], currency: 'IDR', rateBp: 200, minFee: 5000 })).to.equal(5001);
      // The minimum is on the deal total, not per milestone: 3 x 10,000 = 30,000 x 2% = 600 -> 5,000.
      expect(platformFee({ amounts: [10_000, 10_000, 10_000], currency: 'IDR', rateBp: 200, minFee: 5000 })).to.equal(5000);
      // currency letters in any case: 'idr' is IDR.
      expect(platformFee({ amounts: [100_000], currency: 'idr', rateBp: 200, minFee: 5000 })).to.equal(5000);
    });

    it('charges other currencies the rate with no minimum', () => {
      // 100,000 x 2% = 2,000 (no minimum); 10,000 x 2% = 200.
      expect(platformFee({ amounts: [100_000], currency: 'USD', rateBp: 200, minFee: 5000 })).to.equal(2000);
      const fee = dealFee({ amounts: [10_000], currency: 'USD', allocation: 'buyer', buyerPercent: 100, pricing: DEFAULT_PRICING, trailingVolume: 0 });
      // min_fee still shows the pricing minimum taken at creation; it is not applied.
      expect(fee).to.deep.include({ platformFee: 200, minFee: 5000, buyerFee: 200, fundingTotal: 10_200 });
      // 0 bp in USD: no fee at all.
      expect(platformFee({ amounts: [10_000], currency: 'USD', rateBp: 0, minFee: 5000 })).to.equal(0);
      // 0 bp in IDR: just the minimum.
      expect(platformFee({ amounts: [10_000], currency: 'IDR', rateBp: 0, minFee: 5000 })).to.equal(5000);
    });

    it('rounds down: 1,234,567 x 2% = 24,691.34 -> 24,691', () => {
      expect(platformFee({ amounts: [1_234_567], currency: 'IDR', rateBp: 200, minFee: 5000 })).to.equal(24_691);
      // 1,234,567 x 125 / 10,000 = 15,432.0875 -> 15,432; rate_percent 1.25
      const fee = idr([1_234_567], 'buyer', 100, { rateBp: 125, minFee: 0, tiers: [] });
      expect(fee).to.deep.include({ platformFee: 15_432, rateBp: 125, ratePercent: 1.25 });
    });

    it('stays exact where a float product would not: 20 x 50,000,000,000 at 1 bp under 10,000', () => {
      // total 1,000,000,000,000; x 9,999 = 9,999,000,000,000,000 (> 2^53) / 10,000 = 999,900,000,000 exactly.
      expect(platformFee({ amounts: Array(20).fill(50_000_000_000), currency: 'USD', rateBp: 9999, minFee: 0 })).to.equal(999_900_000_000);
      // 20 x 49,999,999,999 = 999,999,999,980; x 9,999 / 10,000 = 999,899,999,980.002 -> 999,899,999,980
      expect(platformFee({ amounts: Array(20).fill(49_999_999_999), currency: 'USD', rateBp: 9999, minFee: 0 })).to.equal(999_899_999_980);
    });
  });

  describe('the cap: total minus 1 per milestone', () => {
    it('caps a minimum larger than a tiny deal, each payout still at least 1', () => {
      // total 5,000, 2% = 100 -> minimum 5,000 -> cap 5,000 - 2 = 4,998.
      expect(platformFee({ amounts: [3000, 2000], currency: 'IDR', rateBp: 200, minFee: 5000 })).to.equal(4998);
      const fee = idr([3000, 2000], 'seller', 0);
      expect(fee).to.deep.include({ platformFee: 4998, sellerFee: 4998, payoutTotal: 2 });
      // rule 3 literally: floor(4,998 x 3,000 / 5,000) = 2,998, remainder 2,000 on the last ->
      // payout 2,000 - 2,000 = 0. The last is cut to 1,999 and the spare 1 moves back to the
      // first (2,998 -> 2,999, still under its cap 2,999): payouts 1 and 1.
      expect(shares(fee).s).to.deep.equal([2999, 1999]);
      expect(fee.milestones.map((m) => m.payoutAmount)).to.deep.equal([1, 1]);
    });

    it('caps a 100% rate', () => {
      // 2 x 10,000 at 10,000 bp = 20,000 -> cap 20,000 - 2 = 19,998; buyer pays it all:
      // floor(19,998 x 10,000 / 20,000) = 9,999 each; funding 19,999 each, payouts whole.
      const fee = dealFee({ amounts: [10_000, 10_000], currency: 'USD', allocation: 'buyer', buyerPercent: 100, pricing: { rateBp: 10_000, minFee: 0, tiers: [] }, trailingVolume: 0 });
      expect(fee.platformFee).to.equal(19_998);
      expect(fee.milestones.map((m) => [m.buyerFee, m.fundingAmount, m.payoutAmount])).to.deep.equal([
        [9999, 19_999, 10_000],
        [9999, 19_999, 10_000],
      ]);
    });

    it('caps a huge minimum; the cap never bites the spec minimum on real amounts', () => {
      // minimum 1,000,000 on 30,000 -> cap 30,000 - 2 = 29,998.
      expect(platformFee({ amounts: [10_000, 20_000], currency: 'IDR', rateBp: 200, minFee: 1_000_000 })).to.equal(29_998);
      // smallest real deal 10,000: 2% = 200 -> 5,000 <= cap 9,999 -> 5,000.
      expect(platformFee({ amounts: [10_000], currency: 'IDR', rateBp: 200, minFee: 5000 })).to.equal(5000);
      // single milestone of 1: cap 1 - 1 = 0.
      expect(platformFee({ amounts: [1], currency: 'IDR', rateBp: 200, minFee: 5000 })).to.equal(0);
    });

    it('moves a remainder that would overflow the last payout back to the earlier milestones', () => {
      // [3, 3, 1] at 100% in USD: 7 -> cap 7 - 3 = 4, seller pays all.
      // rule 3 literally: floor(4 x 3 / 7) = 1, 1, remainder 2 on the last (amount 1) -> payout -1.
      // Last cut to 0 (overflow 2); milestone 2 has room 3 - 1 - 1 = 1 -> 2; milestone 1 -> 2.
      const fee = dealFee({ amounts: [3, 3, 1], currency: 'USD', allocation: 'seller', buyerPercent: 0, pricing: { rateBp: 10_000, minFee: 0, tiers: [] }, trailingVolume: 0 });
      expect(fee.platformFee).to.equal(4);
      expect(shares(fee).s).to.deep.equal([2, 2, 0]);
      expect(fee.milestones.map((m) => m.payoutAmount)).to.deep.equal([1, 1, 1]);
    });
  });

  describe('volume tiers', () => {
    // base 2%; 100M -> 1.5%, 1B -> 1%, 5B -> 2.5% (above base: ignored). Listed out of order.
    const tiered: Pricing = {
      rateBp: 200,
      minFee: 5000,
      tiers: [
        { minVolume: 1_000_000_000, rateBp: 100 },
        { minVolume: 5_000_000_000, rateBp: 250 },
        { minVolume: 100_000_000, rateBp: 150 },
      ],
    };

    it('uses the base rate below the first tier', () => {
      expect(rateInForce(tiered, 0)).to.deep.equal({ rateBp: 200, tier: null });
      expect(rateInForce(tiered, 99_999_999)).to.deep.equal({ rateBp: 200, tier: null });
    });

    it('applies the highest tier reached (from its minimum volume, inclusive)', () => {
      expect(rateInForce(tiered, 100_000_000)).to.deep.equal({ rateBp: 150, tier: { minVolume: 100_000_000 } });
      expect(rateInForce(tiered, 999_999_999)).to.deep.equal({ rateBp: 150, tier: { minVolume: 100_000_000 } });
      expect(rateInForce(tiered, 1_000_000_000)).to.deep.equal({ rateBp: 100, tier: { minVolume: 1_000_000_000 } });
    });

    it('never raises the rate: a tier above the base rate is ignored', () => {
      // 6B reaches the 2.5% tier, but 2.5% > 2%: ignored; 1% stays.
      expect(rateInForce(tiered, 6_000_000_000)).to.deep.equal({ rateBp: 100, tier: { minVolume: 1_000_000_000 } });
      // A single tier above base: base rate, no tier.
      expect(rateInForce({ rateBp: 200, minFee: 5000, tiers: [{ minVolume: 50_000_000, rateBp: 300 }] }, 60_000_000)).to.deep.equal({ rateBp: 200, tier: null });
    });

    it('never raises the rate in a table that is not monotone', () => {
      // 1M -> 1.5%, 10M -> 1.8%: at 20M the rate stays 1.5% (from the 1M tier).
      const odd: Pricing = { rateBp: 200, minFee: 0, tiers: [{ minVolume: 1_000_000, rateBp: 150 }, { minVolume: 10_000_000, rateBp: 180 }] };
      expect(rateInForce(odd, 20_000_000)).to.deep.equal({ rateBp: 150, tier: { minVolume: 1_000_000 } });
    });

    it('prices a deal with the tier in force and records the volume basis', () => {
      // volume 1B -> 1%: 50,000,000 x 100 / 10,000 = 500,000.
      const fee = idr([50_000_000], 'buyer', 100, tiered, 1_000_000_000);
      expect(fee).to.deep.include({ rateBp: 100, ratePercent: 1, tier: { minVolume: 1_000_000_000 }, volumeBasis: 1_000_000_000, platformFee: 500_000 });
      // The minimum still applies under a tier: 100,000 x 1% = 1,000 -> 5,000.
      expect(idr([100_000], 'buyer', 100, tiered, 1_000_000_000).platformFee).to.equal(5000);
    });

    it('re-spreads a draft with the rate taken at creation (rule 5), whatever the pricing is now', () => {
      // Created at 1.5% (volume 100M): 2 x 1,000,000 x 150 / 10,000 = 30,000.
      const created = idr([1_000_000, 1_000_000], 'buyer', 100, tiered, 100_000_000);
      expect(created.platformFee).to.equal(30_000);
      // An edit adds 1,000,000: 3,000,000 x 1.5% = 45,000 (not 2% = 60,000), 15,000 each.
      const edited = dealFee({ amounts: [1_000_000, 1_000_000, 1_000_000], currency: 'IDR', allocation: 'buyer', buyerPercent: 100, rate: created });
      expect(edited).to.deep.include({ rateBp: 150, tier: { minVolume: 100_000_000 }, volumeBasis: 100_000_000, platformFee: 45_000 });
      expect(shares(edited).b).to.deep.equal([15_000, 15_000, 15_000]);
      expect(feeRate(tiered, 100_000_000)).to.deep.equal({ rateBp: 150, minFee: 5000, tier: { minVolume: 100_000_000 }, volumeBasis: 100_000_000 });
    });
  });

  describe('allocation', () => {
    // fee 24,691 (1,234,567 x 2%, odd)
    const cases: [Allocation, number, number, number][] = [
      ['buyer', 100, 24_691, 0], //           24,691 x 100 / 100 = 24,691; seller 0
      ['seller', 0, 0, 24_691], //            24,691 x 0 = 0; seller 24,691
      ['split', 0, 0, 24_691], //             as seller
      ['split', 37, 9135, 15_556], //         24,691 x 37 = 913,567 / 100 = 9,135.67 -> 9,135; 24,691 - 9,135 = 15,556
      ['split', 50, 12_345, 12_346], //       24,691 / 2 = 12,345.5 -> 12,345; the odd rupiah to the seller: 12,346
      ['split', 100, 24_691, 0], //           as buyer
    ];
    for (const [allocation, pct, buyerFee, sellerFee] of cases) {
      it(`${allocation} ${pct}: buyer ${buyerFee}, seller ${sellerFee}`, () => {
        expect(splitFee(24_691, allocation, pct)).to.deep.equal({ buyerFee, sellerFee, buyerPercent: pct, sellerPercent: 100 - pct });
        const fee = idr([1_234_567], allocation, pct);
        expect(fee).to.deep.include({ platformFee: 24_691, allocation, buyerFee, sellerFee, fundingTotal: 1_234_567 + buyerFee, payoutTotal: 1_234_567 - sellerFee });
      });
    }

    it('refuses a percent that disagrees with buyer or seller', () => {
      expect(() => splitFee(100, 'buyer', 50)).to.throw(RangeError, /buyerPercent 100/);
      expect(() => splitFee(100, 'seller', 1)).to.throw(RangeError, /buyerPercent 0/);
      expect(() => splitFee(100, 'split', 101)).to.throw(RangeError, /0 to 100/);
      expect(() => splitFee(100, 'split', -1)).to.throw(RangeError);
      expect(() => splitFee(100, 'split', 37.5)).to.throw(RangeError);
      expect(() => splitFee(100, 'half' as Allocation, 50)).to.throw(RangeError, /buyer, seller or split/);
    });

    it('resolves a body (fee_allocation and/or fee_buyer_percent) against the workspace default', () => {
      const dflt = { allocation: 'seller' as const, buyerPercent: 0 };
      expect(resolveAllocation({}, dflt)).to.deep.equal({ ok: true, allocation: 'seller', buyerPercent: 0 });
      expect(resolveAllocation({ allocation: 'buyer' }, dflt)).to.deep.equal({ ok: true, allocation: 'buyer', buyerPercent: 100 });
      expect(resolveAllocation({ allocation: 'buyer', buyerPercent: 100 }, dflt)).to.deep.equal({ ok: true, allocation: 'buyer', buyerPercent: 100 });
      expect(resolveAllocation({ allocation: 'seller' }, dflt)).to.deep.equal({ ok: true, allocation: 'seller', buyerPercent: 0 });
      expect(resolveAllocation({ allocation: 'split', buyerPercent: 37 }, dflt)).to.deep.equal({ ok: true, allocation: 'split', buyerPercent: 37 });
      expect(resolveAllocation({ buyerPercent: 37 }, dflt)).to.deep.equal({ ok: true, allocation: 'split', buyerPercent: 37 });
      expect(resolveAllocation({ allocation: 'split' }, dflt)).to.deep.include({ ok: false });
      expect(resolveAllocation({ allocation: 'buyer', buyerPercent: 50 }, dflt)).to.deep.include({ ok: false });
      expect(resolveAllocation({ allocation: 'seller', buyerPercent: 100 }, dflt)).to.deep.include({ ok: false });
    });
  });

  describe('per-milestone shares', () => {
    // [100,000, 200,000, 300,001]: total 600,001 x 2% = 12,000.02 -> 12,000.
    // split 37: buyer 12,000 x 37 / 100 = 4,440; seller 7,560.
    it('floors each share and puts the remainder on the last; funding and payout follow', () => {
      const fee = idr([100_000, 200_000, 300_001], 'split', 37);
      expect(fee).to.deep.include({ totalAmount: 600_001, platformFee: 12_000, buyerFee: 4440, sellerFee: 7560 });
      // buyer: 4,440 x 100,000 / 600,001 = 739.99 -> 739; 4,440 x 200,000 / 600,001 = 1,479.99 -> 1,479;
      //        last 4,440 - 739 - 1,479 = 2,222.
      // seller: 7,560 x 100,000 / 600,001 = 1,259.99 -> 1,259; x 200,000 -> 2,519.99 -> 2,519;
      //         last 7,560 - 1,259 - 2,519 = 3,782.
      expect(fee.milestones).to.deep.equal([
        { amount: 100_000, buyerFee: 739, sellerFee: 1259, fundingAmount: 100_739, payoutAmount: 98_741 },
        { amount: 200_000, buyerFee: 1479, sellerFee: 2519, fundingAmount: 201_479, payoutAmount: 197_481 },
        { amount: 300_001, buyerFee: 2222, sellerFee: 3782, fundingAmount: 302_223, payoutAmount: 296_219 },
      ]);
      // totals: 600,001 + 4,440 = 604,441 = 100,739 + 201,479 + 302,223;
      //         600,001 - 7,560 = 592,441 = 98,741 + 197,481 + 296,219.
      expect(fee).to.deep.include({ fundingTotal: 604_441, payoutTotal: 592_441 });
    });

    it('depends on order only in the spread, never in the fee or its split', () => {
      const fee = idr([300_001, 200_000, 100_000], 'split', 37);
      expect(fee).to.deep.include({ platformFee: 12_000, buyerFee: 4440, sellerFee: 7560, fundingTotal: 604_441, payoutTotal: 592_441 });
      // buyer: 4,440 x 300,001 / 600,001 = 2,220.00... -> 2,220; 1,479 (as before); last 4,440 - 2,220 - 1,479 = 741.
      // seller: 7,560 x 300,001 / 600,001 = 3,780.00... -> 3,780; 2,519; last 7,560 - 3,780 - 2,519 = 1,261.
      expect(shares(fee)).to.deep.equal({ b: [2220, 1479, 741], s: [3780, 2519, 1261] });
    });

    it('spreads equal milestones evenly and gives the last the odd rupiah', () => {
      // 10,001 over 3 x 1,000,000: floor(10,001 / 3) = 3,333, 3,333, last 10,001 - 6,666 = 3,335.
      expect(spread([1_000_000, 1_000_000, 1_000_000], 10_001, 0).map((m) => m.buyerFee)).to.deep.equal([3333, 3333, 3335]);
    });

    it('refuses a seller part that would leave a milestone without a payout', () => {
      // [10, 10]: at most 20 - 2 = 18.
      expect(spread([10, 10], 0, 18).map((m) => m.payoutAmount)).to.deep.equal([1, 1]);
      expect(() => spread([10, 10], 0, 19)).to.throw(RangeError, /at most 18/);
    });
  });

  describe('template percentages', () => {
    it('floors each share and puts the remainder on the last', () => {
      // 100,001 x 33 / 100 = 33,000.33 -> 33,000 twice; last 100,001 - 66,000 = 34,001.
      expect(amountsFromPercentages(100_001, [33, 33, 34])).to.deep.equal([33_000, 33_000, 34_001]);
      // 99,999 x 50 / 100 = 49,999.5 -> 49,999; last 50,000.
      expect(amountsFromPercentages(99_999, [50, 50])).to.deep.equal([49_999, 50_000]);
      // 1,000,000 x 10 / 100 = 100,000 each, last 700,000.
      expect(amountsFromPercentages(1_000_000, [10, 10, 10, 70])).to.deep.equal([100_000, 100_000, 100_000, 700_000]);
      expect(amountsFromPercentages(123_457, [100])).to.deep.equal([123_457]);
      // 20 x 50,000,000,000 = 1e12 with 5% shares: 50,000,000,000 each (product 5e13, still exact).
      expect(amountsFromPercentages(1_000_000_000_000, Array(20).fill(5))).to.deep.equal(Array(20).fill(50_000_000_000));
    });

    it('refuses percentages that are not whole, out of 1-100 or not summing to 100', () => {
      expect(() => amountsFromPercentages(100_000, [33, 33, 33])).to.throw(RangeError, /sum to 100/);
      expect(() => amountsFromPercentages(100_000, [0, 100])).to.throw(RangeError, /at least 1/);
      expect(() => amountsFromPercentages(100_000, [101])).to.throw(RangeError, /0 to 100/);
      expect(() => amountsFromPercentages(100_000, [50.5, 49.5])).to.throw(RangeError);
      expect(() => amountsFromPercentages(100_000, [])).to.throw(RangeError);
      expect(() => amountsFromPercentages(100_000.5, [100])).to.throw(RangeError);
      expect(() => amountsFromPercentages(0, [100])).to.throw(RangeError);
    });
  });

  describe('rule 6: the override of one deal split', () => {
    // [100,000, 200,000, 300,001], seller pays 12,000:
    // 12,000 x 100,000 / 600,001 = 1,999.99 -> 1,999; x 200,000 -> 3,999.99 -> 3,999; last 12,000 - 5,998 = 6,002.
    const base = idr([100_000, 200_000, 300_001], 'seller', 0);
    const withOpen = (open: boolean[]) => base.milestones.map((m, i) => ({ amount: m.amount, buyerFee: m.buyerFee, sellerFee: m.sellerFee, open: open[i]! }));

    it('starts from the expected shares', () => {
      expect(shares(base)).to.deep.equal({ b: [0, 0, 0], s: [1999, 3999, 6002] });
    });

    it('calls shares open only before funding', () => {
      expect(['draft', 'awaiting_funding'].map(feeSharesOpen)).to.deep.equal([true, true]);
      const fixed = ['funded', 'evidence_submitted', 'revision_requested', 'approved', 'released', 'disputed', 'cancelled'];
      expect(fixed.map(feeSharesOpen)).to.deep.equal(fixed.map(() => false));
    });

    it('recomputes only the open shares and reaches the new split exactly', () => {
      // Milestone 1 funded (keeps b 0, s 1,999). New split 50: target 6,000 / 6,000.
      // open seller = 6,000 - 1,999 = 4,001; open buyer = 12,000 - 1,999 - 4,001 = 6,000.
      // over [200,000, 300,001] (500,001): buyer 6,000 x 200,000 / 500,001 = 2,399.99 -> 2,399, last 3,601;
      //                                    seller 4,001 x 200,000 / 500,001 = 1,600.39 -> 1,600, last 2,401.
      const o = overrideAllocation({ milestones: withOpen([false, true, true]), platformFee: 12_000, allocation: 'split', buyerPercent: 50 });
      expect(o).to.deep.include({ exact: true, platformFee: 12_000, buyerFee: 6000, sellerFee: 6000, buyerPercent: 50, sellerPercent: 50, allocation: 'split' });
      expect(o.milestones).to.deep.equal([
        { amount: 100_000, buyerFee: 0, sellerFee: 1999, fundingAmount: 100_000, payoutAmount: 98_001 },
        { amount: 200_000, buyerFee: 2399, sellerFee: 1600, fundingAmount: 202_399, payoutAmount: 198_400 },
        { amount: 300_001, buyerFee: 3601, sellerFee: 2401, fundingAmount: 303_602, payoutAmount: 297_600 },
      ]);
      // 600,001 + 6,000 and 600,001 - 6,000
      expect(o).to.deep.include({ fundingTotal: 606_001, payoutTotal: 594_001 });
    });

    it('gets as close as it can when funded shares stand in the way', () => {
      // Milestones 1 and 2 funded (seller shares 1,999 + 3,999 = 5,998 stay). Buyer pays all:
      // target seller 0 -> open seller 0 - 5,998 < 0 -> 0; open buyer 12,000 - 5,998 = 6,002 on milestone 3.
      const o = overrideAllocation({ milestones: withOpen([false, false, true]), platformFee: 12_000, allocation: 'buyer', buyerPercent: 100 });
      expect(o).to.deep.include({ exact: false, buyerFee: 6002, sellerFee: 5998, buyerPercent: 100, sellerPercent: 0 });
      expect(shares({ ...base, milestones: o.milestones })).to.deep.equal({ b: [0, 0, 6002], s: [1999, 3999, 0] });
    });

    it('changes nothing when every milestone is funded', () => {
      const o = overrideAllocation({ milestones: withOpen([false, false, false]), platformFee: 12_000, allocation: 'buyer', buyerPercent: 100 });
      expect(o).to.deep.include({ exact: false, buyerFee: 0, sellerFee: 12_000 });
      expect(o.milestones).to.deep.equal(base.milestones);
    });

    it('with every milestone open gives what a new deal with that split gives', () => {
      const o = overrideAllocation({ milestones: withOpen([true, true, true]), platformFee: 12_000, allocation: 'split', buyerPercent: 37 });
      const fresh = idr([100_000, 200_000, 300_001], 'split', 37);
      expect(o.exact).to.equal(true);
      expect(o.milestones).to.deep.equal(fresh.milestones);
    });

    it('refuses shares that do not add up to the fee', () => {
      const ms = withOpen([false, true, true]);
      ms[1] = { ...ms[1]!, sellerFee: ms[1]!.sellerFee + 1 };
      expect(() => overrideAllocation({ milestones: ms, platformFee: 12_000, allocation: 'buyer', buyerPercent: 100 })).to.throw(RangeError, /sum to 12001/);
    });
  });

  describe('impossible inputs', () => {
    const ok = { amounts: [10_000], currency: 'IDR', rateBp: 200, minFee: 5000 };
    it('throws RangeError', () => {
      expect(() => platformFee({ ...ok, amounts: [] })).to.throw(RangeError, /at least one/);
      expect(() => platformFee({ ...ok, amounts: [10_000.5] })).to.throw(RangeError, /whole number/);
      expect(() => platformFee({ ...ok, amounts: [0] })).to.throw(RangeError, /at least 1/);
      expect(() => platformFee({ ...ok, amounts: [-5] })).to.throw(RangeError);
      expect(() => platformFee({ ...ok, amounts: [Number.NaN] })).to.throw(RangeError);
      expect(() => platformFee({ ...ok, amounts: [Number.MAX_SAFE_INTEGER, 1] })).to.throw(RangeError);
      expect(() => platformFee({ ...ok, rateBp: 10_001 })).to.throw(RangeError, /basis points/);
      expect(() => platformFee({ ...ok, rateBp: 1.5 })).to.throw(RangeError);
      expect(() => platformFee({ ...ok, minFee: -1 })).to.throw(RangeError);
      expect(() => platformFee({ ...ok, currency: 'RUPIAH' })).to.throw(RangeError, /three letters/);
      expect(() => rateInForce(DEFAULT_PRICING, -1)).to.throw(RangeError);
      expect(() => rateInForce({ rateBp: 200, minFee: 0, tiers: [{ minVolume: 1, rateBp: -1 }] }, 0)).to.throw(RangeError);
      expect(() => dealFee({ amounts: [10_000], currency: 'IDR', allocation: 'split', buyerPercent: 101, pricing: DEFAULT_PRICING, trailingVolume: 0 })).to.throw(RangeError);
      expect(() => spread([10_000], -1, 0)).to.throw(RangeError);
    });
  });
});

// ---- 2. Properties --------------------------------------------------------------------------

const RUNS = { numRuns: 400 };

const allocationArb: fc.Arbitrary<{ allocation: Allocation; buyerPercent: number }> = fc.oneof(
  fc.constant({ allocation: 'buyer' as const, buyerPercent: 100 }),
  fc.constant({ allocation: 'seller' as const, buyerPercent: 0 }),
  fc.integer({ min: 0, max: 100 }).map((buyerPercent) => ({ allocation: 'split' as const, buyerPercent })),
);

const bp = fc.oneof(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 10_000 }));
const pricingArb: fc.Arbitrary<Pricing> = fc.record({
  rateBp: bp,
  // mostly real minimums, sometimes one bigger than any deal (to hit the cap)
  minFee: fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 2_000_000_000_000 })),
  tiers: fc.array(fc.record({ minVolume: fc.integer({ min: 0, max: 10_000_000_000_000 }), rateBp: bp }), { maxLength: 5 }),
});
const volumeArb = fc.oneof(fc.integer({ min: 0, max: 1_000_000_000 }), fc.integer({ min: 0, max: 10_000_000_000_000 }));

const realAmounts = fc.array(fc.oneof(fc.integer({ min: 10_000, max: 1_000_000 }), fc.integer({ min: 10_000, max: 50_000_000_000 })), { minLength: 1, maxLength: 20 });
/** Below the API limits: the fee is nearly the whole deal, the payout >= 1 guard works hard. */
const tinyAmounts = fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 20 });

const dealArb = (amounts: fc.Arbitrary<number[]>) =>
  fc.record({
    amounts,
    currency: fc.constantFrom('IDR', 'USD'),
    alloc: allocationArb,
    pricing: pricingArb,
    trailingVolume: volumeArb,
  });
type DealCase = { amounts: number[]; currency: string; alloc: { allocation: Allocation; buyerPercent: number }; pricing: Pricing; trailingVolume: number };
const feeOf = (d: DealCase): DealFee =>
  dealFee({ amounts: d.amounts, currency: d.currency, allocation: d.alloc.allocation, buyerPercent: d.alloc.buyerPercent, pricing: d.pricing, trailingVolume: d.trailingVolume });

/** The expected fee, written again here from the spec's formula. */
function expectedFee(amounts: number[], currency: string, rateBp: number, minFee: number): number {
  const total = amounts.reduce((s, a) => s + BigInt(a), 0n);
  let fee = (total * BigInt(rateBp)) / 10_000n;
  if (currency === 'IDR' && fee < BigInt(minFee)) fee = BigInt(minFee);
  const cap = total - BigInt(amounts.length);
  return Number(fee < cap ? fee : cap);
}

function checkInvariants(fee: DealFee, amounts: number[]): void {
  const total = sum(amounts);
  const { b, s } = shares(fee);
  expect(fee.totalAmount).to.equal(total);
  expect(fee.milestones.map((m) => m.amount)).to.deep.equal(amounts);
  expect(sum(b), 'buyer shares').to.equal(fee.buyerFee);
  expect(sum(s), 'seller shares').to.equal(fee.sellerFee);
  expect(fee.buyerFee + fee.sellerFee).to.equal(fee.platformFee);
  const funding = sum(fee.milestones.map((m) => m.fundingAmount));
  const payout = sum(fee.milestones.map((m) => m.payoutAmount));
  expect(funding - payout, 'funding - payout').to.equal(fee.platformFee);
  expect(funding).to.equal(fee.fundingTotal);
  expect(payout).to.equal(fee.payoutTotal);
  expect(fee.platformFee).to.be.at.most(total - amounts.length);
  expect(fee.platformFee).to.be.at.least(0);
  for (const m of fee.milestones) {
    expect(m.payoutAmount, 'payout').to.be.at.least(1);
    expect(m.buyerFee).to.be.at.least(0);
    expect(m.sellerFee).to.be.at.least(0);
    expect(m.fundingAmount).to.equal(m.amount + m.buyerFee);
    expect(m.payoutAmount).to.equal(m.amount - m.sellerFee);
    for (const v of [m.buyerFee, m.sellerFee, m.fundingAmount, m.payoutAmount]) expect(Number.isSafeInteger(v)).to.equal(true);
  }
}

describe('deal fee engine: properties over random deals', () => {
  for (const [name, amounts] of [
    ['real deals', realAmounts],
    ['tiny deals', tinyAmounts],
  ] as const) {
    it(`${name}: shares sum to the parts, parts to the fee, funding - payout = fee, every payout >= 1`, () => {
      fc.assert(fc.property(dealArb(amounts), (d) => checkInvariants(feeOf(d), d.amounts)), RUNS);
    });

    it(`${name}: the fee is max(floor(total x rate), IDR minimum) capped at total - n, the seller taking the odd rupiah`, () => {
      fc.assert(
        fc.property(dealArb(amounts), (d) => {
          const fee = feeOf(d);
          const { rateBp } = rateInForce(d.pricing, d.trailingVolume);
          expect(fee.rateBp).to.equal(rateBp);
          expect(fee.ratePercent).to.equal(rateBp / 100);
          expect(fee.platformFee).to.equal(expectedFee(d.amounts, d.currency, rateBp, d.pricing.minFee));
          // buyer floor(fee x p / 100); seller ceil(fee x (100 - p) / 100)
          expect(fee.buyerFee).to.equal(Math.floor((fee.platformFee * d.alloc.buyerPercent) / 100));
          expect(fee.sellerFee).to.equal(Math.ceil((fee.platformFee * (100 - d.alloc.buyerPercent)) / 100));
        }),
        RUNS,
      );
    });

    it(`${name}: the spread follows rule 3 literally whenever that keeps every payout >= 1`, () => {
      fc.assert(
        fc.property(dealArb(amounts), (d) => {
          const fee = feeOf(d);
          const total = BigInt(sum(d.amounts));
          const literal = (part: number) => {
            const xs = d.amounts.map((a) => Number((BigInt(part) * BigInt(a)) / total));
            xs[xs.length - 1] = part - sum(xs.slice(0, -1));
            return xs;
          };
          const { b, s } = shares(fee);
          expect(b).to.deep.equal(literal(fee.buyerFee));
          const ls = literal(fee.sellerFee);
          if (ls.every((x, i) => d.amounts[i]! - x >= 1)) expect(s).to.deep.equal(ls);
        }),
        RUNS,
      );
    });
  }

  it('the fee and its split do not depend on milestone order', () => {
    const arb = dealArb(realAmounts).chain((d) => fc.shuffledSubarray(d.amounts, { minLength: d.amounts.length, maxLength: d.amounts.length }).map((p) => ({ d, p })));
    fc.assert(
      fc.property(arb, ({ d, p }) => {
        const a = feeOf(d);
        const b = feeOf({ ...d, amounts: p });
        for (const k of ['platformFee', 'buyerFee', 'sellerFee', 'fundingTotal', 'payoutTotal', 'totalAmount', 'rateBp'] as const) expect(b[k], k).to.equal(a[k]);
        checkInvariants(b, p);
      }),
      RUNS,
    );
  });

  it('rates never rise with volume and never exceed the base rate', () => {
    fc.assert(
      fc.property(pricingArb, volumeArb, volumeArb, (pricing, v1, v2) => {
        const [lo, hi] = v1 <= v2 ? [v1, v2] : [v2, v1];
        const a = rateInForce(pricing, lo);
        const b = rateInForce(pricing, hi);
        expect(b.rateBp).to.be.at.most(a.rateBp);
        expect(a.rateBp).to.be.at.most(pricing.rateBp);
        if (a.tier === null) expect(a.rateBp).to.equal(pricing.rateBp);
        else expect(pricing.tiers.some((t) => t.minVolume === a.tier!.minVolume && t.minVolume <= lo && t.rateBp === a.rateBp)).to.equal(true);
      }),
      RUNS,
    );
  });

  it('re-spreading with the stored rate gives the same fee as pricing it again at the same volume', () => {
    fc.assert(
      fc.property(dealArb(realAmounts), (d) => {
        const created = feeOf(d);
        const again = dealFee({ amounts: d.amounts, currency: d.currency, allocation: d.alloc.allocation, buyerPercent: d.alloc.buyerPercent, rate: created });
        expect(again).to.deep.equal(created);
      }),
      RUNS,
    );
  });

  it('template percentages add up to the total, each share but the last floored', () => {
    const pctsArb = fc
      .uniqueArray(fc.integer({ min: 1, max: 99 }), { maxLength: 19 })
      .map((cuts) => {
        const xs = [0, ...cuts.sort((x, y) => x - y), 100];
        return xs.slice(1).map((x, i) => x - xs[i]!);
      });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000_000_000 }), pctsArb, (total, pcts) => {
        const amounts = amountsFromPercentages(total, pcts);
        expect(amounts).to.have.length(pcts.length);
        expect(sum(amounts)).to.equal(total);
        amounts.slice(0, -1).forEach((a, i) => expect(a).to.equal(Number((BigInt(total) * BigInt(pcts[i]!)) / 100n)));
        expect(amounts[amounts.length - 1]).to.be.at.least(0);
      }),
      RUNS,
    );
  });

  for (const [name, amounts] of [
    ['real deals', realAmounts],
    ['tiny deals', tinyAmounts],
  ] as const) {
    it(`${name}: the override keeps fixed shares, the sums and every payout >= 1`, () => {
      const arb = dealArb(amounts).chain((d) =>
        fc.record({ d: fc.constant(d), open: fc.array(fc.boolean(), { minLength: d.amounts.length, maxLength: d.amounts.length }), next: allocationArb }),
      );
      fc.assert(
        fc.property(arb, ({ d, open, next }) => {
          const fee = feeOf(d);
          const ms = fee.milestones.map((m, i) => ({ amount: m.amount, buyerFee: m.buyerFee, sellerFee: m.sellerFee, open: open[i]! }));
          const o = overrideAllocation({ milestones: ms, platformFee: fee.platformFee, allocation: next.allocation, buyerPercent: next.buyerPercent });
          // fixed shares untouched
          fee.milestones.forEach((m, i) => {
            if (!open[i]) expect(o.milestones[i]).to.deep.equal(m);
          });
          // the sums hold, with the same platform fee
          checkInvariants({ ...fee, ...o, milestones: o.milestones }, d.amounts);
          expect(o.platformFee).to.equal(fee.platformFee);
          const target = splitFee(fee.platformFee, next.allocation, next.buyerPercent);
          if (o.exact) {
            expect(o.buyerFee).to.equal(target.buyerFee);
            expect(o.sellerFee).to.equal(target.sellerFee);
          } else {
            // only a bound of the open milestones stops it: no seller share left open to lower,
            // or no buyer share / payout room left open to move it to
            const openMs = o.milestones.filter((_, i) => open[i]);
            const openSeller = sum(openMs.map((m) => m.sellerFee));
            const atFloor = openSeller === 0 && o.sellerFee > target.sellerFee;
            const atCeiling = o.sellerFee < target.sellerFee && (sum(openMs.map((m) => m.buyerFee)) === 0 || openMs.every((m) => m.payoutAmount === 1));
            expect(atFloor || atCeiling, `not exact: seller ${o.sellerFee} vs ${target.sellerFee}`).to.equal(true);
          }
          if (open.every(Boolean)) {
            const fresh = feeOf({ ...d, alloc: next });
            expect(o.milestones).to.deep.equal(fresh.milestones);
            expect(o.exact).to.equal(true);
          }
        }),
        RUNS,
      );
    });
  }
});
