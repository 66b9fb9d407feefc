/**
 * A load generator for flows: a unit of work that is several HTTP requests in order (pay,
 * then the gateway's callback; confirm received, then release), each depending on the one
 * before. autocannon sends independent requests, so the money-path benches (issue 29) run
 * their flows here instead: over keep-alive connections of node:http (one Agent per
 * target), each flow taking the next item (an escrow, a deal) that nothing else touches.
 *
 * - `closedLoop`: `concurrency` loops, each running the next item's flow as soon as its last
 *   one ended, for `duration` seconds (or until the items run out): flows/s at saturation.
 * - `pacedFlows`: a flow started every 1/rate s whether or not earlier ones ended (open
 *   loop, as bench/lib/paced.ts), at most `concurrency` at once; each request's latency is
 *   measured from the moment it could first have been sent (the flow's scheduled start for
 *   its first request, the previous answer for the others), so a stall shows in every flow
 *   scheduled during it.
 *
 * A request answering a status outside its `expect` list, or failing, fails its flow: the
 * flow stops there and is counted under `failed` with the step's name and status; the run
 * goes on. The caller decides what share of failures stops a bench (bench/lib/autocannon.ts
 * MAX_BAD_SHARE).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { percentile } from './format.js';
import type { LatencySummary } from './paced.js';

export interface FlowRequest {
  /** The step's name in the results (`pay`, `callback`, `release`). */
  step: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Statuses that let the flow go on; default [200, 201]. */
  expect?: readonly number[];
}

export interface FlowAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: unknown;
}

/** Sends one request of a flow; throws FlowFailure when the status is not expected. */
export type Send = (req: FlowRequest) => Promise<FlowAnswer>;

/** One run of a flow for one item. `send` goes to the target under load. */
export type Flow<Item> = (send: Send, item: Item) => Promise<void>;

export class FlowFailure extends Error {
  constructor(
    readonly step: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${step}: HTTP ${status} ${body.slice(0, 300)}`);
  }
}

export interface FlowResult {
  /** Flows started / completed / failed. */
  started: number;
  completed: number;
  failed: number;
  /** Completed flows per second over the run's wall time. */
  rate: number;
  seconds: number;
  /** Milliseconds per completed flow (paced: from its scheduled start). */
  flowLatency: LatencySummary;
  /** Milliseconds per request, by step (2xx answers of completed or failed flows alike). */
  steps: Record<string, { count: number; latency: LatencySummary }>;
  /** `step status` → count, for the failures. */
  failures: Record<string, number>;
  /** The first failure's text, to print. */
  firstFailure: string | null;
  /** Items not reached (the run ended first). */
  unused: number;
}

export function summarise(ms: number[]): LatencySummary {
  const sorted = [...ms].sort((a, b) => a - b);
  const mean = sorted.length === 0 ? 0 : sorted.reduce((s, v) => s + v, 0) / sorted.length;
  return {
    mean,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p97_5: percentile(sorted, 0.975),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? 0,
  };
}

class Recorder {
  started = 0;
  completed = 0;
  failed = 0;
  readonly flowMs: number[] = [];
  readonly stepMs = new Map<string, number[]>();
  readonly failures: Record<string, number> = {};
  firstFailure: string | null = null;

  step(name: string, ms: number): void {
    let list = this.stepMs.get(name);
    if (!list) this.stepMs.set(name, (list = []));
    list.push(ms);
  }

  fail(err: unknown): void {
    this.failed++;
    const key = err instanceof FlowFailure ? `${err.step} ${err.status}` : `error ${err instanceof Error ? err.message.slice(0, 60) : String(err)}`;
    this.failures[key] = (this.failures[key] ?? 0) + 1;
    this.firstFailure ??= err instanceof Error ? err.message : String(err);
  }

  result(seconds: number, unused: number): FlowResult {
    const steps: FlowResult['steps'] = {};
    for (const [name, ms] of this.stepMs) steps[name] = { count: ms.length, latency: summarise(ms) };
    return {
      started: this.started,
      completed: this.completed,
      failed: this.failed,
      rate: seconds > 0 ? this.completed / seconds : 0,
      seconds,
      flowLatency: summarise(this.flowMs),
      steps,
      failures: this.failures,
      firstFailure: this.firstFailure,
      unused,
    };
  }
}

/** A `Send` to `base` over `agent`, recording each step's latency from `since()` (the moment it could first have been sent). */
function sender(base: string, agent: http.Agent, rec: Recorder, timeoutMs: number): (since: () => number) => Send {
  const url = new URL(base);
  return (since) => (req) =>
    new Promise<FlowAnswer>((resolve, reject) => {
      const from = since();
      const headers: Record<string, string> = { ...req.headers };
      if (req.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(req.body));
      const r = http.request({ host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = performance.now() - from;
          const body = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          rec.step(req.step, ms);
          if (!(req.expect ?? [200, 201]).includes(status)) return reject(new FlowFailure(req.step, status, body));
          let json: unknown;
          try {
            json = body ? JSON.parse(body) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status, headers: res.headers, body, json });
        });
        res.on('error', reject);
      });
      r.on('timeout', () => r.destroy(new Error(`${req.step}: no answer within ${timeoutMs} ms`)));
      r.on('error', reject);
      r.end(req.body);
    });
}

export interface FlowOptions<Item> {
  base: string;
  items: readonly Item[];
  flow: Flow<Item>;
  /** Flows in flight at most (closed loop: exactly, while items last). */
  concurrency: number;
  /** Seconds. */
  duration: number;
  timeoutMs?: number;
}

/** Runs flows back to back on `concurrency` loops for `duration` s or until the items run out. */
export async function closedLoop<Item>(opts: FlowOptions<Item>): Promise<FlowResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const rec = new Recorder();
  const send = sender(opts.base, agent, rec, opts.timeoutMs ?? 10_000);
  let next = 0;
  const t0 = performance.now();
  const end = t0 + opts.duration * 1000;
  async function loop(): Promise<void> {
    while (performance.now() < end && next < opts.items.length) {
      const item = opts.items[next++]!;
      rec.started++;
      const start = performance.now();
      let last = start;
      const s = send(() => last);
      const timed: Send = async (req) => {
        last = performance.now();
        return await s(req);
      };
      try {
        await opts.flow(timed, item);
        rec.completed++;
        rec.flowMs.push(performance.now() - start);
      } catch (err) {
        rec.fail(err);
      }
    }
  }
  await Promise.all(Array.from({ length: opts.concurrency }, loop));
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  return rec.result(seconds, opts.items.length - next);
}

/** Starts a flow every 1/rate s for `duration` s (open loop), at most `concurrency` in flight; waits for the last. */
export async function pacedFlows<Item>(opts: FlowOptions<Item> & { rate: number }): Promise<FlowResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const rec = new Recorder();
  const send = sender(opts.base, agent, rec, opts.timeoutMs ?? 10_000);
  const interval = 1000 / opts.rate;
  const count = Math.min(opts.items.length, Math.floor(opts.rate * opts.duration));
  const running = new Set<Promise<void>>();
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const scheduled = t0 + i * interval;
    const wait = scheduled - performance.now();
    if (wait > 1) await sleep(wait);
    while (running.size >= opts.concurrency) await Promise.race(running);
    const item = opts.items[i]!;
    rec.started++;
    let first = true;
    let last = scheduled;
    const s = send(() => last);
    const timed: Send = async (req) => {
      if (!first) last = performance.now();
      first = false;
      return await s(req);
    };
    const p: Promise<void> = opts
      .flow(timed, item)
      .then(
        () => {
          rec.completed++;
          rec.flowMs.push(performance.now() - scheduled);
        },
        (err: unknown) => rec.fail(err),
      )
      .finally(() => running.delete(p));
    running.add(p);
  }
  await Promise.all(running);
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  return rec.result(seconds, opts.items.length - count);
}

/**
 * Seeded items (escrows, payments) handed out in order, each to one flow: a run takes the
 * next ones and gives back those its flows did not reach (the last ones taken).
 */
export class ItemQueue<T> {
  private next = 0;
  constructor(private readonly items: readonly T[]) {}
  take(n: number): T[] {
    const out = this.items.slice(this.next, this.next + n);
    this.next += out.length;
    return out;
  }
  giveBack(n: number): void {
    this.next -= n;
  }
  get left(): number {
    return this.items.length - this.next;
  }
}

/** A server under load in `pacedRounds`: the API or a floor. */
export interface PacedTarget {
  name: string;
  base: string;
}

export interface PacedRoundOptions<Item> {
  targets: readonly PacedTarget[];
  /** The items of one run (each flow consumes one), made anew per target and round. */
  items: (target: PacedTarget, round: number) => Item[];
  flow: Flow<Item>;
  rate: number;
  duration: number;
  rounds: number;
  concurrency: number;
  /** A run with a larger share of failed flows stops the bench (bench/lib/autocannon.ts MAX_BAD_SHARE). */
  maxFailedShare: number;
  /** Called after each run (e.g. to check the servers are alive). */
  after?: (target: PacedTarget, result: FlowResult) => void;
}

/**
 * The targets at the same even rate, one after another, for `rounds` rounds (the order
 * reversed every other round, as bench/lib/autocannon.ts `runRounds`): each target's
 * results in round order. Issue 29's latency goal for write routes compares the API's p99
 * with its floor's in the same run.
 */
export async function pacedRounds<Item>(opts: PacedRoundOptions<Item>): Promise<Map<string, FlowResult[]>> {
  const results = new Map<string, FlowResult[]>(opts.targets.map((t) => [t.name, []]));
  for (let round = 1; round <= opts.rounds; round++) {
    for (const target of round % 2 === 1 ? opts.targets : [...opts.targets].reverse()) {
      const r = await pacedFlows({ base: target.base, items: opts.items(target, round), flow: opts.flow, concurrency: opts.concurrency, duration: opts.duration, rate: opts.rate });
      opts.after?.(target, r);
      if (r.failed > opts.maxFailedShare * Math.max(1, r.started)) {
        throw new Error(`${target.name} at ${opts.rate}/s: ${r.failed} of ${r.started} flows failed (${JSON.stringify(r.failures)}); first: ${r.firstFailure ?? ''}`);
      }
      results.get(target.name)!.push(r);
      const steps = Object.entries(r.steps)
        .map(([name, s]) => `${name} p99 ${s.latency.p99.toFixed(1)} ms`)
        .join(', ');
      console.log(`bench: paced round ${round}/${opts.rounds} ${target.name}: ${Math.round(r.rate)} flows/s of ${opts.rate} scheduled, flow p99 ${r.flowLatency.p99.toFixed(1)} ms (${steps})`);
    }
  }
  return results;
}
