/**
 * How the reports bench loads the API: its tunables, the routes, and the rounds.
 *
 * Every request is timed by autocannon itself (its per-response `response` event, from the
 * write of the request to the end of its answer) and kept, so the percentiles, p95 included
 * (autocannon's summary has no p95), are nearest-rank over every answer of the round.
 *
 * The summary (30 per minute per user) and the overview (60 per minute per user) have
 * limits of their own that no setting raises (api/routes/reports.ts, overview.ts). The
 * bench keeps under them the honest way: each request goes to the next of many viewers of
 * the same workspace (cycling), and the bench prefix's counters of those limits are
 * deleted before every run; a run that met a limit would answer 429 and stop (more than
 * 1% non-2xx). The shared per-user limit is raised by `AUTH_RATE_LIMIT_PER_MINUTE` (still
 * checked on every request).
 *
 * The cached overview: the answer is cached 15 seconds per workspace and user, and an
 * uncached answer takes most of a second on this workspace, so the overview is asked by the same
 * user (the owner) throughout: one request fills the cache just before the run (reported
 * apart as uncached), then the run lasts `duration` (at most 10) seconds; the overview's
 * own limit (60 per minute, not configurable) is kept from answering 429 by deleting that
 * user's counter of it every 5 ms during the run (the limiter still counts every request).
 * Afterwards the cache entry is read back: one stored after the run began is a
 * recomputation (a miss) during the run, and is counted.
 *
 * The deal list (issue 42, "No tenant can slow the others"): `GET /v1/enterprise/deals`
 * one request at a time (one connection), `listRequests` answers per round, each by the
 * next of the workspace's users as for the summary (the list has no limit of its own; the
 * shared per-user one is raised). `BENCH_REPORT_ONLY=list` runs the list alone (its own
 * results block), `=reports` the summary and overview alone; by default both.
 */
import { badCount, statusSummary, type AutocannonOptions, type AutocannonRequestSpec, type AutocannonResult } from '../lib/autocannon.js';
import { deleteRedisKeys } from '../lib/db.js';
import { intFromEnv } from '../lib/env.js';
import { fmtInt, fmtNum, percentile } from '../lib/format.js';
import { describeExit, type Child } from '../lib/procs.js';
import { createRequire } from 'node:module';
import { Redis } from 'ioredis';
import type { ReportCaller, ReportSeed } from './seed.js';

export const SUMMARY = '/v1/enterprise/reports/summary';
export const OVERVIEW = '/v1/enterprise/overview';
export const RECONCILIATION = '/v1/enterprise/reconciliation';
export const LIST = '/v1/enterprise/deals';

export const settings = {
  deals: intFromEnv('BENCH_REPORT_DEALS', 100_000, 1000, 999_999),
  members: intFromEnv('BENCH_REPORT_USERS', 120, 10, 9999),
  rounds: intFromEnv('BENCH_ROUNDS', 3, 1, 15),
  /** Overview runs; at most 10 s so the one cached answer (15 s) lasts the run. */
  duration: intFromEnv('BENCH_DURATION', 5, 1, 10),
  warmup: intFromEnv('BENCH_WARMUP', 2, 0, 10),
  /** Summary runs are counted in answers, not seconds: one answer may take seconds. */
  summaryRequests: intFromEnv('BENCH_SUMMARY_REQUESTS', 40, 4, 10_000),
  connections: intFromEnv('BENCH_CONNECTIONS', 4, 1, 100),
  authLimit: intFromEnv('BENCH_AUTH_LIMIT', 1_000_000, 1, 1_000_000_000),
  /** Deal list runs: answers per round, one at a time (a warm-up of `listWarmup` answers). */
  listRequests: intFromEnv('BENCH_LIST_REQUESTS', 300, 10, 100_000),
  listWarmup: 30,
  /** `list`: the deal list alone; `reports`: the summary and the overview alone; unset: both. */
  only: process.env.BENCH_REPORT_ONLY === 'list' || process.env.BENCH_REPORT_ONLY === 'reports' ? process.env.BENCH_REPORT_ONLY : undefined,
  summaryLimit: 30,
  overviewLimit: 60,
};

export interface RouteDef {
  key: string;
  label: string;
  path: string;
  /** Goal on p95 in ms (null: none). */
  goalP95: number | null;
  /** summary: counted answers cycling over every user; overview: the owner's cached answer for a time; uncached: one overview per user, the cache emptied first (issue 44); list: one at a time. */
  kind: 'summary' | 'overview' | 'uncached' | 'list';
  /** Counted routes: answers per run and connections, when not the summary's. */
  answers?: number;
  connections?: number;
}

/** `YYYY-MM-DD` of a UTC day `daysBack` before today. */
const day = (daysBack: number): string => new Date(Date.now() - daysBack * 86_400_000).toISOString().slice(0, 10);

export function routes(): RouteDef[] {
  const all: RouteDef[] = [
    { key: 'summary-90', label: `\`GET ${SUMMARY}\` (default range: the last 90 days)`, path: SUMMARY, goalP95: 100, kind: 'summary' },
    { key: 'summary-366', label: `\`GET ${SUMMARY}?from=…&to=…\` (366 days)`, path: `${SUMMARY}?from=${day(365)}&to=${day(0)}`, goalP95: 100, kind: 'summary' },
    { key: 'overview-cached', label: `\`GET ${OVERVIEW}\` (cached)`, path: OVERVIEW, goalP95: 50, kind: 'overview' },
    { key: 'overview-uncached', label: `\`GET ${OVERVIEW}\` (uncached: each answer a user's first, the cache emptied before the run)`, path: OVERVIEW, goalP95: 100, kind: 'uncached' },
    // One at a time, 5 answers a run: an answer takes seconds on this workspace, and 4 at once
    // ran past the API's 10 s statement timeout (500).
    { key: 'reconciliation', label: `\`GET ${RECONCILIATION}\` (one at a time)`, path: RECONCILIATION, goalP95: 500, kind: 'summary', answers: 5, connections: 1 },
    ...listRoutes(),
  ];
  return all.filter((r) => settings.only === undefined || (settings.only === 'list') === (r.kind === 'list'));
}

/** The deal list: a status filter (the goal of issue 42: a common and a rarer status), the default order, and (no goal) a search and a deep page. */
function listRoutes(): RouteDef[] {
  const list = (key: string, query: string, goalP95: number | null, what: string): RouteDef => ({
    key,
    label: `\`GET ${LIST}?${query}\`${what}`,
    path: `${LIST}?${query}`,
    goalP95,
    kind: 'list',
  });
  return [
    list('list-status', 'status=completed&limit=20', 50, ' (the most common status)'),
    list('list-status-rare', 'status=disputed&limit=20', 50, ''),
    list('list-default', 'limit=20', 50, ' (no filter: the default order)'),
    list('list-search', 'q=DL-0990&limit=20', null, ' (a reference search, 100 matches)'),
    list('list-deep', 'limit=20&page=2500', null, ' (page 2,500: offset 49,980)'),
  ];
}

/** One run: autocannon's result and every answer's time (ms, ascending). */
export interface Run {
  result: AutocannonResult;
  times: number[];
  /** Overview runs: cache entries recomputed during the run (misses), of how many users. */
  misses?: number;
  users?: number;
}

export const p = (run: Run, q: number): number => percentile(run.times, q);

type Instance = PromiseLike<AutocannonResult> & { on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void };
const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as (opts: AutocannonOptions & { amount?: number }) => Instance;

/** `requests` that send `path` as the next of `callers` on every request (one shared counter). */
function cycling(path: string, callers: readonly ReportCaller[]): AutocannonRequestSpec[] {
  let next = 0;
  return [
    {
      method: 'GET',
      path,
      setupRequest(req) {
        req.headers.Cookie = callers[next]!.cookie;
        next = next + 1 === callers.length ? 0 : next + 1;
        return req;
      },
    },
  ];
}

async function timed(child: Child, what: string, opts: AutocannonOptions & { amount?: number }): Promise<Run> {
  if (child.exit) throw new Error(describeExit(child));
  const times: number[] = [];
  const inst = autocannon(opts);
  inst.on('response', (_c, status, _b, ms) => {
    if (status >= 200 && status < 300) times.push(ms);
  });
  const result = await inst;
  if (child.exit) throw new Error(describeExit(child));
  const total = result.requests.total + result.errors;
  if (total === 0 || badCount(result) > 0.01 * total) {
    throw new Error(`${what} answered wrongly: ${result.requests.total} responses, ${result.non2xx} non-2xx (${statusSummary(result) || 'no status codes'}), ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  return { result, times: times.sort((a, b) => a - b) };
}

async function clearLimits(): Promise<void> {
  const { config } = await import('../../shared/config.js');
  await deleteRedisKeys([`${config.queuePrefix}:rl:ent-report-summary*`, `${config.queuePrefix}:rl:ent-overview*`, `${config.queuePrefix}:rl:ent-reconciliation*`]);
}

async function clearOverviewCache(): Promise<void> {
  const { config } = await import('../../shared/config.js');
  await deleteRedisKeys([`${config.queuePrefix}:ent-overview:*`]);
}

/** How many of the overview cache entries were stored at or after `since` (ms). */
async function recomputedSince(since: number): Promise<{ recomputed: number; entries: number }> {
  const { config } = await import('../../shared/config.js');
  const redis = new Redis(process.env.REDIS_URL ?? '', { maxRetriesPerRequest: 3, lazyConnect: true });
  await redis.connect();
  let recomputed = 0;
  let entries = 0;
  try {
    let cursor = '0';
    do {
      const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${config.queuePrefix}:ent-overview:*`, 'COUNT', 1000);
      cursor = nextCursor;
      for (const key of keys) {
        const raw = await redis.get(key);
        if (raw === null) continue;
        entries++;
        if ((JSON.parse(raw) as { at: number }).at >= since) recomputed++;
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return { recomputed, entries };
}

/** The uncached overview answers (one per user, `connections` at a time) made while filling the cache. */
export const uncached: number[] = [];

async function fill(base: string, callers: readonly ReportCaller[], connections: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(connections, callers.length) }, async () => {
      for (let i = next++; i < callers.length; i = next++) {
        const t0 = performance.now();
        const res = await fetch(`${base}${OVERVIEW}`, { headers: { Cookie: callers[i]!.cookie } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`filling the overview cache: user ${i + 1} answered ${res.status}`);
        uncached.push(performance.now() - t0);
      }
    }),
  );
}

/** The overview limit's counters of the bench prefix (found by SCAN), deleted every 5 ms while `work` runs (every 20 ms let 429s through at about 2,800 answers a second on the AMD EPYC machine). */
async function withOverviewCountersCleared<T>(work: () => Promise<T>): Promise<T> {
  const { config } = await import('../../shared/config.js');
  const redis = new Redis(process.env.REDIS_URL ?? '', { maxRetriesPerRequest: 3, lazyConnect: true });
  await redis.connect();
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [nextCursor, found] = await redis.scan(cursor, 'MATCH', `${config.queuePrefix}:rl:ent-overview*`, 'COUNT', 1000);
    cursor = nextCursor;
    keys.push(...found);
  } while (cursor !== '0');
  const timer = setInterval(() => {
    if (keys.length > 0) void redis.del(...keys).catch(() => undefined);
  }, 5);
  try {
    return await work();
  } finally {
    clearInterval(timer);
    redis.disconnect();
  }
}

async function runRoute(api: { base: string; child: Child }, route: RouteDef, seed: ReportSeed, seconds: number): Promise<Run> {
  await clearLimits();
  // The summary: every user of the workspace in turn. The overview: the owner alone, its
  // answer cached by one request just before the run (an uncached answer takes most of a second on
  // this workspace, too long to fill many users' 15-second entries before a run).
  const callers = route.kind === 'overview' ? seed.callers.slice(0, 1) : seed.callers;
  const counted = route.kind !== 'overview';
  const amount = route.kind === 'list' ? (seconds === 0 ? settings.listWarmup : settings.listRequests) : seconds === 0 ? (route.connections ?? settings.connections) : (route.answers ?? settings.summaryRequests);
  if (route.kind === 'overview') {
    await clearOverviewCache();
    await fill(api.base, callers, 1);
  }
  // Uncached: at most one answer per user (`amount` ≤ the users), none of them cached yet.
  if (route.kind === 'uncached') await clearOverviewCache();
  const started = Date.now();
  const load = () =>
    timed(api.child, `${route.key}: GET ${route.path}`, {
      url: `${api.base}${route.path}`,
      // The deal list one request at a time; the others over `connections`.
      connections: route.connections ?? (route.kind === 'list' ? 1 : settings.connections),
      pipelining: 1,
      // The summary and the list: a number of answers (`amount`; warm-up: one per connection, or `listWarmup`); the overview: seconds.
      ...(counted ? { duration: 3600, amount } : { duration: seconds }),
      timeout: 120,
      requests: cycling(route.path, callers),
    });
  const run = route.kind === 'overview' ? await withOverviewCountersCleared(load) : await load();
  if (route.kind === 'overview') {
    const { recomputed, entries } = await recomputedSince(started);
    run.misses = recomputed;
    run.users = entries;
  }
  return run;
}

/** Warm-up per route, then the rounds (the order reversed every other round): each route's runs in round order. */
export async function runRounds(api: { base: string; child: Child }, seed: ReportSeed, defs: readonly RouteDef[]): Promise<Map<string, Run[]>> {
  if (settings.warmup > 0) {
    for (const r of defs) {
      const answers = r.kind === 'list' ? settings.listWarmup : settings.connections;
      console.log(`bench: warming up ${r.key} (${r.kind === 'overview' ? `${settings.warmup} s` : `${answers} answers`})`);
      await runRoute(api, r, seed, r.kind === 'overview' ? settings.warmup : 0);
    }
  }
  uncached.length = 0;
  const out = new Map<string, Run[]>(defs.map((r) => [r.key, []]));
  for (let round = 1; round <= settings.rounds; round++) {
    for (const r of round % 2 === 1 ? defs : [...defs].reverse()) {
      const run = await runRoute(api, r, seed, settings.duration);
      out.get(r.key)!.push(run);
      const miss = run.misses === undefined ? '' : `, ${run.misses} of ${run.users} cache entries recomputed during the run`;
      console.log(
        `bench: round ${round}/${settings.rounds} ${r.key}: ${fmtInt(run.result.requests.average)} req/s, ` +
          `p50 ${fmtNum(p(run, 0.5))} ms, p95 ${fmtNum(p(run, 0.95))} ms, p99 ${fmtNum(p(run, 0.99))} ms (${fmtInt(run.times.length)} answers${miss})`,
      );
    }
  }
  return out;
}
