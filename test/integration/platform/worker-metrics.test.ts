/**
 * Issue 47: the worker process's own /metrics (WORKER_METRICS_PORT), so the figures only
 * the worker moves reach Prometheus: stalled jobs (`queue_jobs_stalled_total`, counted by
 * `watchWorker`), the outbox relay's dead letters and re-enqueues. Loopback here; the token
 * guards it as it guards the API's.
 */
import type { AddressInfo } from 'node:net';
import { Worker } from 'bullmq';
import { expect } from 'chai';
import { config } from '../../../shared/config.js';
import { registry } from '../../../shared/metrics.js';
import { startMetricsServer } from '../../../shared/metrics-server.js';
import { createQueueConnection } from '../../../shared/redis.js';
import { watchWorker } from '../../../workers/registry.js';

async function stalledCount(queue: string): Promise<number> {
  const text = await registry.getSingleMetricAsString('queue_jobs_stalled_total');
  const line = text.split('\n').find((l) => l.startsWith(`queue_jobs_stalled_total{queue="${queue}"} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe("the worker's metrics (issue 47)", () => {
  it('counts a stalled job of a watched worker by queue', async () => {
    const connection = createQueueConnection();
    const worker = new Worker('mail', null, { connection, prefix: config.queuePrefix, autorun: false });
    try {
      watchWorker(worker, 'mail');
      const before = await stalledCount('mail');
      worker.emit('stalled', 'job-1', 'active');
      worker.emit('stalled', 'job-2', 'active');
      expect(await stalledCount('mail')).to.equal(before + 2);
    } finally {
      await worker.close();
      await connection.quit();
    }
  });

  it('serves /metrics on loopback with the stalled and outbox counters, behind the token when set, 404 elsewhere', async () => {
    for (const token of ['', 'metrik-rahasia']) {
      const server = await startMetricsServer('127.0.0.1', 0, token);
      try {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const open = await fetch(`${base}/metrics`);
        if (token) {
          expect(open.status).to.equal(401);
          const withToken = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
          expect(withToken.status).to.equal(200);
          expect(await withToken.text()).to.include('# TYPE queue_jobs_stalled_total counter');
          expect((await fetch(`${base}/metrics`, { headers: { Authorization: 'Bearer wrong' } })).status).to.equal(401);
        } else {
          expect(open.status).to.equal(200);
          expect(open.headers.get('content-type')).to.match(/^text\/plain/);
          const text = await open.text();
          expect(text).to.include('# TYPE queue_jobs_stalled_total counter');
          expect(text).to.include('# TYPE outbox_dead_letters_total counter');
        }
        expect((await fetch(`${base}/other`)).status).to.equal(404);
        expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).to.equal(404);
      } finally {
        server.close();
      }
    }
  });
});
