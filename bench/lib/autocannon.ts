/**
 * A typed wrapper over autocannon's programmatic API. autocannon ships no types and
 * @types/autocannon is not a dependency, so only the options the benchmark sets and the
 * fields it reads are declared here (autocannon 9: README "API", lib/requestIterator.js,
 * lib/aggregateResult.js).
 */
import { createRequire } from 'node:module';
import { fmtInt, fmtNum } from './format.js';
import { describeExit, type Child } from './procs.js';

/**
 * The raw request autocannon builds for each send (lib/httpRequestBuilder.js): defaults
 * merged with the entry of `requests`. `setupRequest` may change it and must return it.
 */
export interface AutocannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** One entry of `requests`: without `setupRequest` it is built once and re-sent as is. */
export interface AutocannonRequestSpec {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /**
   * Called before every send of this entry (not with `workers`), so a request can carry a
   * different header each time; a falsy return restarts the sequence.
   */
  setupRequest?: (req: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest | null | undefined;
  onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string | string[]>) => void;
}

export interface AutocannonOptions {
  url: string;
  connections: number;
  pipelining: number;
  /** Seconds. */
  duration: number;
  /** Seconds before a request counts as a timeout. */
  timeout?: number;
  headers?: Record<string, string>;
  /** The sequence of requests each connection sends, in order and then again. */
  requests?: AutocannonRequestSpec[];
  /**
   * Requests per second across all connections (spread over them). Latencies are then
   * corrected for coordinated omission unless `ignoreCoordinatedOmission` is set.
   */
  overallRate?: number;
  ignoreCoordinatedOmission?: boolean;
}

/** One autocannon histogram summary (latency in ms, requests and bytes per second). */
export interface HistogramSummary {
  average: number;
  mean: number;
  stddev: number;
  min: number;
  max: number;
  p50: number;
  p90: number;
  p97_5: number;
  p99: number;
}

export interface AutocannonResult {
  /** Seconds actually run. */
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  /** Responses per status code, e.g. `{ "200": { count: 500 } }`. */
  statusCodeStats?: Record<string, { count: number }>;
  latency: HistogramSummary & { totalCount?: number };
  requests: HistogramSummary & { total: number; sent: number };
  throughput: HistogramSummary & { total: number };
}

type Autocannon = (opts: AutocannonOptions) => PromiseLike<AutocannonResult>;

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as Autocannon;

/** Runs one load test; resolves when `duration` seconds have passed. */
export async function runAutocannon(opts: AutocannonOptions): Promise<AutocannonResult> {
  return await autocannon(opts);
}

/**
 * `requests` for autocannon that send `path` with a different header value on every
 * request, cycling through `values` across all connections (one shared counter).
 */
export function cyclingHeader(path: string, header: string, values: readonly string[]): AutocannonRequestSpec[] {
  if (values.length === 0) throw new Error('cyclingHeader: no values');
  let next = 0;
  return [
    {
      method: 'GET',
      path,
      setupRequest(req) {
        const value = values[next]!;
        next = next + 1 === values.length ? 0 : next + 1;
        // buildRequest hands each call a fresh copy of the headers, so this mutates no default.
        req.headers[header] = value;
        return req;
      },
    },
  ];
}

/** One request of a cycling sequence: a whole request (method, path, headers, body). */
export interface CycledRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * `requests` for autocannon that send the next of `reqs` on every request, across all
 * connections (one shared counter), so a request's key, path and body always belong
 * together.
 */
export function cyclingRequests(reqs: readonly CycledRequest[]): AutocannonRequestSpec[] {
  if (reqs.length === 0) throw new Error('cyclingRequests: no requests');
  let next = 0;
  return [
    {
      method: reqs[0]!.method,
      path: reqs[0]!.path,
      setupRequest(req) {
        const r = reqs[next]!;
        next = next + 1 === reqs.length ? 0 : next + 1;
        req.method = r.method;
        req.path = r.path;
        // buildRequest hands each call a fresh copy of the headers, so this mutates no default.
        Object.assign(req.headers, r.headers);
        if (r.body !== undefined) req.body = r.body;
        return req;
      },
    },
  ];
}

/** Errors, timeouts and non-2xx answers of a run. */
export const badCount = (r: AutocannonResult): number => r.errors + r.timeouts + r.non2xx;

/** `200×500, 429×3` */
export function statusSummary(r: AutocannonResult): string {
  return Object.entries(r.statusCodeStats ?? {})
    .map(([code, s]) => `${code}×${s.count}`)
    .join(', ');
}

/** A round with more non-2xx answers or errors than this share is a wrong answer, not a measurement. */
export const MAX_BAD_SHARE = 0.01;

/**
 * One autocannon run against a server process: fails when the process has exited (before
 * or after) or when more than 1% of the answers were errors or not 2xx.
 */
export async function checkedLoad(child: Child, what: string, opts: AutocannonOptions): Promise<AutocannonResult> {
  if (child.exit) throw new Error(describeExit(child));
  const result = await runAutocannon(opts);
  if (child.exit) throw new Error(describeExit(child));
  const total = result.requests.total + result.errors;
  if (total === 0 || badCount(result) > MAX_BAD_SHARE * total) {
    throw new Error(
      `${what} under load answered wrongly: ${result.requests.total} responses, ` +
        `${result.non2xx} non-2xx (${statusSummary(result) || 'no status codes'}), ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return result;
}

/** Requests/s (autocannon's mean of per-second counts): what rounds are ranked by. */
export const byRps = (r: AutocannonResult): number => r.requests.average;

export interface RoundSettings {
  /** Seconds of warm-up per route before the rounds (0: none). */
  warmup: number;
  rounds: number;
  /** Seconds per route and round. */
  duration: number;
}

/**
 * Warm-up per route, then the rounds, the route order reversed every other round (so no
 * route always runs on a machine just warmed or just loaded by another): every route's
 * results in round order. `load` runs one route for the given seconds.
 */
export async function runRounds<R extends string>(
  routes: readonly R[],
  makers: Map<R, () => AutocannonRequestSpec[]>,
  load: (route: R, requests: AutocannonRequestSpec[], seconds: number) => Promise<AutocannonResult>,
  settings: RoundSettings,
): Promise<Map<R, AutocannonResult[]>> {
  if (settings.warmup > 0) {
    for (const route of routes) {
      console.log(`bench: warming up ${route} (${settings.warmup} s)`);
      await load(route, makers.get(route)!(), settings.warmup);
    }
  }
  const results = new Map<R, AutocannonResult[]>(routes.map((r) => [r, []]));
  for (let round = 1; round <= settings.rounds; round++) {
    for (const route of round % 2 === 1 ? routes : [...routes].reverse()) {
      const r = await load(route, makers.get(route)!(), settings.duration);
      results.get(route)!.push(r);
      console.log(`bench: round ${round}/${settings.rounds} ${route}: ${fmtInt(r.requests.average)} req/s, p50 ${fmtNum(r.latency.p50)} ms, p99 ${fmtNum(r.latency.p99)} ms`);
    }
  }
  return results;
}

/** The report line about bad answers over every run of every route; `allOk` is the line when there were none. */
export function answersNote(results: Map<string, AutocannonResult[]>, allOk: string): string {
  const all = [...results.values()].flat();
  const bad = all.reduce((n, r) => n + badCount(r), 0);
  if (bad === 0) return allOk;
  const total = all.reduce((n, r) => n + r.requests.total + r.errors, 0);
  return `${fmtInt(bad)} of ${fmtInt(total)} answers were errors or not 2xx (under 1% in every round, or the run would have stopped).`;
}
