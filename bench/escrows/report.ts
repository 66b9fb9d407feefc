/**
 * The escrow-routes bench's report: each route's median round, its ratio to its own floor
 * (issue 29's goals) and to `GET /v1/auth/me` (each the median of the per-round ratios),
 * and what the run added to the database.
 */
import { answersNote, byRps, type AutocannonResult } from '../lib/autocannon.js';
import type { FlowResult } from '../lib/flows.js';
import { LOG_LEVEL, SERVICE_ENV_NOTE } from '../lib/env.js';
import { fmtInt, fmtNum, fmtPct, mdTable, median, medianBy, plural } from '../lib/format.js';
import { pacedVerdict } from '../lib/paced.js';
import { fmtSpread, judgeRounds, NOISY_SPREAD, spreadText, verdictText } from '../lib/verdict.js';
import { isPinned } from '../lib/procs.js';
import { measuredLine, type Headline } from '../lib/report.js';
import { machine } from '../lib/sample.js';
import type { LeanCheck } from '../lib/statements.js';
import { FLOORS, isFloor, LIST, LIST_LIMIT, ME, settings, type Route } from './load.js';
import type { EscrowSeed } from './seed.js';
import type { RowCounts } from './verify.js';

/** Each route's row label. */
const LABELS: Record<Route, string> = {
  me: `\`GET ${ME}\` (the floor)`,
  get: '`GET /api/escrows/:id` as a party',
  'get-floor': 'its floor (Koa + pg + ioredis)',
  list: `\`GET ${LIST}\``,
  'list-floor': 'its floor (Koa + pg + ioredis)',
  create: '`POST /api/escrows` (direct, keyed, as buyer)',
  'create-floor': 'its floor (Koa + pg + ioredis)',
  'create-one-seller': '`POST /api/escrows` (direct, keyed, as buyer), one seller',
  preview: '`GET /api/escrows/:id/preview` (public)',
};
/** Issue 29's goals: route ÷ its floor, requests/s, same run. */
const GOALS: Record<keyof typeof FLOORS, number> = { get: 75, list: 60, create: 60 };
const hasFloor = (route: Route): route is keyof typeof FLOORS => route in FLOORS;

export interface RunInfo {
  seed: EscrowSeed;
  listTotals: number[];
  loadStart: string;
  loadEnd: string;
  rowsBefore: RowCounts;
  rowsAfter: RowCounts;
  at: Date;
  seconds: number;
  /** The paced creations by target (`api`, `floor`), when they ran. */
  paced?: Map<string, FlowResult[]>;
  /** What each side sent to Postgres per keyed creation (bench/lib/statements.ts), when the creation ran. */
  lean?: LeanCheck;
}

/** Issue 29's latency goal for write routes: p99 at the paced rate under 30 ms, or at most 1.5x the floor's in the same run. */
const PACED_P99_MS = 30;
const PACED_VS_FLOOR = 1.5;

/** The paced creations' table, notes and headline. */
function pacedSection(paced: Map<string, FlowResult[]>): { lines: string[]; headline: Headline } {
  const api = paced.get('api')!;
  const floor = paced.get('floor')!;
  const p99 = (r: FlowResult) => r.steps.create?.latency.p99 ?? Number.NaN;
  const midApi = medianBy(api, p99);
  const midFloor = medianBy(floor, p99);
  // The verdict on the median of the per-round ratios (API p99 ÷ floor p99 of the same round), noisy past a 2× spread (bench/lib/verdict.ts).
  const v = pacedVerdict(
    api.map((a, i) => ({ api: a, floor: floor[i]! })),
    p99,
  );
  const ratio = v.ratio;
  const met = v.met;
  const row = (name: string, rs: FlowResult[], mid: FlowResult) => {
    const l = mid.steps.create!.latency;
    return [name, fmtInt(mid.rate), fmtNum(l.p50), fmtNum(l.p90), fmtNum(l.p99), fmtNum(l.max), rs.map((r) => fmtNum(p99(r))).join(' / ')];
  };
  const lines = [
    '',
    `#### \`POST /api/escrows\` (keyed) at an even ${fmtInt(settings.pacedRate)} requests/s`,
    '',
    ...mdTable(
      ['Server', 'Answered/s', 'p50 (ms)', 'p90 (ms)', 'p99 (ms)', 'max (ms)', 'p99 per round (ms)'],
      'lrrrrrl',
      [row('API', api, midApi), row('its floor (Koa + pg + ioredis)', floor, midFloor)],
    ),
    '',
    `- **API p99 ${fmtNum(v.api)} ms, ${fmtNum(ratio)}× the floor's** (medians of the rounds; the ratio the median of the per-round ratios, ${spreadText(v, (x) => `${fmtNum(x)}×`)}) — goal p99 < ${PACED_P99_MS} ms or ≤ ${PACED_VS_FLOOR}× the floor's: ${verdictText(v)}. ` +
      `${plural(settings.pacedRounds, 'round')} × ${settings.pacedDuration} s per server (alternating), a creation every ${fmtNum(1000 / settings.pacedRate)} ms ` +
      `whatever the answers (open loop, bench/lib/flows.ts \`pacedRounds\`), at most ${settings.connections} in flight, each with a fresh key; ` +
      `latency from each request's scheduled time.`,
  ];
  return {
    lines,
    headline: {
      id: 'escrows/create-paced-p99',
      figure: `\`POST /api/escrows\` (direct, keyed) at an even ${fmtInt(settings.pacedRate)} requests/s: API p99, and ÷ its floor's p99`,
      goal: `< ${PACED_P99_MS} ms or ≤ ${PACED_VS_FLOOR}×`,
      measured: `${fmtNum(v.api)} ms, ${fmtNum(ratio)}× (${spreadText(v, (x) => `${fmtNum(x)}×`)})`,
      met,
      noisy: v.noisy,
    },
  };
}

export function report(results: Map<Route, AutocannonResult[]>, info: RunInfo): { markdown: string; headlines: Headline[] } {
  const me = results.get('me')!;
  const rows: string[][] = [];
  const ratioLines: string[] = [];
  const floorLines: string[] = [];
  const headlines: Headline[] = [];
  /** Each round's requests/s of `route` ÷ those of `base` in the same round, in %, sorted. */
  const perRound = (route: Route, base: AutocannonResult[]) => results.get(route)!.map((r, i) => (r.requests.average / base[i]!.requests.average) * 100).sort((a, b) => a - b);
  for (const route of ['me', ...settings.scenarios] as Route[]) {
    const rs = results.get(route)!;
    const mid = medianBy(rs, byRps);
    const paired = perRound(route, me);
    const floorRuns = hasFloor(route) ? results.get(FLOORS[route]) : undefined;
    let vsFloor = isFloor(route) ? '100%' : '—';
    let goal = '—';
    if (hasFloor(route) && floorRuns) {
      const goalOf = GOALS[route];
      const v = judgeRounds(perRound(route, floorRuns), (m) => m >= goalOf);
      const ratio = v.median;
      vsFloor = `**${fmtPct(ratio)}** (spread ${fmtSpread(v.spread)})`;
      goal = `≥ ${goalOf}%: ${verdictText(v)}`;
      floorLines.push(`${LABELS[route]}: ${v.ratios.map(fmtPct).join(', ')} (spread ${fmtSpread(v.spread)})`);
      headlines.push({
        id: `escrows/${FLOORS[route]}`,
        figure: `${LABELS[route]} ÷ its floor (Koa + pg + ioredis, the same rows by hand), requests/s`,
        goal: `≥ ${GOALS[route]}%`,
        measured: `${fmtPct(ratio)} (${spreadText(v)})`,
        met: v.met,
        noisy: v.noisy,
      });
    }
    rows.push([
      isFloor(route) ? `… ${LABELS[route]}` : LABELS[route],
      fmtInt(mid.requests.average),
      fmtNum(mid.latency.p50),
      fmtNum(mid.latency.p99),
      vsFloor,
      goal,
      route === 'me' ? '100%' : isFloor(route) ? fmtPct(median(paired)) : `**${fmtPct(median(paired))}**`,
      fmtInt(mid.throughput.total / Math.max(1, mid.requests.total)),
      rs.map((r) => fmtInt(r.requests.average)).join(' / '),
    ]);
    if (route === 'me' || isFloor(route)) continue;
    ratioLines.push(`${LABELS[route]}: ${paired.map(fmtPct).join(', ')}`);
    headlines.push({ id: `escrows/${route}`, figure: `${LABELS[route]} ÷ \`GET ${ME}\`, requests/s`, goal: '—', measured: fmtPct(median(paired)) });
  }
  const s = info.seed;
  const grew = (k: keyof RowCounts) => fmtInt(info.rowsAfter[k] - info.rowsBefore[k]);
  const markdown = [
    `${measuredLine(info.at).replace(/\.$/, '')} (${Math.round(info.seconds)} s of load). ` +
      `Load average (1, 5, 15 min) when the load started: ${info.loadStart}; when it ended: ${info.loadEnd}.`,
    '',
    ...mdTable(
      ['Route', 'Requests/s', 'p50 (ms)', 'p99 (ms)', '÷ its floor', 'Goal (issue 29)', `÷ \`GET ${ME}\``, 'Bytes/response', 'Requests/s per round'],
      'lrrrrlrrl',
      rows,
    ),
    '',
    `- Each row is that route's median round by requests/s (its p50 and p99 are that round's); each ratio is the median of the ` +
      `per-round ratios (route ÷ its floor, route ÷ \`GET ${ME}\`, of the same round). A route's floor (the row below it) is ` +
      `bench/auth-read/floor-server.ts: Koa, node-postgres named statements, ioredis, the same authentication, per-user limit and ` +
      `rows by hand (see Method). ${plural(settings.rounds, 'round')} × ${settings.duration} s per route, ` +
      `${settings.connections} connections, pipelining 1, after a ${settings.warmup} s warm-up per route; in each round the routes run back ` +
      `to back, forward in odd rounds and backward in even ones.`,
    ...(info.lean ? [`- The keyed creation: ${info.lean.line}; the floor is at least as lean as the API, or the bench reports no ratio (issue 43).`] : []),
    ...(floorLines.length > 0 ? [`- Per-round ratios to the route's floor (sorted): ${floorLines.join('; ')}. A verdict whose rounds spread more than ${NOISY_SPREAD}× (largest ÷ smallest) reads noisy (bench/lib/verdict.ts).`] : []),
    `- Per-round ratios to \`GET ${ME}\` (sorted): ${ratioLines.join('; ')}.`,
    `- Callers: ${fmtInt(s.readers.length)} readers with their own keys (\`GET ${ME}\`, the escrow, the list: a different reader on ` +
      `every request), each the buyer of ${s.perReader} escrows and the seller of its predecessor's ${s.perReader}, so every list ` +
      `holds ${fmtInt(median(info.listTotals))} escrows (page of ${LIST_LIMIT}); half of the escrows are paid (\`markPaid\`, with ` +
      `its ledger posting), and the preview cycles through those ${fmtInt(s.escrows.filter((e) => e.status === 'paid').length)}. ` +
      `${fmtInt(s.writers.length)} writers create, each naming the next writer as seller (in \`create-one-seller\`, all the same one), ` +
      `every request with a fresh \`Idempotency-Key\` (a UUID v4).`,
    `- The creation rounds (and their warm-up), the API's and the floor's, added ${grew('escrows')} escrows, ${grew('events')} events, ` +
      `${grew('outbox')} outbox rows and ${grew('keys')} idempotency keys ` +
      `(the bench database now holds ${fmtInt(info.rowsAfter.escrows)} escrows and ${fmtInt(info.rowsAfter.outbox)} outbox rows). ` +
      `No worker runs in the bench, so the outbox is never relayed and grows run after run.`,
    `- The API is the compiled build, \`node dist/api/server.js\` (${SERVICE_ENV_NOTE}, \`LOG_LEVEL=${LOG_LEVEL}\`, stdout to ` +
      `/dev/null); the floor server runs beside it with the same environment (\`node --import tsx\`); both ` +
      `with \`AUTH_RATE_LIMIT_PER_MINUTE=${settings.authLimit}\` and \`PUBLIC_RATE_LIMIT_PER_MINUTE=${settings.publicLimit}\`: both limits ` +
      `are still checked on every request, they never answer 429. ${answersNote(results, 'Every answer in every round was 2xx (201 for the creation).')}`,
    `- ${machine(isPinned() ? 'load generator pinned to core 0, the API and the floor server to core 1; Postgres and Redis unpinned' : 'no pinning')}.`,
  ];
  if (info.paced) {
    const section = pacedSection(info.paced);
    markdown.push(...section.lines);
    headlines.push(section.headline);
  }
  return { markdown: markdown.join('\n'), headlines };
}
