/**
 * The worker process's /metrics (issue 47): the same registry as the API's, so the figures
 * only the worker moves (stalled jobs, the outbox relay's dead letters and re-enqueues) reach
 * Prometheus. A bare node:http server on WORKER_METRICS_HOST:WORKER_METRICS_PORT answering
 * `GET /metrics` (with `Authorization: Bearer <METRICS_TOKEN>` when the token is set) and
 * 404 to anything else.
 */
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { safeEqual } from './crypto.js';
import { registry } from './metrics.js';

export async function startMetricsServer(host: string, port: number, token: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    const given = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    if (token && !safeEqual(given, token)) {
      res.writeHead(401, { 'Content-Type': 'text/plain' }).end('metrics need the metrics token\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      () => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics failed\n'),
    );
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}
