/**
 * The authenticated-read bench's report: a table per scenario (each app's median round),
 * the headline ratios (median of the per-round ratios) and p99, against issue 17's goals.
 */
import { badCount, byRps, statusSummary, type AutocannonResult } from '../lib/autocannon.js';
import { LOG_LEVEL, SERVICE_ENV_NOTE } from '../lib/env.js';
import { fmtInt, fmtNum, fmtPct, mdTable, median, medianBy, plural } from '../lib/format.js';
import type { PacedResult } from '../lib/paced.js';
import { isPinned } from '../lib/procs.js';
import { measuredLine, type Headline } from '../lib/report.js';
import { machine } from '../lib/sample.js';
import { fmtSpread, judgeRounds, NOISY_SPREAD, spreadText, type RoundsVerdict } from '../lib/verdict.js';
import { FRAME, HEALTHZ, ME, settings, type Pair } from './load.js';

/** Goals of issue 17. */
const GOAL_HEALTHZ_PERCENT = 80;
/** Issue 43: the trivial route through the whole request frame ÷ bare Koa. */
const GOAL_FRAME_PERCENT = 70;
const GOAL_AUTH_PERCENT = 70;
const GOAL_RATE_P99_MS = 25;

export interface Measured {
  healthz?: Pair<AutocannonResult>;
  frame?: Pair<AutocannonResult>;
  auth?: Pair<AutocannonResult>;
  session?: Pair<AutocannonResult>;
  rate?: Pair<PacedResult>;
  rateAutocannon?: Pair<AutocannonResult>;
}

export interface Labels {
  bare: string;
  full: string;
  service: string;
  floor: string;
}

const verdict = (v: RoundsVerdict) => (v.noisy ? `noisy (rounds spread ${fmtSpread(v.spread)} > ${NOISY_SPREAD}×)` : v.met ? 'met' : 'NOT met');
const bytesPer = (r: AutocannonResult) => fmtInt(r.throughput.total / Math.max(1, r.requests.total));
const roundsNote = (rounds: number, seconds: number, warmup: number) =>
  `${plural(rounds, 'round')} × ${seconds} s per app (alternating${warmup > 0 ? `, after a ${warmup} s warm-up each` : ''})`;

/**
 * A pair's table (each row the app's median round by requests/s) and its ratio: the
 * median of the per-round ratios. Each round loads both apps back to back, so a slow
 * spell on a shared machine hits a pair rather than one side.
 */
function summarisePair(results: Pair<AutocannonResult>, baseLabel: string, testLabel: string) {
  const base = medianBy(results.base, byRps);
  const test = medianBy(results.test, byRps);
  const paired = results.test
    .map((t, i) => (t.requests.average / (results.base[i]?.requests.average ?? Number.NaN)) * 100)
    .filter((r) => Number.isFinite(r))
    .sort((a, b) => a - b);
  const row = (label: string, r: AutocannonResult, all: AutocannonResult[]) => [
    label,
    fmtInt(r.requests.average),
    fmtNum(r.latency.average),
    fmtNum(r.latency.p50),
    fmtNum(r.latency.p97_5),
    fmtNum(r.latency.p99),
    fmtNum(r.latency.max),
    all.map((x) => fmtInt(x.requests.average)).join(' / '),
  ];
  const lines = mdTable(
    ['', 'Requests/s (mean)', 'Latency mean (ms)', 'p50 (ms)', 'p97.5 (ms)', 'p99 (ms)', 'max (ms)', 'Requests/s per round'],
    'lrrrrrrl',
    [row(baseLabel, base, results.base), row(testLabel, test, results.test)],
  );
  return { ratio: median(paired), paired, ratioOfMedians: (test.requests.average / base.requests.average) * 100, lines, base, test };
}

/** A pair's verdict on the median of its per-round ratios (bench/lib/verdict.ts: noisy past a 2× spread). */
const judgePair = (s: { paired: number[] }, goal: number): RoundsVerdict => judgeRounds(s.paired, (m) => m >= goal);

function problemLines(label: string, results: AutocannonResult[]): string[] {
  return results.flatMap((r, i) =>
    badCount(r) > 0 ? [`- ${label}, round ${i + 1}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx responses (${statusSummary(r)})`] : [],
  );
}

function authSection(m: Pair<AutocannonResult>, labels: Labels, headlines: Headline[]): string[] {
  const s = summarisePair(m, labels.floor, labels.service);
  const v = judgePair(s, GOAL_AUTH_PERCENT);
  headlines.push({ id: 'auth-read/auth', figure: `Authenticated read (\`GET ${ME}\`, a different user's key per request): API ÷ floor, requests/s`, measured: `${fmtPct(s.ratio)} (${spreadText(v)})`, goal: `≥ ${GOAL_AUTH_PERCENT}%`, met: v.met, noisy: v.noisy });
  return [
    `### Authenticated read: \`GET ${ME}\` with a personal key`,
    '',
    ...s.lines,
    '',
    `**API / floor: ${fmtPct(s.ratio)} of requests/s** (median of the per-round ratios) — goal ≥ ${GOAL_AUTH_PERCENT}%: **${verdict(v)}**.`,
    '',
    `- Per-round ratios: ${s.paired.map(fmtPct).join(', ')} (sorted; spread ${fmtSpread(v.spread)}); ratio of the two median rounds: ${fmtPct(s.ratioOfMedians)}.`,
    `- \`Authorization: Bearer rpk_…\`, cycling through ${fmtInt(settings.users)} users' keys (each request the next user's key, one counter across all connections), ` +
      `${settings.connections} connections, ${roundsNote(settings.rounds, settings.duration, settings.warmup)}.`,
    `- Responses in the median rounds: floor ${fmtInt(s.base.requests.total)}, API ${fmtInt(s.test.requests.total)}; bytes/response: floor ${bytesPer(s.base)}, API ${bytesPer(s.test)}.`,
  ];
}

function rateSection(m: Measured, labels: Labels, headlines: Headline[]): string[] {
  const { rate, connections } = settings;
  const byP99 = (r: PacedResult) => r.latency.p99;
  const svc = medianBy(m.rate!.test, byP99);
  const flo = medianBy(m.rate!.base, byP99);
  const met = svc.latency.p99 < GOAL_RATE_P99_MS;
  const rateVerdict = met ? 'met' : 'NOT met';
  headlines.push({ id: 'auth-read/rate-p99', figure: `Authenticated read at a fixed ${fmtInt(rate)} requests/s (evenly paced): API p99`, measured: `${fmtNum(svc.latency.p99)} ms`, goal: `< ${GOAL_RATE_P99_MS} ms`, met });
  const row = (label: string, r: PacedResult, all: PacedResult[]) =>
    [label, fmtInt(r.achievedRate), ...[r.latency.mean, r.latency.p50, r.latency.p90, r.latency.p97_5, r.latency.p99, r.latency.max].map(fmtNum), all.map((x) => fmtNum(x.latency.p99)).join(' / ')];
  const lines = [
    `### Latency at a fixed ${fmtInt(rate)} requests/s`,
    '',
    ...mdTable(
      ['', 'Requests/s answered', 'Latency mean (ms)', 'p50 (ms)', 'p90 (ms)', 'p97.5 (ms)', 'p99 (ms)', 'max (ms)', 'p99 per round (ms)'],
      'lrrrrrrrl',
      [row(labels.service, svc, m.rate!.test), row(labels.floor, flo, m.rate!.base)],
    ),
    '',
    `**API p99 at ${fmtInt(rate)} requests/s: ${fmtNum(svc.latency.p99)} ms** (median round by p99) — goal < ${GOAL_RATE_P99_MS} ms: **${rateVerdict}**.`,
    '',
    `- Evenly paced, open loop (\`bench/lib/paced.ts\`): one request every ${fmtNum(1000 / rate)} ms whether or not earlier ones were answered, ` +
      `over up to ${connections} keep-alive connections, the same cycling keys, ${roundsNote(settings.rateRounds, settings.rateDuration, 0)}. ` +
      `Each latency runs from the request's scheduled send time (so a stall counts against every request it delayed; ` +
      `it includes up to about 1 ms of the client's timer granularity). Each row is that app's median round by p99.`,
  ];
  const ac = m.rateAutocannon;
  if (ac && ac.test.length > 0 && ac.base.length > 0) {
    const pct = (r: AutocannonResult) => `p50 ${fmtNum(r.latency.p50)}, p97.5 ${fmtNum(r.latency.p97_5)}, p99 ${fmtNum(r.latency.p99)} ms`;
    const byAcP99 = (r: AutocannonResult) => r.latency.p99;
    lines.push(
      `- For comparison with issue 17's figures, autocannon \`overallRate: ${rate}\` (${plural(ac.test.length, 'round')} × ${settings.rateDuration} s per app): ` +
        `API ${pct(medianBy(ac.test, byAcP99))}; floor ${pct(medianBy(ac.base, byAcP99))}. That is not a fixed rate: autocannon sends each connection's ${fmtNum(rate / connections)} requests ` +
        `back to back at the start of every second, so the server is saturated in bursts, and its coordinated-omission correction ` +
        `assumes a 1 ms interval whatever the rate, which inflates the tail (see \`bench/lib/paced.ts\`).`,
    );
  }
  return lines;
}

function healthzSection(m: Pair<AutocannonResult>, labels: Labels, headlines: Headline[]): string[] {
  const s = summarisePair(m, labels.bare, labels.full);
  const v = judgePair(s, GOAL_HEALTHZ_PERCENT);
  headlines.push({
    id: 'auth-read/healthz',
    figure: `\`GET ${HEALTHZ}\`: API ÷ bare Koa, requests/s. The API answers it ahead of the request frame (no request id, access log, metrics, router or error renderer), so this measures Koa and the health check alone, not the frame: see the frame row`,
    measured: `${fmtPct(s.ratio)} (${spreadText(v)})`,
    goal: `≥ ${GOAL_HEALTHZ_PERCENT}%`,
    met: v.met,
    noisy: v.noisy,
  });
  return [
    `### \`GET ${HEALTHZ}\`: the API vs bare Koa (ahead of the frame)`,
    '',
    ...s.lines,
    '',
    `**API / bare Koa: ${fmtPct(s.ratio)} of requests/s** (median of the per-round ratios) — goal ≥ ${GOAL_HEALTHZ_PERCENT}%: **${verdict(v)}**.`,
    '',
    `- The API answers \`${HEALTHZ}\` from its first middleware (\`healthCheck\`, api/routes/system.ts), ahead of the request frame: this figure no longer measures the frame (the next one does).`,
    `- Per-round ratios: ${s.paired.map(fmtPct).join(', ')} (sorted; spread ${fmtSpread(v.spread)}); ratio of the two median rounds: ${fmtPct(s.ratioOfMedians)}.`,
    `- ${settings.connections} connections, ${roundsNote(settings.rounds, settings.duration, settings.warmup)}; each row is that app's median round by requests/s.`,
    `- Responses in the median rounds: bare ${fmtInt(s.base.requests.total)}, full ${fmtInt(s.test.requests.total)}; bytes/response: bare ${bytesPer(s.base)}, full ${bytesPer(s.test)}.`,
  ];
}

function frameSection(m: Pair<AutocannonResult>, labels: Labels, headlines: Headline[]): string[] {
  const s = summarisePair(m, labels.bare, labels.full);
  const v = judgePair(s, GOAL_FRAME_PERCENT);
  headlines.push({
    id: 'auth-read/frame',
    figure: `The request frame: \`GET ${FRAME}\` without credentials (request id, headers, body reader, router, \`auth('optional')\`, error renderer, access log, metrics; no store touched): API ÷ bare Koa, requests/s`,
    measured: `${fmtPct(s.ratio)} (${spreadText(v)})`,
    goal: `≥ ${GOAL_FRAME_PERCENT}%`,
    met: v.met,
    noisy: v.noisy,
  });
  return [
    `### The request frame: anonymous \`GET ${FRAME}\`, the API vs bare Koa`,
    '',
    ...s.lines,
    '',
    `**API / bare Koa: ${fmtPct(s.ratio)} of requests/s** (median of the per-round ratios) — goal ≥ ${GOAL_FRAME_PERCENT}% (issue 43): **${verdict(v)}**.`,
    '',
    `- The cheapest route through the whole frame: with no \`Authorization\` header and no session cookie, \`auth('optional')\` reads no store and the route answers \`{"user": null, "csrf_token": null}\`; ` +
      `bare Koa (\`bench/auth-read/bare-koa.ts\`) answers the same body from one middleware. Checked before the load: the same body from both, and the API's carries the frame's request id and security headers.`,
    `- Per-round ratios: ${s.paired.map(fmtPct).join(', ')} (sorted; spread ${fmtSpread(v.spread)}); ratio of the two median rounds: ${fmtPct(s.ratioOfMedians)}.`,
    `- ${settings.connections} connections, ${roundsNote(settings.rounds, settings.duration, settings.warmup)}; each row is that app's median round by requests/s.`,
    `- Responses in the median rounds: bare ${fmtInt(s.base.requests.total)}, full ${fmtInt(s.test.requests.total)}; bytes/response: bare ${bytesPer(s.base)}, full ${bytesPer(s.test)}.`,
  ];
}

function sessionSection(m: Pair<AutocannonResult>, labels: Labels): string[] {
  const s = summarisePair(m, labels.floor, labels.service);
  return [
    `### Session cookie: \`GET ${ME}\` as one signed-in user`,
    '',
    ...s.lines,
    '',
    `API / floor: ${fmtPct(s.ratio)} of requests/s (median of the per-round ratios; no goal of its own).`,
    '',
    `- One user's session cookie on every request, ${settings.connections} connections, ${roundsNote(settings.sessionRounds, settings.sessionDuration, 0)}, right after the key rounds (warm).`,
  ];
}

export function report(m: Measured, labels: Labels, at: Date): { markdown: string; headlines: Headline[] } {
  const headlines: Headline[] = [];
  const sections: string[][] = [];
  if (m.auth) sections.push(authSection(m.auth, labels, headlines));
  if (m.rate) sections.push(rateSection(m, labels, headlines));
  if (m.healthz) sections.push(healthzSection(m.healthz, labels, headlines));
  if (m.frame) sections.push(frameSection(m.frame, labels, headlines));
  if (m.session) sections.push(sessionSection(m.session, labels));
  const problems = [
    ...(m.auth ? [...problemLines(`${labels.floor} (auth)`, m.auth.base), ...problemLines(`${labels.service} (auth)`, m.auth.test)] : []),
    ...(m.rateAutocannon ? [...problemLines(`${labels.floor} (autocannon rate)`, m.rateAutocannon.base), ...problemLines(`${labels.service} (autocannon rate)`, m.rateAutocannon.test)] : []),
    ...(m.healthz ? [...problemLines(labels.bare, m.healthz.base), ...problemLines(labels.full, m.healthz.test)] : []),
    ...(m.frame ? [...problemLines(`${labels.bare} (frame)`, m.frame.base), ...problemLines(`${labels.full} (frame)`, m.frame.test)] : []),
    ...(m.session ? [...problemLines(`${labels.floor} (session)`, m.session.base), ...problemLines(`${labels.service} (session)`, m.session.test)] : []),
  ];
  const summary = mdTable(
    ['Figure', 'Measured', 'Goal', ''],
    'lrrl',
    headlines.map((h) => [h.figure, `**${h.measured}**`, h.goal, h.noisy ? 'noisy' : h.met === undefined ? '' : h.met ? 'met' : 'NOT met']),
  );
  const markdown = [
    measuredLine(at),
    '',
    ...summary,
    '',
    `- The API is the compiled build, \`node dist/api/server.js\` (${SERVICE_ENV_NOTE}, \`LOG_LEVEL=${LOG_LEVEL}\`, stdout to /dev/null), ` +
      `with \`AUTH_RATE_LIMIT_PER_MINUTE=${settings.authLimit}\` so that the per-user limit never answers 429 here; the floor server ` +
      `(\`bench/auth-read/floor-server.ts\`, Koa + pg + ioredis, under tsx) checks its counter against the same limit. Bare Koa is ` +
      `\`bench/auth-read/bare-koa.ts\`. One process each, on the same Postgres database and Redis.`,
    `- ${machine(isPinned() ? 'load generator pinned to core 0, servers under test to core 1' : 'load generator and servers share them')}. Pipelining 1.`,
    '',
    ...sections.flatMap((s) => [...s, '']),
    ...(problems.length ? ['**Errors during the run:**', '', ...problems, ''] : []),
  ];
  return { markdown: markdown.join('\n').trimEnd(), headlines };
}
