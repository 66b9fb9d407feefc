/**
 * The escrow-routes bench's report: each route's median round, its ratio to
 * `GET /v1/auth/me` (the median of the per-round ratios), and what the run added to the
 * database.
 */
import { answersNote, byRps, type AutocannonResult } from '../lib/autocannon.js';
import { LOG_LEVEL } from '../lib/env.js';
import { fmtInt, fmtNum, fmtPct, mdTable, median, medianBy, plural } from '../lib/format.js';
import { isPinned } from '../lib/procs.js';
import { measuredLine, type Headline } from '../lib/report.js';
import { machine } from '../lib/sample.js';
import { LIST, LIST_LIMIT, ME, settings, type Route } from './load.js';
import type { EscrowSeed } from './seed.js';
import type { RowCounts } from './verify.js';

/** Each route's row label. */
const LABELS: Record<Route, string> = {
  me: `\`GET ${ME}\` (the floor)`,
  get: '`GET /api/escrows/:id` as a party',
  list: `\`GET ${LIST}\``,
  create: '`POST /api/escrows` (direct, as buyer)',
  'create-one-seller': '`POST /api/escrows` (direct, as buyer), one seller',
  preview: '`GET /api/escrows/:id/preview` (public)',
};

export interface RunInfo {
  seed: EscrowSeed;
  listTotals: number[];
  loadStart: string;
  loadEnd: string;
  rowsBefore: RowCounts;
  rowsAfter: RowCounts;
  at: Date;
  seconds: number;
}

export function report(results: Map<Route, AutocannonResult[]>, info: RunInfo): { markdown: string; headlines: Headline[] } {
  const me = results.get('me')!;
  const rows: string[][] = [];
  const ratioLines: string[] = [];
  const headlines: Headline[] = [];
  for (const route of ['me', ...settings.scenarios] as Route[]) {
    const rs = results.get(route)!;
    const mid = medianBy(rs, byRps);
    const paired = rs.map((r, i) => (r.requests.average / me[i]!.requests.average) * 100).sort((a, b) => a - b);
    rows.push([
      LABELS[route],
      fmtInt(mid.requests.average),
      fmtNum(mid.latency.p50),
      fmtNum(mid.latency.p99),
      route === 'me' ? '100%' : `**${fmtPct(median(paired))}**`,
      fmtInt(mid.throughput.total / Math.max(1, mid.requests.total)),
      rs.map((r) => fmtInt(r.requests.average)).join(' / '),
    ]);
    if (route === 'me') continue;
    ratioLines.push(`${LABELS[route]}: ${paired.map(fmtPct).join(', ')}`);
    headlines.push({ id: `escrows/${route}`, figure: `${LABELS[route]} ÷ \`GET ${ME}\`, requests/s`, goal: '—', measured: fmtPct(median(paired)) });
  }
  const s = info.seed;
  const grew = (k: keyof RowCounts) => fmtInt(info.rowsAfter[k] - info.rowsBefore[k]);
  const markdown = [
    `${measuredLine(info.at).replace(/\.$/, '')} (${Math.round(info.seconds)} s of load). ` +
      `Load average (1, 5, 15 min) when the load started: ${info.loadStart}; when it ended: ${info.loadEnd}.`,
    '',
    ...mdTable(['Route', 'Requests/s', 'p50 (ms)', 'p99 (ms)', `÷ \`GET ${ME}\``, 'Bytes/response', 'Requests/s per round'], 'lrrrrrl', rows),
    '',
    `- Each row is that route's median round by requests/s (its p50 and p99 are that round's); the ratio is the median of the ` +
      `per-round ratios (route ÷ \`GET ${ME}\` of the same round). ${plural(settings.rounds, 'round')} × ${settings.duration} s per route, ` +
      `${settings.connections} connections, pipelining 1, after a ${settings.warmup} s warm-up per route; in each round the routes run back ` +
      `to back, forward in odd rounds and backward in even ones.`,
    `- Per-round ratios (sorted): ${ratioLines.join('; ')}.`,
    `- Callers: ${fmtInt(s.readers.length)} readers with their own keys (\`GET ${ME}\`, the escrow, the list: a different reader on ` +
      `every request), each the buyer of ${s.perReader} escrows and the seller of its predecessor's ${s.perReader}, so every list ` +
      `holds ${fmtInt(median(info.listTotals))} escrows (page of ${LIST_LIMIT}); half of the escrows are paid (\`markPaid\`, with ` +
      `its ledger posting), and the preview cycles through those ${fmtInt(s.escrows.filter((e) => e.status === 'paid').length)}. ` +
      `${fmtInt(s.writers.length)} writers create, each naming the next writer as seller (in \`create-one-seller\`, all the same one).`,
    `- The creation rounds (and their warm-up) added ${grew('escrows')} escrows, ${grew('events')} events and ${grew('outbox')} outbox rows ` +
      `(the bench database now holds ${fmtInt(info.rowsAfter.escrows)} escrows and ${fmtInt(info.rowsAfter.outbox)} outbox rows). ` +
      `No worker runs in the bench, so the outbox is never relayed and grows run after run.`,
    `- The API is the compiled build, \`node dist/api/server.js\` (\`NODE_ENV=development\`, \`LOG_LEVEL=${LOG_LEVEL}\`, stdout to ` +
      `/dev/null), with \`AUTH_RATE_LIMIT_PER_MINUTE=${settings.authLimit}\` and \`PUBLIC_RATE_LIMIT_PER_MINUTE=${settings.publicLimit}\`: both limits ` +
      `are still checked on every request, they never answer 429. ${answersNote(results, 'Every answer in every round was 2xx (201 for the creation).')}`,
    `- ${machine(isPinned() ? 'load generator pinned to core 0, the API to core 1; Postgres and Redis unpinned' : 'no pinning')}.`,
  ];
  return { markdown: markdown.join('\n'), headlines };
}
