import client from 'prom-client';
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
