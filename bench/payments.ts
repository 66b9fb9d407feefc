/**
 * `npm run bench:payments` (through `bench/run.sh bench/payments.ts`, which provides
 * Postgres, Redis and a fresh dist/ build): issue 8's callback ingestion and
 * reconciliation throughput, reported beside pgbench's TPS on the same machine in the same
 * run.
 *
 * 0. Creates and migrates its own database, `<bench db>_payments`, and points everything at
 *    it (the bench database holds the unrelayed outbox of benches that start no worker,
 *    which the relay would work through first); Redis db 14, prefix escrow-bench-payments.
 * 1. Seeds escrows, each with one pending sandbox payment link (bench/seed-payments.ts:
 *    `createDirect` + `pay()`, the sandbox gateway row as test/factories/payments.ts makes it;
 *    earlier runs' outbox rows purged, then VACUUM (ANALYZE): autovacuum is off here).
 * 2. Starts the compiled API (`node dist/api/server.js`) and the compiled worker
 *    (`node dist/workers/index.js`: every queue, the outbox relay, the schedules), both with
 *    the same per-run SANDBOX_GATEWAY_SECRET this process signs with.
 * 3. Warm-up: signed `paid` callbacks for the warm-up links through the same path, then
 *    waits until they are paid and the outbox (the seed's notices included) is drained.
 * 4. Measured: autocannon sends every order's signed `paid` callback twice (exact
 *    duplicates: same body, same signature) to POST /api/webhooks/inbound, one order per
 *    request (`setupRequest`); the copies of a block of `connections` orders follow each
 *    other, so a duplicate usually arrives while its first copy is in flight or not yet
 *    reconciled. autocannon stops after exactly 2 × orders requests (`amount`). Meanwhile
 *    the database is polled until no link of this run is pending. Ingestion is requests/s
 *    over the autocannon run; reconciliation is orders ÷ (last `paid_at` − first
 *    `received_at`), both from the database.
 * 5. Verifies: every link paid exactly once and unflagged, every escrow paid with one
 *    `escrow_payment` journal entry, one `payment.completed` event and its held balance,
 *    one stored callback per order with both deliveries counted, every callback processed,
 *    the notice jobs completed, the two notices per escrow written once, `checkLedger`
 *    clean; HTTP: every answer 200, exactly one `duplicate: false` per order.
 * 6. Backlog run: stops the worker, sends the backlog orders' callbacks the same way (the
 *    API stores them; nothing is reconciled), starts a new worker and waits until every
 *    backlog link is paid: the worker's reconciliation rate alone, (payments paid after the
 *    first batch) ÷ (last `paid_at` − first `paid_at`). Verified like step 5.
 * 7. Stops the API and the worker, then runs pgbench on a scratch database
 *    (`<bench db>_pgbench`): `pgbench -i -s 10`, then `pgbench -b tpcb-like -c <connections>
 *    -j 2 -T <the reconciliation window in whole seconds, at least 30>`. No pgbench: said so,
 *    not a failure.
 *
 * The figures go to bench/README.md between the `payments-results` markers. Exit code 1
 * when a callback was lost or doubled (or any check failed); the goal itself is reported,
 * not asserted.
 *
 * Tunables (environment): BENCH_CONNECTIONS (50: autocannon connections and pgbench
 * clients), BENCH_PAY_ORDERS (5000), BENCH_PAY_BACKLOG (5000 orders; 0: no backlog run),
 * BENCH_PAY_WARMUP (500 orders), BENCH_PAY_USERS (200),
 * BENCH_PAY_TIMEOUT (180 s to wait for reconciliation after the last callback),
 * BENCH_PGBENCH_SCALE (10), BENCH_PGBENCH_DURATION (default: the reconciliation window, at least 30 s),
 * BENCH_WORKER_CONCURRENCY (default: the worker's own WORKER_CONCURRENCY default),
 * BENCH_LOG_LEVEL (info), BENCH_PAY_CPU_PROF (a directory: the API and the worker run under
 * `node --cpu-prof` and write api.cpuprofile and worker.cpuprofile there). Nothing is pinned.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Knex } from 'knex';
import { runAutocannon, type AutocannonOptions, type AutocannonRequestSpec, type AutocannonResult } from './autocannon.js';
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
  stopChild,
  stopChildrenOnSignals,
  waitFor,
  type Child,
} from './procs.js';
import type { PaymentSeed, SeedOrder } from './seed-payments.js';

const execFileP = promisify(execFile);

const README = path.join(ROOT, 'bench', 'README.md');
const MARK_START = '<!-- payments-results:start -->';
const MARK_END = '<!-- payments-results:end -->';
const INBOUND = '/api/webhooks/inbound';
/** Redis db 14 as the other benches, under a prefix of its own. */
const QUEUE_PREFIX = 'escrow-bench-payments';
const COPIES = 2;

const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000);
const ORDERS = intFromEnv('BENCH_PAY_ORDERS', 5000, 100, 200_000);
const WARMUP_ORDERS = intFromEnv('BENCH_PAY_WARMUP', 500, 0, 50_000);
/** Orders of the second run: callbacks stored while the worker is stopped, then reconciled by the worker alone. */
const BACKLOG_ORDERS = intFromEnv('BENCH_PAY_BACKLOG', 5000, 0, 200_000);
const USERS = intFromEnv('BENCH_PAY_USERS', 200, 2, 9999);
const SETTLE_TIMEOUT_S = intFromEnv('BENCH_PAY_TIMEOUT', 180, 10, 3600);
const PGBENCH_SCALE = intFromEnv('BENCH_PGBENCH_SCALE', 10, 1, 1000);
const PGBENCH_DURATION = process.env.BENCH_PGBENCH_DURATION ? intFromEnv('BENCH_PGBENCH_DURATION', 20, 1, 600) : null;
const WORKER_CONCURRENCY = process.env.BENCH_WORKER_CONCURRENCY ? intFromEnv('BENCH_WORKER_CONCURRENCY', 5, 1, 100) : null;
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
/** When set, the API and the worker run under `node --cpu-prof` and write their profiles here. */
const CPU_PROF_DIR = process.env.BENCH_PAY_CPU_PROF ? path.resolve(process.env.BENCH_PAY_CPU_PROF) : null;
const PGBENCH_THREADS = Math.min(2, CONNECTIONS);
const TARGET_SHARE = 0.25;
const POLL_MS = 200;

// ---------------------------------------------------------------------------------------
// Formatting

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmt1 = (n: number) => n.toFixed(1);
const fmtMs = (n: number) => (n < 10 ? n.toFixed(1) : Math.round(n).toLocaleString('en-US'));
const fmtPct = (n: number) => `${n.toFixed(1)}%`;
const loadavg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');

// ---------------------------------------------------------------------------------------
// The bench's own view of the database (the service's knex, lazily)

let knex: Knex | undefined;
async function benchDb(): Promise<Knex> {
  knex ??= (await import('../shared/db.js')).db;
  return knex;
}

async function one<T>(sql: string, bindings: readonly unknown[] = []): Promise<T> {
  const db = await benchDb();
  const result = await db.raw<{ rows: T[] }>(sql, bindings as Knex.RawBinding[]);
  const row = result.rows[0];
  if (!row) throw new Error(`no row from: ${sql.slice(0, 120)}`);
  return row;
}

async function all<T>(sql: string, bindings: readonly unknown[] = []): Promise<T[]> {
  const db = await benchDb();
  return (await db.raw<{ rows: T[] }>(sql, bindings as Knex.RawBinding[])).rows;
}

// ---------------------------------------------------------------------------------------
// Callbacks

interface CallbackReq {
  order: SeedOrder;
  body: string;
  signature: string;
}

/** What the HTTP answers said, counted as they arrive. */
interface AnswerTally {
  sent: number;
  ok: number;
  fresh: number;
  duplicate: number;
  other: number;
  bad: Map<number, number>;
  /** Date.now() when the first request was built and when the last answer arrived. */
  firstSentAt: number;
  lastAnsweredAt: number;
}

/**
 * The signed `paid` callback of each order (what the sandbox gateway sends), COPIES times:
 * orders go in blocks of `block`; a block's first copies, then its second copies (the same
 * bytes), then the next block.
 */
type Signer = (rawBody: string, secret: string) => string;

function callbackSequence(orders: readonly SeedOrder[], sign: Signer, secret: string, block: number): CallbackReq[] {
  const signed = orders.map((order) => {
    const body = JSON.stringify({ provider: 'sandbox', gateway_order_id: order.orderId, status: 'paid', amount: order.amount });
    return { order, body, signature: sign(body, secret) };
  });
  const seq: CallbackReq[] = [];
  for (let i = 0; i < signed.length; i += block) {
    const chunk = signed.slice(i, i + block);
    for (let c = 0; c < COPIES; c++) seq.push(...chunk);
  }
  return seq;
}

/** One autocannon request spec walking `seq` once across all connections, tallying answers. */
function callbackRequests(seq: readonly CallbackReq[], tally: AnswerTally): AutocannonRequestSpec[] {
  let next = 0;
  return [
    {
      method: 'POST',
      path: INBOUND,
      setupRequest(req) {
        const r = seq[next % seq.length]!;
        next++;
        if (tally.sent++ === 0) tally.firstSentAt = Date.now();
        req.method = 'POST';
        req.path = INBOUND;
        req.headers['Content-Type'] = 'application/json';
        req.headers['X-Sandbox-Signature'] = r.signature;
        req.body = r.body;
        return req;
      },
      onResponse(status, body) {
        tally.lastAnsweredAt = Date.now();
        if (status !== 200) {
          tally.bad.set(status, (tally.bad.get(status) ?? 0) + 1);
          return;
        }
        tally.ok++;
        if (body.includes('"duplicate":false')) tally.fresh++;
        else if (body.includes('"duplicate":true')) tally.duplicate++;
        else tally.other++;
      },
    },
  ];
}

interface LoadResult {
  result: AutocannonResult;
  tally: AnswerTally;
  /**
   * First request built → last answer received. autocannon itself notices the end of an
   * `amount` run only on its next once-a-second tick, so its own duration (and the time it
   * resolves) is rounded up to whole seconds.
   */
  startedAt: number;
  endedAt: number;
}

/** Sends `seq` once (autocannon `amount`: every request exactly once). */
async function sendCallbacks(base: string, seq: readonly CallbackReq[], connections: number): Promise<LoadResult> {
  const tally: AnswerTally = { sent: 0, ok: 0, fresh: 0, duplicate: 0, other: 0, bad: new Map(), firstSentAt: 0, lastAnsweredAt: 0 };
  const opts: AutocannonOptions & { amount: number } = {
    url: `${base}${INBOUND}`,
    connections: Math.min(connections, seq.length),
    pipelining: 1,
    duration: 1, // ignored: `amount` ends the run
    amount: seq.length,
    timeout: 30,
    requests: callbackRequests(seq, tally),
  };
  const result = await runAutocannon(opts);
  return { result, tally, startedAt: tally.firstSentAt, endedAt: tally.lastAnsweredAt };
}

// ---------------------------------------------------------------------------------------
// Waiting for the worker

function assertAlive(children: Child[]): void {
  for (const c of children) if (c.exit) throw new Error(describeExit(c));
}

async function pendingOf(orders: readonly SeedOrder[]): Promise<number> {
  const r = await one<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE status = 'pending' AND id = ANY(?::uuid[])`, [orders.map((o) => o.paymentId)]);
  return r.n;
}

/** Outbox rows of this run that are due and not completed (relayed or not). */
async function openOutbox(afterId: number): Promise<number> {
  const r = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM outbox WHERE id > ? AND completed_at IS NULL AND dead_at IS NULL AND available_at <= now()`,
    [afterId],
  );
  return r.n;
}

async function waitUntil(what: string, children: Child[], timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    assertAlive(children);
    if (await check()) return Date.now() - t0;
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not done after ${Math.round(timeoutMs / 1000)} s`);
    await sleep(POLL_MS);
  }
}

// ---------------------------------------------------------------------------------------
// CPU accounting (/proc, Linux): who used the cores during the measured window

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on every Linux we run on). */
const TICKS_PER_S = 100;

interface CpuSnapshot {
  at: number;
  /** Ticks of the whole machine: busy (everything but idle and iowait) and total. */
  busy: number;
  total: number;
  /** Ticks (utime + stime) per group of processes. */
  groups: Record<string, number>;
}

function procTicks(pid: number | string): { comm: string; ticks: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the comm.
    return { comm, ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

function cpuSnapshot(pids: Record<string, number | undefined>): CpuSnapshot | null {
  let v: number[];
  try {
    v = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return null;
  }
  const total = v.reduce((a, b) => a + b, 0);
  const busy = total - (v[3] ?? 0) - (v[4] ?? 0);
  const groups: Record<string, number> = { postgres: 0, redis: 0 };
  const own = new Map<number, string>();
  for (const [name, pid] of Object.entries(pids)) if (pid !== undefined) own.set(pid, name);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const t = procTicks(pid);
    if (!t) continue;
    const name = own.get(pid);
    if (name) groups[name] = (groups[name] ?? 0) + t.ticks;
    else if (t.comm === 'postgres') groups.postgres! += t.ticks;
    else if (t.comm.startsWith('redis-server')) groups.redis! += t.ticks;
    else if (t.comm === 'pgbench') groups.pgbench = (groups.pgbench ?? 0) + t.ticks;
  }
  // Processes that exited in between (Postgres backends of finished connections) are not
  // counted: the Postgres figure is a lower bound when connections come and go.
  return { at: Date.now(), busy, total, groups };
}

interface CpuUse {
  seconds: number;
  /** Share of the machine's cores busy (all processes), in %. */
  machineBusy: number;
  /** Per group, % of one core. */
  groups: Record<string, number>;
}

function cpuUse(a: CpuSnapshot | null, b: CpuSnapshot | null): CpuUse | null {
  if (!a || !b || b.at <= a.at) return null;
  const seconds = (b.at - a.at) / 1000;
  const groups: Record<string, number> = {};
  for (const [k, v] of Object.entries(b.groups)) groups[k] = (Math.max(0, v - (a.groups[k] ?? 0)) / TICKS_PER_S / seconds) * 100;
  return { seconds, machineBusy: ((b.busy - a.busy) / Math.max(1, b.total - a.total)) * 100, groups };
}

interface DbStats {
  commits: number;
  rollbacks: number;
  inserted: number;
  updated: number;
  deleted: number;
  fetched: number;
  /** Server-wide (pg_stat_wal): every database on the server, other runs' tests included. */
  walRecords: number;
  walSyncs: number;
}

/** The bench database's counters (pg_stat_database) and the server's WAL counters. */
async function dbStats(): Promise<DbStats | null> {
  try {
    const r = await one<{ c: string; r: string; i: string; u: string; d: string; f: string; wr: string | null; ws: string | null }>(
      `SELECT d.xact_commit AS c, d.xact_rollback AS r, d.tup_inserted AS i, d.tup_updated AS u, d.tup_deleted AS d, d.tup_fetched AS f,
              w.wal_records AS wr, w.wal_sync AS ws
         FROM pg_stat_database d LEFT JOIN pg_stat_wal w ON true WHERE d.datname = current_database()`,
    );
    return {
      commits: Number(r.c),
      rollbacks: Number(r.r),
      inserted: Number(r.i),
      updated: Number(r.u),
      deleted: Number(r.d),
      fetched: Number(r.f),
      walRecords: Number(r.wr ?? Number.NaN),
      walSyncs: Number(r.ws ?? Number.NaN),
    };
  } catch {
    return null;
  }
}

function statsDelta(a: DbStats | null, b: DbStats | null): DbStats | null {
  if (!a || !b) return null;
  return {
    commits: b.commits - a.commits,
    rollbacks: b.rollbacks - a.rollbacks,
    inserted: b.inserted - a.inserted,
    updated: b.updated - a.updated,
    deleted: b.deleted - a.deleted,
    fetched: b.fetched - a.fetched,
    walRecords: b.walRecords - a.walRecords,
    walSyncs: b.walSyncs - a.walSyncs,
  };
}

// ---------------------------------------------------------------------------------------
// What the bench database's backends were doing (pg_stat_activity, sampled)

interface WaitRow {
  state: string;
  wait: string;
  query: string;
  /** Backends in this state per sample, on average over the samples. */
  mean: number;
}

interface WaitProfile {
  samples: number;
  /** Mean backends of the bench database that were not idle. */
  busyMean: number;
  rows: WaitRow[];
}

/**
 * Samples the bench database's non-idle backends every `everyMs` until `stop()`: state,
 * wait event and the statement (or, idle in transaction, the last one), normalised.
 */
function sampleBackends(everyMs: number): { stop: () => Promise<WaitProfile> } {
  const counts = new Map<string, { state: string; wait: string; query: string; n: number }>();
  let samples = 0;
  let busy = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const rows = await all<{ state: string; wait: string; query: string; n: number }>(
          `SELECT state, COALESCE(wait_event_type || ':' || wait_event, '-') AS wait,
                  left(regexp_replace(regexp_replace(query, '\\$[0-9]+(, \\$[0-9]+)*', '…', 'g'), '\\s+', ' ', 'g'), 110) AS query, count(*)::int AS n
             FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND state <> 'idle'
            GROUP BY 1, 2, 3`,
        );
        samples++;
        for (const r of rows) {
          busy += r.n;
          const key = `${r.state}|${r.wait}|${r.query}`;
          const c = counts.get(key) ?? { state: r.state, wait: r.wait, query: r.query, n: 0 };
          c.n += r.n;
          counts.set(key, c);
        }
      } catch {
        // a missed sample
      }
      await sleep(everyMs);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const rows = [...counts.values()]
        .map((c) => ({ state: c.state, wait: c.wait, query: c.query, mean: c.n / Math.max(1, samples) }))
        .sort((a, b) => b.mean - a.mean);
      return { samples, busyMean: busy / Math.max(1, samples), rows };
    },
  };
}

interface RelayCost {
  ms: number;
  summary: string;
}

/**
 * What the relay's query costs now: relayOnce's statement (shared/outbox.ts) under EXPLAIN
 * (ANALYZE, BUFFERS), its time bound as a parameter as knex binds it. Run when nothing is due,
 * so it locks nothing; the transaction only ends the FOR UPDATE.
 */
async function relayCost(): Promise<RelayCost | null> {
  try {
    const db = await benchDb();
    const plan = await db.transaction(async (trx) => {
      const { dueRows } = await import('../shared/outbox.js');
      const q = dueRows(trx, 200).toSQL();
      const r = await trx.raw<{ rows: Record<string, string>[] }>(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, q.bindings as Knex.RawBinding[]);
      return r.rows.map((row) => Object.values(row)[0] ?? '');
    });
    const ms = Number(/Execution Time: ([0-9.]+) ms/.exec(plan.join('\n'))?.[1] ?? Number.NaN);
    const keep = plan
      .map((l) => l.trim().replace(/^->\s*/, ''))
      .filter((l) => /Scan|Rows Removed|Heap Blocks/.test(l))
      .map((l) => l.replace(/\(cost=[^)]*\)\s*/, ''));
    const buffers = plan.find((l) => /Buffers:/.test(l))?.trim();
    return { ms, summary: [...keep, ...(buffers ? [buffers] : [])].map((l) => `\`${l}\``).join('; ') };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------
// Verification

interface Verification {
  payments: { paid: number; pending: number; other: number; flagged: number };
  escrowsPaid: number;
  escrowNotPaid: number;
  journal: { entries: number; escrows: number; maxPerEscrow: number; credits: number };
  events: { total: number; escrows: number; maxPerEscrow: number };
  heldMismatch: number;
  callbacks: { rows: number; orders: number; deliveries: number; unprocessed: number; outcomes: Record<string, number>; byDeliveries: Record<string, number> };
  unprocessedAnywhere: number;
  /** Outbox rows of the notices written since the run began, and callbacks that needed more than one attempt. */
  jobs: { rows: number; batches: number; open: number; dead: number; retried: number };
  notices: Record<string, { rows: number; escrows: number }>;
  ledgerViolations: string[];
  lost: number;
  doubled: number;
  problems: string[];
}

async function verify(orders: readonly SeedOrder[], outboxIdBefore: number, http: AnswerTally): Promise<Verification> {
  const paymentIds = orders.map((o) => o.paymentId);
  const escrowIds = orders.map((o) => o.escrowId);
  const orderIds = orders.map((o) => o.orderId);
  const n = orders.length;

  const p = await one<{ paid: number; pending: number; other: number; flagged: number }>(
    `SELECT count(*) FILTER (WHERE status = 'paid')::int AS paid, count(*) FILTER (WHERE status = 'pending')::int AS pending,
            count(*) FILTER (WHERE status NOT IN ('paid', 'pending'))::int AS other, count(*) FILTER (WHERE flag IS NOT NULL)::int AS flagged
       FROM payments WHERE id = ANY(?::uuid[])`,
    [paymentIds],
  );
  const e = await one<{ paid: number; not_paid: number }>(
    `SELECT count(*) FILTER (WHERE status = 'paid')::int AS paid, count(*) FILTER (WHERE status <> 'paid')::int AS not_paid
       FROM escrows WHERE id = ANY(?::uuid[])`,
    [escrowIds],
  );
  const j = await one<{ entries: number; escrows: number; max_per: number | null }>(
    `SELECT count(*)::int AS entries, count(DISTINCT ref_id)::int AS escrows, max(c)::int AS max_per
       FROM (SELECT ref_id, count(*) OVER (PARTITION BY ref_id) AS c FROM journal_entries
              WHERE kind = 'escrow_payment' AND ref_type = 'escrow' AND ref_id = ANY(?)) x`,
    [escrowIds],
  );
  const credits = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM journal_entries WHERE kind = 'payment_credit' AND ref_type = 'payment' AND ref_id = ANY(?)`,
    [paymentIds],
  );
  const ev = await one<{ total: number; escrows: number; max_per: number | null }>(
    `SELECT count(*)::int AS total, count(DISTINCT escrow_id)::int AS escrows, max(c)::int AS max_per
       FROM (SELECT escrow_id, count(*) OVER (PARTITION BY escrow_id) AS c FROM escrow_events
              WHERE event = 'payment.completed' AND escrow_id = ANY(?::uuid[])) x`,
    [escrowIds],
  );
  const held = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM escrows e LEFT JOIN ledger_accounts a ON a.code = 'escrow:' || e.id::text
      WHERE e.id = ANY(?::uuid[]) AND COALESCE(a.balance, -1) <> e.amount`,
    [escrowIds],
  );
  const cb = await one<{ rows: number; orders: number; deliveries: number; unprocessed: number }>(
    `SELECT count(*)::int AS rows, count(DISTINCT gateway_order_id)::int AS orders, COALESCE(sum(deliveries), 0)::int AS deliveries,
            count(*) FILTER (WHERE processed_at IS NULL)::int AS unprocessed
       FROM payment_callbacks WHERE gateway_order_id = ANY(?)`,
    [orderIds],
  );
  const outcomes = Object.fromEntries(
    (
      await all<{ outcome: string | null; n: number }>(
        `SELECT outcome, count(*)::int AS n FROM payment_callbacks WHERE gateway_order_id = ANY(?) GROUP BY outcome ORDER BY outcome`,
        [orderIds],
      )
    ).map((r) => [r.outcome ?? 'unprocessed', r.n]),
  );
  const byDeliveries = Object.fromEntries(
    (
      await all<{ deliveries: number; n: number }>(
        `SELECT deliveries, count(*)::int AS n FROM payment_callbacks WHERE gateway_order_id = ANY(?) GROUP BY deliveries ORDER BY deliveries`,
        [orderIds],
      )
    ).map((r) => [String(r.deliveries), r.n]),
  );
  const anywhere = await one<{ n: number }>(`SELECT count(*)::int AS n FROM payment_callbacks WHERE processed_at IS NULL`);
  const jobs = await one<{ rows: number; batches: number; open: number; dead: number; retried: number }>(
    `SELECT count(*)::int AS rows, count(*) FILTER (WHERE job = 'notifications.create-batch')::int AS batches,
            count(*) FILTER (WHERE completed_at IS NULL AND dead_at IS NULL)::int AS open,
            count(*) FILTER (WHERE dead_at IS NOT NULL)::int AS dead,
            (SELECT count(*)::int FROM payment_callbacks WHERE gateway_order_id = ANY(?) AND attempts > 0) AS retried
       FROM outbox WHERE id > ? AND job IN ('notifications.create', 'notifications.create-batch')`,
    [orderIds, outboxIdBefore],
  );
  const notices = Object.fromEntries(
    (
      await all<{ type: string; rows: number; escrows: number }>(
        `SELECT type, count(*)::int AS rows, count(DISTINCT metadata->>'escrow_id')::int AS escrows FROM notifications
          WHERE metadata->>'escrow_id' = ANY(?) AND type IN ('payment_success', 'escrow_paid') GROUP BY type ORDER BY type`,
        [escrowIds],
      )
    ).map((r) => [r.type, { rows: r.rows, escrows: r.escrows }]),
  );
  const { checkLedger } = await import('../shared/ledger/index.js');
  const ledgerViolations = (await checkLedger(await benchDb())).map((v) => `${v.rule}: ${v.detail}`);

  const problems: string[] = [];
  const want = (ok: boolean, what: string) => {
    if (!ok) problems.push(what);
  };
  const badAnswers = [...http.bad.values()].reduce((a, b) => a + b, 0);
  want(http.sent === COPIES * n, `sent ${http.sent} callbacks, expected ${COPIES * n}`);
  want(http.ok === COPIES * n && badAnswers === 0, `${http.ok} answers 200 of ${COPIES * n} (${[...http.bad].map(([s, c]) => `${s}×${c}`).join(', ') || 'others unanswered'})`);
  want(http.fresh === n && http.duplicate === (COPIES - 1) * n, `answers said duplicate:false ${http.fresh}, duplicate:true ${http.duplicate} (expected ${n} and ${(COPIES - 1) * n})`);
  want(p.paid === n && p.flagged === 0, `payments: ${p.paid} paid of ${n}, ${p.flagged} flagged`);
  want(e.paid === n, `escrows: ${e.paid} paid of ${n}`);
  want(j.entries === n && j.escrows === n && (j.max_per ?? 0) === 1, `escrow_payment entries: ${j.entries} for ${j.escrows} escrows (max ${j.max_per ?? 0} per escrow)`);
  want(credits.n === 0, `${credits.n} payment_credit entries (money credited to a buyer instead of an escrow)`);
  want(ev.total === n && ev.escrows === n, `payment.completed events: ${ev.total} for ${ev.escrows} escrows`);
  want(held.n === 0, `${held.n} escrows whose ledger account does not hold the escrow amount`);
  want(cb.rows === n && cb.orders === n, `payment_callbacks: ${cb.rows} rows for ${cb.orders} orders (expected one per order)`);
  want(cb.deliveries === COPIES * n, `payment_callbacks count ${cb.deliveries} deliveries, expected ${COPIES * n}`);
  want(cb.unprocessed === 0 && anywhere.n === 0, `unprocessed callbacks: ${cb.unprocessed} of this run, ${anywhere.n} in the database`);
  want((outcomes.paid ?? 0) === n, `callback outcomes ${JSON.stringify(outcomes)}, expected paid × ${n}`);
  want(jobs.open === 0 && jobs.dead === 0, `notice jobs: ${jobs.rows} outbox rows, ${jobs.open} open, ${jobs.dead} dead`);
  for (const type of ['payment_success', 'escrow_paid']) {
    const t = notices[type];
    want(t?.rows === n && t.escrows === n, `${type} notices: ${t?.rows ?? 0} rows for ${t?.escrows ?? 0} escrows, expected ${n}`);
  }
  want(ledgerViolations.length === 0, `checkLedger: ${ledgerViolations.slice(0, 3).join('; ')}`);

  // Lost: a link that did not get paid, or a delivery answered 200 but not recorded.
  const lost = n - p.paid + Math.max(0, Math.min(http.ok, COPIES * n) - cb.deliveries);
  // Doubled: any second effect of one payment.
  const doubled =
    Math.max(0, j.entries - j.escrows) +
    Math.max(0, ev.total - ev.escrows) +
    Math.max(0, cb.rows - cb.orders) +
    credits.n +
    p.flagged +
    Object.values(notices).reduce((a, t) => a + Math.max(0, t.rows - t.escrows), 0) +
    Math.max(0, http.fresh - n);
  return {
    payments: p,
    escrowsPaid: e.paid,
    escrowNotPaid: e.not_paid,
    journal: { entries: j.entries, escrows: j.escrows, maxPerEscrow: j.max_per ?? 0, credits: credits.n },
    events: { total: ev.total, escrows: ev.escrows, maxPerEscrow: ev.max_per ?? 0 },
    heldMismatch: held.n,
    callbacks: { ...cb, outcomes, byDeliveries },
    unprocessedAnywhere: anywhere.n,
    jobs,
    notices,
    ledgerViolations,
    lost,
    doubled,
    problems,
  };
}

interface Timing {
  firstReceived: Date;
  lastReceived: Date;
  firstPaid: Date;
  lastPaid: Date;
  latency: { p50: number; p90: number; p99: number; max: number };
}

async function timing(orders: readonly SeedOrder[]): Promise<Timing> {
  const orderIds = orders.map((o) => o.orderId);
  const r = await one<{
    first_received: Date;
    last_received: Date;
    first_paid: Date;
    last_paid: Date;
    p50: number;
    p90: number;
    p99: number;
    max: number;
  }>(
    `SELECT min(c.received_at) AS first_received, max(c.received_at) AS last_received, min(p.paid_at) AS first_paid, max(p.paid_at) AS last_paid,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) AS p90,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99, max(ms) AS max
       FROM payments p
       JOIN payment_callbacks c ON c.gateway_order_id = p.gateway_order_id AND c.source = 'callback'
       CROSS JOIN LATERAL (SELECT (extract(epoch FROM p.paid_at - c.received_at) * 1000)::float8 AS ms) l
      WHERE p.gateway_order_id = ANY(?)`,
    [orderIds],
  );
  return {
    firstReceived: new Date(r.first_received),
    lastReceived: new Date(r.last_received),
    firstPaid: new Date(r.first_paid),
    lastPaid: new Date(r.last_paid),
    latency: { p50: Number(r.p50), p90: Number(r.p90), p99: Number(r.p99), max: Number(r.max) },
  };
}

// ---------------------------------------------------------------------------------------
// pgbench

interface PgbenchResult {
  binary: string;
  version: string;
  database: string;
  initSeconds: number;
  seconds: number;
  tps: number;
  transactions: number;
  failed: number;
  latencyMs: number;
  loadStart: string;
  loadEnd: string;
  cpu: CpuUse | null;
}

function findPgbench(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, 'pgbench'))) return path.join(dir, 'pgbench');
  }
  const base = '/usr/lib/postgresql';
  try {
    const versions = readdirSync(base)
      .filter((v) => existsSync(path.join(base, v, 'bin', 'pgbench')))
      .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    if (versions[0]) return path.join(base, versions[0], 'bin', 'pgbench');
  } catch {
    // no /usr/lib/postgresql
  }
  return null;
}

/** libpq environment for the scratch database on the bench's Postgres server. */
/** The database URL bench/run.sh set (the bench database), before main() points DATABASE_URL at this bench's own. */
const RUN_DATABASE_URL = process.env.DATABASE_URL ?? '';

/** `url` with another database name. */
function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

const databaseName = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

function scratchDatabase(): { url: string; name: string; env: NodeJS.ProcessEnv } {
  const u = new URL(RUN_DATABASE_URL);
  const name = `${databaseName(RUN_DATABASE_URL)}_pgbench`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PGHOST: u.hostname,
    PGPORT: u.port || '5432',
    PGDATABASE: name,
  };
  if (u.username) env.PGUSER = decodeURIComponent(u.username);
  if (u.password) env.PGPASSWORD = decodeURIComponent(u.password);
  const sslmode = u.searchParams.get('sslmode');
  if (sslmode) env.PGSSLMODE = sslmode;
  return { url: withDatabase(RUN_DATABASE_URL, name), name, env };
}

async function runPgbench(binary: string, seconds: number): Promise<PgbenchResult> {
  const scratch = scratchDatabase();
  await runToCompletion('ensure-db (pgbench scratch database)', ['--import', 'tsx', 'scripts/ensure-db.ts', scratch.url], process.env);
  const { stdout: versionOut } = await execFileP(binary, ['--version'], { env: scratch.env });
  console.log(`bench: pgbench: initialising ${scratch.name} at scale ${PGBENCH_SCALE} (${binary})`);
  const t0 = Date.now();
  await execFileP(binary, ['-i', '-q', '-s', String(PGBENCH_SCALE)], { env: scratch.env, maxBuffer: 16 << 20, timeout: 600_000 });
  const initSeconds = (Date.now() - t0) / 1000;
  const args = ['-b', 'tpcb-like', '-c', String(CONNECTIONS), '-j', String(PGBENCH_THREADS), '-T', String(seconds)];
  console.log(`bench: pgbench ${args.join(' ')}`);
  const loadStart = loadavg();
  // pgbench's backends live only as long as its run: CPU is read inside the run, from 1.5 s
  // after the start (connections made) to 1 s before the end.
  const running = execFileP(binary, args, { env: scratch.env, maxBuffer: 16 << 20, timeout: (seconds + 120) * 1000 });
  running.catch(() => undefined); // awaited below; this only keeps an early failure from being "unhandled" meanwhile
  let cpu: CpuUse | null = null;
  if (seconds >= 5) {
    await sleep(1500);
    const a = cpuSnapshot({});
    await sleep((seconds - 2.5) * 1000);
    cpu = cpuUse(a, cpuSnapshot({}));
  }
  const { stdout } = await running;
  const loadEnd = loadavg();
  const num = (re: RegExp) => {
    const m = re.exec(stdout);
    return m ? Number(m[1]) : Number.NaN;
  };
  const tps = num(/^tps = ([0-9.]+)/m);
  if (!Number.isFinite(tps)) throw new Error(`pgbench printed no tps:\n${stdout}`);
  const failed = num(/^number of failed transactions: (\d+)/m);
  return {
    binary,
    version: versionOut.trim(),
    database: scratch.name,
    initSeconds,
    seconds,
    tps,
    transactions: num(/^number of transactions actually processed: (\d+)/m),
    failed: Number.isFinite(failed) ? failed : 0,
    latencyMs: num(/^latency average = ([0-9.]+) ms/m),
    loadStart,
    loadEnd,
    cpu,
  };
}

// ---------------------------------------------------------------------------------------
// Reporting

interface BacklogRun {
  n: number;
  unpaidBefore: number;
  storeSeconds: number;
  /** First to last payment paid. */
  seconds: number;
  rate: number;
  cpu: CpuUse | null;
  verification: Verification;
}

interface RunInfo {
  backlog: BacklogRun | null;
  seed: PaymentSeed;
  warmupSeconds: number;
  load: LoadResult;
  paidAtIngestEnd: number;
  timing: Timing;
  drainedMs: number;
  verification: Verification;
  pgbench: PgbenchResult | null;
  pgbenchMissing: string | null;
  pgbenchError: string | null;
  loadavgs: { before: string; loadStart: string; loadEnd: string };
  phases: Phase[];
  stats: DbStats | null;
  relay: { before: RelayCost | null; after: RelayCost | null };
  database: string;
  waits: WaitProfile;
  startedAt: Date;
  workerConcurrency: string;
}

/** One phase of the measured window: its reconciliation rate and who used the CPU. */
interface Phase {
  label: string;
  paid: number;
  cpu: CpuUse | null;
}

function cpuText(cpu: CpuUse): string {
  const g = (k: string) => fmtPct(cpu.groups[k] ?? 0);
  const known = ['api', 'worker', 'postgres', 'redis', 'bench'].reduce((a, k) => a + (cpu.groups[k] ?? 0), 0);
  const others = Math.max(0, (cpu.machineBusy / 100) * os.cpus().length * 100 - known);
  return (
    `API ${g('api')}, worker ${g('worker')}, Postgres ${g('postgres')}, Redis ${g('redis')}, autocannon ${g('bench')}, ` +
    `everything else ${fmtPct(others)}; the ${os.cpus().length} cores ${fmtPct(cpu.machineBusy)} busy`
  );
}

/** Core-milliseconds of `groups` per unit of work over a measured span. */
function cpuMsPer(cpu: CpuUse, groups: string[], units: number): number {
  const pct = groups.reduce((a, k) => a + (cpu.groups[k] ?? 0), 0);
  return ((pct / 100) * cpu.seconds * 1000) / units;
}

function cpuCostLine(whole: CpuUse | null, payments: number, pg: PgbenchResult | null): string {
  if (!whole) return '- CPU per unit of work: not measured (no /proc).';
  const service = cpuMsPer(whole, ['api', 'worker', 'postgres', 'redis'], payments);
  const pgOnly = cpuMsPer(whole, ['postgres'], payments);
  let text =
    `- CPU per payment over the whole window (the service's processes: API, worker, Postgres, Redis; not autocannon): ` +
    `${service.toFixed(2)} core-ms, of which Postgres ${pgOnly.toFixed(2)} core-ms.`;
  if (pg?.cpu) {
    // Rate-based: Postgres's cores over pgbench's transactions per second.
    const perTx = (((pg.cpu.groups.postgres ?? 0) / 100) * 1000) / pg.tps;
    text +=
      ` pgbench's run (read from 1.5 s after its start to 1 s before its end): the cores ${fmtPct(pg.cpu.machineBusy)} busy, Postgres ${fmtPct(pg.cpu.groups.postgres ?? 0)} and the pgbench client ` +
      `${fmtPct(pg.cpu.groups.pgbench ?? 0)} of one core: ${perTx.toFixed(2)} core-ms of Postgres per transaction. ` +
      `One payment costs the machine as much CPU as about ${fmtInt(service / perTx)} pgbench transactions ` +
      `(its Postgres work alone, ${fmtInt(pgOnly / perTx)}); at equal CPU, 25% of pgbench's rate allows 4.`;
  }
  return text;
}

function cpuLines(phases: Phase[]): string[] {
  if (phases.some((p) => !p.cpu)) return ['- CPU: not measured (no /proc).'];
  return [
    `- By phase (CPU from /proc, in % of one core; Postgres is every backend of the server, other databases' too):`,
    ...phases.map(
      (p) =>
        `  - ${p.label} (${fmt1(p.cpu!.seconds)} s): ${fmtInt(p.paid)} payments paid, ${fmtInt(p.paid / p.cpu!.seconds)}/s; ${cpuText(p.cpu!)}.`,
    ),
  ];
}

function relayLine(r: { before: RelayCost | null; after: RelayCost | null }): string {
  const one = (c: RelayCost | null) => (c ? `${fmt1(c.ms)} ms (${c.summary})` : 'not measured');
  return (
    `- The outbox relay's query (\`relayOnce\`: due, unrelayed rows in \`(available_at, id)\` order, \`LIMIT 200 FOR UPDATE SKIP LOCKED\`; EXPLAIN ANALYZE with nothing due) ` +
    `before the measured callbacks: ${one(r.before)}; after the run: ${one(r.after)}.`
  );
}

function statsLine(st: DbStats | null, n: number, copies: number): string {
  if (!st) return '- Database counters: not read.';
  const per = (x: number) => (x / n).toFixed(1);
  return (
    `- Database work per payment, from the first callback until the outbox was drained (\`pg_stat_database\` of the bench database; ` +
    `each payment is ${copies} deliveries, its share of a reconciliation batch and its two notices; the bench's own polling, one query every ${POLL_MS} ms, included): ${per(st.commits)} commits, ${per(st.inserted)} rows inserted, ` +
    `${per(st.updated)} updated, ${per(st.fetched)} fetched; ${fmtInt(st.rollbacks)} rollbacks in all. ` +
    (Number.isFinite(st.walSyncs) ? `WAL (server-wide, \`pg_stat_wal\`): ${per(st.walRecords)} records and ${per(st.walSyncs)} syncs per payment.` : '')
  );
}

function waitTable(w: WaitProfile, top = 10): string[] {
  if (w.samples === 0) return ['No sample of `pg_stat_activity` was taken.'];
  const esc = (q: string) => q.replace(/\|/g, '\\|').replace(/`/g, "'");
  return [
    `What the bench database's client backends were doing from the first callback until every payment was paid ` +
      `(\`pg_stat_activity\` sampled every 100 ms, ${fmtInt(w.samples)} samples; on average ${fmt1(w.busyMean)} backends were not idle; ` +
      `the ${top} most frequent states):`,
    '',
    '| Backends (mean) | State | Wait event | Statement (the last one, when idle in transaction) |',
    '|---:|---|---|---|',
    ...w.rows.slice(0, top).map((r) => `| ${r.mean.toFixed(2)} | ${r.state} | ${r.wait} | \`${esc(r.query)}\` |`),
  ];
}

function report(info: RunInfo): { markdown: string; ingestRate: number; reconRate: number; share: number | null } {
  const n = info.seed.orders.length;
  const requests = COPIES * n;
  const ingestSeconds = (info.load.endedAt - info.load.startedAt) / 1000;
  const ingestRate = requests / ingestSeconds;
  const windowSeconds = (info.timing.lastPaid.getTime() - info.timing.firstReceived.getTime()) / 1000;
  const reconRate = n / windowSeconds;
  const pg = info.pgbench;
  const share = pg ? reconRate / pg.tps : null;
  const v = info.verification;
  const r = info.load.result;
  const cpus = os.cpus();
  const pgRow = pg
    ? `| pgbench \`tpcb-like\`, ${CONNECTIONS} clients, \`-j ${PGBENCH_THREADS}\`, ${pg.seconds} s, scale ${PGBENCH_SCALE} | ${fmtInt(pg.tps)} transactions/s | latency average ${fmt1(pg.latencyMs)} ms, ${fmtInt(pg.transactions)} transactions, ${fmtInt(pg.failed)} failed |`
    : `| pgbench | not run | ${info.pgbenchMissing ?? info.pgbenchError ?? 'unknown'} |`;
  const verdictOf = (x: number) => (x >= TARGET_SHARE ? `target ≥ ${fmtPct(TARGET_SHARE * 100)}: **met**` : `target ≥ ${fmtPct(TARGET_SHARE * 100)}: **not met**`);
  const verdict = share === null ? 'no pgbench figure to compare with' : verdictOf(share);
  const b = info.backlog;
  const lines = [
    `Measured ${info.startedAt.toISOString().replace(/\.\d+Z$/, 'Z')} on commit ${gitRevision()}. ` +
      `Load average (1, 5, 15 min) before seeding: ${info.loadavgs.before}; when the callbacks started: ${info.loadavgs.loadStart}; ` +
      `when they ended: ${info.loadavgs.loadEnd}` +
      (pg ? `; when pgbench started: ${pg.loadStart}; when it ended: ${pg.loadEnd}.` : '.'),
    '',
    '| Figure | Value | |',
    '|---|---:|---|',
    pgRow,
    `| Callback ingestion, \`POST ${INBOUND}\` (HTTP) | ${fmtInt(ingestRate)} requests/s | ${fmtInt(requests)} signed callbacks (${fmtInt(n)} orders × ${COPIES}) in ${fmt1(ingestSeconds)} s, ${CONNECTIONS} connections; p50 ${fmtMs(r.latency.p50)} ms, p99 ${fmtMs(r.latency.p99)} ms |`,
    `| End-to-end reconciliation (API + outbox relay + worker) | ${fmtInt(reconRate)} payments/s | ${fmtInt(n)} payments paid in ${fmt1(windowSeconds)} s, first callback received → last payment paid |`,
    `| Reconciliations ÷ pgbench TPS | **${share === null ? 'n/a' : fmtPct(share * 100)}** | ${verdict} |`,
    `| Ingestion ÷ pgbench TPS | **${pg ? fmtPct((ingestRate / pg.tps) * 100) : 'n/a'}** | ${pg ? verdictOf(ingestRate / pg.tps) : ''} |`,
    ...(b
      ? [
          `| Backlog reconciliation (worker alone, API idle) | ${fmtInt(b.rate)} payments/s | ${fmtInt(b.n)} stored callbacks (${fmtInt(b.unpaidBefore)} unpaid when the worker started), first to last payment paid in ${fmt1(b.seconds)} s |`,
          `| Backlog reconciliation ÷ pgbench TPS | **${pg ? fmtPct((b.rate / pg.tps) * 100) : 'n/a'}** | ${pg ? verdictOf(b.rate / pg.tps) : ''} |`,
          `| Backlog: lost / doubled | **${b.verification.lost} / ${b.verification.doubled}** | ${b.verification.problems.length === 0 ? 'every check passed' : `**${b.verification.problems.length} check(s) failed**: ${b.verification.problems.join('; ')}`} |`,
        ]
      : []),
    `| Callbacks lost / doubled | **${v.lost} / ${v.doubled}** | ${v.problems.length === 0 ? 'every check below passed' : `**${v.problems.length} check(s) failed**: ${v.problems.join('; ')}`} |`,
    '',
    `- Callback → paid latency per payment (first delivery's \`received_at\` → \`paid_at\`): p50 ${fmtMs(info.timing.latency.p50)} ms, ` +
      `p90 ${fmtMs(info.timing.latency.p90)} ms, p99 ${fmtMs(info.timing.latency.p99)} ms, max ${fmtMs(info.timing.latency.max)} ms. ` +
      `When the last callback was answered, ${fmtInt(info.paidAtIngestEnd)} of ${fmtInt(n)} payments were paid; the last one was paid ` +
      `${fmt1((info.timing.lastPaid.getTime() - info.load.endedAt) / 1000)} s after that. The notices (two per payment, in \`notifications.create-batch\` jobs) were all written ${fmt1(info.drainedMs / 1000)} s after the last payment.`,
    `- HTTP: ${fmtInt(info.load.tally.ok)} answers 200 of ${fmtInt(requests)} sent (${r.errors} errors, ${r.timeouts} timeouts); ` +
      `${fmtInt(info.load.tally.fresh)} said \`duplicate: false\` and ${fmtInt(info.load.tally.duplicate)} \`duplicate: true\`. ` +
      `The two copies of an order are the same bytes; orders go in blocks of ${CONNECTIONS}, each block's first copies then its second copies.`,
    `- Checked after the run, for the ${fmtInt(n)} measured orders: payments ${fmtInt(v.payments.paid)} paid, ${v.payments.pending} pending, ` +
      `${v.payments.flagged} flagged; escrows ${fmtInt(v.escrowsPaid)} paid; \`escrow_payment\` journal entries ${fmtInt(v.journal.entries)} for ` +
      `${fmtInt(v.journal.escrows)} escrows (at most ${v.journal.maxPerEscrow} per escrow), ${v.journal.credits} \`payment_credit\`; ` +
      `\`payment.completed\` events ${fmtInt(v.events.total)}; escrow accounts not holding the escrow amount: ${v.heldMismatch}; ` +
      `\`payment_callbacks\` ${fmtInt(v.callbacks.rows)} rows for ${fmtInt(v.callbacks.orders)} orders counting ${fmtInt(v.callbacks.deliveries)} deliveries ` +
      `(rows by deliveries: ${Object.entries(v.callbacks.byDeliveries).map(([d, c]) => `${d}×${fmtInt(c)}`).join(', ')}), outcomes ` +
      `${Object.entries(v.callbacks.outcomes).map(([o, c]) => `${o} ${fmtInt(c)}`).join(', ')}; unprocessed callbacks in the whole database: ` +
      `${v.unprocessedAnywhere}; callbacks that needed a second attempt: ${fmtInt(v.jobs.retried)}; notice jobs in the outbox ${fmtInt(v.jobs.rows)} ` +
      `(${fmtInt(v.jobs.batches)} \`notifications.create-batch\`), ${v.jobs.open} open, ${v.jobs.dead} dead; notices ${Object.entries(v.notices).map(([t, c]) => `${t} ${fmtInt(c.rows)} for ${fmtInt(c.escrows)} escrows`).join(', ')}; ` +
      `\`checkLedger\`: ${v.ledgerViolations.length === 0 ? 'no violation' : v.ledgerViolations.slice(0, 3).join('; ')}.`,
    ...cpuLines(info.phases),
    ...(b
      ? [
          `- Backlog run: ${fmtInt(b.n)} orders' callbacks (× ${COPIES}) stored by the API in ${fmt1(b.storeSeconds)} s with the worker stopped, then a new worker started; ` +
            (b.cpu ? `CPU from its start until every backlog link was paid: ${cpuText(b.cpu)}. ` : '') +
            `Checked like the measured run: payments ${fmtInt(b.verification.payments.paid)} paid, ${b.verification.payments.flagged} flagged; ` +
            `\`escrow_payment\` entries ${fmtInt(b.verification.journal.entries)} for ${fmtInt(b.verification.journal.escrows)} escrows; notices ` +
            `${Object.entries(b.verification.notices).map(([t, c]) => `${t} ${fmtInt(c.rows)}`).join(', ')}; \`checkLedger\`: ${b.verification.ledgerViolations.length === 0 ? 'no violation' : b.verification.ledgerViolations.slice(0, 3).join('; ')}.`,
        ]
      : []),
    cpuCostLine(info.phases[info.phases.length - 1]?.cpu ?? null, n, info.pgbench),
    statsLine(info.stats, n, COPIES),
    relayLine(info.relay),
    `- Lost = links not paid + deliveries answered 200 but not counted in \`payment_callbacks\`; doubled = extra journal entries, ` +
      `events, callback rows or notices for one payment, money credited to a buyer instead, or more than one \`duplicate: false\` per order.`,
    `- Seeded ${fmtInt(info.seed.warmup.length + n + (info.backlog?.n ?? 0))} escrows with a pending sandbox link in ${fmt1(info.seed.seconds)} s ` +
      `(\`createDirect\` + \`pay()\`, ${info.seed.users} users, sandbox gateway row ${info.seed.gateway})` +
      ` in the bench's own database \`${info.database}\` (Redis db 14, queue prefix \`${QUEUE_PREFIX}\`), after purging the outbox rows of earlier runs ` +
      `(${fmtInt(info.seed.purged.completed)} completed rows, as the sweeper would after its 7-day retention, and ${fmtInt(info.seed.purged.timers)} expiry timers of paid escrows), ` +
      `then \`VACUUM (ANALYZE)\` of the tables the pipeline writes ` +
      `(${fmt1(info.seed.vacuumSeconds)} s; autovacuum is off on this server). Warm-up: ${fmtInt(info.seed.warmup.length)} orders' callbacks the same way, and the seed's escrow notices, drained in ${fmt1(info.warmupSeconds)} s before the measured run.`,
    `- API: \`node dist/api/server.js\`; worker: \`node dist/workers/index.js\` (every queue, the outbox relay, the schedules; ` +
      `WORKER_CONCURRENCY ${info.workerConcurrency} per queue, OUTBOX_POLL_MS default); both \`NODE_ENV=development\`, \`SANDBOX_MODE=1\`, ` +
      `\`LOG_LEVEL=${LOG_LEVEL}\`, stdout to /dev/null, the database pool default (10 each). ` +
      (pg
        ? `pgbench: \`${path.basename(pg.binary)}\` (${pg.version}), scratch database \`${pg.database}\` initialised with \`-i -s ${PGBENCH_SCALE}\` in ${fmt1(pg.initSeconds)} s, run after the API and the worker stopped, for the reconciliation window in whole seconds, at least 30 s${PGBENCH_DURATION ? ' (overridden by BENCH_PGBENCH_DURATION)' : ''}.`
        : `pgbench: ${info.pgbenchMissing ?? info.pgbenchError}.`),
    `- Node ${process.version}, ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} logical cores ` +
      '(nothing pinned: the API, the worker, Postgres, Redis, autocannon and pgbench all share the cores), ' +
      `${os.platform()} ${os.release()}.`,
  ];
  lines.push('', ...waitTable(info.waits));
  return { markdown: lines.join('\n'), ingestRate, reconRate, share };
}

// ---------------------------------------------------------------------------------------

async function seedPayments(env: NodeJS.ProcessEnv): Promise<PaymentSeed> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'escrow-bench-'));
  try {
    const file = path.join(dir, 'seed.json');
    const args = ['--import', 'tsx', 'bench/seed-payments.ts', file, String(USERS), String(WARMUP_ORDERS), String(ORDERS + BACKLOG_ORDERS)];
    await runToCompletion('seed (bench/seed-payments.ts)', args, env, 600_000);
    const seed = JSON.parse(await readFile(file, 'utf8')) as PaymentSeed;
    if (seed.orders.length !== ORDERS + BACKLOG_ORDERS || seed.warmup.length !== WARMUP_ORDERS) throw new Error('seed wrote fewer orders than asked');
    return seed;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Nothing is pinned in this bench: its subject is a pipeline of processes (API, relay and
 * worker, Postgres, Redis) against Postgres alone, so every process gets both cores, as
 * pgbench's Postgres does. bench/procs.ts pins this process to core 0 when it is imported
 * (for the single-server benches); that is undone here, before any child inherits it.
 */
function unpin(): void {
  if (!PINNED) return;
  execFileSync('taskset', ['-cp', `0-${os.cpus().length - 1}`, String(process.pid)], { stdio: 'ignore' });
}

async function main(): Promise<void> {
  unpin();
  const startedAt = new Date();
  const before = loadavg();
  if (!RUN_DATABASE_URL || !process.env.REDIS_URL) {
    throw new Error('DATABASE_URL and REDIS_URL must be set; run `npm run bench:payments` (bench/run.sh) instead');
  }
  // This bench's own database beside the bench database, created and migrated here: the
  // bench database holds the outbox backlog of runs that start no worker (bench/escrows.ts),
  // which the relay would work through, in id order, ahead of this run's jobs.
  const payDb = `${databaseName(RUN_DATABASE_URL)}_payments`;
  const payUrl = withDatabase(RUN_DATABASE_URL, payDb);
  await runToCompletion('ensure-db (payments bench database)', ['--import', 'tsx', 'scripts/ensure-db.ts', payUrl], process.env);
  await runToCompletion('migrate (payments bench database)', ['--import', 'tsx', 'scripts/migrate.ts'], { ...process.env, DATABASE_URL: payUrl });
  // Before anything loads shared/config: the bench's own queries, the seed, the API and the worker all use it.
  process.env.DATABASE_URL = payUrl;
  process.env.QUEUE_PREFIX = QUEUE_PREFIX;
  const { sandboxSignature } = await import('../shared/payments/gateways/sandbox.js');
  const secret = `bench-sandbox-${randomBytes(16).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST,
    NODE_ENV: 'development',
    SANDBOX_MODE: '1',
    SANDBOX_GATEWAY_SECRET: secret,
    LOG_LEVEL,
  };
  if (WORKER_CONCURRENCY !== null) env.WORKER_CONCURRENCY = String(WORKER_CONCURRENCY);
  const workerConcurrency = env.WORKER_CONCURRENCY ?? '5 (default)';
  console.log(`bench: payments: ${ORDERS} orders × ${COPIES} callbacks, ${WARMUP_ORDERS} warm-up orders, ${CONNECTIONS} connections; load average ${before}`);

  const pgbenchBinary = findPgbench();
  const pgbenchMissing = pgbenchBinary ? null : 'pgbench was not found on PATH nor under /usr/lib/postgresql/*/bin; no TPS to compare with';
  if (!pgbenchBinary) console.log(`bench: ${pgbenchMissing}`);

  const seed = await seedPayments(env);
  // The first ORDERS are the measured run; the rest the backlog run.
  const backlog = seed.orders.splice(ORDERS);

  const port = await freePort();
  const prof = (name: string) => (CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`, `--cpu-prof-name=${name}.cpuprofile`] : []);
  const api = startChild('API (node dist/api/server.js)', [...prof('api'), 'dist/api/server.js'], { ...env, PORT: String(port), PUBLIC_BASE_URL: `http://${HOST}:${port}` }, { pin: false });
  const worker = startChild('worker (node dist/workers/index.js)', [...prof('worker'), 'dist/workers/index.js'], { ...env, PUBLIC_BASE_URL: `http://${HOST}:${port}` }, { pin: false });
  const children = [api, worker];
  const base = `http://${HOST}:${port}`;
  await waitFor(`${base}/readyz`, api, 30_000);
  console.log(`bench: API on ${base}, worker started`);

  // Warm-up: the same path with other orders; then everything of the seed drained.
  const w0 = Date.now();
  if (seed.warmup.length > 0) {
    const wl = await sendCallbacks(base, callbackSequence(seed.warmup, sandboxSignature, secret, CONNECTIONS), CONNECTIONS);
    if (wl.tally.ok !== wl.tally.sent || wl.tally.sent !== COPIES * seed.warmup.length) {
      throw new Error(`warm-up: ${wl.tally.ok} of ${wl.tally.sent} callbacks answered 200 (${[...wl.tally.bad].map(([s, c]) => `${s}×${c}`).join(', ')})`);
    }
    console.log(`bench: warm-up: ${COPIES * seed.warmup.length} callbacks in ${((wl.endedAt - wl.startedAt) / 1000).toFixed(1)} s`);
  }
  await waitUntil('warm-up reconciliation', children, 300_000, async () => (await pendingOf(seed.orders)) === ORDERS && (await pendingOf(backlog)) === BACKLOG_ORDERS);
  await waitUntil('outbox drain before the measured run', children, 300_000, async () => (await openOutbox(seed.outboxIdBefore)) === 0);
  const warmupSeconds = (Date.now() - w0) / 1000;
  console.log(`bench: warm-up done in ${warmupSeconds.toFixed(1)} s; ${ORDERS} links pending`);

  // Measured run.
  const relayBefore = await relayCost();
  const seq = callbackSequence(seed.orders, sandboxSignature, secret, CONNECTIONS);
  const loadStart = loadavg();
  const pids = { api: api.proc.pid, worker: worker.proc.pid, bench: process.pid };
  const cpuAtStart = cpuSnapshot(pids);
  const statsAtStart = await dbStats();
  const sampler = sampleBackends(100);
  let finished = false;
  const loadPromise = sendCallbacks(base, seq, CONNECTIONS).finally(() => {
    finished = true;
  });
  let lastLog = Date.now();
  while (!finished) {
    await Promise.race([loadPromise, sleep(1000)]);
    assertAlive(children);
    if (!finished && Date.now() - lastLog >= 5000) {
      lastLog = Date.now();
      console.log(`bench: ${ORDERS - (await pendingOf(seed.orders))} of ${ORDERS} paid so far`);
    }
  }
  const load = await loadPromise;
  const cpuAtIngestEnd = cpuSnapshot(pids);
  const paidWhenIngestEnded = ORDERS - (await pendingOf(seed.orders));
  const loadEnd = loadavg();
  console.log(
    `bench: ${load.tally.sent} callbacks sent in ${((load.endedAt - load.startedAt) / 1000).toFixed(1)} s ` +
      `(${load.tally.ok} answered 200)`,
  );
  await waitUntil('reconciliation of every measured payment', children, SETTLE_TIMEOUT_S * 1000, async () => (await pendingOf(seed.orders)) === 0).catch(
    (err: unknown) => console.error(`bench: ${err instanceof Error ? err.message : String(err)}`),
  );
  const cpuAtAllPaid = cpuSnapshot(pids);
  const paidAtEnd = ORDERS - (await pendingOf(seed.orders));
  const phases: Phase[] = [
    { label: 'While the callbacks came in (until autocannon returned)', paid: paidWhenIngestEnded, cpu: cpuUse(cpuAtStart, cpuAtIngestEnd) },
    { label: 'After, the worker catching up with the API idle', paid: paidAtEnd - paidWhenIngestEnded, cpu: cpuUse(cpuAtIngestEnd, cpuAtAllPaid) },
    { label: 'Whole window', paid: paidAtEnd, cpu: cpuUse(cpuAtStart, cpuAtAllPaid) },
  ];
  const waits = await sampler.stop();
  await waitUntil('outbox drain after the measured run', children, SETTLE_TIMEOUT_S * 1000, async () => (await openOutbox(seed.outboxIdBefore)) === 0).catch(
    (err: unknown) => console.error(`bench: ${err instanceof Error ? err.message : String(err)}`),
  );
  const drainedAt = Date.now();
  const relayAfter = await relayCost();
  await sleep(1500); // backends report their counters at most once a second
  const stats = statsDelta(statsAtStart, await dbStats());
  const t = await timing(seed.orders);
  const { n: paidAtIngestEnd } = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM payments WHERE id = ANY(?::uuid[]) AND paid_at <= to_timestamp(?::float8 / 1000)`,
    [seed.orders.map((o) => o.paymentId), load.endedAt],
  );
  const drainedMs = drainedAt - t.lastPaid.getTime();
  const verification = await verify(seed.orders, seed.outboxIdBefore, load.tally);
  console.log(`bench: verified: lost ${verification.lost}, doubled ${verification.doubled}, ${verification.problems.length} failed checks`);
  for (const p of verification.problems) console.error(`bench: check failed: ${p}`);

  // Backlog run: the worker stopped, the backlog's callbacks stored by the API, then a new
  // worker reconciles them alone (the API idle): the worker's own reconciliation rate.
  let backlogRun: BacklogRun | null = null;
  await stopChild(worker, 35_000);
  if (backlog.length > 0) {
    const stored = await sendCallbacks(base, callbackSequence(backlog, sandboxSignature, secret, CONNECTIONS), CONNECTIONS);
    console.log(`bench: backlog: ${stored.tally.sent} callbacks stored in ${((stored.endedAt - stored.startedAt) / 1000).toFixed(1)} s with the worker stopped`);
    const unpaidBefore = await pendingOf(backlog);
    const worker2 = startChild('worker, backlog run (node dist/workers/index.js)', [...prof('worker-backlog'), 'dist/workers/index.js'], { ...env, PUBLIC_BASE_URL: `http://${HOST}:${port}` }, { pin: false });
    const pids2 = { api: api.proc.pid, worker: worker2.proc.pid, bench: process.pid };
    const cpu0 = cpuSnapshot(pids2);
    await waitUntil('reconciliation of the backlog', [api, worker2], SETTLE_TIMEOUT_S * 1000, async () => (await pendingOf(backlog)) === 0).catch((err: unknown) =>
      console.error(`bench: ${err instanceof Error ? err.message : String(err)}`),
    );
    const cpu1 = cpuSnapshot(pids2);
    await waitUntil('outbox drain after the backlog run', [api, worker2], SETTLE_TIMEOUT_S * 1000, async () => (await openOutbox(seed.outboxIdBefore)) === 0).catch(
      (err: unknown) => console.error(`bench: ${err instanceof Error ? err.message : String(err)}`),
    );
    const spread = await one<{ first_paid: Date; last_paid: Date; in_first: number; paid: number }>(
      `SELECT min(paid_at) AS first_paid, max(paid_at) AS last_paid, count(*) FILTER (WHERE status = 'paid')::int AS paid,
              count(*) FILTER (WHERE paid_at = (SELECT min(paid_at) FROM payments WHERE id = ANY(?::uuid[])))::int AS in_first
         FROM payments WHERE id = ANY(?::uuid[])`,
      [backlog.map((o) => o.paymentId), backlog.map((o) => o.paymentId)],
    );
    const verification = await verify(backlog, seed.outboxIdBefore, stored.tally);
    console.log(`bench: backlog verified: lost ${verification.lost}, doubled ${verification.doubled}, ${verification.problems.length} failed checks`);
    for (const p of verification.problems) console.error(`bench: backlog check failed: ${p}`);
    const seconds = (spread.last_paid.getTime() - spread.first_paid.getTime()) / 1000;
    backlogRun = {
      n: backlog.length,
      unpaidBefore,
      storeSeconds: (stored.endedAt - stored.startedAt) / 1000,
      seconds,
      // The first batch's payments share one paid_at: the rate counts those paid after it.
      rate: seconds > 0 ? (spread.paid - spread.in_first) / seconds : Number.NaN,
      cpu: cpuUse(cpu0, cpu1),
      verification,
    };
    await stopChild(worker2, 35_000);
  }
  await stopChild(api);

  let pgbench: PgbenchResult | null = null;
  let pgbenchError: string | null = null;
  if (pgbenchBinary) {
    const windowSeconds = (t.lastPaid.getTime() - t.firstReceived.getTime()) / 1000;
    // At least 30 s: a steadier rate than a run as short as the window.
    const seconds = PGBENCH_DURATION ?? Math.max(30, Math.round(windowSeconds));
    try {
      pgbench = await runPgbench(pgbenchBinary, seconds);
      console.log(`bench: pgbench: ${pgbench.tps.toFixed(1)} tps over ${seconds} s`);
    } catch (err) {
      pgbenchError = `pgbench failed: ${err instanceof Error ? err.message.split('\n').slice(0, 4).join(' ') : String(err)}`;
      console.error(`bench: ${pgbenchError}`);
    }
  }

  const { markdown, ingestRate, reconRate, share } = report({
    backlog: backlogRun,
    seed,
    warmupSeconds,
    load,
    paidAtIngestEnd,
    timing: t,
    drainedMs,
    verification,
    pgbench,
    pgbenchMissing,
    pgbenchError,
    loadavgs: { before, loadStart, loadEnd },
    phases,
    stats,
    relay: { before: relayBefore, after: relayAfter },
    database: payDb,
    waits,
    startedAt,
    workerConcurrency,
  });
  console.log(`\n${markdown}\n`);
  await replaceBetweenMarkers(README, MARK_START, MARK_END, markdown, '## Payment callbacks (issue 8)');
  console.log(`bench: results written to ${path.relative(ROOT, README)}`);
  console.log(
    `bench: ingestion ${fmtInt(ingestRate)} requests/s, reconciliation ${fmtInt(reconRate)} payments/s` +
      (pgbench && share !== null ? `, pgbench ${fmtInt(pgbench.tps)} TPS: ${fmtPct(share * 100)} (target ${fmtPct(TARGET_SHARE * 100)})` : ', no pgbench figure') +
      `; lost ${verification.lost}, doubled ${verification.doubled}`,
  );
  if (verification.problems.length > 0 || verification.lost > 0 || verification.doubled > 0) process.exitCode = 1;
  const bv = backlogRun?.verification;
  if (bv && (bv.problems.length > 0 || bv.lost > 0 || bv.doubled > 0)) process.exitCode = 1;
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
