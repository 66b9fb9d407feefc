import { expect } from 'chai';
import { Redis } from 'ioredis';
import { config } from '../../../shared/config.js';
import { api } from '../../helpers/app.js';

describe('platform: readiness and metrics', () => {
  const savedToken = config.metricsToken;
  afterEach(() => {
    config.metricsToken = savedToken;
  });

  it('GET /readyz answers 200 with every check ok', async () => {
    const res = await api().get('/readyz').expect(200);
    expect(res.body).to.deep.equal({ success: true, data: { status: 'ready', checks: { postgres: 'ok', redis: 'ok' } } });
  });

  it('GET /readyz answers 503 NOT_READY when Redis does not answer', async () => {
    // Port 1 on loopback refuses connections; no retries, no offline queue.
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    dead.on('error', () => undefined);
    try {
      const res = await api({ redis: dead }).get('/readyz').expect(503);
      expect(res.body.success).to.equal(false);
      expect(res.body.error.code).to.equal('NOT_READY');
      expect(res.body.error.checks).to.deep.equal({ postgres: 'ok', redis: 'unavailable' });
    } finally {
      dead.disconnect();
    }
  });

  it('GET /metrics returns Prometheus text with http_requests_total and queue_jobs', async () => {
    config.metricsToken = '';
    const app = api();
    await app.get('/readyz').expect(200);
    await app.get('/no/such/route').expect(404);
    const res = await app.get('/metrics').expect(200);
    expect(res.headers['content-type']).to.match(/^text\/plain/);
    expect(res.text).to.include('# TYPE http_requests_total counter');
    expect(res.text).to.match(/^http_requests_total\{method="GET",route="\/readyz",status="200"\} \d+$/m);
    // Unmatched paths share one label (no cardinality blow-up from random URLs).
    expect(res.text).to.match(/^http_requests_total\{method="GET",route="unmatched",status="404"\} \d+$/m);
    expect(res.text).to.not.include('/no/such/route');
    expect(res.text).to.include('# TYPE queue_jobs gauge');
    expect(res.text).to.match(/^queue_jobs\{queue="timers",state="waiting"\} \d+$/m);
    expect(res.text).to.include('http_request_duration_seconds_bucket');
  });

  it('GET /metrics needs the bearer token when METRICS_TOKEN is set', async () => {
    config.metricsToken = 'metrics-secret-1';
    const denied = await api().get('/metrics').expect(401);
    expect(denied.body.error.code).to.equal('UNAUTHORIZED');
    await api().get('/metrics').set('Authorization', 'Bearer wrong').expect(401);
    const res = await api().get('/metrics').set('Authorization', 'Bearer metrics-secret-1').expect(200);
    expect(res.text).to.include('http_requests_total');
  });
});
