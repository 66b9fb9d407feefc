/**
 * One way for every bench to judge a goal measured in rounds (issue 43, "Benches that cannot
 * flatter"): the verdict comes from the **median of the per-round ratios** (API ÷ floor of
 * the same round, route ÷ `GET /v1/auth/me`, API p99 ÷ floor p99 …), with the **spread**
 * printed beside it (the largest per-round ratio ÷ the smallest), and a verdict whose rounds
 * spread more than `NOISY_SPREAD` (2×) is **noisy**: neither met nor not met, the run says
 * nothing either way and must be measured again on a quieter machine.
 *
 * A goal with an absolute side (a p99 under 30 ms) is met by that side whatever the ratios'
 * spread: only a verdict that rests on the ratios can be noisy.
 */
import { fmtPct, median } from './format.js';

/** Rounds spreading more than this (max ÷ min of the per-round ratios) make a verdict noisy. */
export const NOISY_SPREAD = 2;

export type Verdict = 'met' | 'not met' | 'noisy';

export interface RoundsVerdict {
  /** The per-round ratios, sorted ascending. */
  ratios: number[];
  /** Their median: the figure reported. */
  median: number;
  /** max ÷ min of the per-round ratios (1 with one round; Infinity when the smallest is 0 or below). */
  spread: number;
  verdict: Verdict;
  /** `verdict === 'met'`, for the summary table. */
  met: boolean;
  /** `verdict === 'noisy'`, for the summary table. */
  noisy: boolean;
}

/** max ÷ min of `xs` (1 for fewer than two values). */
export function spreadOf(xs: readonly number[]): number {
  if (xs.length < 2) return 1;
  const min = Math.min(...xs);
  const max = Math.max(...xs);
  return min > 0 ? max / min : Number.POSITIVE_INFINITY;
}

/**
 * The verdict of a goal on per-round ratios: `meets(median)` decides met or not met, unless
 * the rounds spread more than 2× (noisy). `absoluteMet` (e.g. the API's median-round p99
 * under 30 ms) meets the goal on its own, whatever the spread.
 */
export function judgeRounds(perRound: readonly number[], meets: (median: number) => boolean, absoluteMet = false): RoundsVerdict {
  const ratios = [...perRound].sort((a, b) => a - b);
  const mid = median(ratios);
  const spread = spreadOf(ratios);
  const verdict: Verdict = absoluteMet ? 'met' : spread > NOISY_SPREAD || !Number.isFinite(mid) ? 'noisy' : meets(mid) ? 'met' : 'not met';
  return { ratios, median: mid, spread, verdict, met: verdict === 'met', noisy: verdict === 'noisy' };
}

/** `met`, `**not met**` or `**noisy**` (with the rule), for a page. */
export function verdictText(v: Pick<RoundsVerdict, 'verdict' | 'spread'>): string {
  if (v.verdict === 'met') return 'met';
  if (v.verdict === 'not met') return '**not met**';
  return `**noisy** (rounds spread ${fmtSpread(v.spread)} > ${NOISY_SPREAD}×: measure again on a quiet machine)`;
}

/** `1.58×` (`∞` when a round read 0). */
export const fmtSpread = (spread: number): string => (Number.isFinite(spread) ? `${spread.toFixed(2)}×` : '∞');

/** `per round 53.0–84.0%, spread 1.58×` for percentages, or with `fmt` for other ratios. */
export function spreadText(v: Pick<RoundsVerdict, 'ratios' | 'spread'>, fmt: (x: number) => string = fmtPct): string {
  if (v.ratios.length === 0) return 'no rounds';
  return `per round ${fmt(v.ratios[0]!)}–${fmt(v.ratios.at(-1)!)}, spread ${fmtSpread(v.spread)}`;
}
