/**
 * How the fund-and-release bench loads the API and the floor server: its tunables, the
 * flow (one deal per flow: fund its first milestone, then release its approved second one
 * into two splits; both keyed, the owner's workspace key) and the runs: a warm-up of each,
 * then rounds of a closed loop on each (API first in odd rounds, floor first in even ones),
 * then paced rounds: each side at an evenly paced rate (open loop), alternating who goes
 * first. Items (deals) are taken in order and never
 * reused: a flow that started consumed its deal.
 */
import { randomUUID } from 'node:crypto';
import { MAX_BAD_SHARE } from '../lib/autocannon.js';
import { analyzeAfterRun } from '../lib/db.js';
import { intFromEnv, optionalIntFromEnv } from '../lib/env.js';
import { closedLoop, pacedFlows, type Flow, type FlowResult } from '../lib/flows.js';
import { pacedRate } from '../lib/paced.js';
import { fmtInt, fmtPct, median } from '../lib/format.js';
import { assertAlive, type Child } from '../lib/procs.js';
import { splitsOf, type FundItem, type FundSeed } from './seed.js';

export const settings = {
  rounds: intFromEnv('BENCH_ROUNDS', 5, 1, 15),
  duration: intFromEnv('BENCH_DURATION', 5, 1, 60),
  warmup: intFromEnv('BENCH_WARMUP', 2, 0, 30),
  /** Flows in flight in the closed loop (each flow is two requests one after the other). */
  concurrency: intFromEnv('BENCH_CONNECTIONS', 32, 1, 1000),
  workspaces: intFromEnv('BENCH_FUND_WORKSPACES', 64, 2, 999),
  /** The paced runs' flows started per second; unset: `fundPacedRate` (the issue's rate, or 80% of the slower side). */
  rate: optionalIntFromEnv('BENCH_FUND_RATE', 1, 5000),
  pacedDuration: intFromEnv('BENCH_FUND_PACED_DURATION', 10, 1, 120),
  /** Paced runs per side (alternating who goes first); the report judges the median round. */
  pacedRounds: intFromEnv('BENCH_FUND_PACED_ROUNDS', 3, 1, 9),
  /** Flows/s a side may reach at most: how many deals the seed makes for the closed loops. */
  maxRate: intFromEnv('BENCH_FUND_MAX_RATE', 300, 10, 5000),
  authLimit: intFromEnv('BENCH_AUTH_LIMIT', 1_000_000, 1, 1_000_000_000),
  moneyLimit: intFromEnv('BENCH_MONEY_LIMIT', 1_000_000, 1, 1_000_000_000),
};

/** Deals the run needs: 2 for the verification, the warm-ups, the rounds and the paced runs, each side, with a margin. */
export function itemsNeeded(): number {
  const s = settings;
  const closed = Math.ceil(s.maxRate * (s.warmup + s.rounds * s.duration) * 2 * 1.1);
  const paced = 2 * s.pacedRounds * (s.rate ?? ISSUE_RATE) * s.pacedDuration;
  return s.workspaces * 2 + closed + paced;
}

/** Issue 29's paced rate, 500 requests/s: 250 flows/s of two requests. */
export const ISSUE_RATE = 250;

/** The paced runs' rate (bench/lib/paced.ts `pacedRate`): BENCH_FUND_RATE, the issue's 250 flows/s, or 80% of the slower side. */
function fundPacedRate(rounds: Runs['rounds']): { rate: number; note: string } {
  const slower = Math.min(median(rounds.map((r) => r.api.rate)), median(rounds.map((r) => r.floor.rate)));
  return pacedRate({ override: settings.rate, overrideName: 'BENCH_FUND_RATE', issueRate: ISSUE_RATE, issueNote: "the issue's 500 requests/s (250 flows/s)", slower, unit: 'flows/s' });
}

/** A server under load: the API or the floor server. */
export interface Target {
  base: string;
  child: Child;
}
export type Side = 'api' | 'floor';

export const fundPath = (i: FundItem) => `/v1/enterprise/deals/${i.dealId}/milestones/${i.fundMid}/fund`;
export const releasePath = (i: FundItem) => `/v1/enterprise/deals/${i.dealId}/milestones/${i.releaseMid}/release`;
export const FUND_BODY = JSON.stringify({ method: 'sandbox' });

/** The flow of one deal; items whose flow completed are pushed to `done`. */
export function fundFlow(seed: FundSeed, done: FundItem[]): Flow<FundItem> {
  return async (send, item) => {
    const w = seed.workspaces[item.workspace]!;
    const headers = { Authorization: `Bearer ${w.key}`, 'Content-Type': 'application/json' };
    await send({ step: 'fund', method: 'POST', path: fundPath(item), headers: { ...headers, 'Idempotency-Key': randomUUID() }, body: FUND_BODY, expect: [200] });
    await send({ step: 'release', method: 'POST', path: releasePath(item), headers: { ...headers, 'Idempotency-Key': randomUUID() }, body: JSON.stringify({ splits: splitsOf(w, item) }), expect: [200] });
    done.push(item);
  };
}

export interface Runs {
  /** Per round, the closed-loop result of each side. */
  rounds: { api: FlowResult; floor: FlowResult }[];
  /** The paced rounds (one evenly paced run of each side per round) and their rate. */
  paced: { api: FlowResult; floor: FlowResult }[];
  rate: { rate: number; note: string };
  /** Items whose flow completed (both requests 200), per side. */
  done: { api: FundItem[]; floor: FundItem[] };
  /** Items a flow started on (consumed), warm-ups included. */
  consumed: number;
}

function describe(what: string, r: FlowResult): string {
  const failures = Object.entries(r.failures).map(([k, n]) => `${k} ×${n}`).join(', ');
  return `${what}: ${fmtInt(r.completed)} flows in ${r.seconds.toFixed(1)} s = ${fmtInt(r.rate)} flows/s, p99 ${r.flowLatency.p99.toFixed(1)} ms${r.failed ? `; ${fmtInt(r.failed)} failed (${failures})` : ''}`;
}

/** Stops the run when more than MAX_BAD_SHARE of the flows failed, or items ran out before the run's time. */
function check(what: string, r: FlowResult, seconds: number, targets: Record<Side, Target>): void {
  assertAlive([targets.api.child, targets.floor.child]);
  if (r.started > 0 && r.failed / r.started > MAX_BAD_SHARE) {
    throw new Error(`${what}: ${fmtPct((r.failed / r.started) * 100)} of the flows failed (at most ${fmtPct(MAX_BAD_SHARE * 100)}); first: ${r.firstFailure}`);
  }
  if (r.unused === 0 && r.seconds < seconds * 0.95) {
    throw new Error(`${what}: the seeded deals ran out after ${r.seconds.toFixed(1)} s; raise BENCH_FUND_MAX_RATE (${settings.maxRate} flows/s) so the seed makes more`);
  }
}

export async function runAll(targets: Record<Side, Target>, seed: FundSeed, items: readonly FundItem[]): Promise<Runs> {
  let cursor = 0;
  const done: Runs['done'] = { api: [], floor: [] };
  const s = settings;
  const closed = async (side: Side, seconds: number, label: string): Promise<FlowResult> => {
    const r = await closedLoop({ base: targets[side].base, items: items.slice(cursor), flow: fundFlow(seed, done[side]), concurrency: s.concurrency, duration: seconds });
    cursor += r.started;
    console.log(`bench: ${describe(label, r)}`);
    check(label, r, seconds, targets);
    await analyzeAfterRun();
    return r;
  };
  // Warm-up flows are checked after the load like the others (they are in `done`).
  if (s.warmup > 0) {
    await closed('api', s.warmup, 'warm-up API');
    await closed('floor', s.warmup, 'warm-up floor');
  }
  const rounds: Runs['rounds'] = [];
  for (let r = 1; r <= s.rounds; r++) {
    const order: Side[] = r % 2 === 1 ? ['api', 'floor'] : ['floor', 'api'];
    const got: Partial<Record<Side, FlowResult>> = {};
    for (const side of order) got[side] = await closed(side, s.duration, `round ${r} ${side === 'api' ? 'API' : 'floor'}`);
    rounds.push({ api: got.api!, floor: got.floor! });
  }
  const rate = fundPacedRate(rounds);
  const paced = async (side: Side, round: number): Promise<FlowResult> => {
    const label = `paced round ${round} ${fmtInt(rate.rate)} flows/s ${side === 'api' ? 'API' : 'floor'}`;
    const r = await pacedFlows({ base: targets[side].base, items: items.slice(cursor), flow: fundFlow(seed, done[side]), concurrency: 1000, duration: s.pacedDuration, rate: rate.rate });
    cursor += r.started;
    console.log(`bench: ${describe(label, r)}`);
    if (r.started < Math.floor(rate.rate * s.pacedDuration)) throw new Error(`${label}: the seeded deals ran out`);
    check(label, r, 0, targets);
    await analyzeAfterRun();
    return r;
  };
  const pacedRounds: Runs['paced'] = [];
  for (let r = 1; r <= s.pacedRounds; r++) {
    const got: Partial<Record<Side, FlowResult>> = {};
    for (const side of (r % 2 === 1 ? ['api', 'floor'] : ['floor', 'api']) as Side[]) got[side] = await paced(side, r);
    pacedRounds.push({ api: got.api!, floor: got.floor! });
  }
  return { rounds, paced: pacedRounds, rate, done, consumed: cursor };
}
