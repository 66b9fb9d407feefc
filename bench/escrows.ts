/**
 * `npm run bench:escrows` (through `bench/run.sh bench/escrows.ts`, which provides Postgres,
 * Redis, the migrated bench database and a fresh dist/ build): the escrow routes of issue 6
 * against the real compiled API, measured against `GET /v1/auth/me` with the same keys in
 * the same run (the floor every authenticated product route pays).
 *
 * Seeds readers with escrows made through the service and writers (bench/seed-escrows.ts),
 * starts `node dist/api/server.js` (pinned to core 1 like bench/run.ts), checks that every
 * route answers what it should for a spread of callers, then loads, in alternating order
 * per round (forward, then backward):
 *
 * - me:      `GET /v1/auth/me`, a different reader's key per request (the floor);
 * - get:     `GET /api/escrows/:id`, a different reader per request, each asking for one of
 *            its own escrows (key and path set together by one `setupRequest`);
 * - list:    `GET /api/escrows?limit=20`, the caller's list (a different reader per request);
 * - create:  `POST /api/escrows` as buyer, a different writer per request, the counterparty
 *            the next writer (a write: escrow row, event and two outbox rows, one transaction);
 * - create-one-seller: as create, every writer naming the same seller (one busy seller's
 *            `public_profiles` counter row, updated by every creation);
 * - preview: `GET /api/escrows/:id/preview`, public (no credentials), a paid escrow per request.
 *
 * Each figure is that route's median round by requests/s; the headline is the ratio to
 * `GET /v1/auth/me`, the median of the per-round ratios (each round loads every route back
 * to back). A round with more than 1% non-2xx answers or errors stops the run. The figures
 * go to bench/README.md between the `escrows` markers when every scenario ran.
 *
 * Tunables (environment): BENCH_ROUNDS (5), BENCH_DURATION seconds per round (5),
 * BENCH_WARMUP seconds per route (2), BENCH_CONNECTIONS (50), BENCH_ESCROW_READERS (300),
 * BENCH_ESCROWS_PER_READER (10), BENCH_ESCROW_WRITERS (300), BENCH_AUTH_LIMIT (1000000, the
 * API's AUTH_RATE_LIMIT_PER_MINUTE), BENCH_PUBLIC_LIMIT (1000000000, its
 * PUBLIC_RATE_LIMIT_PER_MINUTE: every request comes from 127.0.0.1), BENCH_LOG_LEVEL (info),
 * BENCH_PIN (0 = no pinning), BENCH_ESCROW_SCENARIOS (get,list,create,create-one-seller,preview; `me` always runs).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { cyclingHeader, runAutocannon, type AutocannonRequestSpec, type AutocannonResult } from './autocannon.js';
import {
  HOST,
  PINNED,
  ROOT,
  describeExit,
  freePort,
  gitRevision,
  intFromEnv,
  replaceBetweenMarkers,
  runToCompletion,
  startChild,
  stopAll,
  stopChildrenOnSignals,
  waitFor,
  type Child,
} from './procs.js';
import type { EscrowSeed, SeedUser } from './seed-escrows.js';

const README = path.join(ROOT, 'bench', 'README.md');
const MARK_START = '<!-- escrows:start -->';
const MARK_END = '<!-- escrows:end -->';
const ME = '/v1/auth/me';
const LIST = '/api/escrows?limit=20';
const LIST_LIMIT = 20;

const ROUNDS = intFromEnv('BENCH_ROUNDS', 5, 1, 15);
const DURATION = intFromEnv('BENCH_DURATION', 5, 1, 60);
const WARMUP = intFromEnv('BENCH_WARMUP', 2, 0, 30);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000);
const READERS = intFromEnv('BENCH_ESCROW_READERS', 300, 3, 9999);
const PER_READER = intFromEnv('BENCH_ESCROWS_PER_READER', 10, 2, 50);
const WRITERS = intFromEnv('BENCH_ESCROW_WRITERS', 300, 2, 9999);
const AUTH_LIMIT = intFromEnv('BENCH_AUTH_LIMIT', 1_000_000, 1, 1_000_000_000);
const PUBLIC_LIMIT = intFromEnv('BENCH_PUBLIC_LIMIT', 1_000_000_000, 1, 2_000_000_000);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
const PIPELINING = 1;
/** A round with more non-2xx responses or errors than this share is a wrong answer, not a measurement. */
const MAX_BAD_SHARE = 0.01;

const ALL_SCENARIOS = ['get', 'list', 'create', 'create-one-seller', 'preview'] as const;
type Scenario = (typeof ALL_SCENARIOS)[number];
type Route = 'me' | Scenario;
const SCENARIOS: Scenario[] = (() => {
  const raw = process.env.BENCH_ESCROW_SCENARIOS?.trim();
  if (!raw) return [...ALL_SCENARIOS];
  const picked = raw.split(',').map((s) => s.trim());
  const unknown = picked.filter((s) => !(ALL_SCENARIOS as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`BENCH_ESCROW_SCENARIOS: unknown ${unknown.join(', ')} (known: ${ALL_SCENARIOS.join(', ')})`);
  return ALL_SCENARIOS.filter((s) => picked.includes(s));
})();

/** What each route's row says it exercises (README table). */
const ROUTES: Record<Route, { label: string; does: string }> = {
  me: {
    label: `\`GET ${ME}\` (the floor)`,
    does: '`auth()`: one prepared query (key + user), one Redis script; the user serialised',
  },
  get: {
    label: '`GET /api/escrows/:id` as a party',
    does: '`auth()` + one `escrows` read by primary key through knex, the party check, the escrow serialised',
  },
  list: {
    label: `\`GET ${LIST}\``,
    does: `\`auth()\` + two knex queries in parallel (the page: buyer or seller, newest first; and \`count(*)\`), ${LIST_LIMIT} escrows serialised`,
  },
  create: {
    label: '`POST /api/escrows` (direct, as buyer)',
    does: '`auth()` + body parsing and joi + one transaction: counterparty by username, escrow insert, event insert, two outbox inserts, commit',
  },
  'create-one-seller': {
    label: '`POST /api/escrows` (direct, as buyer), one seller',
    does: 'as create, every writer naming the same seller: the seller\'s `public_profiles` counter row is updated by every escrow (the hot row of a busy seller)',
  },
  preview: {
    label: '`GET /api/escrows/:id/preview` (public)',
    does: 'no `auth()`: the public per-IP limit (rate-limiter-flexible, one Redis round trip), escrow by id, seller by id, the preview serialised',
  },
};

interface Target {
  base: string;
  child: Child;
}

/** One request autocannon sends (a whole request: method, path, headers, body). */
interface Req {
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
function cyclingRequests(reqs: readonly Req[]): AutocannonRequestSpec[] {
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

// ---------------------------------------------------------------------------------------
// Formatting

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number) => n.toFixed(n < 10 ? 2 : 1);
const fmtPct = (n: number) => `${n.toFixed(1)}%`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const loadavg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');

function badCount(r: AutocannonResult): number {
  return r.errors + r.timeouts + r.non2xx;
}

function statusSummary(r: AutocannonResult): string {
  return Object.entries(r.statusCodeStats ?? {})
    .map(([code, s]) => `${code}×${s.count}`)
    .join(', ');
}

// ---------------------------------------------------------------------------------------
// Loading

async function load(target: Target, route: Route, requests: AutocannonRequestSpec[], seconds: number): Promise<AutocannonResult> {
  if (target.child.exit) throw new Error(describeExit(target.child));
  const first = requests[0]!;
  const result = await runAutocannon({
    url: `${target.base}${first.path ?? '/'}`,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration: seconds,
    timeout: 10,
    requests,
  });
  if (target.child.exit) throw new Error(describeExit(target.child));
  const total = result.requests.total + result.errors;
  if (total === 0 || badCount(result) > MAX_BAD_SHARE * total) {
    throw new Error(
      `${route}: ${first.method ?? 'GET'} ${first.path ?? '/'} under load answered wrongly: ${result.requests.total} responses, ` +
        `${result.non2xx} non-2xx (${statusSummary(result) || 'no status codes'}), ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return result;
}

// ---------------------------------------------------------------------------------------
// Checks before measuring

interface JsonAnswer {
  status: number;
  text: string;
  headers: Headers;
  body: unknown;
}

async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<JsonAnswer> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, text, headers: res.headers, body };
}

type Obj = Record<string, unknown>;
const dataOf = (a: JsonAnswer): unknown => (a.body as { success?: unknown; data?: unknown } | undefined)?.data;

function expect(ok: boolean, what: string, a: JsonAnswer): void {
  if (!ok) throw new Error(`check failed: ${what}; answered ${a.status} ${a.text.slice(0, 400)}`);
}

const bearer = (u: SeedUser) => ({ Authorization: `Bearer ${u.key}` });

function createBody(writers: readonly SeedUser[], i: number, oneSeller = false): string {
  return JSON.stringify({
    role: 'buyer',
    counterparty_username: (oneSeller ? writers[i === 0 ? 1 : 0]! : writers[(i + 1) % writers.length]!).username,
    item_name: 'Bench load escrow',
    description: 'Created by bench/escrows.ts',
    amount: 250_000,
    category: 'goods',
  });
}

let knex: Knex | undefined;
/** The service's knex pool, loaded on first use (shared/config reads the environment run.sh sets). */
async function benchDb(): Promise<Knex> {
  knex ??= (await import('../shared/db.js')).db;
  return knex;
}

/** Row counts the create scenario adds to (nothing relays the outbox: no worker runs). */
async function countRows(): Promise<{ escrows: number; events: number; outbox: number }> {
  const db = await benchDb();
  const one = async (table: string) => Number(((await db(table).count<{ count: string }[]>('* as count'))[0] ?? { count: '0' }).count);
  return { escrows: await one('escrows'), events: await one('escrow_events'), outbox: await one('outbox') };
}

/** Every route answers what it should, for a spread of callers; returns the list totals seen. */
async function checkRoutes(api: Target, seed: EscrowSeed): Promise<{ listTotals: number[] }> {
  const { readers, writers, escrows, perReader } = seed;
  const n = readers.length;
  const sample = [...new Set([0, 1, Math.floor(n / 2), n - 1])];
  const listTotals: number[] = [];
  for (const i of sample) {
    const me = readers[i]!;
    const a = await call(`${api.base}${ME}`, { headers: bearer(me) });
    expect(a.status === 200 && (dataOf(a) as { user?: Obj } | undefined)?.user?.id === me.id, `GET ${ME} as reader ${i + 1}`, a);

    const mine = escrows.filter((e) => e.buyer === i);
    if (mine.length !== perReader) throw new Error(`reader ${i + 1} has ${mine.length} seeded escrows, expected ${perReader}`);
    const e = mine[mine.length - 1]!;
    const g = await call(`${api.base}/api/escrows/${e.id}`, { headers: bearer(me) });
    const gd = dataOf(g) as Obj | undefined;
    expect(g.status === 200 && gd?.id === e.id && gd.buyer_id === me.id, `GET /api/escrows/${e.id} as its buyer`, g);
    const seller = readers.find((r) => r.id === e.sellerId);
    if (seller) {
      const s = await call(`${api.base}/api/escrows/${e.id}`, { headers: bearer(seller) });
      expect(s.status === 200 && (dataOf(s) as Obj | undefined)?.seller_id === seller.id, `GET /api/escrows/${e.id} as its seller`, s);
    }
    const stranger = readers.find((r) => r.id !== me.id && r.id !== e.sellerId)!;
    const x = await call(`${api.base}/api/escrows/${e.id}`, { headers: bearer(stranger) });
    expect(x.status === 403 && (x.body as { error?: { code?: string } }).error?.code === 'FORBIDDEN', `GET /api/escrows/${e.id} as a stranger is 403`, x);

    const l = await call(`${api.base}${LIST}`, { headers: bearer(me) });
    const rows = dataOf(l) as Obj[] | undefined;
    const total = (l.body as { pagination?: { total?: number } } | undefined)?.pagination?.total ?? -1;
    expect(
      l.status === 200 &&
        Array.isArray(rows) &&
        total >= perReader &&
        rows.length === Math.min(LIST_LIMIT, total) &&
        rows.every((r) => r.buyer_id === me.id || r.seller_id === me.id) &&
        rows.every((r, k) => k === 0 || String(rows[k - 1]!.created_at) >= String(r.created_at)),
      `GET ${LIST} as reader ${i + 1}: its own escrows, newest first, min(${LIST_LIMIT}, total) rows`,
      l,
    );
    listTotals.push(total);

    const paid = mine.find((m) => m.status === 'paid');
    if (paid) {
      const p = await call(`${api.base}/api/escrows/${paid.id}/preview`);
      const pd = dataOf(p) as Obj | undefined;
      expect(
        p.status === 200 && pd?.id === paid.id && !('buyer_id' in pd) && p.headers.get('access-control-allow-origin') === '*',
        `GET /api/escrows/${paid.id}/preview without credentials`,
        p,
      );
    }
  }

  const before = await countRows();
  const w = writers[0]!;
  const c = await call(`${api.base}/api/escrows`, {
    method: 'POST',
    headers: { ...bearer(w), 'Content-Type': 'application/json' },
    body: createBody(writers, 0),
  });
  const cd = dataOf(c) as Obj | undefined;
  expect(
    c.status === 201 && cd?.buyer_id === w.id && cd.seller_id === writers[1]!.id && cd.status === 'pending_payment' && cd.amount === '250000',
    'POST /api/escrows as a writer',
    c,
  );
  const after = await countRows();
  const added = { escrows: after.escrows - before.escrows, events: after.events - before.events, outbox: after.outbox - before.outbox };
  if (added.escrows !== 1 || added.events !== 1 || added.outbox !== 2) {
    throw new Error(`POST /api/escrows added ${JSON.stringify(added)} rows, expected 1 escrow, 1 event, 2 outbox rows`);
  }
  console.log(
    `bench: escrows: ${sample.length} readers get their escrow (buyer and seller 200, a stranger 403), their list ` +
      `(totals ${listTotals.join(', ')}) and a paid escrow's public preview; a POST made 1 escrow, 1 event, 2 outbox rows`,
  );
  return { listTotals };
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
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? Number.NaN;

interface RunInfo {
  seed: EscrowSeed;
  listTotals: number[];
  loadStart: string;
  loadEnd: string;
  rowsBefore: { escrows: number; events: number; outbox: number };
  rowsAfter: { escrows: number; events: number; outbox: number };
  startedAt: Date;
  seconds: number;
}

function answersNote(results: Map<Route, AutocannonResult[]>): string {
  const all = [...results.values()].flat();
  const bad = all.reduce((n, r) => n + badCount(r), 0);
  if (bad === 0) return 'Every answer in every round was 2xx (201 for the creation).';
  const total = all.reduce((n, r) => n + r.requests.total + r.errors, 0);
  return `${fmtInt(bad)} of ${fmtInt(total)} answers were errors or not 2xx (under 1% in every round, or the run would have stopped).`;
}

function report(results: Map<Route, AutocannonResult[]>, info: RunInfo): string {
  const me = results.get('me')!;
  const rows: string[] = [];
  const ratioLines: string[] = [];
  for (const route of ['me', ...SCENARIOS] as Route[]) {
    const rs = results.get(route)!;
    const mid = medianBy(rs, byRps);
    const paired = rs.map((r, i) => (r.requests.average / me[i]!.requests.average) * 100).sort((a, b) => a - b);
    const ratio = route === 'me' ? '100%' : `**${fmtPct(median(paired))}**`;
    rows.push(
      `| ${ROUTES[route].label} | ${fmtInt(mid.requests.average)} | ${fmtMs(mid.latency.p50)} | ${fmtMs(mid.latency.p99)} | ${ratio} | ` +
        `${fmtInt(mid.throughput.total / Math.max(1, mid.requests.total))} | ` +
        `${rs.map((r) => fmtInt(r.requests.average)).join(' / ')} |`,
    );
    if (route !== 'me') ratioLines.push(`${ROUTES[route].label}: ${paired.map(fmtPct).join(', ')}`);
  }
  const s = info.seed;
  const grew = {
    escrows: info.rowsAfter.escrows - info.rowsBefore.escrows,
    events: info.rowsAfter.events - info.rowsBefore.events,
    outbox: info.rowsAfter.outbox - info.rowsBefore.outbox,
  };
  const cpus = os.cpus();
  const lines = [
    `Measured ${info.startedAt.toISOString().replace(/\.\d+Z$/, 'Z')} on commit ${gitRevision()} (${Math.round(info.seconds)} s of load). ` +
      `Load average (1, 5, 15 min) when the load started: ${info.loadStart}; when it ended: ${info.loadEnd}.`,
    '',
    `| Route | Requests/s | p50 (ms) | p99 (ms) | ÷ \`GET ${ME}\` | Bytes/response | Requests/s per round |`,
    `|---|---:|---:|---:|---:|---:|---|`,
    ...rows,
    '',
    `- Each row is that route's median round by requests/s (its p50 and p99 are that round's); the ratio is the median of the ` +
      `per-round ratios (route ÷ \`GET ${ME}\` of the same round). ${plural(ROUNDS, 'round')} × ${DURATION} s per route, ` +
      `${CONNECTIONS} connections, pipelining ${PIPELINING}, after a ${WARMUP} s warm-up per route; in each round the routes run back ` +
      `to back, forward in odd rounds and backward in even ones.`,
    `- Per-round ratios (sorted): ${ratioLines.join('; ')}.`,
    `- Callers: ${fmtInt(s.readers.length)} readers with their own keys (\`GET ${ME}\`, the escrow, the list: a different reader on ` +
      `every request), each the buyer of ${s.perReader} escrows and the seller of its predecessor's ${s.perReader}, so every list ` +
      `holds ${fmtInt(median(info.listTotals))} escrows (page of ${LIST_LIMIT}); half of the escrows are paid (\`markPaid\`, with ` +
      `its ledger posting), and the preview cycles through those ${fmtInt(s.escrows.filter((e) => e.status === 'paid').length)}. ` +
      `${fmtInt(s.writers.length)} writers create, each naming the next writer as seller.`,
    `- The creation rounds (and their warm-up) added ${fmtInt(grew.escrows)} escrows, ${fmtInt(grew.events)} events and ` +
      `${fmtInt(grew.outbox)} outbox rows (the bench database now holds ${fmtInt(info.rowsAfter.escrows)} escrows and ` +
      `${fmtInt(info.rowsAfter.outbox)} outbox rows). No worker runs in the bench, so the outbox is never relayed and grows run after run.`,
    `- The API is the compiled build, \`node dist/api/server.js\` (\`NODE_ENV=development\`, \`LOG_LEVEL=${LOG_LEVEL}\`, stdout to ` +
      `/dev/null), with \`AUTH_RATE_LIMIT_PER_MINUTE=${AUTH_LIMIT}\` and \`PUBLIC_RATE_LIMIT_PER_MINUTE=${PUBLIC_LIMIT}\`: both limits ` +
      `are still checked on every request, they never answer 429. ${answersNote(results)}`,
    `- Node ${process.version}, ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${plural(cpus.length, 'logical core')} ` +
      `(${PINNED ? 'load generator pinned to core 0, the API to core 1; Postgres and Redis unpinned' : 'no pinning'}), ` +
      `${os.platform()} ${os.release()}.`,
  ];
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------

async function seedEscrows(env: NodeJS.ProcessEnv): Promise<EscrowSeed> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'escrow-bench-'));
  try {
    const file = path.join(dir, 'seed.json');
    const args = ['--import', 'tsx', 'bench/seed-escrows.ts', file, String(READERS), String(PER_READER), String(WRITERS)];
    await runToCompletion('seed (bench/seed-escrows.ts)', args, env, 180_000);
    const seed = JSON.parse(await readFile(file, 'utf8')) as EscrowSeed;
    if (seed.readers.length !== READERS || seed.writers.length !== WRITERS || seed.escrows.length !== READERS * PER_READER) {
      throw new Error('seed wrote fewer users or escrows than asked');
    }
    return seed;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function requestsFor(route: Route, seed: EscrowSeed): () => AutocannonRequestSpec[] {
  const { readers, writers, escrows, perReader } = seed;
  switch (route) {
    case 'me': {
      const values = readers.map((r) => `Bearer ${r.key}`);
      return () => cyclingHeader(ME, 'Authorization', values);
    }
    case 'get': {
      // Reader by reader, then the next escrow of each: consecutive requests are different users.
      const reqs: Req[] = [];
      for (let k = 0; k < perReader; k++) {
        for (let i = 0; i < readers.length; i++) {
          const e = escrows[i * perReader + k]!;
          reqs.push({ method: 'GET', path: `/api/escrows/${e.id}`, headers: bearer(readers[e.buyer]!) });
        }
      }
      return () => cyclingRequests(reqs);
    }
    case 'list': {
      const values = readers.map((r) => `Bearer ${r.key}`);
      return () => cyclingHeader(LIST, 'Authorization', values);
    }
    case 'create': {
      const reqs: Req[] = writers.map((w, i) => ({
        method: 'POST',
        path: '/api/escrows',
        headers: { ...bearer(w), 'Content-Type': 'application/json' },
        body: createBody(writers, i),
      }));
      return () => cyclingRequests(reqs);
    }
    case 'create-one-seller': {
      const reqs: Req[] = writers.map((w, i) => ({
        method: 'POST',
        path: '/api/escrows',
        headers: { ...bearer(w), 'Content-Type': 'application/json' },
        body: createBody(writers, i, true),
      }));
      return () => cyclingRequests(reqs);
    }
    case 'preview': {
      const reqs: Req[] = escrows
        .filter((e) => e.status === 'paid')
        .map((e) => ({ method: 'GET', path: `/api/escrows/${e.id}/preview`, headers: {} }));
      return () => cyclingRequests(reqs);
    }
  }
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
    throw new Error('DATABASE_URL and REDIS_URL must be set; run `npm run bench:escrows` (bench/run.sh) instead');
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST,
    NODE_ENV: 'development',
    AUTH_RATE_LIMIT_PER_MINUTE: String(AUTH_LIMIT),
    PUBLIC_RATE_LIMIT_PER_MINUTE: String(PUBLIC_LIMIT),
  };
  console.log(`bench: escrow scenarios ${SCENARIOS.join(', ')} (against ${ME}); load average ${loadavg()}`);
  const seed = await seedEscrows(env);
  if (seed.escrows.every((e) => e.status !== 'paid')) throw new Error('no paid escrow to preview');

  const port = await freePort();
  const child = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], {
    ...env,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://${HOST}:${port}`,
    LOG_LEVEL: LOG_LEVEL,
  });
  const api: Target = { base: `http://${HOST}:${port}`, child };
  await waitFor(`${api.base}/readyz`, child, 30_000);
  console.log(`bench: API on ${api.base}`);
  const { listTotals } = await checkRoutes(api, seed);

  const routes: Route[] = ['me', ...SCENARIOS];
  const makers = new Map(routes.map((r) => [r, requestsFor(r, seed)]));
  const rowsBefore = await countRows();
  const loadStart = loadavg();
  const startedAt = new Date();
  const t0 = Date.now();
  if (WARMUP > 0) {
    for (const route of routes) {
      console.log(`bench: warming up ${route} (${WARMUP} s)`);
      await load(api, route, makers.get(route)!(), WARMUP);
    }
  }
  const results = new Map<Route, AutocannonResult[]>(routes.map((r) => [r, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? routes : [...routes].reverse();
    for (const route of order) {
      const r = await load(api, route, makers.get(route)!(), DURATION);
      results.get(route)!.push(r);
      console.log(
        `bench: round ${round}/${ROUNDS} ${route}: ${fmtInt(r.requests.average)} req/s, p50 ${fmtMs(r.latency.p50)} ms, ` +
          `p99 ${fmtMs(r.latency.p99)} ms` +
          (badCount(r) > 0 ? `, ${r.errors} errors, ${r.non2xx} non-2xx (${statusSummary(r)})` : ''),
      );
    }
  }
  const seconds = (Date.now() - t0) / 1000;
  const loadEnd = loadavg();
  const rowsAfter = await countRows();

  const markdown = report(results, { seed, listTotals, loadStart, loadEnd, rowsBefore, rowsAfter, startedAt, seconds });
  console.log(`\n${markdown}\n`);
  if (SCENARIOS.length === ALL_SCENARIOS.length) {
    await replaceBetweenMarkers(README, MARK_START, MARK_END, markdown, '## Escrow routes (issue 6)');
    console.log(`bench: results written to ${path.relative(ROOT, README)}`);
  } else {
    console.log(`bench: only ${SCENARIOS.join(', ')} ran (BENCH_ESCROW_SCENARIOS); ${path.relative(ROOT, README)} left as it was`);
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
  await knex?.destroy();
}
