/**
 * How the authenticated-read bench loads its servers: its tunables, autocannon rounds over
 * two servers in alternating order, and rounds at a fixed, evenly paced rate.
 */
import { checkedLoad, cyclingHeader, MAX_BAD_SHARE, type AutocannonRequestSpec, type AutocannonResult } from '../lib/autocannon.js';
import { intFromEnv, scenariosFromEnv } from '../lib/env.js';
import { fmtInt, fmtNum, statusList } from '../lib/format.js';
import { runPaced, type PacedResult } from '../lib/paced.js';
import { describeExit, type Child } from '../lib/procs.js';
import type { BenchSeed } from './seed.js';

export const HEALTHZ = '/healthz';
export const ME = '/v1/auth/me';

/**
 * The trivial route through the whole request frame (issue 43): `GET /v1/auth/me` with no
 * credentials answers `{user: null, csrf_token: null}` after the request id, the security
 * headers, the body reader, the router, `auth('optional')` (no header, no cookie: no store
 * touched), the error renderer, the access-log line and the request metrics; bare Koa
 * answers the same body from one middleware. `/healthz` answers ahead of the frame.
 */
export const FRAME = ME;

export const ALL_SCENARIOS = ['healthz', 'frame', 'auth', 'session', 'rate'] as const;
export type Scenario = (typeof ALL_SCENARIOS)[number];

export const settings = {
  rounds: intFromEnv('BENCH_ROUNDS', 7, 1, 15),
  duration: intFromEnv('BENCH_DURATION', 5, 1, 60),
  warmup: intFromEnv('BENCH_WARMUP', 3, 0, 30),
  connections: intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000),
  users: intFromEnv('BENCH_USERS', 600, 1, 9999),
  sessionRounds: intFromEnv('BENCH_SESSION_ROUNDS', 3, 0, 15),
  sessionDuration: intFromEnv('BENCH_SESSION_DURATION', 3, 1, 60),
  rate: intFromEnv('BENCH_RATE', 1000, 1, 100_000),
  rateRounds: intFromEnv('BENCH_RATE_ROUNDS', 3, 0, 15),
  rateDuration: intFromEnv('BENCH_RATE_DURATION', 5, 1, 60),
  rateAutocannonRounds: intFromEnv('BENCH_RATE_AUTOCANNON_ROUNDS', 1, 0, 15),
  authLimit: intFromEnv('BENCH_AUTH_LIMIT', 1_000_000, 1, 1_000_000_000),
  scenarios: scenariosFromEnv('BENCH_SCENARIOS', ALL_SCENARIOS),
};
export const runs = (s: Scenario): boolean => settings.scenarios.includes(s);

export interface Target {
  label: string;
  /** `http://host:port` */
  base: string;
  child: Child;
}

/** What one autocannon run sends. */
export interface LoadSpec {
  path: string;
  headers?: Record<string, string>;
  /** Made anew for every run (a cycling counter starts at the first key). */
  requests?: () => AutocannonRequestSpec[];
  overallRate?: number;
}

export interface Pair<T> {
  base: T[];
  test: T[];
}

/** `GET /v1/auth/me` with the next seeded user's key on every request. */
export function keyLoad(seed: BenchSeed, overallRate?: number): LoadSpec {
  const values = seed.keys.map((k) => `Bearer ${k}`);
  return { path: ME, requests: () => cyclingHeader(ME, 'Authorization', values), ...(overallRate ? { overallRate } : {}) };
}

async function load(target: Target, spec: LoadSpec, seconds: number): Promise<AutocannonResult> {
  return await checkedLoad(target.child, `${target.label}: GET ${spec.path}`, {
    url: `${target.base}${spec.path}`,
    connections: settings.connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    ...(spec.headers ? { headers: spec.headers } : {}),
    ...(spec.requests ? { requests: spec.requests() } : {}),
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
  });
}

/** Base first in odd rounds, test first in even ones, so slow drift hits both alike. */
const orderOf = (round: number) => (round % 2 === 1 ? (['base', 'test'] as const) : (['test', 'base'] as const));

/** Warm-up, then `rounds` rounds loading both targets back to back, alternating who goes first. */
export async function alternate(tag: string, base: Target, test: Target, spec: LoadSpec, rounds: number, seconds: number, warmup: number): Promise<Pair<AutocannonResult>> {
  if (warmup > 0) {
    for (const t of [base, test]) {
      console.log(`bench: ${tag}: warming up ${t.label} (${warmup} s)`);
      await load(t, spec, warmup);
    }
  }
  const out: Pair<AutocannonResult> = { base: [], test: [] };
  for (let round = 1; round <= rounds; round++) {
    for (const side of orderOf(round)) {
      const target = side === 'base' ? base : test;
      const r = await load(target, spec, seconds);
      out[side].push(r);
      console.log(
        `bench: ${tag} round ${round}/${rounds} ${target.label}: ${fmtInt(r.requests.average)} req/s, ` +
          `p50 ${fmtNum(r.latency.p50)} ms, p99 ${fmtNum(r.latency.p99)} ms` +
          (r.errors + r.non2xx > 0 ? `, ${r.errors} errors, ${r.non2xx} non-2xx` : ''),
      );
    }
  }
  return out;
}

/** `Bearer <key>` of the next seeded user on every call. */
export function keyCycler(keys: readonly string[]): () => Record<string, string> {
  const values = keys.map((k) => `Bearer ${k}`);
  let next = 0;
  return () => {
    const value = values[next]!;
    next = next + 1 === values.length ? 0 : next + 1;
    return { Authorization: value };
  };
}

/** Rounds at the fixed, evenly paced rate (lib/paced.ts), alternating who goes first. */
export async function alternatePaced(tag: string, base: Target, test: Target, path: string, headers: () => Record<string, string>): Promise<Pair<PacedResult>> {
  const { rate, rateRounds: rounds, rateDuration: seconds, connections } = settings;
  const out: Pair<PacedResult> = { base: [], test: [] };
  for (let round = 1; round <= rounds; round++) {
    for (const side of orderOf(round)) {
      const target = side === 'base' ? base : test;
      if (target.child.exit) throw new Error(describeExit(target.child));
      const r = await runPaced({ url: `${target.base}${path}`, rate, duration: seconds, connections, headers });
      if (target.child.exit) throw new Error(describeExit(target.child));
      const bad = r.non2xx + r.errors + r.timeouts;
      if (r.completed === 0 || bad > MAX_BAD_SHARE * r.scheduled) {
        throw new Error(
          `${target.label}: GET ${path} at ${rate}/s answered wrongly: ${r.completed} of ${r.scheduled} answered, ` +
            `${r.non2xx} non-2xx (${statusList(r.statusCounts)}), ${r.errors} errors, ${r.timeouts} timeouts`,
        );
      }
      out[side].push(r);
      console.log(
        `bench: ${tag} round ${round}/${rounds} ${target.label}: ${fmtInt(r.achievedRate)} req/s, ` +
          `p50 ${fmtNum(r.latency.p50)} ms, p97.5 ${fmtNum(r.latency.p97_5)} ms, p99 ${fmtNum(r.latency.p99)} ms` +
          (bad > 0 ? `, ${r.errors} errors, ${r.non2xx} non-2xx, ${r.timeouts} timeouts` : ''),
      );
    }
  }
  return out;
}
