import type { Knex } from 'knex';
import client from 'prom-client';
import { clock } from './clock.js';
import { db } from './db.js';
import { lastLedgerCheck } from './ledger/check-record.js';
import { logger } from './logger.js';
import { allQueues } from './queues.js';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

/**
 * The HTTP metrics, counted on every request. prom-client's Counter and Histogram
 * validate and hash the label set on every call (bench/: about 3% of a cheap request),
 * so these two keep plain numbers per series and render them in prom-client's format
 * only when /metrics is scraped: `http_requests_total` (counter: method, route, status)
 * and `http_request_duration_seconds` (histogram: method, route).
 */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface RequestSeries {
  labels: { method: string; route: string; status: string };
  count: number;
}

interface DurationSeries {
  labels: { method: string; route: string };
  /** Per bucket (not cumulative), the last one is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

const requestSeries = new Map<string, RequestSeries>();
const durationSeries = new Map<string, DurationSeries>();

interface MetricValue {
  value: number;
  labels: Record<string, string>;
  metricName?: string;
}

/** A metric prom-client's registry can render (the shape of its own `get()`). */
function scrapedMetric(name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue[]) {
  return {
    name,
    help,
    type,
    aggregator: 'sum' as const,
    get: () => Promise.resolve({ name, help, type, values: values(), aggregator: 'sum' as const }),
    reset: () => undefined,
  };
}

registry.registerMetric(
  scrapedMetric('http_requests_total', 'HTTP requests by method, route and status', 'counter', () =>
    [...requestSeries.values()].map((s) => ({ value: s.count, labels: { ...s.labels } })),
  ) as unknown as client.Metric,
);

registry.registerMetric(
  scrapedMetric('http_request_duration_seconds', 'HTTP request latency by method and route', 'histogram', () =>
    [...durationSeries.values()].flatMap((s) => {
      let cumulative = 0;
      const buckets = s.buckets.map((n, i) => {
        cumulative += n;
        const le = i < DURATION_BUCKETS.length ? String(DURATION_BUCKETS[i]) : '+Inf';
        return { value: cumulative, labels: { ...s.labels, le }, metricName: 'http_request_duration_seconds_bucket' };
      });
      return [
        ...buckets,
        { value: s.sum, labels: { ...s.labels }, metricName: 'http_request_duration_seconds_sum' },
        { value: s.count, labels: { ...s.labels }, metricName: 'http_request_duration_seconds_count' },
      ];
    }),
  ) as unknown as client.Metric,
);

/** Counts one HTTP request and its latency (route is the matched template, never the raw path). */
export function recordRequest(method: string, route: string, status: number, seconds: number): void {
  const timerKey = `${method} ${route}`;
  const counterKey = `${timerKey} ${status}`;
  let counter = requestSeries.get(counterKey);
  if (!counter) {
    counter = { labels: { method, route, status: String(status) }, count: 0 };
    requestSeries.set(counterKey, counter);
  }
  counter.count += 1;
  let timer = durationSeries.get(timerKey);
  if (!timer) {
    timer = { labels: { method, route }, buckets: new Array<number>(DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
    durationSeries.set(timerKey, timer);
  }
  let i = 0;
  while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
  timer.buckets[i]! += 1;
  timer.sum += seconds;
  timer.count += 1;
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

// ---- Figures an operator is paged for (issue 47, "Figures that wake someone") -------------
// Read at scrape time, each from one indexed query, so every process serving /metrics
// reports them; an age is 0 when nothing waits.

const ageSeconds = (since: Date | string | null | undefined, now: Date): number =>
  since ? Math.max(0, (now.getTime() - new Date(since).getTime()) / 1000) : 0;

type Sample = readonly [labels: Record<string, string>, value: number];
const one = (value: number): Sample[] => [[{}, value]];

/**
 * A gauge read when /metrics is scraped: `read` answers its samples, which replace the last
 * ones. A store that does not answer is logged and leaves the last values standing.
 */
function scrapedGauge(name: string, help: string, labelNames: readonly string[], read: () => Promise<readonly Sample[]>): void {
  new client.Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      try {
        const samples = await read();
        this.reset();
        for (const [labels, value] of samples) this.set(labels, value);
      } catch (err) {
        logger.warn({ err }, `${name} metric: its store did not answer`);
      }
    },
  });
}

scrapedGauge('outbox_oldest_due_age_seconds', 'Age of the oldest outbox row that is due and not relayed (0: none): the relay is stuck or behind', [], async () => {
  const now = clock.now();
  const row = await db('outbox').whereNull('relayed_at').whereNull('dead_at').where('available_at', '<=', now).min<{ oldest: Date | null }>({ oldest: 'available_at' }).first();
  return one(ageSeconds(row?.oldest, now));
});

scrapedGauge('queue_oldest_waiting_age_seconds', 'Age of the oldest job waiting in each queue (0: none waiting): its workers are down or behind', ['queue'], async () => {
  const now = clock.now();
  const samples: Sample[] = [];
  for (const q of allQueues()) {
    // Ascending: the oldest waiting job first (BullMQ's wait list takes new jobs at its head).
    const [oldest] = await q.getJobs(['waiting'], 0, 0, true);
    samples.push([{ queue: q.name }, oldest ? ageSeconds(new Date(oldest.timestamp), now) : 0]);
  }
  return samples;
});

/**
 * Measured from when each payout became due to be sent, not from its last attempt (an
 * attempt that keeps failing and retrying must not look fresh): a deal payout from its
 * creation at release, a withdrawal from its approval.
 */
scrapedGauge(
  'payout_oldest_processing_age_seconds',
  'Age of the oldest payout being sent, by kind (deal payouts since released, withdrawals since approved; 0: none): a provider or the payout run is stuck',
  ['kind'],
  async () => {
    const now = clock.now();
    const deal = await db('disbursements').where('status', 'processing').min<{ oldest: Date | null }>({ oldest: 'created_at' }).first();
    const withdrawal = await db('withdrawals').where('status', 'processing').min<{ oldest: Date | null }>({ oldest: 'approved_at' }).first();
    return [
      [{ kind: 'deal_payout' }, ageSeconds(deal?.oldest, now)],
      [{ kind: 'withdrawal' }, ageSeconds(withdrawal?.oldest, now)],
    ];
  },
);

scrapedGauge('webhook_endpoints_disabled', 'Webhook endpoints disabled after failing deliveries (workspaces stop hearing from us)', [], async () => {
  const [row] = await db('webhook_endpoints').where('status', 'disabled').count<{ n: string }[]>({ n: '*' });
  return one(Number(row?.n ?? 0));
});

scrapedGauge('reconciliation_workspaces_with_differences', 'Workspaces whose books and deals differed at the latest nightly reconciliation (-1: it never ran)', [], async () => {
  const row = await db('enterprise_reconciliation_runs')
    .orderBy([{ column: 'run_on', order: 'desc' }, { column: 'created_at', order: 'desc' }])
    .first<{ workspaces_with_differences: number } | undefined>('workspaces_with_differences');
  return one(row ? Number(row.workspaces_with_differences) : -1);
});

/**
 * Jobs a worker found stalled (their lock ran out: the worker that held them died or its
 * event loop was blocked past WORKER_LOCK_MS), by queue. Counted in the worker process
 * (`watchWorker`), served by its own /metrics (WORKER_METRICS_PORT).
 */
export const jobsStalled = new client.Counter({
  name: 'queue_jobs_stalled_total',
  help: 'Jobs found stalled (moved back to wait, or failed after too many stalls), by queue',
  labelNames: ['queue'] as const,
  registers: [registry],
});

// The latest ledger check (`npm run ledger:check`, recorded by shared/ledger/check-record.ts):
// whether every invariant held (1) or not (0), and how long ago it ran; -1 for both before any run.
scrapedGauge('ledger_check_last_ok', 'Whether the latest ledger check found every invariant holding (1) or not (0); -1: it never ran', [], async () => {
  const last = await lastLedgerCheck();
  return one(last ? (last.ok ? 1 : 0) : -1);
});

scrapedGauge('ledger_check_last_run_age_seconds', 'How long ago the latest ledger check ran; -1: it never ran', [], async () => {
  const last = await lastLedgerCheck();
  return one(last ? ageSeconds(last.ran_at, clock.now()) : -1);
});

/** How many of the newest callbacks the callback-to-paid figure reads (by primary key, newest first). */
export const CALLBACK_LATENCY_WINDOW = 500;

/**
 * From a gateway's callback to the payment paid (issue 47): the median and the 99th
 * percentile of `processed_at - received_at` over the newest callbacks (at most
 * CALLBACK_LATENCY_WINDOW, read newest first by primary key) that paid a payment in the last
 * 15 minutes; 0 when none did. The callback is stored when it arrives and reconciled by the
 * worker, so this is the time a paid buyer waits to be seen as paid.
 */
scrapedGauge(
  'payment_callback_to_paid_seconds',
  'Seconds from a gateway callback arriving to its payment paid, by quantile, over paying callbacks of the last 15 minutes (0: none)',
  ['quantile'],
  async () => {
    const since = new Date(clock.now().getTime() - 15 * 60_000);
    const { rows } = await db.raw<{ rows: { p50: number | null; p99: number | null }[] }>(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY s) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY s) AS p99
         FROM (SELECT extract(epoch FROM processed_at - received_at)::float8 AS s, outcome, processed_at
                 FROM payment_callbacks ORDER BY id DESC LIMIT ?) newest
        WHERE outcome = 'paid' AND processed_at >= ?`,
      [CALLBACK_LATENCY_WINDOW, since],
    );
    return [
      [{ quantile: '0.5' }, Number(rows[0]?.p50 ?? 0)],
      [{ quantile: '0.99' }, Number(rows[0]?.p99 ?? 0)],
    ];
  },
);
