/**
 * The deals bench's report: each route's median round (requests/s, p50, p99), and for deal
 * creation and fee preview their ratios to `GET /v1/enterprise/me` of the same rounds
 * (requests/s and p99, each the median of the per-round ratios), what the run added to
 * the database and the checks after it.
 */
import { answersNote, byRps, type AutocannonResult } from '../lib/autocannon.js';
import { LOG_LEVEL, SERVICE_ENV_NOTE } from '../lib/env.js';
import { fmtInt, fmtNum, fmtPct, mdTable, median, medianBy, plural } from '../lib/format.js';
import type { FlowResult } from '../lib/flows.js';
import { isPinned } from '../lib/procs.js';
import { measuredLine, type Headline } from '../lib/report.js';
import { machine } from '../lib/sample.js';
import { DEALS, ME, MILESTONES, PREVIEW, PREVIEW_LIMIT_PER_MINUTE, ROUTES, settings, type Route } from './load.js';
import type { DealSeed } from './seed.js';
import type { DealCheck, RowCounts } from './verify.js';

const LABELS: Record<Route, string> = {
  me: `\`GET ${ME}\` (the floor)`,
  create: `\`POST ${DEALS}\` (3 milestones, session)`,
  preview: `\`POST ${PREVIEW}\` (3 milestones, session)`,
};
const SHORT: Record<Exclude<Route, 'me'>, string> = { create: 'Deal creation', preview: 'Fee preview' };

export interface RunInfo {
  seed: DealSeed;
  loadStart: string;
  loadEnd: string;
  rowsBefore: RowCounts;
  rowsAfter: RowCounts;
  answered201: number;
  check: DealCheck;
  at: Date;
  seconds: number;
  /** Deal creation at an even rate (issue 44). */
  paced: FlowResult[];
}

const PACED_P99_GOAL_MS = 100;

export function report(results: Map<Route, AutocannonResult[]>, info: RunInfo): { markdown: string; headlines: Headline[] } {
  const me = results.get('me')!;
  const rows: string[][] = [];
  const ratioLines: string[] = [];
  const headlines: Headline[] = [];
  for (const route of ROUTES) {
    const rs = results.get(route)!;
    const mid = medianBy(rs, byRps);
    const rps = rs.map((r, i) => (r.requests.average / me[i]!.requests.average) * 100).sort((a, b) => a - b);
    const p99 = rs.map((r, i) => r.latency.p99 / me[i]!.latency.p99).sort((a, b) => a - b);
    rows.push([
      LABELS[route],
      fmtInt(mid.requests.average),
      fmtNum(mid.latency.p50),
      fmtNum(mid.latency.p99),
      route === 'me' ? '100%' : `**${fmtPct(median(rps))}**`,
      route === 'me' ? '1.0×' : `**${fmtNum(median(p99))}×**`,
      rs.map((r) => fmtInt(r.requests.average)).join(' / '),
      rs.map((r) => fmtNum(r.latency.p99)).join(' / '),
    ]);
    if (route === 'me') continue;
    ratioLines.push(`${LABELS[route]}: requests/s ${rps.map(fmtPct).join(', ')}; p99 ${p99.map((x) => `${fmtNum(x)}×`).join(', ')}`);
    headlines.push(
      { id: `deals/${route}`, figure: `${SHORT[route]} (${LABELS[route]}): requests/s, and ÷ \`GET ${ME}\``, goal: '—', measured: `${fmtInt(mid.requests.average)}/s, ${fmtPct(median(rps))}` },
      { id: `deals/${route}-p99`, figure: `${SHORT[route]} (${LABELS[route]}): p99, and ÷ \`GET ${ME}\``, goal: '—', measured: `${fmtNum(mid.latency.p99)} ms, ${fmtNum(median(p99))}×` },
    );
  }
  const pacedNote: string[] = [];
  if (info.paced.length > 0) {
    const p99s = info.paced.map((r) => r.flowLatency.p99);
    const mid = [...p99s].sort((a, b) => a - b)[Math.floor((p99s.length - 1) / 2)]!;
    const met = mid < PACED_P99_GOAL_MS;
    pacedNote.push(
      `- **Deal creation at an even ${fmtInt(settings.pacedRate)}/s** (issue 44; one request started every 1/${fmtInt(settings.pacedRate)} s, open loop, bench/lib/flows.ts \`pacedFlows\`; ${plural(info.paced.length, 'run')} × ${settings.pacedDuration} s after the rounds, a different owner each request): ` +
        `p99 **${fmtNum(mid)} ms** (median run; per run ${p99s.map((x) => fmtNum(x)).join(' / ')} ms; p50 ${info.paced.map((r) => fmtNum(r.flowLatency.p50)).join(' / ')} ms; ${info.paced.map((r) => fmtInt(r.completed)).join(' / ')} created), goal < ${PACED_P99_GOAL_MS} ms: **${met ? 'met' : 'not met'}**. ` +
        `Each answer is timed from when its request was due, so a request held back behind a slow one counts its wait.`,
    );
    headlines.push({ id: 'deals/create-paced-p99', figure: `Deal creation (${LABELS.create}) at an even ${fmtInt(settings.pacedRate)}/s: p99 (median of ${plural(info.paced.length, 'run')})`, goal: `< ${PACED_P99_GOAL_MS} ms`, measured: `${fmtNum(mid)} ms`, met });
  }
  const grew = (k: keyof RowCounts) => fmtInt(info.rowsAfter[k] - info.rowsBefore[k]);
  const s = info.seed;
  const markdown = [
    `${measuredLine(info.at).replace(/\.$/, '')} (${Math.round(info.seconds)} s of load). ` +
      `Load average (1, 5, 15 min) when the load started: ${info.loadStart}; when it ended: ${info.loadEnd}.`,
    '',
    ...mdTable(
      ['Route', 'Requests/s', 'p50 (ms)', 'p99 (ms)', `Requests/s ÷ \`GET ${ME}\``, `p99 ÷ \`GET ${ME}\``, 'Requests/s per round', 'p99 (ms) per round'],
      'lrrrrrll',
      rows,
    ),
    '',
    `- Each row is that route's median round by requests/s (its p50 and p99 are that round's); the ratios are the medians of the ` +
      `per-round ratios (route ÷ \`GET ${ME}\` of the same round; for p99 a factor, higher is slower). ${plural(settings.rounds, 'round')} × ` +
      `${settings.duration} s per route, ${settings.connections} connections, pipelining 1, after a ${settings.warmup} s warm-up per route; ` +
      `in each round the routes run back to back, forward in odd rounds and backward in even ones.`,
    `- Per-round ratios (sorted): ${ratioLines.join('; ')}.`,
    ...pacedNote,
    `- Callers: ${fmtInt(s.callers.length)} owners, each of a sandbox workspace of their own with one counterparty, each with a dashboard ` +
      `session (cookie; the writes carry the CSRF token): a different owner on every request of every route. Every deal has the same ` +
      `${MILESTONES.length} milestones (${MILESTONES.map((m) => fmtInt(m.amount)).join(' + ')}), and every preview prices the same amounts; no Idempotency-Key.`,
    `- The fee preview's own limit (${PREVIEW_LIMIT_PER_MINUTE} per minute per user, not configurable) was kept under by cycling through every owner and ` +
      `deleting the bench's preview counters before each preview run: at most ${fmtInt(PREVIEW_LIMIT_PER_MINUTE * s.callers.length)} previews per run.`,
    `- The creation runs (warm-up included) answered ${fmtInt(info.answered201)} × 201 (the requests in flight when a run ended complete uncounted) and added ${grew('deals')} deals, ${grew('milestones')} milestones and ` +
      `${grew('events')} workspace events (the bench database now holds ${fmtInt(info.rowsAfter.deals)} deals, ${fmtInt(info.check.benchDeals)} of them ` +
      `this bench's, in workspaces that keep them run after run). After the load every bench deal had its ${MILESTONES.length} milestones with the ` +
      `amounts sent and fee shares adding up to the deal's fee, and every ledger invariant held (\`checkLedger\`, as \`npm run ledger:check\`).`,
    `- The API is the compiled build, \`node dist/api/server.js\` (${SERVICE_ENV_NOTE}, \`LOG_LEVEL=${LOG_LEVEL}\`, stdout to ` +
      `/dev/null), with \`AUTH_RATE_LIMIT_PER_MINUTE=${settings.authLimit}\` (the enterprise routes' shared per-user limit: still checked on ` +
      `every request, never answering 429). ${answersNote(results, 'Every answer in every round was 2xx (201 for the creation; no 429).')}`,
    `- ${machine(isPinned() ? 'load generator pinned to core 0, the API to core 1; Postgres and Redis unpinned' : 'no pinning')}.`,
  ];
  return { markdown: markdown.join('\n'), headlines };
}
