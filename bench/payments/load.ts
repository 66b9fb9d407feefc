/**
 * How the payments bench loads the pipeline: its tunables, the signed callbacks (every
 * order twice, the same bytes), sending them once each with autocannon while tallying the
 * answers, and waiting on the database until the worker has caught up.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runAutocannon, type AutocannonOptions, type AutocannonRequestSpec, type AutocannonResult } from '../lib/autocannon.js';
import { one } from '../lib/db.js';
import { intFromEnv, optionalIntFromEnv } from '../lib/env.js';
import { assertAlive, type Child } from '../lib/procs.js';
import type { SeedOrder } from './seed.js';

export const INBOUND = '/api/webhooks/inbound';
/** The benches' Redis database (bench/run.sh), under a prefix of its own. */
export const QUEUE_PREFIX = 'escrow-bench-payments';
/** Every order's callback is sent this many times. */
export const COPIES = 2;
export const POLL_MS = 200;
export const TARGET_SHARE = 0.25;

export const settings = {
  connections: intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000),
  orders: intFromEnv('BENCH_PAY_ORDERS', 5000, 100, 200_000),
  warmupOrders: intFromEnv('BENCH_PAY_WARMUP', 500, 0, 50_000),
  /** Orders of the second run: callbacks stored while the worker is stopped, then reconciled by the worker alone. */
  backlogOrders: intFromEnv('BENCH_PAY_BACKLOG', 5000, 0, 200_000),
  users: intFromEnv('BENCH_PAY_USERS', 200, 2, 9999),
  settleTimeoutS: intFromEnv('BENCH_PAY_TIMEOUT', 180, 10, 3600),
  pgbenchScale: intFromEnv('BENCH_PGBENCH_SCALE', 10, 1, 1000),
  pgbenchDuration: optionalIntFromEnv('BENCH_PGBENCH_DURATION', 1, 600),
  workerConcurrency: optionalIntFromEnv('BENCH_WORKER_CONCURRENCY', 1, 100),
  /** When set, the API and the worker run under `node --cpu-prof` and write their profiles here. */
  cpuProfDir: process.env.BENCH_PAY_CPU_PROF ? path.resolve(process.env.BENCH_PAY_CPU_PROF) : null,
};

interface CallbackReq {
  order: SeedOrder;
  body: string;
  signature: string;
}

/** What the HTTP answers said, counted as they arrive. */
export interface AnswerTally {
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

export type Signer = (rawBody: string) => string;

/**
 * The signed `paid` callback of each order (what the sandbox gateway sends), COPIES times:
 * orders go in blocks of `block`; a block's first copies, then its second copies (the same
 * bytes), then the next block.
 */
function callbackSequence(orders: readonly SeedOrder[], sign: Signer, block: number): CallbackReq[] {
  const signed = orders.map((order) => {
    const body = JSON.stringify({ provider: 'sandbox', gateway_order_id: order.orderId, status: 'paid', amount: order.amount });
    return { order, body, signature: sign(body) };
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

export interface LoadResult {
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

/** Sends every order's callback COPIES times, each request exactly once (autocannon `amount`). */
export async function sendCallbacks(base: string, orders: readonly SeedOrder[], sign: Signer): Promise<LoadResult> {
  const seq = callbackSequence(orders, sign, settings.connections);
  const tally: AnswerTally = { sent: 0, ok: 0, fresh: 0, duplicate: 0, other: 0, bad: new Map(), firstSentAt: 0, lastAnsweredAt: 0 };
  const opts: AutocannonOptions & { amount: number } = {
    url: `${base}${INBOUND}`,
    connections: Math.min(settings.connections, seq.length),
    pipelining: 1,
    duration: 1, // ignored: `amount` ends the run
    amount: seq.length,
    timeout: 30,
    requests: callbackRequests(seq, tally),
  };
  const result = await runAutocannon(opts);
  return { result, tally, startedAt: tally.firstSentAt, endedAt: tally.lastAnsweredAt };
}

/** Links of `orders` still pending. */
export async function pendingOf(orders: readonly SeedOrder[]): Promise<number> {
  const r = await one<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE status = 'pending' AND id = ANY(?::uuid[])`, [orders.map((o) => o.paymentId)]);
  return r.n;
}

/** Outbox rows of this run that are due and not completed (relayed or not). */
export async function openOutbox(afterId: number): Promise<number> {
  const r = await one<{ n: number }>(`SELECT count(*)::int AS n FROM outbox WHERE id > ? AND completed_at IS NULL AND dead_at IS NULL AND available_at <= now()`, [afterId]);
  return r.n;
}

/** Polls `check` every POLL_MS until it holds; throws when a child exits or after `timeoutMs`. Returns the ms waited. */
export async function waitUntil(what: string, children: Child[], timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    assertAlive(children);
    if (await check()) return Date.now() - t0;
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not done after ${Math.round(timeoutMs / 1000)} s`);
    await sleep(POLL_MS);
  }
}

/** As waitUntil, but a timeout is only reported (the checks after the run say what is missing). */
export async function waitOrSay(what: string, children: Child[], check: () => Promise<boolean>): Promise<void> {
  await waitUntil(what, children, settings.settleTimeoutS * 1000, check).catch((err: unknown) => console.error(`bench: ${err instanceof Error ? err.message : String(err)}`));
}
