/**
 * The fund-and-release bench's report: the closed-loop flows/s of the API and of its floor
 * (the median round of each, and the median of the per-round ratios: issue 29's headline),
 * the paced rounds' latencies (judged on the median round), and what the run checked and added.
 */
import type { FlowResult } from '../lib/flows.js';
import { P99_GOAL, pacedVerdict } from '../lib/paced.js';
import { LOG_LEVEL, SERVICE_ENV_NOTE } from '../lib/env.js';
import { fmtInt, fmtNum, fmtPct, mdTable, medianBy, plural } from '../lib/format.js';
import { fmtSpread, judgeRounds, NOISY_SPREAD, spreadText, verdictText } from '../lib/verdict.js';
import { isPinned } from '../lib/procs.js';
import { measuredLine, type Headline } from '../lib/report.js';
import { machine } from '../lib/sample.js';
import type { LeanCheck } from '../lib/statements.js';
import { settings, type Runs } from './load.js';
import type { FundSeed } from './seed.js';

export const GOAL = 60;
const FLOW = '`POST …/milestones/:mid/fund` (sandbox) then `POST …/milestones/:mid/release` (2 splits), keyed, workspace key';

export interface RunInfo {
  seed: FundSeed;
  loadStart: string;
  loadEnd: string;
  at: Date;
  seconds: number;
  checked: { flows: number; released: number };
  /** What each side sent to Postgres per flow (bench/lib/statements.ts). */
  lean: LeanCheck;
}

const stepP99 = (r: FlowResult, step: string) => (r.steps[step] ? fmtNum(r.steps[step].latency.p99) : 'n/a');

export function report(runs: Runs, info: RunInfo): { markdown: string; headlines: Headline[] } {
  const s = settings;
  const api = runs.rounds.map((r) => r.api);
  const floor = runs.rounds.map((r) => r.floor);
  const v = judgeRounds(
    runs.rounds.map((r) => (r.api.rate / r.floor.rate) * 100),
    (m) => m >= GOAL,
  );
  const { ratios, median: ratio } = v;
  const byRate = (r: FlowResult) => r.rate;
  const midApi = medianBy(api, byRate);
  const midFloor = medianBy(floor, byRate);
  const closedRow = (label: string, mid: FlowResult, all: FlowResult[], vs: string, goal: string) => [
    label,
    fmtInt(mid.rate),
    fmtNum(mid.flowLatency.p50),
    fmtNum(mid.flowLatency.p99),
    stepP99(mid, 'fund'),
    stepP99(mid, 'release'),
    vs,
    goal,
    all.map((r) => fmtInt(r.rate)).join(' / '),
  ];
  const pacedRow = (label: string, r: FlowResult) => [
    label,
    fmtInt(r.started),
    fmtInt(r.completed),
    fmtNum(r.flowLatency.p50),
    `**${fmtNum(r.flowLatency.p99)}**`,
    stepP99(r, 'fund'),
    stepP99(r, 'release'),
    fmtNum(r.flowLatency.max),
  ];
  const pacedRuns = runs.paced.flatMap((r) => [r.api, r.floor]);
  const failed = [...api, ...floor, ...pacedRuns].reduce((n, r) => n + r.failed, 0);
  const rate = runs.rate.rate;
  const p99Of = (step: string) => (r: FlowResult) => r.steps[step]?.latency.p99 ?? Number.NaN;
  const fundV = pacedVerdict(runs.paced, p99Of('fund'));
  const releaseV = pacedVerdict(runs.paced, p99Of('release'));
  const ratioText = (v: { ratios: number[] }) => v.ratios.map((x) => `${x.toFixed(2)}×`).join(', ');
  const markdown = [
    `${measuredLine(info.at).replace(/\.$/, '')} (${Math.round(info.seconds)} s of load). ` +
      `Load average (1, 5, 15 min) when the load started: ${info.loadStart}; when it ended: ${info.loadEnd}.`,
    '',
    `Closed loop, ${s.concurrency} flows in flight (a flow: ${FLOW}):`,
    '',
    ...mdTable(
      ['Server', 'Flows/s', 'p50 per flow (ms)', 'p99 per flow (ms)', 'p99 fund (ms)', 'p99 release (ms)', 'API ÷ floor', 'Goal (issue 29)', 'Flows/s per round'],
      'lrrrrrrll',
      [
        closedRow('API (`node dist/api/server.js`)', midApi, api, `**${fmtPct(ratio)}** (${spreadText(v)})`, `≥ ${GOAL}%: ${verdictText(v)}`),
        closedRow('… its floor (Koa + pg + ioredis)', midFloor, floor, '100%', '—'),
      ],
    ),
    '',
    `Evenly paced at ${fmtInt(rate)} flows/s (${fmtInt(2 * rate)} requests/s; ${runs.rate.note}), ${plural(runs.paced.length, 'round')} of ${s.pacedDuration} s per server, open loop, the API first in odd rounds:`,
    '',
    ...mdTable(
      ['Server', 'Flows started', 'Completed', 'p50 per flow (ms)', 'p99 per flow (ms)', 'p99 fund (ms)', 'p99 release (ms)', 'Max (ms)'],
      'lrrrrrrr',
      runs.paced.flatMap((r, i) => [pacedRow(`round ${i + 1}: API`, r.api), pacedRow(`round ${i + 1}: its floor`, r.floor)]),
    ),
    '',
    `- Paced goal (issue 29): each request's p99 under ${P99_GOAL.ms} ms or at most ${P99_GOAL.factor}× the floor's in the same round, judged on the median round ` +
      `(API ÷ floor per round, sorted: fund ${ratioText(fundV)}, spread ${fmtSpread(fundV.spread)}; release ${ratioText(releaseV)}, spread ${fmtSpread(releaseV.spread)}; ` +
      `rounds spreading more than ${NOISY_SPREAD}× make a ratio verdict noisy): fund ${verdictText(fundV)}, release ${verdictText(releaseV)}.`,
    `- ${info.lean.line}: the floor is at least as lean as the API, or the bench reports no ratio (issue 43).`,
    `- A flow is one deal: its first milestone (awaiting funding) funded, then its second (approved beforehand by the seed: ` +
      `funded, evidence by the owner, approved by the finance member) released into 2 splits to the deal's 2 verified, signed payout ` +
      `instructions; each request with a fresh \`Idempotency-Key\`, the workspace's read+write key (acting as its owner). ` +
      `${plural(s.workspaces, 'sandbox workspace')}, deals taken round-robin, never reused.`,
    `- Each closed-loop row is that server's median round by flows/s (its latencies are that round's); the ratio is the median of ` +
      `the per-round ratios (API ÷ floor of the same round), sorted: ${ratios.map(fmtPct).join(', ')} (spread ${fmtSpread(v.spread)}; more than ${NOISY_SPREAD}× reads noisy, bench/lib/verdict.ts). ${plural(s.rounds, 'round')} × ` +
      `${s.duration} s per server after a ${s.warmup} s warm-up each; the API first in odd rounds, the floor first in even ones. ` +
      `Latency per flow is from its first request's send to its last answer; in a paced run, from its scheduled start ` +
      `(bench/lib/flows.ts), so a stall shows in every flow scheduled during it.`,
    `- Checked: before the load, one flow through each server gave the same answers and the same rows (see Method); after it, ` +
      `${fmtInt(info.checked.flows)} completed flows each funded once and released once into 2 disbursements adding up to the ` +
      `milestone's payout_amount (${fmtInt(info.checked.released)} released bench milestones in the database, none twice), and every ` +
      `ledger invariant held (\`checkLedger\`). ${failed === 0 ? 'No flow failed.' : `${fmtInt(failed)} flows failed (under 1% of each run).`}`,
    `- The run consumed ${fmtInt(runs.consumed)} deals. No worker runs in the bench: the payouts stay queued and the outbox ` +
      `(payouts.disburse, mail.send) grows run after run.`,
    `- The API is the compiled build (${SERVICE_ENV_NOTE}, \`LOG_LEVEL=${LOG_LEVEL}\`, stdout to /dev/null); the floor server ` +
      `runs beside it with the same environment (\`node --import tsx\`); both with \`AUTH_RATE_LIMIT_PER_MINUTE=${s.authLimit}\` and ` +
      `\`ENTERPRISE_MONEY_LIMIT_PER_MINUTE=${s.moneyLimit}\`: the limits are still checked on every request, they never answer 429.`,
    `- ${machine(isPinned() ? 'load generator pinned to core 0, the API and the floor server to core 1; Postgres and Redis unpinned' : 'no pinning')}.`,
  ];
  const headlines: Headline[] = [
    {
      id: 'fund/flows-floor',
      figure: 'Enterprise fund (sandbox) then release into 2 splits, keyed (one flow per deal, 2 requests) ÷ its floor (Koa + pg + ioredis, the same rows by hand), flows/s',
      goal: `≥ ${GOAL}%`,
      measured: `${fmtPct(ratio)} (${spreadText(v)})`,
      met: v.met,
      noisy: v.noisy,
    },
    {
      id: 'fund/paced-p99',
      figure: `Enterprise fund then release at an evenly paced ${fmtInt(rate)} flows/s (median of ${plural(runs.paced.length, 'round')}): p99 per request of fund / release, API (its floor)`,
      goal: `< ${P99_GOAL.ms} ms or ≤ ${P99_GOAL.factor}× the floor's, each`,
      measured: `${fmtNum(fundV.api)} / ${fmtNum(releaseV.api)} ms (${fmtNum(fundV.floor)} / ${fmtNum(releaseV.floor)} ms); median round ${fundV.ratio.toFixed(2)}× / ${releaseV.ratio.toFixed(2)}×`,
      met: fundV.met && releaseV.met,
      noisy: (fundV.noisy || releaseV.noisy) && !(fundV.verdict === 'not met' || releaseV.verdict === 'not met'),
    },
  ];
  return { markdown: markdown.join('\n'), headlines };
}
