/**
 * The release-flow bench's report: per round the API's and the floor's completed flows/s
 * (closed loop) and their ratio, the headline being the median of the per-round ratios (issue
 * 29's goal ≥ 60%); then the evenly paced run of each side: p50/p99 per request (each step)
 * and per flow, with issue 29's p99 goal for write routes (< 30 ms, or at most 1.5× the
 * floor's p99 in the same run) judged on the worse of the two steps.
 */
import { LOG_LEVEL, SERVICE_ENV_NOTE } from '../lib/env.js';
import { fmtInt, fmtNum, fmtPct, mdTable } from '../lib/format.js';
import { fmtSpread, judgeRounds, NOISY_SPREAD, spreadText, verdictText } from '../lib/verdict.js';
import type { FlowResult } from '../lib/flows.js';
import { measuredLine, type Headline } from '../lib/report.js';
import { machine } from '../lib/sample.js';
import type { LeanCheck } from '../lib/statements.js';
import { settings, type RunResult } from './load.js';
import type { AfterCheck } from './verify.js';

export const GOAL = 60;
export const P99_MS = 30;
export const P99_FACTOR = 1.5;
const STEPS = ['confirm-received', 'release'] as const;

export interface ReportInput {
  at: Date;
  seconds: number;
  rounds: { api: RunResult; floor: RunResult }[];
  paced: { api: FlowResult; floor: FlowResult; rate: number; rateNote: string };
  after: AfterCheck;
  loadStart: string;
  loadEnd: string;
  seedNote: string;
  /** What each side sent to Postgres per flow (bench/lib/statements.ts). */
  lean: LeanCheck;
}

/** The worse of the two steps' p99 (ms). */
const worstP99 = (f: FlowResult): number => Math.max(...STEPS.map((s) => f.steps[s]?.latency.p99 ?? Number.NaN));

export function report(r: ReportInput): { markdown: string; headlines: Headline[]; ratio: number } {
  const ratios = r.rounds.map((x) => (x.api.flows.rate / x.floor.flows.rate) * 100);
  const v = judgeRounds(ratios, (m) => m >= GOAL);
  const ratio = v.median;
  const apiP99 = worstP99(r.paced.api);
  const floorP99 = worstP99(r.paced.floor);
  // One paced run per side: one ratio, no spread to judge (the pay and fund benches pace in rounds).
  const p99Met = apiP99 < P99_MS || apiP99 <= P99_FACTOR * floorP99;
  const roundRows = r.rounds.map((x, i) => [String(i + 1), i % 2 === 0 ? 'API' : 'floor', fmtInt(x.api.flows.rate), fmtInt(x.floor.flows.rate), fmtPct(ratios[i]!)]);
  const pacedRows: string[][] = [];
  for (const [label, f] of [
    ['API', r.paced.api],
    ['floor', r.paced.floor],
  ] as const) {
    for (const s of STEPS) {
      const l = f.steps[s]?.latency;
      pacedRows.push([label, `\`POST /api/escrows/:id/${s}\``, fmtInt(f.steps[s]?.count ?? 0), fmtNum(l?.p50 ?? Number.NaN), fmtNum(l?.p99 ?? Number.NaN), fmtNum(l?.max ?? Number.NaN)]);
    }
    pacedRows.push([label, 'the whole flow (both requests)', fmtInt(f.completed), fmtNum(f.flowLatency.p50), fmtNum(f.flowLatency.p99), fmtNum(f.flowLatency.max)]);
  }
  const markdown = [
    `${measuredLine(r.at).replace(/\.$/, '')} (${Math.round(r.seconds)} s of load). Load average (1, 5, 15 min) when the load started: ${r.loadStart}; when it ended: ${r.loadEnd}.`,
    '',
    `**Confirm received + release, flows/s: API ÷ floor ${fmtPct(ratio)}**, ${spreadText(v)} (goal ≥ ${GOAL}%: ${verdictText(v)}); ` +
      `paced at ${fmtInt(r.paced.rate)} flows/s, the worse step's p99: API ${fmtNum(apiP99)} ms, floor ${fmtNum(floorP99)} ms ` +
      `(goal < ${P99_MS} ms or ≤ ${P99_FACTOR}× the floor's: ${p99Met ? 'met' : '**not met**'}).`,
    '',
    ...mdTable(['Round', 'First', 'API flows/s', 'Floor flows/s', 'API ÷ floor'], 'rlrrr', roundRows),
    '',
    `Evenly paced at ${fmtInt(r.paced.rate)} flows/s (${r.paced.rateNote}) for ${settings.pacedDuration} s, twice per side in the order API, floor, floor, API (neither side always first after the closed loop), each side's worse run by flow p99 shown; latency from the moment each request could first be sent:`,
    '',
    ...mdTable(['Side', 'Request', 'Count', 'p50 (ms)', 'p99 (ms)', 'max (ms)'], 'llrrrr', pacedRows),
    '',
    `- A flow is one seeded \`sent\` escrow: the buyer's keyed \`POST /api/escrows/:id/confirm-received\`, then on its answer the buyer's keyed ` +
      `\`POST /api/escrows/:id/release\` (each a fresh \`Idempotency-Key\`, body \`{}\`); flows/s counts flows whose two answers were 200 over the run's wall time. ` +
      `${settings.rounds} rounds × ${settings.duration} s per side, ${settings.concurrency} flows in flight (closed loop), API first in odd rounds and the floor first in even ones, ` +
      `after a ${settings.warmup} s warm-up per side; the headline is the median of the per-round ratios (sorted: ${v.ratios.map(fmtPct).join(', ')}; spread ${fmtSpread(v.spread)}, more than ${NOISY_SPREAD}× reads noisy: bench/lib/verdict.ts).`,
    `- The floor is bench/auth-read/floor-server.ts with bench/auth-read/floor-release.ts: Koa, node-postgres named statements, ioredis, the same authentication, ` +
      `per-user limit, locks, compare-and-sets and rows by hand: per request the key lookup, then \`BEGIN\`, two statements and \`COMMIT\` (see the SQL comparison).`,
    `- ${r.lean.line}: the floor is at least as lean as the API, or the bench reports no ratio (issue 43).`,
    `- ${r.seedNote}`,
    `- Failed flows: closed loop ${r.rounds.reduce((n, x) => n + x.api.flows.failed, 0)} (API) and ${r.rounds.reduce((n, x) => n + x.floor.flows.failed, 0)} (floor), ` +
      `paced ${r.paced.api.failed} and ${r.paced.floor.failed}. After the load: ${fmtInt(r.after.released)} escrows whose release answered 200 checked released exactly once ` +
      `with the right fee and posting, none of the ${fmtInt(r.after.reached)} escrows reached released twice, and \`checkLedger\` (as \`npm run ledger:check\`) ` +
      `${r.after.problems.length === 0 ? 'found nothing' : `found problems: ${r.after.problems.join('; ')}`}.`,
    `- The API is the compiled build, \`node dist/api/server.js\` (${SERVICE_ENV_NOTE}, \`LOG_LEVEL=${LOG_LEVEL}\`, stdout to /dev/null); the floor server runs beside it ` +
      `with the same environment (\`node --import tsx\`); both with \`AUTH_RATE_LIMIT_PER_MINUTE=${settings.authLimit}\` (still checked on every request, never answering 429). ` +
      `No worker runs: the outbox rows both write are left unrelayed.`,
    `- ${machine('no pinning: the load generator, the API, the floor server, Postgres and Redis share the cores')}.`,
  ];
  const headlines: Headline[] = [
    {
      id: 'release/flow',
      figure: 'Confirm received + release (keyed, ledger posting, fee) ÷ its floor (Koa + pg + ioredis, the same rows by hand), flows/s',
      goal: `≥ ${GOAL}%`,
      measured: `${fmtPct(ratio)} (${spreadText(v)})`,
      met: v.met,
      noisy: v.noisy,
    },
    {
      id: 'release/p99',
      figure: `Confirm received + release at an even ${fmtInt(r.paced.rate)} flows/s: the worse step's p99, API (floor)`,
      goal: `< ${P99_MS} ms or ≤ ${P99_FACTOR}× floor`,
      measured: `${fmtNum(apiP99)} ms (${fmtNum(floorP99)} ms)`,
      met: p99Met,
    },
  ];
  return { markdown: markdown.join('\n'), headlines, ratio };
}
