/** The public listing's report: requests/s and p50/p95/max per scenario, against p95 < 50 ms. */
import { fmtInt, fmtNum, mdTable, percentile } from '../lib/format.js';
import { measuredLine, type Headline } from '../lib/report.js';
import { machine } from '../lib/sample.js';
import { settings, type ScenarioResult } from './load.js';

export const GOAL_P95_MS = 50;

export function report(at: Date, results: ScenarioResult[], terms: { all: number; short: number }, loads: string, pinning: string): { markdown: string; headlines: Headline[] } {
  const p95 = (r: ScenarioResult) => percentile(r.times, 0.95);
  const judged = results.filter((r) => r.scenario.goal);
  const worst = Math.max(...judged.map(p95));
  const headlines: Headline[] = [
    {
      id: 'public-users/p95',
      figure: `Public user listing on ${fmtInt(settings.users)} users, answer cache off, one request at a time: p95 of the slowest of ${judged.map((r) => r.scenario.name).join(', ')}`,
      goal: `< ${GOAL_P95_MS} ms`,
      measured: `${fmtNum(worst)} ms`,
      met: worst < GOAL_P95_MS,
    },
  ];
  const markdown = [
    `${measuredLine(at)} ${fmtInt(settings.users)} users (vacuumed and analysed), answer cache off, ${terms.all} search terms ` +
      `(${terms.short} of 1 or 2 characters), one request at a time unless the scenario says otherwise, on loopback (tsx, in-process API); ` +
      `load average (1, 5, 15 min) before / while: ${loads}. ${machine(pinning)}.`,
    '',
    ...mdTable(
      ['scenario', 'requests', 'requests/s', 'p50 ms', 'p95 ms', 'max ms', 'non-200'],
      'lrrrrrr',
      results.map((r) => [r.scenario.name, fmtInt(r.times.length), fmtInt(r.rate), fmtNum(percentile(r.times, 0.5)), fmtNum(p95(r)), fmtNum(r.times[r.times.length - 1]!), String(r.failures)]),
    ),
    '',
    `Goal p95 < ${GOAL_P95_MS} ms with the answer cache off, one request at a time (${judged.map((r) => r.scenario.name).join(', ')}): **${worst < GOAL_P95_MS ? 'met' : 'not met'}**.`,
  ];
  return { markdown: markdown.join('\n'), headlines };
}
