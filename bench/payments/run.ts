/**
 * The two runs of the payments bench over the running API and worker: the measured run
 * (callbacks sent while the worker reconciles, CPU and database sampled) and the backlog
 * run (callbacks stored with the worker stopped, then a new worker alone).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { dbStats, sampleBackends, statsDelta, type DbStats, type WaitProfile } from '../lib/pg-sample.js';
import { assertAlive, stopChild, type Child } from '../lib/procs.js';
import { cpuSnapshot, cpuUse, loadavg } from '../lib/sample.js';
import type { BacklogRun, Phase } from './details.js';
import { openOutbox, pendingOf, sendCallbacks, waitOrSay, type LoadResult, type Signer } from './load.js';
import { paidBy, paidSpread, relayCost, timing, type RelayCost, type Timing } from './measure.js';
import type { PaymentSeed, SeedOrder } from './seed.js';
import { verify, type Verification } from './verify.js';

export interface MeasuredRun {
  load: LoadResult;
  loadStart: string;
  loadEnd: string;
  phases: Phase[];
  waits: WaitProfile;
  drainedMs: number;
  relay: { before: RelayCost | null; after: RelayCost | null };
  stats: DbStats | null;
  timing: Timing;
  paidAtIngestEnd: number;
  verification: Verification;
}

/** The measured orders' callbacks while the worker runs; then waits, samples, and checks. */
export async function measuredRun(base: string, api: Child, worker: Child, seed: PaymentSeed, sign: Signer): Promise<MeasuredRun> {
  const orders = seed.orders;
  const children = [api, worker];
  const relayBefore = await relayCost();
  const loadStart = loadavg();
  const pids = { api: api.proc.pid, worker: worker.proc.pid, bench: process.pid };
  const cpuAtStart = cpuSnapshot(pids);
  const statsAtStart = await dbStats();
  const sampler = sampleBackends(100);
  let finished = false;
  const loadPromise = sendCallbacks(base, orders, sign).finally(() => {
    finished = true;
  });
  let lastLog = Date.now();
  while (!finished) {
    await Promise.race([loadPromise, sleep(1000)]);
    assertAlive(children);
    if (!finished && Date.now() - lastLog >= 5000) {
      lastLog = Date.now();
      console.log(`bench: ${orders.length - (await pendingOf(orders))} of ${orders.length} paid so far`);
    }
  }
  const load = await loadPromise;
  const cpuAtIngestEnd = cpuSnapshot(pids);
  const paidWhenIngestEnded = orders.length - (await pendingOf(orders));
  const loadEnd = loadavg();
  console.log(`bench: ${load.tally.sent} callbacks sent in ${((load.endedAt - load.startedAt) / 1000).toFixed(1)} s (${load.tally.ok} answered 200)`);
  await waitOrSay('reconciliation of every measured payment', children, async () => (await pendingOf(orders)) === 0);
  const cpuAtAllPaid = cpuSnapshot(pids);
  const paidAtEnd = orders.length - (await pendingOf(orders));
  const phases: Phase[] = [
    { label: 'While the callbacks came in (until autocannon returned)', paid: paidWhenIngestEnded, cpu: cpuUse(cpuAtStart, cpuAtIngestEnd) },
    { label: 'After, the worker catching up with the API idle', paid: paidAtEnd - paidWhenIngestEnded, cpu: cpuUse(cpuAtIngestEnd, cpuAtAllPaid) },
    { label: 'Whole window', paid: paidAtEnd, cpu: cpuUse(cpuAtStart, cpuAtAllPaid) },
  ];
  const waits = await sampler.stop();
  await waitOrSay('outbox drain after the measured run', children, async () => (await openOutbox(seed.outboxIdBefore)) === 0);
  const drainedAt = Date.now();
  const relayAfter = await relayCost();
  await sleep(1500); // backends report their counters at most once a second
  const stats = statsDelta(statsAtStart, await dbStats());
  const t = await timing(orders);
  const paidAtIngestEnd = await paidBy(orders, load.endedAt);
  const verification = await verify(orders, seed.outboxIdBefore, load.tally);
  console.log(`bench: verified: lost ${verification.lost}, doubled ${verification.doubled}, ${verification.problems.length} failed checks`);
  for (const p of verification.problems) console.error(`bench: check failed: ${p}`);
  return {
    load,
    loadStart,
    loadEnd,
    phases,
    waits,
    drainedMs: drainedAt - t.lastPaid.getTime(),
    relay: { before: relayBefore, after: relayAfter },
    stats,
    timing: t,
    paidAtIngestEnd,
    verification,
  };
}

/**
 * The worker stopped, the backlog's callbacks stored by the API, then a new worker
 * reconciles them alone (the API idle): the worker's own reconciliation rate, (payments paid
 * after the first batch) ÷ (last `paid_at` − first `paid_at`).
 */
export async function backlogRun(base: string, api: Child, backlog: readonly SeedOrder[], outboxIdBefore: number, sign: Signer, startWorker: (name: string) => Child): Promise<BacklogRun> {
  const stored = await sendCallbacks(base, backlog, sign);
  const storeSeconds = (stored.endedAt - stored.startedAt) / 1000;
  console.log(`bench: backlog: ${stored.tally.sent} callbacks stored in ${storeSeconds.toFixed(1)} s with the worker stopped`);
  const unpaidBefore = await pendingOf(backlog);
  const worker = startWorker('worker-backlog');
  const pids = { api: api.proc.pid, worker: worker.proc.pid, bench: process.pid };
  const cpu0 = cpuSnapshot(pids);
  await waitOrSay('reconciliation of the backlog', [api, worker], async () => (await pendingOf(backlog)) === 0);
  const cpu1 = cpuSnapshot(pids);
  await waitOrSay('outbox drain after the backlog run', [api, worker], async () => (await openOutbox(outboxIdBefore)) === 0);
  const spread = await paidSpread(backlog);
  const verification = await verify(backlog, outboxIdBefore, stored.tally);
  console.log(`bench: backlog verified: lost ${verification.lost}, doubled ${verification.doubled}, ${verification.problems.length} failed checks`);
  for (const p of verification.problems) console.error(`bench: backlog check failed: ${p}`);
  const seconds = (spread.last_paid.getTime() - spread.first_paid.getTime()) / 1000;
  await stopChild(worker, 35_000);
  return {
    n: backlog.length,
    unpaidBefore,
    storeSeconds,
    seconds,
    // The first batch's payments share one paid_at: the rate counts those paid after it.
    rate: seconds > 0 ? (spread.paid - spread.in_first) / seconds : Number.NaN,
    cpu: cpuUse(cpu0, cpu1),
    verification,
  };
}
