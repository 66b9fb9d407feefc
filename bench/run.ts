/**
 * `npm run bench` (through bench/run.sh, which provides Postgres, Redis, the migrated bench
 * database and a fresh dist/ build). Seeds the bench callers (bench/seed.ts), starts the
 * real API (`node dist/api/server.js`, the compiled build), a bare Koa app
 * (bench/bare-koa.ts) and the floor server (bench/floor-server.ts) as child processes on
 * loopback ports, checks that they answer alike, then measures with autocannon:
 *
 * - healthz: GET /healthz, API vs bare Koa, alternating rounds;
 * - auth:    GET /v1/auth/me with a personal key, a different user's key on every
 *            request (BENCH_USERS users), API vs floor server, alternating rounds;
 * - session: the same route with one user's session cookie, API vs floor;
 * - rate:    the authenticated read at a fixed BENCH_RATE requests/s, evenly paced
 *            (bench/paced.ts, latency from each request's scheduled send time), API
 *            and floor; plus one autocannon `overallRate` round each for comparison
 *            with issue 17's figures (autocannon's rate is bursty: see paced.ts).
 *
 * The three headline figures (auth ratio, p99 at the fixed rate, healthz ratio) are
 * printed against their goals and written with the tables to bench/README.md. It is a
 * measurement: the exit code is 0 whether or not a goal is met, 1 only when a server does
 * not start or answers wrongly.
 *
 * Tunables (environment): BENCH_ROUNDS (7), BENCH_DURATION seconds per round (5),
 * BENCH_WARMUP seconds (3), BENCH_CONNECTIONS (50), BENCH_USERS (600),
 * BENCH_SESSION_ROUNDS (3), BENCH_SESSION_DURATION (3), BENCH_RATE (1000),
 * BENCH_RATE_ROUNDS (3), BENCH_RATE_DURATION (5), BENCH_RATE_AUTOCANNON_ROUNDS (1),
 * BENCH_AUTH_LIMIT (1000000, the
 * AUTH_RATE_LIMIT_PER_MINUTE of the API and the floor), BENCH_LOG_LEVEL (info),
 * BENCH_PIN (0 = no pinning), BENCH_SCENARIOS (healthz,auth,session,rate; README is
 * written only when all four ran). Pipelining is always 1.
 */
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { cyclingHeader, runAutocannon, type AutocannonRequestSpec, type AutocannonResult } from './autocannon.js';
import { runPaced, type PacedResult } from './paced.js';
import {
  HOST,
  PINNED,
  ROOT,
  describeExit,
  freePort,
  gitRevision,
  intFromEnv,
  replaceBetweenMarkers,
  seedCallers,
  startChild,
  stopAll,
  stopChildrenOnSignals,
  waitFor,
  type Child,
} from './procs.js';
import type { BenchSeed } from './seed.js';

const README = path.join(ROOT, 'bench', 'README.md');
const MARK_START = '<!-- results:start -->';
const MARK_END = '<!-- results:end -->';
const HEALTHZ = '/healthz';
const ME = '/v1/auth/me';
const HEALTHZ_BODY = JSON.stringify({ success: true, data: { status: 'ok' } });

/** Goals of issue 17. */
const GOAL_HEALTHZ_PERCENT = 80;
const GOAL_AUTH_PERCENT = 70;
const GOAL_RATE_P99_MS = 25;

const ROUNDS = intFromEnv('BENCH_ROUNDS', 7, 1, 15);
const DURATION = intFromEnv('BENCH_DURATION', 5, 1, 60);
const WARMUP = intFromEnv('BENCH_WARMUP', 3, 0, 30);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000);
const USERS = intFromEnv('BENCH_USERS', 600, 1, 9999);
const SESSION_ROUNDS = intFromEnv('BENCH_SESSION_ROUNDS', 3, 0, 15);
const SESSION_DURATION = intFromEnv('BENCH_SESSION_DURATION', 3, 1, 60);
const RATE = intFromEnv('BENCH_RATE', 1000, 1, 100_000);
const RATE_ROUNDS = intFromEnv('BENCH_RATE_ROUNDS', 3, 0, 15);
const RATE_DURATION = intFromEnv('BENCH_RATE_DURATION', 5, 1, 60);
const RATE_AUTOCANNON_ROUNDS = intFromEnv('BENCH_RATE_AUTOCANNON_ROUNDS', 1, 0, 15);
const AUTH_LIMIT = intFromEnv('BENCH_AUTH_LIMIT', 1_000_000, 1, 1_000_000_000);
const PIPELINING = 1;
/** A round with more non-2xx responses or errors than this share is a wrong answer, not a measurement. */
const MAX_BAD_SHARE = 0.01;

const ALL_SCENARIOS = ['healthz', 'auth', 'session', 'rate'] as const;
type Scenario = (typeof ALL_SCENARIOS)[number];
const SCENARIOS: Scenario[] = (() => {
  const raw = process.env.BENCH_SCENARIOS?.trim();
  if (!raw) return [...ALL_SCENARIOS];
  const picked = raw.split(',').map((s) => s.trim());
  const unknown = picked.filter((s) => !(ALL_SCENARIOS as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`BENCH_SCENARIOS: unknown ${unknown.join(', ')} (known: ${ALL_SCENARIOS.join(', ')})`);
  return ALL_SCENARIOS.filter((s) => picked.includes(s));
})();
const runs = (s: Scenario) => SCENARIOS.includes(s);

interface Target {
  label: string;
  /** `http://host:port` */
  base: string;
  child: Child;
}

/** What one autocannon run sends. */
interface LoadSpec {
  path: string;
  headers?: Record<string, string>;
  /** Made anew for every run (a cycling counter starts at the first key). */
  requests?: () => AutocannonRequestSpec[];
  overallRate?: number;
}

interface PairResults {
  base: AutocannonResult[];
  test: AutocannonResult[];
}

// ---------------------------------------------------------------------------------------
// Formatting

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number) => n.toFixed(n < 10 ? 2 : 1);
const fmtPct = (n: number) => `${n.toFixed(1)}%`;

function badCount(r: AutocannonResult): number {
  return r.errors + r.timeouts + r.non2xx;
}

function statusSummary(r: AutocannonResult): string {
  const stats = r.statusCodeStats ?? {};
  return Object.entries(stats)
    .map(([code, s]) => `${code}×${s.count}`)
    .join(', ');
}

// ---------------------------------------------------------------------------------------
// Loading

async function load(target: Target, spec: LoadSpec, seconds: number): Promise<AutocannonResult> {
  if (target.child.exit) throw new Error(describeExit(target.child));
  const result = await runAutocannon({
    url: `${target.base}${spec.path}`,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration: seconds,
    timeout: 10,
    ...(spec.headers ? { headers: spec.headers } : {}),
    ...(spec.requests ? { requests: spec.requests() } : {}),
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
  });
  if (target.child.exit) throw new Error(describeExit(target.child));
  const total = result.requests.total + result.errors;
  if (total === 0 || badCount(result) > MAX_BAD_SHARE * total) {
    throw new Error(
      `${target.label}: GET ${spec.path} under load answered wrongly: ${result.requests.total} responses, ` +
        `${result.non2xx} non-2xx (${statusSummary(result) || 'no status codes'}), ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return result;
}

function logRound(tag: string, round: number, rounds: number, label: string, r: AutocannonResult): void {
  console.log(
    `bench: ${tag} round ${round}/${rounds} ${label}: ${fmtInt(r.requests.average)} req/s, ` +
      `p50 ${fmtMs(r.latency.p50)} ms, p99 ${fmtMs(r.latency.p99)} ms` +
      (badCount(r) > 0 ? `, ${r.errors} errors, ${r.non2xx} non-2xx` : ''),
  );
}

/** Warm-up, then `rounds` rounds loading both targets back to back, alternating who goes first. */
async function alternate(
  tag: string,
  base: Target,
  test: Target,
  spec: LoadSpec,
  rounds: number,
  seconds: number,
  warmup: number,
): Promise<PairResults> {
  if (warmup > 0) {
    for (const t of [base, test]) {
      console.log(`bench: ${tag}: warming up ${t.label} (${warmup} s)`);
      await load(t, spec, warmup);
    }
  }
  const out: PairResults = { base: [], test: [] };
  for (let round = 1; round <= rounds; round++) {
    // Alternate which app goes first so drift (thermal, other load) hits both alike.
    const order = round % 2 === 1 ? (['base', 'test'] as const) : (['test', 'base'] as const);
    for (const side of order) {
      const target = side === 'base' ? base : test;
      const r = await load(target, spec, seconds);
      out[side].push(r);
      logRound(tag, round, rounds, target.label, r);
    }
  }
  return out;
}

/** Rounds at a fixed, evenly paced rate (bench/paced.ts), alternating who goes first. */
async function alternatePaced(
  tag: string,
  base: Target,
  test: Target,
  path: string,
  headers: () => Record<string, string>,
  rounds: number,
  seconds: number,
): Promise<{ base: PacedResult[]; test: PacedResult[] }> {
  const out = { base: [] as PacedResult[], test: [] as PacedResult[] };
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? (['base', 'test'] as const) : (['test', 'base'] as const);
    for (const side of order) {
      const target = side === 'base' ? base : test;
      if (target.child.exit) throw new Error(describeExit(target.child));
      const r = await runPaced({ url: `${target.base}${path}`, rate: RATE, duration: seconds, connections: CONNECTIONS, headers });
      if (target.child.exit) throw new Error(describeExit(target.child));
      const bad = r.non2xx + r.errors + r.timeouts;
      if (r.completed === 0 || bad > MAX_BAD_SHARE * r.scheduled) {
        throw new Error(
          `${target.label}: GET ${path} at ${RATE}/s answered wrongly: ${r.completed} of ${r.scheduled} answered, ` +
            `${r.non2xx} non-2xx (${Object.entries(r.statusCounts).map(([c, n]) => `${c}×${n}`).join(', ')}), ${r.errors} errors, ${r.timeouts} timeouts`,
        );
      }
      out[side].push(r);
      console.log(
        `bench: ${tag} round ${round}/${rounds} ${target.label}: ${fmtInt(r.achievedRate)} req/s, ` +
          `p50 ${fmtMs(r.latency.p50)} ms, p97.5 ${fmtMs(r.latency.p97_5)} ms, p99 ${fmtMs(r.latency.p99)} ms` +
          (bad > 0 ? `, ${r.errors} errors, ${r.non2xx} non-2xx, ${r.timeouts} timeouts` : ''),
      );
    }
  }
  return out;
}

/** `Bearer <key>` of the next seeded user on every call. */
function keyCycler(keys: readonly string[]): () => Record<string, string> {
  const values = keys.map((k) => `Bearer ${k}`);
  let next = 0;
  return () => {
    const value = values[next]!;
    next = next + 1 === values.length ? 0 : next + 1;
    return { Authorization: value };
  };
}

// ---------------------------------------------------------------------------------------
// Checks before measuring

interface JsonAnswer {
  status: number;
  text: string;
  body: unknown;
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, text, body };
}

function dataOf(a: JsonAnswer): { user?: Record<string, unknown> | null; csrf_token?: unknown } | undefined {
  const b = a.body as { success?: unknown; data?: { user?: Record<string, unknown> | null; csrf_token?: unknown } } | undefined;
  return b?.success === true ? b.data : undefined;
}

function differingFields(a: unknown, b: unknown): string {
  const x = (a ?? {}) as Record<string, unknown>;
  const y = (b ?? {}) as Record<string, unknown>;
  return [...new Set([...Object.keys(x), ...Object.keys(y)])]
    .filter((k) => !isDeepStrictEqual(x[k], y[k]))
    .map((k) => `${k}: ${JSON.stringify(x[k])} vs ${JSON.stringify(y[k])}`)
    .join('; ');
}

async function checkHealthz(t: Target): Promise<void> {
  const a = await getJson(`${t.base}${HEALTHZ}`);
  if (a.status !== 200 || a.text !== HEALTHZ_BODY) {
    throw new Error(`${t.label}: GET ${HEALTHZ} answered ${a.status} ${a.text.slice(0, 300)}, expected 200 ${HEALTHZ_BODY}`);
  }
}

/**
 * For a spread of the seeded keys, and the session: both servers answer 200 with the
 * expected user and exactly the same `data`; an unknown key gets 401 from both.
 */
async function checkAuth(seed: BenchSeed, service: Target, floor: Target, cookieName: string): Promise<void> {
  const n = seed.keys.length;
  const sample = [...new Set([0, 1, 2, Math.floor(n / 3), Math.floor(n / 2), Math.floor((2 * n) / 3), n - 2, n - 1])].filter(
    (i) => i >= 0 && i < n,
  );
  const cases = [
    ...sample.map((i) => ({
      what: `key of user ${i + 1}`,
      headers: { Authorization: `Bearer ${seed.keys[i]!}` },
      userId: seed.userIds[i]!,
      csrf: null as string | null,
    })),
    {
      what: 'session cookie',
      headers: { Cookie: `${cookieName}=${seed.session.token}` },
      userId: seed.session.userId,
      csrf: seed.session.csrfToken,
    },
  ];
  for (const c of cases) {
    const answers: JsonAnswer[] = [];
    for (const t of [service, floor]) {
      const a = await getJson(`${t.base}${ME}`, c.headers);
      const data = dataOf(a);
      if (a.status !== 200 || !data?.user || data.user.id !== c.userId || data.csrf_token !== c.csrf) {
        throw new Error(
          `${t.label}: GET ${ME} with the ${c.what} answered ${a.status} ${a.text.slice(0, 400)}; ` +
            `expected 200 with user ${c.userId} and csrf_token ${String(c.csrf)}`,
        );
      }
      answers.push(a);
    }
    const [s, f] = answers;
    if (!isDeepStrictEqual(s!.body, f!.body)) {
      throw new Error(
        `GET ${ME} with the ${c.what}: the API and the floor differ in data.user: ` +
          differingFields(dataOf(s!)?.user, dataOf(f!)?.user),
      );
    }
  }
  for (const t of [service, floor]) {
    const a = await getJson(`${t.base}${ME}`, { Authorization: `Bearer ${seed.unknownKey}` });
    if (a.status !== 401) throw new Error(`${t.label}: GET ${ME} with an unknown key answered ${a.status}, expected 401`);
  }
  console.log(
    `bench: ${ME}: the API and the floor answer ${sample.length} keys and the session with the same data; an unknown key gets 401 from both`,
  );
}

// ---------------------------------------------------------------------------------------
// Reporting

function medianBy(results: AutocannonResult[], value: (r: AutocannonResult) => number): AutocannonResult {
  const sorted = [...results].sort((a, b) => value(a) - value(b));
  const mid = sorted[Math.floor((sorted.length - 1) / 2)];
  if (!mid) throw new Error('no results');
  return mid;
}
const byRps = (r: AutocannonResult) => r.requests.average;
const byP99 = (r: AutocannonResult) => r.latency.p99;

interface PairSummary {
  /** Median of the per-round ratios test ÷ base, in percent. */
  ratio: number;
  paired: number[];
  ratioOfMedians: number;
  lines: string[];
}

/**
 * A pair's table (each row the app's median round by requests/s) and its ratio: the
 * median of the per-round ratios. Each round loads both apps back to back, so a slow
 * spell on a shared machine hits a pair rather than one side.
 */
function summarisePair(results: PairResults, baseLabel: string, testLabel: string): PairSummary {
  const base = medianBy(results.base, byRps);
  const test = medianBy(results.test, byRps);
  const paired = results.test
    .map((t, i) => (t.requests.average / (results.base[i]?.requests.average ?? Number.NaN)) * 100)
    .filter((r) => Number.isFinite(r))
    .sort((a, b) => a - b);
  const ratio = paired[Math.floor((paired.length - 1) / 2)] ?? Number.NaN;
  const ratioOfMedians = (test.requests.average / base.requests.average) * 100;
  const row = (label: string, r: AutocannonResult, all: AutocannonResult[]): string =>
    `| ${label} | ${fmtInt(r.requests.average)} | ${fmtMs(r.latency.average)} | ${fmtMs(r.latency.p50)} | ` +
    `${fmtMs(r.latency.p97_5)} | ${fmtMs(r.latency.p99)} | ${fmtMs(r.latency.max)} | ` +
    `${all.map((x) => fmtInt(x.requests.average)).join(' / ')} |`;
  const lines = [
    `| | Requests/s (mean) | Latency mean (ms) | p50 (ms) | p97.5 (ms) | p99 (ms) | max (ms) | Requests/s per round |`,
    `|---|---:|---:|---:|---:|---:|---:|---|`,
    row(baseLabel, base, results.base),
    row(testLabel, test, results.test),
  ];
  return { ratio, paired, ratioOfMedians, lines };
}

function problemLines(label: string, results: AutocannonResult[]): string[] {
  return results.flatMap((r, i) =>
    badCount(r) > 0
      ? [`- ${label}, round ${i + 1}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx responses (${statusSummary(r)})`]
      : [],
  );
}

const bytesPer = (r: AutocannonResult) => fmtInt(r.throughput.total / Math.max(1, r.requests.total));
const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

interface Measured {
  healthz?: PairResults;
  auth?: PairResults;
  session?: PairResults;
  rate?: { base: PacedResult[]; test: PacedResult[] };
  rateAutocannon?: PairResults;
}

interface Headline {
  figure: string;
  measured: string;
  goal: string;
  met: boolean | undefined;
}

function report(m: Measured, labels: { bare: string; full: string; service: string; floor: string }): { markdown: string; headlines: Headline[] } {
  const headlines: Headline[] = [];
  const sections: string[] = [];
  const problems: string[] = [];
  const roundsNote = (rounds: number, seconds: number, warmup: number) =>
    `${plural(rounds, 'round')} × ${seconds} s per app (alternating${warmup > 0 ? `, after a ${warmup} s warm-up each` : ''})`;

  if (m.auth) {
    const s = summarisePair(m.auth, labels.floor, labels.service);
    headlines.push({
      figure: `Authenticated read (\`GET ${ME}\`, a different user's key per request): API ÷ floor, requests/s`,
      measured: fmtPct(s.ratio),
      goal: `≥ ${GOAL_AUTH_PERCENT}%`,
      met: s.ratio >= GOAL_AUTH_PERCENT,
    });
    const f = medianBy(m.auth.base, byRps);
    const a = medianBy(m.auth.test, byRps);
    sections.push(
      [
        `### Authenticated read: \`GET ${ME}\` with a personal key`,
        '',
        ...s.lines,
        '',
        `**API / floor: ${fmtPct(s.ratio)} of requests/s** (median of the per-round ratios) — goal ≥ ${GOAL_AUTH_PERCENT}%: **${verdict(s.ratio >= GOAL_AUTH_PERCENT)}**.`,
        '',
        `- Per-round ratios: ${s.paired.map(fmtPct).join(', ')} (sorted); ratio of the two median rounds: ${fmtPct(s.ratioOfMedians)}.`,
        `- \`Authorization: Bearer rpk_…\`, cycling through ${fmtInt(USERS)} users' keys (each request the next user's key, ` +
          `one counter across all connections), ${CONNECTIONS} connections, ${roundsNote(ROUNDS, DURATION, WARMUP)}.`,
        `- Responses in the median rounds: floor ${fmtInt(f.requests.total)}, API ${fmtInt(a.requests.total)}; ` +
          `bytes/response: floor ${bytesPer(f)}, API ${bytesPer(a)}.`,
      ].join('\n'),
    );
    problems.push(...problemLines(`${labels.floor} (auth)`, m.auth.base), ...problemLines(`${labels.service} (auth)`, m.auth.test));
  }

  if (m.rate) {
    const byPacedP99 = (a: PacedResult, b: PacedResult) => a.latency.p99 - b.latency.p99;
    const medianPaced = (rs: PacedResult[]) => {
      const mid = [...rs].sort(byPacedP99)[Math.floor((rs.length - 1) / 2)];
      if (!mid) throw new Error('no results');
      return mid;
    };
    const svc = medianPaced(m.rate.test);
    const flo = medianPaced(m.rate.base);
    const met = svc.latency.p99 < GOAL_RATE_P99_MS;
    headlines.push({
      figure: `Authenticated read at a fixed ${fmtInt(RATE)} requests/s (evenly paced): API p99`,
      measured: `${fmtMs(svc.latency.p99)} ms`,
      goal: `< ${GOAL_RATE_P99_MS} ms`,
      met,
    });
    const row = (label: string, r: PacedResult, all: PacedResult[]) =>
      `| ${label} | ${fmtInt(r.achievedRate)} | ${fmtMs(r.latency.mean)} | ${fmtMs(r.latency.p50)} | ${fmtMs(r.latency.p90)} | ` +
      `${fmtMs(r.latency.p97_5)} | ${fmtMs(r.latency.p99)} | ${fmtMs(r.latency.max)} | ${all.map((x) => fmtMs(x.latency.p99)).join(' / ')} |`;
    const lines = [
      `### Latency at a fixed ${fmtInt(RATE)} requests/s`,
      '',
      `| | Requests/s answered | Latency mean (ms) | p50 (ms) | p90 (ms) | p97.5 (ms) | p99 (ms) | max (ms) | p99 per round (ms) |`,
      `|---|---:|---:|---:|---:|---:|---:|---:|---|`,
      row(labels.service, svc, m.rate.test),
      row(labels.floor, flo, m.rate.base),
      '',
      `**API p99 at ${fmtInt(RATE)} requests/s: ${fmtMs(svc.latency.p99)} ms** (median round by p99) — goal < ${GOAL_RATE_P99_MS} ms: **${verdict(met)}**.`,
      '',
      `- Evenly paced, open loop (\`bench/paced.ts\`): one request every ${fmtMs(1000 / RATE)} ms whether or not earlier ones were answered, ` +
        `over up to ${CONNECTIONS} keep-alive connections, the same cycling keys, ${roundsNote(RATE_ROUNDS, RATE_DURATION, 0)}. ` +
        `Each latency runs from the request's scheduled send time (so a stall counts against every request it delayed; ` +
        `it includes up to about 1 ms of the client's timer granularity). Each row is that app's median round by p99.`,
    ];
    const ac = m.rateAutocannon;
    if (ac && ac.test.length > 0 && ac.base.length > 0) {
      const a = medianBy(ac.test, byP99);
      const f = medianBy(ac.base, byP99);
      const pct = (r: AutocannonResult) => `p50 ${fmtMs(r.latency.p50)}, p97.5 ${fmtMs(r.latency.p97_5)}, p99 ${fmtMs(r.latency.p99)} ms`;
      lines.push(
        `- For comparison with issue 17's figures, autocannon \`overallRate: ${RATE}\` (${plural(ac.test.length, 'round')} × ${RATE_DURATION} s per app): ` +
          `API ${pct(a)}; floor ${pct(f)}. That is not a fixed rate: autocannon sends each connection's ${fmtMs(RATE / CONNECTIONS)} requests ` +
          `back to back at the start of every second, so the server is saturated in bursts, and its coordinated-omission correction ` +
          `assumes a 1 ms interval whatever the rate, which inflates the tail (see \`bench/paced.ts\`).`,
      );
      problems.push(...problemLines(`${labels.floor} (autocannon rate)`, ac.base), ...problemLines(`${labels.service} (autocannon rate)`, ac.test));
    }
    sections.push(lines.join('\n'));
  }

  if (m.healthz) {
    const s = summarisePair(m.healthz, labels.bare, labels.full);
    headlines.push({
      figure: `\`GET ${HEALTHZ}\`: API (full stack) ÷ bare Koa, requests/s`,
      measured: fmtPct(s.ratio),
      goal: `≥ ${GOAL_HEALTHZ_PERCENT}%`,
      met: s.ratio >= GOAL_HEALTHZ_PERCENT,
    });
    const b = medianBy(m.healthz.base, byRps);
    const f = medianBy(m.healthz.test, byRps);
    sections.push(
      [
        `### \`GET ${HEALTHZ}\`: full stack vs bare Koa`,
        '',
        ...s.lines,
        '',
        `**Full stack / bare Koa: ${fmtPct(s.ratio)} of requests/s** (median of the per-round ratios) — goal ≥ ${GOAL_HEALTHZ_PERCENT}%: **${verdict(s.ratio >= GOAL_HEALTHZ_PERCENT)}**.`,
        '',
        `- Per-round ratios: ${s.paired.map(fmtPct).join(', ')} (sorted); ratio of the two median rounds: ${fmtPct(s.ratioOfMedians)}.`,
        `- ${CONNECTIONS} connections, ${roundsNote(ROUNDS, DURATION, WARMUP)}; each row is that app's median round by requests/s.`,
        `- Responses in the median rounds: bare ${fmtInt(b.requests.total)}, full ${fmtInt(f.requests.total)}; ` +
          `bytes/response: bare ${bytesPer(b)}, full ${bytesPer(f)}.`,
      ].join('\n'),
    );
    problems.push(...problemLines(labels.bare, m.healthz.base), ...problemLines(labels.full, m.healthz.test));
  }

  if (m.session) {
    const s = summarisePair(m.session, labels.floor, labels.service);
    sections.push(
      [
        `### Session cookie: \`GET ${ME}\` as one signed-in user`,
        '',
        ...s.lines,
        '',
        `API / floor: ${fmtPct(s.ratio)} of requests/s (median of the per-round ratios; no goal of its own).`,
        '',
        `- One user's session cookie on every request, ${CONNECTIONS} connections, ${roundsNote(SESSION_ROUNDS, SESSION_DURATION, 0)}, ` +
          `right after the key rounds (warm).`,
      ].join('\n'),
    );
    problems.push(...problemLines(`${labels.floor} (session)`, m.session.base), ...problemLines(`${labels.service} (session)`, m.session.test));
  }

  const cpus = os.cpus();
  const summary = [
    `| Figure | Measured | Goal | |`,
    `|---|---:|---:|---|`,
    ...headlines.map((h) => `| ${h.figure} | **${h.measured}** | ${h.goal} | ${h.met === undefined ? '' : verdict(h.met)} |`),
  ];
  const markdown = [
    `Measured ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} on commit ${gitRevision()}.`,
    '',
    ...summary,
    '',
    `- The API is the compiled build, \`node dist/api/server.js\` (\`NODE_ENV=development\`, \`LOG_LEVEL=${process.env.BENCH_LOG_LEVEL ?? 'info'}\`, ` +
      `stdout to /dev/null), with \`AUTH_RATE_LIMIT_PER_MINUTE=${AUTH_LIMIT}\` so that the per-user limit never answers 429 here; ` +
      `the floor server (\`bench/floor-server.ts\`, Koa + pg + ioredis, under tsx) checks its counter against the same limit. ` +
      `Bare Koa is \`bench/bare-koa.ts\`. One process each, on the same Postgres database and Redis.`,
    `- Node ${process.version}, ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${plural(cpus.length, 'logical core')} ` +
      `(${PINNED ? 'load generator pinned to core 0, servers under test to core 1' : 'load generator and servers share them'}), ` +
      `${os.platform()} ${os.release()}. Pipelining 1.`,
    '',
    ...sections.flatMap((s) => [s, '']),
    ...(problems.length ? ['**Errors during the run:**', '', ...problems, ''] : []),
  ];
  return { markdown: markdown.join('\n').trimEnd(), headlines };
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
    throw new Error('DATABASE_URL and REDIS_URL must be set; run `npm run bench` (bench/run.sh) instead');
  }
  const needsCallers = runs('auth') || runs('session') || runs('rate');
  const cookieName = process.env.SESSION_COOKIE_NAME || 'escrow_session';
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    HOST,
    NODE_ENV: 'development',
    AUTH_RATE_LIMIT_PER_MINUTE: String(AUTH_LIMIT),
  };
  console.log(`bench: scenarios ${SCENARIOS.join(', ')}`);
  const seed = needsCallers ? await seedCallers(base, USERS) : undefined;

  const [barePort, fullPort, floorPort] = [await freePort(), await freePort(), await freePort()];
  const api = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], {
    ...base,
    PORT: String(fullPort),
    PUBLIC_BASE_URL: `http://${HOST}:${fullPort}`,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  });
  const service: Target = { label: 'API', base: `http://${HOST}:${fullPort}`, child: api };
  const ready = [waitFor(`${service.base}/readyz`, api, 30_000)];

  let bare: Target | undefined;
  if (runs('healthz')) {
    const child = startChild('bare Koa (bench/bare-koa.ts)', ['--import', 'tsx', 'bench/bare-koa.ts'], { ...base, PORT: String(barePort) });
    bare = { label: 'Bare Koa', base: `http://${HOST}:${barePort}`, child };
    ready.push(waitFor(`${bare.base}${HEALTHZ}`, child, 30_000));
  }
  let floor: Target | undefined;
  if (needsCallers) {
    const child = startChild('floor server (bench/floor-server.ts)', ['--import', 'tsx', 'bench/floor-server.ts'], {
      ...base,
      PORT: String(floorPort),
      SESSION_COOKIE_NAME: cookieName,
    });
    floor = { label: 'Floor (Koa + pg + ioredis)', base: `http://${HOST}:${floorPort}`, child };
    ready.push(waitFor(`${floor.base}/readyz`, child, 30_000));
  }
  await Promise.all(ready);
  console.log(
    `bench: API on ${service.base}` + (bare ? `, bare Koa on ${bare.base}` : '') + (floor ? `, floor server on ${floor.base}` : ''),
  );

  if (bare) {
    await checkHealthz(bare);
    await checkHealthz(service);
  }
  if (seed && floor) await checkAuth(seed, service, floor, cookieName);

  const measured: Measured = {};
  const full: Target = { ...service, label: 'Full stack' };
  if (bare) measured.healthz = await alternate('healthz', bare, full, { path: HEALTHZ }, ROUNDS, DURATION, WARMUP);
  if (seed && floor) {
    const keyLoad = (overallRate?: number): LoadSpec => ({
      path: ME,
      requests: () => cyclingHeader(ME, 'Authorization', seed.keys.map((k) => `Bearer ${k}`)),
      ...(overallRate ? { overallRate } : {}),
    });
    if (runs('auth')) measured.auth = await alternate('auth', floor, service, keyLoad(), ROUNDS, DURATION, WARMUP);
    if (runs('session') && SESSION_ROUNDS > 0) {
      const spec: LoadSpec = { path: ME, headers: { Cookie: `${cookieName}=${seed.session.token}` } };
      measured.session = await alternate('session', floor, service, spec, SESSION_ROUNDS, SESSION_DURATION, runs('auth') ? 0 : WARMUP);
    }
    if (runs('rate') && RATE_ROUNDS > 0) {
      if (!runs('auth') && WARMUP > 0) await alternate('rate warm-up', floor, service, keyLoad(), 0, DURATION, WARMUP);
      measured.rate = await alternatePaced(`paced ${RATE}/s`, floor, service, ME, keyCycler(seed.keys), RATE_ROUNDS, RATE_DURATION);
      if (RATE_AUTOCANNON_ROUNDS > 0) {
        const tag = `autocannon overallRate ${RATE}`;
        measured.rateAutocannon = await alternate(tag, floor, service, keyLoad(RATE), RATE_AUTOCANNON_ROUNDS, RATE_DURATION, 0);
      }
    }
  }

  const { markdown, headlines } = report(measured, {
    bare: bare?.label ?? 'Bare Koa',
    full: full.label,
    service: service.label,
    floor: floor?.label ?? 'Floor',
  });
  console.log(`\n${markdown}\n`);
  for (const h of headlines) console.log(`bench: ${h.figure}: ${h.measured} (goal ${h.goal}: ${h.met ? 'met' : 'NOT met'})`);
  if (SCENARIOS.length === ALL_SCENARIOS.length) {
    await replaceBetweenMarkers(README, MARK_START, MARK_END, markdown, '## Latest results');
    console.log(`bench: results written to ${path.relative(ROOT, README)}`);
  } else {
    console.log(`bench: only ${SCENARIOS.join(', ')} ran (BENCH_SCENARIOS); ${path.relative(ROOT, README)} left as it was`);
  }
}

stopChildrenOnSignals('bench');
try {
  await main();
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await stopAll();
}
