/**
 * `npm run bench:payments` (bench/run.sh: Postgres, Redis and a fresh dist/ build): issue
 * 8's callback ingestion and reconciliation throughput, reported beside pgbench's TPS on
 * the same machine in the same run.
 *
 * 0. Creates and migrates its own database, `<bench db>_payments`, and points everything at
 *    it (the bench database holds the unrelayed outbox of benches that start no worker,
 *    which the relay would work through first); the benches' Redis db, prefix escrow-bench-payments.
 * 1. seed.ts: escrows, each with one pending sandbox payment link.
 * 2. Starts the compiled API and worker (`node dist/api/server.js`,
 *    `node dist/workers/index.js`), both with the per-run SANDBOX_GATEWAY_SECRET this
 *    process signs with. Nothing is pinned: every process gets both cores, as pgbench's
 *    Postgres does.
 * 3. Warm-up: the warm-up links' callbacks the same way, until they are paid and the outbox
 *    (the seed's notices included) is drained.
 * 4. run.ts `measuredRun`: every order's signed `paid` callback twice (exact duplicates),
 *    then the checks of verify.ts. Ingestion is requests/s over the sending; reconciliation
 *    is orders ÷ (last `paid_at` − first `received_at`), both from the database.
 * 5. run.ts `backlogRun`: the worker's own rate on stored callbacks.
 * 6. pgbench.ts, after the API and the worker stopped, for the reconciliation window in
 *    whole seconds, at least 30 s. No pgbench: said so, not a failure.
 *
 * report.ts writes the figures to bench/payments/README.md and the table of
 * bench/README.md. Exit code 1 when a callback was lost or doubled (or any check failed);
 * the goal itself is reported, not asserted. Tunables: see load.ts and the page.
 */
import { randomBytes } from 'node:crypto';
import { closeBenchDb, databaseName, sideDatabase } from '../lib/db.js';
import { requireStores, LOG_LEVEL, SERVICE_ENV } from '../lib/env.js';
import { fmtInt, fmtPct, statusList } from '../lib/format.js';
import { freePort, HOST, startChild, runMain, stopChild, waitFor } from '../lib/procs.js';
import { publish, warnIfDirty } from '../lib/report.js';
import { loadavg } from '../lib/sample.js';
import { COPIES, openOutbox, pendingOf, QUEUE_PREFIX, sendCallbacks, settings, TARGET_SHARE, waitUntil, type Signer } from './load.js';
import { findPgbench, runPgbench, type PgbenchResult } from './pgbench.js';
import { report } from './report.js';
import { backlogRun, measuredRun } from './run.js';
import { seedPayments } from './seed.js';

async function main(): Promise<void> {
  requireStores('npm run bench:payments');
  warnIfDirty('bench');
  const before = loadavg();
  const runUrl = process.env.DATABASE_URL!;
  const payUrl = await sideDatabase(runUrl, 'payments');
  // Before anything loads shared/config: the bench's own queries, the seed, the API and the worker all use it.
  process.env.DATABASE_URL = payUrl;
  process.env.QUEUE_PREFIX = QUEUE_PREFIX;
  // Notice e-mails off, as `npm test` has them: there is no SMTP server here, and failing
  // mail jobs retried for minutes would hold up the drains the bench waits for.
  process.env.NOTIFICATION_EMAILS ??= '0';
  const { sandboxSignature } = await import('../../shared/payments/gateways/sandbox.js');
  const secret = `bench-sandbox-${randomBytes(16).toString('hex')}`;
  const sign: Signer = (body) => sandboxSignature(body, secret);
  const env: NodeJS.ProcessEnv = { ...process.env, HOST, ...SERVICE_ENV, SANDBOX_MODE: '1', SANDBOX_GATEWAY_SECRET: secret, LOG_LEVEL };
  if (settings.workerConcurrency !== null) env.WORKER_CONCURRENCY = String(settings.workerConcurrency);
  const { orders: ORDERS, backlogOrders: BACKLOG, warmupOrders: WARMUP } = settings;
  console.log(`bench: payments: ${ORDERS} orders × ${COPIES} callbacks, ${WARMUP} warm-up orders, ${settings.connections} connections; load average ${before}`);
  const pgbenchBinary = findPgbench();
  let pgbenchNote = pgbenchBinary ? null : 'pgbench was not found on PATH nor under /usr/lib/postgresql/*/bin; no TPS to compare with';
  if (pgbenchNote) console.log(`bench: ${pgbenchNote}`);

  const seed = await seedPayments(env, settings.users, WARMUP, ORDERS + BACKLOG);
  const backlog = seed.orders.splice(ORDERS); // the first ORDERS are the measured run

  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const prof = (name: string) => (settings.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfDir}`, `--cpu-prof-name=${name}.cpuprofile`] : []);
  const startWorker = (name: string) => startChild(`${name} (node dist/workers/index.js)`, [...prof(name), 'dist/workers/index.js'], { ...env, PUBLIC_BASE_URL: base }, { pin: false });
  const api = startChild('API (node dist/api/server.js)', [...prof('api'), 'dist/api/server.js'], { ...env, PORT: String(port), PUBLIC_BASE_URL: base }, { pin: false });
  const worker = startWorker('worker');
  await waitFor(`${base}/readyz`, api, 30_000);
  console.log(`bench: API on ${base}, worker started`);

  // Warm-up: the same path with other orders; then everything of the seed drained.
  const w0 = Date.now();
  if (seed.warmup.length > 0) {
    const wl = await sendCallbacks(base, seed.warmup, sign);
    if (wl.tally.ok !== wl.tally.sent || wl.tally.sent !== COPIES * seed.warmup.length) {
      throw new Error(`warm-up: ${wl.tally.ok} of ${wl.tally.sent} callbacks answered 200 (${statusList(wl.tally.bad)})`);
    }
    console.log(`bench: warm-up: ${COPIES * seed.warmup.length} callbacks in ${((wl.endedAt - wl.startedAt) / 1000).toFixed(1)} s`);
  }
  await waitUntil('warm-up reconciliation', [api, worker], 300_000, async () => (await pendingOf(seed.orders)) === ORDERS && (await pendingOf(backlog)) === BACKLOG);
  await waitUntil('outbox drain before the measured run', [api, worker], 300_000, async () => (await openOutbox(seed.outboxIdBefore)) === 0);
  const warmupSeconds = (Date.now() - w0) / 1000;
  console.log(`bench: warm-up done in ${warmupSeconds.toFixed(1)} s; ${ORDERS} links pending`);

  const at = new Date();
  const m = await measuredRun(base, api, worker, seed, sign);
  await stopChild(worker, 35_000);
  const backlogResult = backlog.length > 0 ? await backlogRun(base, api, backlog, seed.outboxIdBefore, sign, startWorker) : null;
  await stopChild(api);

  let pgbench: PgbenchResult | null = null;
  if (pgbenchBinary) {
    const windowSeconds = (m.timing.lastPaid.getTime() - m.timing.firstReceived.getTime()) / 1000;
    const seconds = settings.pgbenchDuration ?? Math.max(30, Math.round(windowSeconds)); // at least 30 s: a steadier rate
    try {
      pgbench = await runPgbench(pgbenchBinary, runUrl, seconds);
      console.log(`bench: pgbench: ${pgbench.tps.toFixed(1)} tps over ${seconds} s`);
    } catch (err) {
      pgbenchNote = `pgbench failed: ${err instanceof Error ? err.message.split('\n').slice(0, 4).join(' ') : String(err)}`;
      console.error(`bench: ${pgbenchNote}`);
    }
  }

  const v = m.verification;
  const { markdown, headlines, ingestRate, reconRate, share } = report({
    at,
    backlog: backlogResult,
    seed,
    warmupSeconds,
    load: m.load,
    paidAtIngestEnd: m.paidAtIngestEnd,
    timing: m.timing,
    drainedMs: m.drainedMs,
    verification: v,
    pgbench,
    pgbenchNote,
    loadavgs: { before, loadStart: m.loadStart, loadEnd: m.loadEnd },
    phases: m.phases,
    stats: m.stats,
    relay: m.relay,
    database: databaseName(payUrl),
    waits: m.waits,
    workerConcurrency: env.WORKER_CONCURRENCY ?? '5 (default)',
  });
  console.log(`\n${markdown}\n`);
  await publish({ page: 'payments', marker: 'results', markdown, headlines, at, tag: 'bench' });
  console.log(
    `bench: ingestion ${fmtInt(ingestRate)} requests/s, reconciliation ${fmtInt(reconRate)} payments/s` +
      (pgbench && share !== null ? `, pgbench ${fmtInt(pgbench.tps)} TPS: ${fmtPct(share * 100)} (target ${fmtPct(TARGET_SHARE * 100)})` : ', no pgbench figure') +
      `; lost ${v.lost}, doubled ${v.doubled}`,
  );
  const bv = backlogResult?.verification;
  if ([v, ...(bv ? [bv] : [])].some((x) => x.problems.length > 0 || x.lost > 0 || x.doubled > 0)) process.exitCode = 1;
}

await runMain('bench', main, closeBenchDb);
