/**
 * How the release-flow bench loads the API and the floor server: its tunables, the flow of
 * one escrow (the buyer's keyed `POST /api/escrows/:id/confirm-received`, then the buyer's
 * keyed `POST /api/escrows/:id/release`, each with a fresh Idempotency-Key and body `{}`),
 * and one run of it (bench/lib/flows.ts: `closedLoop` for flows/s at saturation, `pacedFlows`
 * for latency at an even rate). Every flow takes the next seeded `sent` escrow (consecutive
 * escrows have different buyers); a run gives back the escrows it did not reach.
 */
import { randomUUID } from 'node:crypto';
import { MAX_BAD_SHARE } from '../lib/autocannon.js';
import { analyzeAfterRun } from '../lib/db.js';
import { intFromEnv, optionalIntFromEnv } from '../lib/env.js';
import { fmtInt } from '../lib/format.js';
import { closedLoop, pacedFlows, type Flow, type FlowResult, type ItemQueue } from '../lib/flows.js';
import { assertAlive, type Child } from '../lib/procs.js';
import type { ReleaseItem, ReleaseSeed } from './seed.js';

export const settings = {
  rounds: intFromEnv('BENCH_ROUNDS', 5, 1, 15),
  duration: intFromEnv('BENCH_DURATION', 10, 1, 120),
  warmup: intFromEnv('BENCH_WARMUP', 3, 0, 60),
  concurrency: intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000),
  buyers: intFromEnv('BENCH_RELEASE_BUYERS', 500, 2, 9999),
  /** Paced rate in flows/s; unset: 500, or 80% of the slower side's closed-loop median when that is below 500. */
  rate: optionalIntFromEnv('BENCH_RELEASE_RATE', 1, 5000),
  pacedDuration: intFromEnv('BENCH_RELEASE_PACED_DURATION', 10, 1, 120),
  /** Escrows seeded for the run; unset: enough for BENCH_RELEASE_MAX_RATE flows/s on both sides in every run. */
  escrows: optionalIntFromEnv('BENCH_RELEASE_ESCROWS', 10, 500_000),
  maxRate: intFromEnv('BENCH_RELEASE_MAX_RATE', 800, 10, 5000),
  authLimit: intFromEnv('BENCH_AUTH_LIMIT', 1_000_000, 1, 1_000_000_000),
};
export const DEFAULT_RATE = 500;

/** Escrows the run needs: verification, warm-ups, rounds at maxRate, and the paced runs (two per side). */
export function escrowsNeeded(): number {
  if (settings.escrows !== null) return settings.escrows;
  const closed = 2 * (settings.warmup + settings.rounds * settings.duration) * settings.maxRate + 2 * (settings.rounds + 1) * settings.concurrency;
  const paced = 4 * (settings.rate ?? DEFAULT_RATE) * settings.pacedDuration;
  return 10 + closed + paced;
}

export type Side = 'api' | 'floor';
export interface Target {
  side: Side;
  base: string;
  child: Child;
}

export const bearer = (seed: ReleaseSeed, item: ReleaseItem): Record<string, string> => ({ Authorization: `Bearer ${seed.buyers[item.buyer]!.key}` });

/** The two requests of one escrow, each keyed; `done` collects the escrows whose release answered 200. */
export function releaseFlow(seed: ReleaseSeed, reached: string[], done: string[]): Flow<ReleaseItem> {
  return async (send, item) => {
    reached.push(item.escrowId);
    const headers = { ...bearer(seed, item), 'Content-Type': 'application/json' };
    const c = await send({ step: 'confirm-received', method: 'POST', path: `/api/escrows/${item.escrowId}/confirm-received`, headers: { ...headers, 'Idempotency-Key': randomUUID() }, body: '{}', expect: [200] });
    if ((c.json as { data?: { status?: string } } | undefined)?.data?.status !== 'received') throw new Error(`confirm-received of ${item.escrowId} answered ${c.body.slice(0, 200)}`);
    const r = await send({ step: 'release', method: 'POST', path: `/api/escrows/${item.escrowId}/release`, headers: { ...headers, 'Idempotency-Key': randomUUID() }, body: '{}', expect: [200] });
    if ((r.json as { data?: { status?: string } } | undefined)?.data?.status !== 'released') throw new Error(`release of ${item.escrowId} answered ${r.body.slice(0, 200)}`);
    done.push(item.escrowId);
  };
}

/** The seeded items, handed out in order (bench/lib/flows.ts ItemQueue). */
export type Items = ItemQueue<ReleaseItem>;

export interface RunResult {
  side: Side;
  flows: FlowResult;
  /** Escrows whose flow started / whose release answered 200. */
  reached: string[];
  done: string[];
}

/** One closed-loop (or paced, with `rate`) run of the flow on `target`; throws when more than 1% of its flows failed. */
export async function run(target: Target, items: Items, seed: ReleaseSeed, children: readonly Child[], what: string, opts: { seconds: number; rate?: number }): Promise<RunResult> {
  const wanted = opts.rate ? Math.ceil(opts.seconds * opts.rate) : Math.ceil(opts.seconds * settings.maxRate) + settings.concurrency;
  const mine = items.take(wanted);
  const reached: string[] = [];
  const done: string[] = [];
  const flow = releaseFlow(seed, reached, done);
  const base = { base: target.base, items: mine, flow, concurrency: settings.concurrency, duration: opts.seconds };
  const flows = opts.rate ? await pacedFlows({ ...base, rate: opts.rate }) : await closedLoop(base);
  items.giveBack(flows.unused);
  assertAlive(children);
  await analyzeAfterRun();
  const { started, failed, firstFailure } = flows;
  console.log(`bench: ${what}: ${fmtInt(flows.rate)} flows/s (${fmtInt(flows.completed)} in ${flows.seconds.toFixed(1)} s), ${failed} failed`);
  if (started === 0 || failed > MAX_BAD_SHARE * started) throw new Error(`${what}: ${failed} of ${started} flows failed (${JSON.stringify(flows.failures)}); first: ${firstFailure ?? '-'}`);
  if (!opts.rate && flows.unused === 0) throw new Error(`${what}: the run used every escrow it was given (${mine.length}); raise BENCH_RELEASE_MAX_RATE or BENCH_RELEASE_ESCROWS`);
  if (opts.rate && mine.length < wanted) throw new Error(`${what}: only ${mine.length} escrows left for ${wanted} paced flows; raise BENCH_RELEASE_ESCROWS`);
  return { side: target.side, flows, reached, done };
}
