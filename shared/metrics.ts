import type { Knex } from 'knex';
import client from 'prom-client';
import { clock } from './clock.js';
import { db } from './db.js';
import { logger } from './logger.js';
import { allQueues } from './queues.js';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

export const httpRequests = new client.Counter({
  name: 'http_requests_total',
  help: 'HTTP requests by method, route and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request latency by method and route',
  labelNames: ['method', 'route'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

// Label children are cached: prom-client hashes the label object on every call otherwise.
const counters = new Map<string, client.Counter.Internal>();
const timers = new Map<string, client.Histogram.Internal<'method' | 'route'>>();

/** Counts one HTTP request and its latency (route is the matched template, never the raw path). */
export function recordRequest(method: string, route: string, status: number, seconds: number): void {
  const timerKey = `${method} ${route}`;
  const counterKey = `${timerKey} ${status}`;
  let counter = counters.get(counterKey);
  if (!counter) {
    counter = httpRequests.labels({ method, route, status: String(status) });
    counters.set(counterKey, counter);
  }
  let timer = timers.get(timerKey);
  if (!timer) {
    timer = httpDuration.labels({ method, route });
    timers.set(timerKey, timer);
  }
  counter.inc();
  timer.observe(seconds);
}

new client.Gauge({
  name: 'queue_jobs',
  help: 'Jobs per queue and state',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const q of allQueues()) {
      const counts = await q.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
      for (const [state, n] of Object.entries(counts)) this.set({ queue: q.name, state }, n);
    }
  },
});

/**
 * Outbox health (decision 0006). The counters move in the process that relays or sweeps
 * (the worker); `outbox_rows` reads Postgres at scrape time, so any process serving
 * /metrics reports rows that need an operator (`dead`), rows waiting past their due time
 * (`pending_due`) and rows relayed whose job has not completed yet (`unfinished`).
 */
export const outboxDeadLetters = new client.Counter({
  name: 'outbox_dead_letters_total',
  help: 'Outbox rows dead-lettered (unknown queue or job, job failed for good), by reason',
  labelNames: ['reason'] as const,
  registers: [registry],
});

export const outboxReenqueued = new client.Counter({
  name: 'outbox_reenqueued_total',
  help: 'Relayed outbox rows whose BullMQ job was missing and was enqueued again by the sweeper, by queue',
  labelNames: ['queue'] as const,
  registers: [registry],
});

new client.Gauge({
  name: 'outbox_rows',
  help: 'Outbox rows by state: pending_due (due, not relayed), unfinished (relayed, job not completed), dead',
  labelNames: ['state'] as const,
  registers: [registry],
  async collect() {
    // Each count is served by its own partial index (migration 20261123000300).
    const count = async (q: Knex.QueryBuilder): Promise<number> => {
      const rows = await q.count<{ n: string }[]>({ n: '*' });
      return Number(rows[0]?.n ?? 0);
    };
    try {
      const [pendingDue, unfinished, dead] = await Promise.all([
        count(db('outbox').whereNull('relayed_at').whereNull('dead_at').where('available_at', '<=', clock.now())),
        count(db('outbox').whereNotNull('relayed_at').whereNull('completed_at').whereNull('dead_at')),
        count(db('outbox').whereNotNull('dead_at')),
      ]);
      this.reset();
      this.set({ state: 'pending_due' }, pendingDue);
      this.set({ state: 'unfinished' }, unfinished);
      this.set({ state: 'dead' }, dead);
    } catch (err) {
      logger.warn({ err }, 'outbox_rows metric: Postgres did not answer');
    }
  },
});
