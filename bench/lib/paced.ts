/**
 * An open-loop load generator for latency at a fixed rate: requests are sent on an even
 * schedule (every 1/rate s) whether or not earlier ones have been answered, over up to
 * `connections` keep-alive connections, and each latency is measured from the request's
 * *scheduled* send time to the end of its response (as wrk2 does). A server that stalls
 * therefore shows the stall in every request scheduled during it: no coordinated
 * omission, and no correction needed.
 *
 * Why not autocannon's `overallRate`: in autocannon 9 a rate is a per-connection budget
 * per second (lib/httpClient.js): each connection sends its share back to back as fast as
 * the server answers, then waits for the next second, and all connections' seconds start
 * together. At 1,000 requests/s over 50 connections that is a burst at full concurrency
 * at the start of every second, then silence, so the latencies are those of a saturated
 * server. Its coordinated-omission correction (lib/run.js) passes `Math.ceil(1 / rate)`
 * as the expected interval, i.e. 1 ms whatever the rate, so a 20 ms response is recorded
 * as 20 samples (20, 19, …, 1 ms), which inflates the tail further. bench/auth-read still
 * reports one autocannon `overallRate` round beside this, to compare with issue 17's
 * figures.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { median, percentile } from './format.js';
import { judgeRounds, type RoundsVerdict } from './verdict.js';

export interface PacedOptions {
  url: string;
  /** Requests per second. */
  rate: number;
  /** Seconds of scheduled sends. */
  duration: number;
  /** At most this many connections (keep-alive); requests beyond wait for one. */
  connections: number;
  /** Headers of the next request (called once per request, in send order). */
  headers: () => Record<string, string>;
  /** A request unanswered after this long counts as a timeout. */
  timeoutMs?: number;
}

export interface LatencySummary {
  mean: number;
  p50: number;
  p90: number;
  p97_5: number;
  p99: number;
  max: number;
}

export interface PacedResult {
  scheduled: number;
  completed: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Responses per second over the scheduled duration. */
  achievedRate: number;
  /** Milliseconds, from the scheduled send time; 2xx responses only. */
  latency: LatencySummary;
  statusCounts: Record<string, number>;
}

/** Opens the connections before the clock starts, so no scheduled request pays for a TCP handshake. */
async function openConnections(agent: http.Agent, url: URL, count: number, headers: () => Record<string, string>): Promise<void> {
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const req = http.request(url, { agent, headers: headers() }, (res) => {
            res.resume();
            res.on('end', resolve);
            res.on('error', () => resolve());
          });
          req.on('error', () => resolve());
          req.end();
        }),
    ),
  );
}

export async function runPaced(opts: PacedOptions): Promise<PacedResult> {
  const url = new URL(opts.url);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections, maxFreeSockets: opts.connections, scheduling: 'fifo' });
  await openConnections(agent, url, opts.connections, opts.headers);

  const total = Math.max(1, Math.round(opts.rate * opts.duration));
  const interval = 1000 / opts.rate;
  const latencies = new Float64Array(total);
  const statusCounts: Record<string, number> = {};
  let ok = 0;
  let completed = 0;
  let non2xx = 0;
  let errors = 0;
  let timeouts = 0;
  let outstanding = 0;
  let sent = 0;
  let allAnswered: () => void = () => {};
  const answered = new Promise<void>((resolve) => {
    allAnswered = resolve;
  });
  const settle = () => {
    outstanding--;
    if (sent === total && outstanding === 0) allAnswered();
  };

  const fire = (scheduledAt: number) => {
    outstanding++;
    let done = false;
    const req = http.request(url, { agent, headers: opts.headers() }, (res) => {
      res.resume();
      res.on('end', () => {
        if (done) return;
        done = true;
        const status = res.statusCode ?? 0;
        statusCounts[status] = (statusCounts[status] ?? 0) + 1;
        completed++;
        if (status >= 200 && status < 300) latencies[ok++] = performance.now() - scheduledAt;
        else non2xx++;
        settle();
      });
    });
    req.setTimeout(timeoutMs, () => {
      if (done) return;
      done = true;
      timeouts++;
      req.destroy();
      settle();
    });
    req.on('error', () => {
      if (done) return;
      done = true;
      errors++;
      settle();
    });
    req.end();
  };

  const start = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - start) / interval) + 1);
      while (sent < due) fire(start + sent++ * interval);
      if (sent >= total) return resolve();
      setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
    };
    tick();
  });
  if (outstanding > 0) await Promise.race([answered, sleep(timeoutMs + 1000, undefined, { ref: false })]);
  agent.destroy();

  const sorted = latencies.slice(0, ok).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    scheduled: total,
    completed,
    non2xx,
    errors,
    timeouts,
    achievedRate: completed / opts.duration,
    latency: {
      mean: ok ? sum / ok : Number.NaN,
      p50: percentile(sorted, 0.5),
      p90: percentile(sorted, 0.9),
      p97_5: percentile(sorted, 0.975),
      p99: percentile(sorted, 0.99),
      max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    },
    statusCounts,
  };
}

/** Issue 29's paced goal for a write route: p99 under 30 ms, or at most 1.5× its floor's in the same round. */
export const P99_GOAL = { ms: 30, factor: 1.5 } as const;

/** One step's p99 over paced rounds of the API and its floor, judged on the median round (bench/lib/verdict.ts). */
export interface PacedVerdict extends RoundsVerdict {
  /** The median of `ratios`: the figure the verdict uses. */
  ratio: number;
  /** The median p99 of each side, ms. */
  api: number;
  floor: number;
}

/**
 * Met when the API's median p99 is under 30 ms, or the median of the per-round ratios (API
 * p99 ÷ floor p99) is at most 1.5×; noisy (neither) when the latter decides and the rounds
 * spread more than 2×.
 */
export function pacedVerdict<T>(rounds: readonly { api: T; floor: T }[], p99: (side: T) => number): PacedVerdict {
  const api = median(rounds.map((r) => p99(r.api)));
  const v = judgeRounds(
    rounds.map((r) => p99(r.api) / p99(r.floor)),
    (ratio) => ratio <= P99_GOAL.factor,
    api < P99_GOAL.ms,
  );
  return { ...v, ratio: v.median, api, floor: median(rounds.map((r) => p99(r.floor))) };
}

/**
 * The paced runs' rate: `override` when set; else the issue's rate when the slower side's
 * median closed-loop rate reaches it, or 80% of that rate when it does not (a paced run
 * past saturation measures its queue, not its p99). `unit` names the rate in the note.
 */
export function pacedRate(opts: { override: number | null; overrideName: string; issueRate: number; issueNote: string; slower: number; unit: string }): { rate: number; note: string } {
  if (opts.override !== null) return { rate: opts.override, note: opts.overrideName };
  if (opts.slower >= opts.issueRate) return { rate: opts.issueRate, note: opts.issueNote };
  return {
    rate: Math.max(1, Math.floor(opts.slower * 0.8)),
    note: `80% of the slower side's median closed-loop rate (${Math.round(opts.slower).toLocaleString('en-US')} ${opts.unit}): ${opts.issueNote} is past what either side sustains here`,
  };
}
