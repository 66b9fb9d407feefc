/**
 * How the deals bench loads the API: its tunables, the requests of each route (a different
 * owner's session on every request), and the rounds: every route back to back, forward in
 * odd rounds and backward in even ones.
 *
 * `POST /v1/enterprise/fees/preview` has a limit of its own, 60 per minute per user, that
 * no setting raises (api/routes/fees.ts). The bench keeps under it the honest way: the
 * requests cycle through every owner, and the preview counters (the bench's own prefix,
 * `escrow-bench:rl:ent-fee-preview*`) are deleted before every preview run, so one run of
 * `duration` seconds may make at most 60 × owners previews; with the defaults that is
 * 24,000 in 5 s, far above what the API answers. A run that met the limit would show 429s
 * and stop (more than 1% non-2xx).
 */
import { checkedLoad, cyclingHeader, cyclingRequests, runRounds as roundsOf, type AutocannonRequestSpec, type AutocannonResult, type CycledRequest } from '../lib/autocannon.js';
import { deleteRedisKeys } from '../lib/db.js';
import { intFromEnv } from '../lib/env.js';
import { pacedFlows, type FlowResult } from '../lib/flows.js';
import type { Child } from '../lib/procs.js';
import type { DealCaller, DealSeed } from './seed.js';

export const ME = '/v1/enterprise/me';
export const DEALS = '/v1/enterprise/deals';
export const PREVIEW = '/v1/enterprise/fees/preview';
export const PREVIEW_LIMIT_PER_MINUTE = 60;

export const ROUTES = ['me', 'create', 'preview'] as const;
export type Route = (typeof ROUTES)[number];

export const settings = {
  rounds: intFromEnv('BENCH_ROUNDS', 5, 1, 15),
  duration: intFromEnv('BENCH_DURATION', 5, 1, 60),
  warmup: intFromEnv('BENCH_WARMUP', 2, 0, 30),
  connections: intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000),
  users: intFromEnv('BENCH_DEAL_USERS', 400, 2, 9999),
  authLimit: intFromEnv('BENCH_AUTH_LIMIT', 1_000_000, 1, 1_000_000_000),
  /** Issue 44: deal creation at an even rate (autocannon's overallRate), its p99 against 100 ms. */
  pacedRate: intFromEnv('BENCH_DEALS_RATE', 50, 1, 1000),
  pacedRounds: intFromEnv('BENCH_DEALS_PACED_ROUNDS', 3, 0, 9),
  pacedDuration: intFromEnv('BENCH_DEALS_PACED_DURATION', 10, 1, 60),
};

/** The milestones of every deal created and every preview: three, 25,000,000 in all. */
export const MILESTONES = [
  { title: 'Down payment', amount: 5_000_000 },
  { title: 'Delivery', amount: 7_500_000 },
  { title: 'Acceptance', amount: 12_500_000 },
] as const;
export const DEAL_TITLE = 'Bench load deal';

export const sessionHeaders = (c: DealCaller): Record<string, string> => ({ Cookie: c.cookie, 'X-CSRF-Token': c.csrf });

export const createBody = (c: DealCaller): string => JSON.stringify({ title: DEAL_TITLE, counterparty_id: c.counterpartyId, milestones: MILESTONES });
export const previewBody = (): string => JSON.stringify({ milestones: MILESTONES.map((m) => ({ amount: m.amount })) });

/** The autocannon `requests` of a route, made anew for every run. */
function requestsFor(route: Route, seed: DealSeed): () => AutocannonRequestSpec[] {
  const { callers } = seed;
  const json = { 'Content-Type': 'application/json' };
  switch (route) {
    case 'me':
      return () => cyclingHeader(ME, 'Cookie', callers.map((c) => c.cookie));
    case 'create': {
      const reqs: CycledRequest[] = callers.map((c) => ({ method: 'POST', path: DEALS, headers: { ...sessionHeaders(c), ...json }, body: createBody(c) }));
      return () => cyclingRequests(reqs);
    }
    case 'preview': {
      const body = previewBody();
      const reqs: CycledRequest[] = callers.map((c) => ({ method: 'POST', path: PREVIEW, headers: { ...sessionHeaders(c), ...json }, body }));
      return () => cyclingRequests(reqs);
    }
  }
}

/** The creation runs so far (warm-up included) and their 2xx answers: the deals verify.ts expects. */
export const creations = { answered201: 0, runs: 0 };

/** Deletes the fee preview's per-user counters (the bench's own prefix only). */
export async function clearPreviewCounters(): Promise<void> {
  const { config } = await import('../../shared/config.js');
  await deleteRedisKeys([`${config.queuePrefix}:rl:ent-fee-preview*`]);
}

async function load(api: { base: string; child: Child }, route: Route, requests: AutocannonRequestSpec[], seconds: number): Promise<AutocannonResult> {
  if (route === 'preview') await clearPreviewCounters();
  const first = requests[0]!;
  const r = await checkedLoad(api.child, `${route}: ${first.method ?? 'GET'} ${first.path ?? '/'}`, {
    url: `${api.base}${first.path ?? '/'}`,
    connections: settings.connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    requests,
  });
  if (route === 'create') {
    creations.answered201 += r['2xx'];
    creations.runs++;
  }
  return r;
}

/**
 * Deal creation at an even `settings.pacedRate` requests/s, `settings.pacedRounds` runs
 * (issue 44: p99 < 100 ms at 50/s): one request started every 1/rate s (bench/lib/flows.ts
 * `pacedFlows`, open loop), a different owner each time, each answer timed from when it was
 * due to start (so a request held back behind a slow one counts its wait).
 */
export async function runPaced(api: { base: string; child: Child }, seed: DealSeed): Promise<FlowResult[]> {
  const out: FlowResult[] = [];
  const count = settings.pacedRate * settings.pacedDuration;
  const json = { 'Content-Type': 'application/json' };
  for (let i = 0; i < settings.pacedRounds; i++) {
    const items = Array.from({ length: count }, (_, k) => seed.callers[(i * count + k) % seed.callers.length]!);
    const r = await pacedFlows<DealCaller>({
      base: api.base,
      items,
      concurrency: 1000,
      duration: settings.pacedDuration,
      rate: settings.pacedRate,
      flow: async (send, c) => {
        await send({ step: 'create', method: 'POST', path: DEALS, headers: { ...sessionHeaders(c), ...json }, body: createBody(c), expect: [201] });
      },
    });
    if (r.failed > 0) throw new Error(`deal creation at ${settings.pacedRate}/s: ${r.failed} failed; first: ${r.firstFailure}`);
    creations.answered201 += r.completed;
    creations.runs++;
    out.push(r);
  }
  return out;
}

/** Warm-up per route, then the rounds (bench/lib/autocannon.ts `runRounds`): every route's results in round order. */
export async function runRounds(api: { base: string; child: Child }, seed: DealSeed): Promise<Map<Route, AutocannonResult[]>> {
  const makers = new Map(ROUTES.map((r) => [r, requestsFor(r, seed)]));
  return roundsOf(ROUTES, makers, (route, requests, seconds) => load(api, route, requests, seconds), settings);
}
