/**
 * One precision policy for every bench report (before, three files each had their own):
 *
 * - counts, requests/s, bytes: whole numbers, grouped (`12,449`) — `fmtInt`;
 * - measured quantities (milliseconds, seconds, MB, core-ms, per-unit figures): `fmtNum`,
 *   two decimals below 1 (`0.54`), one decimal below 100 (`1.8`, `39.1`), whole and grouped
 *   from 100 (`136`, `1,339`): at least two significant digits, never a false third decimal;
 * - shares and ratios: one decimal and a percent sign (`82.8%`) — `fmtPct`;
 * - load averages: two decimals, as the kernel prints them — `fmtLoad`.
 *
 * Percentiles are nearest-rank (the smallest sample with at least q of the samples at or
 * below it), the same in the paced generator, the upload and the public-listing benches.
 */

export const fmtInt = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');

export function fmtNum(n: number): string {
  if (!Number.isFinite(n)) return 'n/a';
  const abs = Math.abs(n);
  if (abs >= 100) return fmtInt(n);
  return n.toFixed(abs < 1 ? 2 : 1);
}

export const fmtPct = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(1)}%` : 'n/a');

export const fmtLoad = (loads: readonly number[]): string => loads.map((x) => x.toFixed(2)).join(', ');

export const plural = (n: number, word: string): string => `${fmtInt(n)} ${word}${n === 1 ? '' : 's'}`;

/** `200×5, 429×3` from status counts (a Map or a record). */
export function statusList(counts: ReadonlyMap<number | string, number> | Record<string, number>): string {
  const entries = counts instanceof Map ? [...counts.entries()] : Object.entries(counts);
  return entries.map(([code, n]) => `${code}×${n}`).join(', ');
}

/** Nearest-rank percentile of ascending `sorted` samples (q in 0..1); NaN when empty. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** The lower median of `xs` (the middle one of an odd count). */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? Number.NaN;
}

/** The item whose `value` is the (lower) median: a whole round, not an average of two. */
export function medianBy<T>(items: readonly T[], value: (item: T) => number): T {
  const mid = [...items].sort((a, b) => value(a) - value(b))[Math.floor((items.length - 1) / 2)];
  if (mid === undefined) throw new Error('medianBy: no items');
  return mid;
}

/** An ISO time to the second (`2026-11-23T12:24:08Z`). */
export const isoSecond = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

/** A markdown table; `align` per column: 'l' or 'r'. Cells are written as given. */
export function mdTable(header: readonly string[], align: string, rows: readonly (readonly string[])[]): string[] {
  const sep = header.map((_, i) => (align[i] === 'r' ? '---:' : '---'));
  return [`| ${header.join(' | ')} |`, `|${sep.join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}
