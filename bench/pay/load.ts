/**
 * How the pay-flow bench loads the API and the floor server: its tunables, the flow of one
 * payment (the buyer's keyed `POST /api/escrows/:id/pay`, then the sandbox gateway's signed
 * `paid` callback on `POST /api/webhooks/inbound` for the link the answer named), and the
 * rounds: the API and the floor back to back, API first in odd rounds and floor first in
 * even ones (bench/lib/flows.ts `closedLoop`), then one evenly paced run of each
 * (`pacedFlows`). Every flow takes the next seeded escrow (consecutive escrows have
 * different buyers) and a fresh Idempotency-Key.
 *
 * A payment counts when the database says it is paid: per round, the payments of that round
 * whose `paid_at` falls inside the round's window (its first flow started → its last flow
 * ended), ÷ the window (the service reconciles in its worker, after the callback's answer; the
 * floor before its answer). Between runs the bench waits until every payment of the run is
 * paid and the outbox is drained, so no run inherits another's backlog.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { all, analyzeAfterRun, one } from '../lib/db.js';
import { intFromEnv, optionalIntFromEnv } from '../lib/env.js';
import { closedLoop, pacedFlows, type Flow, type FlowResult, type ItemQueue } from '../lib/flows.js';
import { assertAlive, type Child } from '../lib/procs.js';
import { cpuMsPer, cpuSnapshot, cpuUse } from '../lib/sample.js';
import type { PayItem, PaySeed } from './seed.js';

export const settings = {
  rounds: intFromEnv('BENCH_ROUNDS', 5, 1, 15),
  duration: intFromEnv('BENCH_DURATION', 10, 1, 120),
  warmup: intFromEnv('BENCH_WARMUP', 3, 0, 60),
  concurrency: intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000),
  buyers: intFromEnv('BENCH_PAY_BUYERS', 500, 2, 9999),
  /** Paced rate in flows/s; unset: 500, or 80% of the slower side's closed-loop median when that is below 500. */
  rate: optionalIntFromEnv('BENCH_PAY_RATE', 1, 5000),
  pacedDuration: intFromEnv('BENCH_PAY_PACED_DURATION', 10, 1, 120),
  /** Paced runs per side (alternating who goes first); the report gives the median round's p99. */
  pacedRounds: intFromEnv('BENCH_PAY_PACED_ROUNDS', 3, 1, 9),
  /** Escrows seeded for the run; unset: enough for BENCH_PAY_MAX_RATE flows/s on both sides in every run. */
  escrows: optionalIntFromEnv('BENCH_PAY_ESCROWS', 10, 500_000),
  maxRate: intFromEnv('BENCH_PAY_MAX_RATE', 1000, 10, 5000),
  authLimit: intFromEnv('BENCH_AUTH_LIMIT', 1_000_000, 1, 1_000_000_000),
};
export const DEFAULT_RATE = 500;

/** Escrows the run needs: verification, warm-ups, rounds and paced runs of both sides at maxRate. */
export function escrowsNeeded(): number {
  if (settings.escrows !== null) return settings.escrows;
  const closed = 2 * (settings.warmup + settings.rounds * settings.duration) * settings.maxRate;
  const paced = 2 * settings.pacedRounds * Math.max(DEFAULT_RATE, settings.rate ?? 0) * settings.pacedDuration;
  return 4 + closed + paced;
}

export type Side = 'api' | 'floor';
export interface Target {
  side: Side;
  base: string;
  child: Child;
}

/** What one flow learnt: the link the pay answered, for the checks after the load. */
export interface FlowRecord {
  escrowId: string;
  paymentId: string;
  orderId: string;
  amount: number;
}

export const signer = (secret: string) => (body: string) => createHmac('sha256', secret).update(body, 'utf8').digest('hex');

/** The sandbox gateway's `paid` callback for a link, as gateways/sandbox.ts's simulate would send it. */
export function callbackBody(orderId: string, amount: number): string {
  return JSON.stringify({ provider: 'sandbox', gateway_order_id: orderId, status: 'paid', amount });
}

/** The flow of one payment; each completed flow's link is added to `done`. */
export function payFlow(seed: PaySeed, sign: (body: string) => string, done: FlowRecord[]): Flow<PayItem> {
  return async (send, item) => {
    const paid = await send({
      step: 'pay',
      method: 'POST',
      path: `/api/escrows/${item.escrowId}/pay`,
      headers: { Authorization: `Bearer ${seed.buyers[item.buyer]!.key}`, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
      body: JSON.stringify({ method: item.method, provider: 'sandbox' }),
      expect: [201],
    });
    const link = (paid.json as { data?: { payment_link_id?: string; gateway_order_id?: string; amount?: number } } | undefined)?.data;
    if (!link?.gateway_order_id || !link.payment_link_id || typeof link.amount !== 'number') throw new Error(`pay answered no link: ${paid.body.slice(0, 200)}`);
    const body = callbackBody(link.gateway_order_id, link.amount);
    await send({ step: 'callback', method: 'POST', path: '/api/webhooks/inbound', headers: { 'Content-Type': 'application/json', 'X-Sandbox-Signature': sign(body) }, body, expect: [200] });
    done.push({ escrowId: item.escrowId, paymentId: link.payment_link_id, orderId: link.gateway_order_id, amount: link.amount });
  };
}

/** The seeded items, handed out in order (bench/lib/flows.ts ItemQueue). */
export type Items = ItemQueue<PayItem>;

export interface RunResult {
  side: Side;
  flows: FlowResult;
  records: FlowRecord[];
  startedAt: number;
  endedAt: number;
  /** Payments of this run paid inside [startedAt, endedAt], by the database. */
  paidInWindow: number;
  /** Paid payments per second inside the window. */
  paidRate: number;
  /**
   * Core-milliseconds per completed flow, from the run's start until its payments were paid
   * and the outbox drained, per process group (CPU_GROUPS); null where /proc is missing.
   */
  cpuPerFlow: Record<CpuGroup, number> | null;
  /** Checkpoints Postgres began between the run's start and its end (pg_stat_bgwriter, timed + requested). */
  checkpoints: number;
}

/** Checkpoints so far (timed and requested), to tell whether one fell inside a run. */
async function checkpointCount(): Promise<number> {
  return (await one<{ n: number }>('SELECT (checkpoints_timed + checkpoints_req)::int AS n FROM pg_stat_bgwriter')).n;
}

/** The process groups whose CPU a run reports: the bench's children by the first word of their names, Postgres, Redis, this process. */
export const CPU_GROUPS = ['api', 'worker', 'floor', 'postgres', 'redis', 'bench'] as const;
export type CpuGroup = (typeof CPU_GROUPS)[number];

function pidsOf(children: readonly Child[]): Record<string, number | undefined> {
  const pids: Record<string, number | undefined> = { bench: process.pid };
  for (const c of children) pids[c.name.split(' ')[0]!.toLowerCase()] = c.proc.pid;
  return pids;
}

/** Payments of `records` paid by the database between `from` and `to` (ms since the epoch). */
async function paidBetween(records: readonly FlowRecord[], from: number, to: number): Promise<number> {
  if (records.length === 0) return 0;
  const r = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM payments WHERE id = ANY(?::uuid[]) AND status = 'paid'
        AND paid_at >= to_timestamp(?::float8 / 1000) AND paid_at <= to_timestamp(?::float8 / 1000)`,
    [records.map((r) => r.paymentId), from, to],
  );
  return r.n;
}

/** Waits until every payment of `records` is paid and no outbox row is due and open (the worker has caught up). */
export async function settle(records: readonly FlowRecord[], children: readonly Child[], timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const ids = records.map((r) => r.paymentId);
  for (;;) {
    assertAlive(children);
    const [p] = ids.length > 0 ? await all<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE id = ANY(?::uuid[]) AND status <> 'paid'`, [ids]) : [{ n: 0 }];
    const [o] = await all<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE completed_at IS NULL AND dead_at IS NULL AND available_at <= now()`);
    if ((p?.n ?? 0) === 0 && (o?.n ?? 0) === 0) return;
    if (Date.now() > deadline) throw new Error(`not settled after ${timeoutMs / 1000} s: ${p?.n ?? 0} payments unpaid, ${o?.n ?? 0} outbox rows open`);
    await sleep(200);
  }
}

/** One closed-loop (or paced, with `rate`) run of the flow on `target`, then its payments settled. */
export async function run(target: Target, items: Items, seed: PaySeed, sign: (body: string) => string, children: readonly Child[], opts: { seconds: number; rate?: number }): Promise<RunResult> {
  const wanted = Math.ceil(opts.seconds * (opts.rate ?? settings.maxRate) * 1.2) + settings.concurrency;
  const mine = items.take(wanted);
  const records: FlowRecord[] = [];
  const flow = payFlow(seed, sign, records);
  const pids = pidsOf(children);
  const checkpointsBefore = await checkpointCount();
  const cpuAtStart = cpuSnapshot(pids);
  const startedAt = Date.now();
  const base = { base: target.base, items: mine, flow, concurrency: settings.concurrency, duration: opts.seconds };
  const flows = opts.rate ? await pacedFlows({ ...base, rate: opts.rate }) : await closedLoop(base);
  const endedAt = Date.now();
  const checkpoints = (await checkpointCount()) - checkpointsBefore;
  items.giveBack(flows.unused);
  if (!opts.rate && flows.unused === 0) throw new Error(`${target.side}: the run used every escrow it was given (${mine.length}); raise BENCH_PAY_MAX_RATE or BENCH_PAY_ESCROWS`);
  assertAlive(children);
  await settle(records, children);
  const cpu = cpuUse(cpuAtStart, cpuSnapshot(pids));
  const cpuPerFlow = cpu && records.length > 0 ? (Object.fromEntries(CPU_GROUPS.map((g) => [g, cpuMsPer(cpu, [g], records.length)])) as Record<CpuGroup, number>) : null;
  await analyzeAfterRun();
  const paidInWindow = await paidBetween(records, startedAt, endedAt);
  return { side: target.side, flows, records, startedAt, endedAt, paidInWindow, paidRate: paidInWindow / ((endedAt - startedAt) / 1000), cpuPerFlow, checkpoints };
}
