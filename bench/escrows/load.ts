/**
 * How the escrow-routes bench loads the API and the floor server: its tunables, the
 * requests of each route (a different caller on every request; every creation with a
 * fresh Idempotency-Key), and the rounds: every route back to back, forward in odd rounds
 * and backward in even ones. A `-floor` scenario sends its route's requests to the floor
 * server (bench/auth-read/floor-server.ts) instead of the API.
 */
import { randomUUID } from 'node:crypto';
import { checkedLoad, cyclingHeader, cyclingRequests, MAX_BAD_SHARE, runRounds as roundsOf, type AutocannonRequestSpec, type AutocannonResult, type CycledRequest } from '../lib/autocannon.js';
import { analyzeAfterRun } from '../lib/db.js';
import { intFromEnv, scenariosFromEnv } from '../lib/env.js';
import { pacedRounds, type FlowRequest, type FlowResult } from '../lib/flows.js';
import type { Child } from '../lib/procs.js';
import type { EscrowSeed, SeedUser } from './seed.js';

export const ME = '/v1/auth/me';
export const LIST_LIMIT = 20;
export const LIST = `/api/escrows?limit=${LIST_LIMIT}`;

/** Each route next to its floor, so the two run back to back in every round. */
export const ALL_SCENARIOS = ['get', 'get-floor', 'list', 'list-floor', 'create', 'create-floor', 'create-one-seller', 'preview'] as const;
export type Scenario = (typeof ALL_SCENARIOS)[number];
/** `me` (`GET /v1/auth/me`, the floor every authenticated route pays) always runs. */
export type Route = 'me' | Scenario;
/** The routes measured against a floor of their own (issue 29), and that floor's scenario. */
export const FLOORS = { get: 'get-floor', list: 'list-floor', create: 'create-floor' } as const satisfies Partial<Record<Route, Route>>;
export const isFloor = (route: Route): boolean => route.endsWith('-floor');

/** A server under load: the API or the floor server. */
export interface Target {
  base: string;
  child: Child;
}

export const settings = {
  rounds: intFromEnv('BENCH_ROUNDS', 5, 1, 15),
  duration: intFromEnv('BENCH_DURATION', 5, 1, 60),
  warmup: intFromEnv('BENCH_WARMUP', 2, 0, 30),
  connections: intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000),
  readers: intFromEnv('BENCH_ESCROW_READERS', 300, 3, 9999),
  perReader: intFromEnv('BENCH_ESCROWS_PER_READER', 10, 2, 50),
  writers: intFromEnv('BENCH_ESCROW_WRITERS', 300, 2, 9999),
  authLimit: intFromEnv('BENCH_AUTH_LIMIT', 1_000_000, 1, 1_000_000_000),
  publicLimit: intFromEnv('BENCH_PUBLIC_LIMIT', 1_000_000_000, 1, 2_000_000_000),
  scenarios: scenariosFromEnv('BENCH_ESCROW_SCENARIOS', ALL_SCENARIOS),
  /** Issue 29's latency goal for write routes: keyed creations at an even rate, API and floor (0 rounds: skipped). */
  pacedRate: intFromEnv('BENCH_PACED_RATE', 500, 1, 100_000),
  pacedDuration: intFromEnv('BENCH_PACED_DURATION', 10, 1, 120),
  pacedRounds: intFromEnv('BENCH_PACED_ROUNDS', 3, 0, 15),
};

export const bearer = (u: SeedUser): Record<string, string> => ({ Authorization: `Bearer ${u.key}` });

/** A direct creation as buyer by writer i, naming the next writer (or, `oneSeller`, always the same one) as seller. */
export function createBody(writers: readonly SeedUser[], i: number, oneSeller = false): string {
  return JSON.stringify({
    role: 'buyer',
    counterparty_username: (oneSeller ? writers[i === 0 ? 1 : 0]! : writers[(i + 1) % writers.length]!).username,
    item_name: 'Bench load escrow',
    description: 'Created by bench/escrows',
    amount: 250_000,
    category: 'goods',
  });
}

/** The same requests, each send with a fresh Idempotency-Key (a UUID v4), as a client that retries safely sends them. */
function keyed(specs: AutocannonRequestSpec[]): AutocannonRequestSpec[] {
  return specs.map((spec) => ({
    ...spec,
    setupRequest(req, context) {
      const out = spec.setupRequest ? spec.setupRequest(req, context) : req;
      if (out) out.headers['Idempotency-Key'] = randomUUID();
      return out;
    },
  }));
}

/** The autocannon `requests` of a route (its floor sends the same ones), made anew for every run (also bench/auth-read/profile.ts). */
export function requestsFor(route: Route, seed: EscrowSeed): () => AutocannonRequestSpec[] {
  const { readers, writers, escrows, perReader } = seed;
  const keys = readers.map((r) => `Bearer ${r.key}`);
  const creations = (oneSeller: boolean): CycledRequest[] =>
    writers.map((w, i) => ({ method: 'POST', path: '/api/escrows', headers: { ...bearer(w), 'Content-Type': 'application/json' }, body: createBody(writers, i, oneSeller) }));
  switch (route) {
    case 'me':
      return () => cyclingHeader(ME, 'Authorization', keys);
    case 'get':
    case 'get-floor': {
      // Reader by reader, then the next escrow of each: consecutive requests are different users.
      const reqs: CycledRequest[] = [];
      for (let k = 0; k < perReader; k++) {
        for (let i = 0; i < readers.length; i++) {
          const e = escrows[i * perReader + k]!;
          reqs.push({ method: 'GET', path: `/api/escrows/${e.id}`, headers: bearer(readers[e.buyer]!) });
        }
      }
      return () => cyclingRequests(reqs);
    }
    case 'list':
    case 'list-floor':
      return () => cyclingHeader(LIST, 'Authorization', keys);
    case 'create':
    case 'create-floor': {
      const reqs = creations(false);
      return () => keyed(cyclingRequests(reqs));
    }
    case 'create-one-seller': {
      const reqs = creations(true);
      return () => keyed(cyclingRequests(reqs));
    }
    case 'preview': {
      const reqs: CycledRequest[] = escrows.filter((e) => e.status === 'paid').map((e) => ({ method: 'GET', path: `/api/escrows/${e.id}/preview`, headers: {} }));
      return () => cyclingRequests(reqs);
    }
  }
}

async function load(target: Target, route: Route, requests: AutocannonRequestSpec[], seconds: number): Promise<AutocannonResult> {
  const first = requests[0]!;
  return await checkedLoad(target.child, `${route}: ${first.method ?? 'GET'} ${first.path ?? '/'}`, {
    url: `${target.base}${first.path ?? '/'}`,
    connections: settings.connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    requests,
  });
}

/** Warm-up per route, then the rounds (bench/lib/autocannon.ts `runRounds`): every route's results in round order. */
export async function runRounds(targets: { api: Target; floor: Target }, seed: EscrowSeed): Promise<Map<Route, AutocannonResult[]>> {
  const routes: Route[] = ['me', ...settings.scenarios];
  const makers = new Map(routes.map((r) => [r, requestsFor(r, seed)]));
  return roundsOf(
    routes,
    makers,
    async (route, requests, seconds) => {
      const result = await load(isFloor(route) ? targets.floor : targets.api, route, requests, seconds);
      // The creations write escrows, events, outbox rows and keys: statistics kept current (analyzeAfterRun).
      if (route.startsWith('create')) await analyzeAfterRun();
      return result;
    },
    settings,
  );
}

/**
 * Keyed creations at BENCH_PACED_RATE per second, evenly paced (bench/lib/flows.ts
 * `pacedRounds`), on the API and on its floor in turn: the results by target name
 * (`api`, `floor`) in round order. Each creation is a new escrow with a fresh key.
 */
export async function runPacedCreate(targets: { api: Target; floor: Target }, seed: EscrowSeed): Promise<Map<string, FlowResult[]>> {
  const count = settings.pacedRate * settings.pacedDuration;
  const writers = seed.writers;
  return await pacedRounds<FlowRequest>({
    targets: [
      { name: 'api', base: targets.api.base },
      { name: 'floor', base: targets.floor.base },
    ],
    items: () =>
      Array.from({ length: count }, (_, i) => ({
        step: 'create',
        method: 'POST' as const,
        path: '/api/escrows',
        headers: { ...bearer(writers[i % writers.length]!), 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
        body: createBody(writers, i % writers.length),
        expect: [201],
      })),
    flow: async (send, req) => {
      await send(req);
    },
    rate: settings.pacedRate,
    duration: settings.pacedDuration,
    rounds: settings.pacedRounds,
    concurrency: settings.connections,
    maxFailedShare: MAX_BAD_SHARE,
    after: () => {
      for (const t of [targets.api, targets.floor]) if (t.child.exit) throw new Error(`${t.child.name} exited during the paced rounds`);
    },
  });
}
