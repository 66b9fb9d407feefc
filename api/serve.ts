/** The API process (started by api/server.ts once tracing is set up): listens, and shuts down gracefully on SIGTERM/SIGINT. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { config } from '../shared/config.js';
import { db, limitStatements, refuseUnsuitableDatabase } from '../shared/db.js';
import { flushLogs, logger } from '../shared/logger.js';
import { runtimeWarning } from '../shared/runtime.js';
import { closeQueues } from '../shared/queues.js';
import { redis } from '../shared/redis.js';
import { closeUploadEvents } from '../shared/uploads/service.js';
import { closeSandboxGateway } from '../shared/payments/gateways/sandbox.js';
import { shutdownStreamHubs } from '../shared/notifications/streams.js';
import { stopTracing } from '../shared/tracing.js';
import { createApp } from './app.js';

// Before any connection is made: every API connection gets the statement timeout (issue 42).
limitStatements(config.apiStatementTimeoutMs);
// The session settings the code assumes (UTF8, standard strings; decision 0025), or no start.
const unsupported = runtimeWarning();
if (unsupported) logger.warn({ node: process.versions.node }, unsupported);
await refuseUnsuitableDatabase((err) => logger.warn({ err }, 'database settings not checked: the database did not answer'));
const app = createApp();
// The port it listens on: PORT=0 takes one the system picks, which this line names.
const server: Server = app.listen(config.port, config.host, () => {
  logger.info({ host: config.host, port: (server.address() as AddressInfo).port }, 'api listening');
});
server.keepAliveTimeout = 65_000;

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'api stopping: no new connections, finishing in-flight requests');
  const force = setTimeout(() => {
    logger.error('api shutdown timed out; exiting');
    process.exit(1);
  }, 15_000);
  force.unref();
  // Open notification streams would hold their connections for up to 10 minutes.
  await shutdownStreamHubs();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await Promise.allSettled([db.destroy(), closeQueues(), redis.quit(), closeUploadEvents(), closeSandboxGateway()]);
  await stopTracing();
  logger.info('api stopped');
  await flushLogs();
  process.exit(0);
}

process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
