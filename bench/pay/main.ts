/**
 * `npm run bench:pay` (bench/run.sh: Postgres, Redis, the migrated bench database and a
 * fresh dist/ build): issue 29's "pay + sandbox callback + reconcile, per payment" against
 * its floor (bench/auth-read/floor-pay.ts in the floor server), in the same run.
 *
 * 1. seed.ts: buyers with keys, and pending_payment escrows made through the service.
 * 2. Starts the compiled API and worker and the floor server, all with one per-run
 *    SANDBOX_GATEWAY_SECRET (this process signs the callbacks with it, as the sandbox
 *    gateway would); waits until the worker has drained the seed's notices.
 * 3. verify.ts `checkFloor`: one payment each way, same answers and same rows.
 * 4. load.ts: a warm-up per side, then the rounds (API and floor alternating, closed loop),
 *    then the paced rounds (one evenly paced run per side each, alternating who goes first).
 * 5. verify.ts `checkAfter`: every payment paid exactly once, `checkLedger`.
 * 6. report.ts: printed, and written to bench/pay/README.md and bench/README.md unless
 *    BENCH_README=0 or the tree is dirty. Exit 1 when a check fails or more than 1% of a
 *    run's flows failed (MAX_BAD_SHARE).
 */
import { randomBytes } from 'node:crypto';
import { MAX_BAD_SHARE } from '../lib/autocannon.js';
import { closeBenchDb } from '../lib/db.js';
import { LOG_LEVEL, requireStores, SERVICE_ENV } from '../lib/env.js';
import { fmtInt, fmtPct, median } from '../lib/format.js';
import { freePort, HOST, runMain, startChild, startFloorSide, waitFor } from '../lib/procs.js';
import { pacedRate } from '../lib/paced.js';
import { publish, warnIfDirty } from '../lib/report.js';
import { loadavg } from '../lib/sample.js';
import { timing } from '../payments/measure.js';
import type { SeedOrder } from '../payments/seed.js';
import { ItemQueue } from '../lib/flows.js';
import { DEFAULT_RATE, escrowsNeeded, run, settings, settle, signer, type FlowRecord, type RunResult, type Target } from './load.js';
import { report, type PacedSide } from './report.js';
import { seedPay } from './seed.js';
import { checkAfter, checkFloor } from './verify.js';

function checkFailures(r: RunResult, what: string): void {
  const { started, failed, firstFailure } = r.flows;
  console.log(`bench: ${what}: ${fmtInt(r.paidRate)} paid/s (${fmtInt(r.paidInWindow)} in ${((r.endedAt - r.startedAt) / 1000).toFixed(1)} s), ${fmtInt(r.flows.rate)} flows/s, ${failed} failed`);
  if (started === 0 || failed > MAX_BAD_SHARE * started) throw new Error(`${what}: ${failed} of ${started} flows failed (${JSON.stringify(r.flows.failures)}); first: ${firstFailure ?? '-'}`);
}

const asOrders = (records: readonly FlowRecord[]): SeedOrder[] => records.map((r) => ({ escrowId: r.escrowId, paymentId: r.paymentId, orderId: r.orderId, amount: r.amount, escrowAmount: r.amount }));

async function main(): Promise<void> {
  requireStores('npm run bench:pay');
  warnIfDirty('bench');
  const secret = `bench-sandbox-${randomBytes(16).toString('hex')}`;
  const sign = signer(secret);
  const prefix = process.env.QUEUE_PREFIX ?? 'escrow-bench';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST,
    ...SERVICE_ENV,
    SANDBOX_MODE: '1',
    SANDBOX_GATEWAY_SECRET: secret,
    NOTIFICATION_EMAILS: process.env.NOTIFICATION_EMAILS ?? '0',
    AUTH_RATE_LIMIT_PER_MINUTE: String(settings.authLimit),
    FLOOR_PREFIX: `${prefix}:floor`,
  };
  const escrows = escrowsNeeded();
  console.log(`bench: pay flow: ${settings.rounds} rounds × ${settings.duration} s per side, ${settings.concurrency} flows in flight, ${fmtInt(escrows)} escrows; load average ${loadavg()}`);
  const s0 = Date.now();
  const seed = await seedPay(env, settings.buyers, escrows);
  const seedSeconds = (Date.now() - s0) / 1000;

  const [port, floorPort] = [await freePort(), await freePort()];
  const base = `http://${HOST}:${port}`;
  const apiChild = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], { ...env, PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL }, { pin: false });
  const worker = startChild('worker (node dist/workers/index.js)', ['dist/workers/index.js'], { ...env, PUBLIC_BASE_URL: base, LOG_LEVEL }, { pin: false });
  const floorChild = startFloorSide({ ...env, PORT: String(floorPort), PUBLIC_BASE_URL: base }, { pin: false });
  const api: Target = { side: 'api', base, child: apiChild };
  const floor: Target = { side: 'floor', base: `http://${HOST}:${floorPort}`, child: floorChild };
  const children = [apiChild, worker, floorChild];
  await Promise.all([waitFor(`${base}/readyz`, apiChild, 30_000), waitFor(`${floor.base}/readyz`, floorChild, 30_000)]);
  const d0 = Date.now();
  await settle([], children, 900_000);
  console.log(`bench: API on ${base}, floor on ${floor.base}, worker running; the seed's notices drained in ${((Date.now() - d0) / 1000).toFixed(1)} s`);

  // Two escrows of different buyers with the same method and amount (escrow k: method k mod 5, amount by k mod 50).
  const first = seed.items[0]!;
  const twin = seed.items.find((it, k) => k > 0 && k % 50 === 0 && it.method === first.method && it.buyer !== first.buyer);
  if (!twin) throw new Error('seed: no second escrow like the first to verify the floor with (seed at least 51 escrows, 2 buyers)');
  const items = new ItemQueue(seed.items.filter((it) => it !== first && it !== twin));
  const all: FlowRecord[] = [...(await checkFloor(api, floor, seed, [first, twin], sign, children))];

  if (settings.warmup > 0) {
    for (const t of [api, floor]) {
      const w = await run(t, items, seed, sign, children, { seconds: settings.warmup });
      all.push(...w.records);
      checkFailures(w, `warm-up ${t.side}`);
    }
  }
  const loadStart = loadavg();
  const at = new Date();
  const rounds: { api: RunResult; floor: RunResult }[] = [];
  for (let i = 0; i < settings.rounds; i++) {
    const order = i % 2 === 0 ? [api, floor] : [floor, api];
    const got: Partial<Record<'api' | 'floor', RunResult>> = {};
    for (const t of order) {
      const r = await run(t, items, seed, sign, children, { seconds: settings.duration });
      all.push(...r.records);
      checkFailures(r, `round ${i + 1} ${t.side}`);
      got[t.side] = r;
    }
    rounds.push({ api: got.api!, floor: got.floor! });
    console.log(`bench: round ${i + 1}: API ÷ floor ${fmtPct((got.api!.paidRate / got.floor!.paidRate) * 100)}`);
  }
  const slower = Math.min(median(rounds.map((r) => r.api.paidRate)), median(rounds.map((r) => r.floor.paidRate)));
  const { rate, note: rateNote } = pacedRate({ override: settings.rate, overrideName: 'BENCH_PAY_RATE', issueRate: DEFAULT_RATE, issueNote: "the issue's rate", slower, unit: 'payments/s' });
  const paced: { api: PacedSide; floor: PacedSide }[] = [];
  for (let i = 0; i < settings.pacedRounds; i++) {
    const got: Partial<Record<'api' | 'floor', PacedSide>> = {};
    for (const t of i % 2 === 0 ? [api, floor] : [floor, api]) {
      const r = await run(t, items, seed, sign, children, { seconds: settings.pacedDuration, rate });
      all.push(...r.records);
      checkFailures(r, `paced round ${i + 1} ${t.side} at ${rate}/s`);
      const tm = await timing(asOrders(r.records));
      got[t.side] = { run: r, paid: { p50: tm.latency.p50, p99: tm.latency.p99, max: tm.latency.max } };
      console.log(`bench: paced round ${i + 1} ${t.side}: pay p99 ${r.flows.steps.pay?.latency.p99.toFixed(1)} ms, callback p99 ${r.flows.steps.callback?.latency.p99.toFixed(1)} ms, callback → paid p99 ${tm.latency.p99.toFixed(1)} ms${r.checkpoints > 0 ? `; ${r.checkpoints} checkpoint(s) began during it` : ''}`);
    }
    paced.push({ api: got.api!, floor: got.floor! });
  }
  const seconds = (Date.now() - at.getTime()) / 1000;
  const loadEnd = loadavg();

  const after = await checkAfter(all);
  const seedNote =
    `Seeded ${fmtInt(seed.items.length)} pending_payment escrows (\`createDirect\` as the buyer, ${fmtInt(seed.buyers.length)} buyers with fresh keys, consecutive escrows of different buyers; ` +
    `sandbox gateway row ${seed.gateway}, fee 0.7%) in ${seedSeconds.toFixed(1)} s; ${fmtInt(all.length)} of them paid in this run, the rest left pending. ` +
    `Before seeding, ${fmtInt(seed.purged.completed)} completed outbox rows and ${fmtInt(seed.purged.timers)} expiry timers of settled escrows of earlier runs were purged.`;
  const { markdown, headlines, ratio } = report({ at, seconds, rounds, paced: { rounds: paced, rate, rateNote }, after, loadStart, loadEnd, seedNote, logLevel: LOG_LEVEL });
  console.log(`\n${markdown}\n`);
  if (after.problems.length > 0 || after.lost > 0 || after.doubled > 0) {
    process.exitCode = 1;
    console.error(`bench: checks after the load failed: ${after.problems.join('; ')}`);
    return;
  }
  await publish({ page: 'pay', marker: 'results', markdown, headlines, at, tag: 'bench' });
  console.log(`bench: pay flow API ÷ floor ${fmtPct(ratio)} (goal ≥ 60%); lost ${after.lost}, doubled ${after.doubled}`);
}

await runMain('bench', main, closeBenchDb);
