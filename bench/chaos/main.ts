/**
 * `npm run chaos` (issue 14; bench/run.sh builds dist/): the service under faults, a
 * correctness tool (docs/reliability.md), not a benchmark. Recreates its own Postgres
 * database (`<bench db>_chaos`) and starts its own Redis server (stores.ts), 2 API copies
 * and 2 worker copies (the Procfile commands, compiled), and drives a mixed workload over
 * both API copies (workload.ts, edges.ts; enterprise.ts beside them, issue 27) while
 * faults.ts kills workers, API copies and payout jobs, restarts Redis and cuts Postgres
 * backends. Every request and its answer is logged (client.ts); after the queues drain,
 * the expected state is computed from that log alone (expected.ts) and compared with the
 * database (verify.ts); report.ts prints the figures and every difference, exit code 1 on
 * any.
 *
 * `npm run chaos -- --overload`: overload.ts instead of the workload and the faults.
 *
 * Tunables: CHAOS_DEALS (900 escrow flows), CHAOS_CONCURRENCY (32), CHAOS_USERS (120);
 * CHAOS_ENTERPRISE_DEALS (60 enterprise deals, 0 for none), CHAOS_ENTERPRISE_WORKSPACES (15),
 * CHAOS_ENTERPRISE_CONCURRENCY (12 deals at a time).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { databaseName, inPool, sideDatabase } from '../lib/db.js';
import { intFromEnv } from '../lib/env.js';
import { freePort, HOST, startChild, stopAll, stopChild, stopChildrenOnSignals, waitFor, type Child } from '../lib/procs.js';
import { call, dataOf, endLog, entries, LOG_FILE, net, PROC_LOG, signers, type Actor } from './client.js';
import { earlyCallback, lateManualTransfer, wrongAmount, type Edge } from './edges.js';
import { enterpriseDeal, setupWorkspace, type EnterpriseSeed } from './enterprise.js';
import { startFaults, type Faults } from './faults.js';
import { overload } from './overload.js';
import { printFindings } from './report.js';
import { seedChaos, seedEnterprise } from './seed.js';
import { DRIVER_APP, RedisServer, withAppName, workerApp } from './stores.js';
import { verify } from './verify.js';
import { sampleWaits } from './waits.js';
import { deal, serviceOrder, withdrawals } from './workload.js';

const DEALS = intFromEnv('CHAOS_DEALS', 900, 10, 100_000);
const CONCURRENCY = intFromEnv('CHAOS_CONCURRENCY', 32, 1, 500);
const USERS = intFromEnv('CHAOS_USERS', 120, 4, 10_000);
const ENT_DEALS = intFromEnv('CHAOS_ENTERPRISE_DEALS', 60, 0, 10_000);
const ENT_WORKSPACES = intFromEnv('CHAOS_ENTERPRISE_WORKSPACES', 15, 1, 1_000);
const ENT_CONCURRENCY = intFromEnv('CHAOS_ENTERPRISE_CONCURRENCY', 12, 1, 500);
/** The enterprise workspaces' four-eyes threshold (a third of the milestones are at or above it). */
const FOUR_EYES = 20_000_000;
const OVERLOAD = process.argv.includes('--overload');

/** Our own Redis: stopped however the run ends (a worker left behind would drain the next run's database into it). */
let ownRedis = null as RedisServer | null;
let mailCount = (): number => 0;

/** Workload and faults together, then the drain, the checks and the figures. */
async function chaosRun(actors: Actor[], admin: Actor, edge: Edge, ent: EnterpriseSeed, f: Faults): Promise<void> {
  const started = Date.now();
  const faults = startFaults(f);
  const sampler = sampleWaits(f.db, faults.counts);
  // Enterprise flows beside the consumer ones, under the same faults: each workspace's
  // counterparties and payout instructions first, then its deals as they become ready.
  const enterprise = (async () => {
    if (ENT_DEALS === 0) return;
    const setups = ent.workspaces.map((_, w) => setupWorkspace(ent, w));
    for (const s of setups) s.catch(() => undefined);
    await inPool(
      Array.from({ length: ENT_DEALS }, (_, i) => i),
      ENT_CONCURRENCY,
      (n) => enterpriseDeal(n, ent, setups, { onReleased: faults.onReleased }),
    );
    console.log(`chaos: enterprise flows done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  })();
  // Escrow flows and payment-service orders interleaved (one order per six escrow flows);
  // of the escrow flows, one in 25 each a late manual transfer, a short or long payment, an early callback.
  const flow = (n: number): Promise<void> => {
    if (n % 7 === 6) return serviceOrder(n, actors, admin);
    if (n % 25 === 3) return lateManualTransfer(n, actors, edge);
    if (n % 25 === 11) return wrongAmount(n, actors, edge);
    if (n % 25 === 19) return earlyCallback(n, actors, edge, Math.floor(n / 25));
    return deal(n, actors, admin);
  };
  const flows = DEALS + Math.floor(DEALS / 6);
  await inPool(
    Array.from({ length: flows }, (_, i) => i),
    CONCURRENCY,
    flow,
  );
  await withdrawals(actors, admin, faults.onApproved);
  await enterprise;
  await faults.stop();
  const workloadSeconds = (Date.now() - started) / 1000;
  console.log(`chaos: workload done in ${workloadSeconds.toFixed(0)} s: ${entries.length} requests; draining`);

  // Drain: callbacks processed, outbox completed, approved withdrawals and enterprise payouts paid, jobs idle.
  const drainStart = Date.now();
  for (;;) {
    const r = await f.db.raw<{ rows: { cb: number; ob: number; wd: number; disb: number }[] }>(
      `SELECT (SELECT count(*)::int FROM payment_callbacks WHERE processed_at IS NULL) AS cb,
              (SELECT count(*)::int FROM outbox WHERE completed_at IS NULL AND dead_at IS NULL AND available_at <= now()) AS ob,
              (SELECT count(*)::int FROM withdrawals WHERE status IN ('approved', 'processing')) AS wd,
              (SELECT count(*)::int FROM disbursements WHERE status IN ('queued', 'processing')) AS disb`,
    );
    const s = r.rows[0]!;
    if (s.cb === 0 && s.ob === 0 && s.wd === 0 && s.disb === 0) break;
    if (Date.now() - drainStart > 300_000) {
      console.error(`chaos: not drained after 5 minutes: ${JSON.stringify(s)}`);
      break;
    }
    await sleep(500);
  }
  sampler.waits.drainS = (Date.now() - drainStart) / 1000;
  await sampler.stop();
  endLog();
  printFindings(await verify(f.db, faults, sampler.waits, workloadSeconds), mailCount(), entries.length);
}

async function main(): Promise<void> {
  const runUrl = process.env.DATABASE_URL;
  if (!runUrl) throw new Error('DATABASE_URL must be set; run `npm run chaos` (bench/run.sh) instead');
  const dbUrl = await sideDatabase(runUrl, 'chaos', { recreate: true });
  const redisPort = await freePort();
  const redis = new RedisServer(redisPort, mkdtempSync(path.join(os.tmpdir(), 'escrow-chaos-redis-')));
  await redis.start();
  ownRedis = redis;
  process.env.DATABASE_URL = withAppName(dbUrl, DRIVER_APP);
  process.env.REDIS_URL = `redis://${HOST}:${redisPort}/0`;
  process.env.QUEUE_PREFIX = 'escrow-chaos';
  const sandboxSecret = `chaos-${randomBytes(16).toString('hex')}`;

  const { db } = await import('../../shared/db.js');
  const { signLink } = await import('../../shared/escrows/links.js');
  const { sandboxSignature } = await import('../../shared/payments/gateways/sandbox.js');
  signers.fields = signLink;
  signers.callback = (raw) => sandboxSignature(raw, sandboxSecret);
  // An SMTP sink on loopback for the mail queue (the service's e-mails are part of the run).
  const { MailSink } = await import('../../test/helpers/smtp.js');
  const { config } = await import('../../shared/config.js');
  const mailSink = new MailSink();
  await mailSink.start();
  mailCount = () => mailSink.messages.length;
  const env: NodeJS.ProcessEnv = { ...process.env, SMTP_URL: config.smtpUrl, NODE_ENV: 'development', SANDBOX_MODE: '1', SANDBOX_GATEWAY_SECRET: sandboxSecret, LOG_LEVEL: 'warn' };
  const { actors, admin, edge } = await seedChaos(db, USERS);
  const ent = await seedEnterprise(db, ENT_WORKSPACES, FOUR_EYES);

  // Processes.
  const ports = [await freePort(), await freePort()];
  net.bases = ports.map((p) => `http://${HOST}:${p}`);
  const apiEnv = (p: number): NodeJS.ProcessEnv => ({
    ...env,
    DATABASE_URL: withAppName(dbUrl, `chaos-api-${ports.indexOf(p) + 1}`),
    PORT: String(p),
    PUBLIC_BASE_URL: `http://${HOST}:${ports[0]}`,
    PUBLIC_LINK_HOSTS: `${HOST}`,
  });
  const workerEnv = (app: string): NodeJS.ProcessEnv => ({ ...env, DATABASE_URL: withAppName(dbUrl, app) });
  const apis: Child[] = ports.map((p, i) => startChild(`API ${i + 1}`, ['dist/api/server.js'], apiEnv(p), { pin: false, stdout: PROC_LOG }));
  const workers: Child[] = [0, 1].map((i) => startChild(`worker ${i + 1}`, ['dist/workers/index.js'], workerEnv(workerApp(i, 0)), { pin: false, stdout: PROC_LOG }));
  // Patient: on 2 shared cores an API copy may take many seconds to boot; one that exits says why.
  const ready = (i: number) => waitFor(`${net.bases[i]}/readyz`, apis[i]!, 90_000);
  await Promise.all(apis.map((_, i) => ready(i)));
  for (const a of actors) {
    const rot = await call('POST', '/v1/partner/link-secret/rotate', { key: a.key, body: {} });
    a.secret = String(dataOf(rot).link_secret);
  }
  console.log(`chaos: ${actors.length} users, ${ent.workspaces.length} enterprise workspaces, 2 API copies (${net.bases.join(', ')}), 2 workers, Redis on ${redisPort}, database ${databaseName(dbUrl)}; log ${LOG_FILE}`);

  if (OVERLOAD) await overload(actors, admin, db);
  else await chaosRun(actors, admin, edge, ent, { apis, workers, apiEnv, workerEnv, ports, redis, db, ready });
  for (const c of [...apis, ...workers]) await stopChild(c, 35_000);
  (await import('../../shared/redis.js')).redis.disconnect();
  redis.stop();
  await mailSink.stop();
  await db.destroy();
}

stopChildrenOnSignals('chaos');
// An exception outside main() (a socket error) must not leave orphans: a worker left behind
// would keep draining the next run's database (same name) into its own Redis.
process.on('uncaughtException', (err) => {
  console.error(`chaos: uncaught ${err.stack ?? err.message}`);
  ownRedis?.stop();
  void stopAll().finally(() => process.exit(1));
});
try {
  await main();
} catch (err) {
  console.error(`chaos failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
} finally {
  await stopAll();
  ownRedis?.stop();
}
