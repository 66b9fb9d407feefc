/**
 * The worker process (started by workers/index.ts once tracing is set up): runs the BullMQ
 * processors of every queue (or WORKER_QUEUES), the outbox relay, the gateway-callbacks
 * inbox and the periodic schedules; closes gracefully on SIGTERM/SIGINT.
 */
import { Worker } from 'bullmq';
import { config } from '../shared/config.js';
import { db, refuseUnsuitableDatabase } from '../shared/db.js';
import { logger } from '../shared/logger.js';
import { runtimeWarning } from '../shared/runtime.js';
import { relayOnce } from '../shared/outbox.js';
import { CALLBACK_BATCH, drainCallbacks } from '../shared/payments/service.js';
import { closeQueues, isQueueName, QUEUE_NAMES, type QueueName } from '../shared/queues.js';
import { createQueueConnection, redis } from '../shared/redis.js';
import { closeMailTransport } from '../shared/mail/transport.js';
import { closeSandboxGateway } from '../shared/payments/gateways/sandbox.js';
import { startMetricsServer } from '../shared/metrics-server.js';
import { queueTelemetry, stopTracing } from '../shared/tracing.js';
import { buildRegistry, queueProcessor, upsertMaintenanceSchedules, watchWorker, workerResilience } from './registry.js';

const registry = buildRegistry();
const SCHEDULE_REFRESH_MS = 5 * 60_000;

const selected: QueueName[] = config.workerQueues.length > 0 ? [] : [...QUEUE_NAMES];
for (const name of config.workerQueues) {
  if (!isQueueName(name)) {
    console.error(`Invalid configuration: WORKER_QUEUES: unknown queue ${name} (known: ${QUEUE_NAMES.join(', ')})`);
    process.exit(78);
  }
  selected.push(name);
}

// The session settings the code assumes (UTF8, standard strings; decision 0025), or no start.
const unsupported = runtimeWarning();
if (unsupported) logger.warn({ node: process.versions.node }, unsupported);
await refuseUnsuitableDatabase((err) => logger.warn({ err }, 'database settings not checked: the database did not answer'));

const connection = createQueueConnection();
const workers = selected.map((name) => {
  const worker = new Worker(name, queueProcessor(registry, name), {
    connection,
    prefix: config.queuePrefix,
    concurrency: config.workerConcurrency,
    ...workerResilience(),
    // BullMQ's consumer span per job, the child of the producer span the relay made (shared/tracing.ts).
    ...queueTelemetry(),
  });
  watchWorker(worker, name);
  return worker;
});

// The worker's own /metrics (issue 47): the counters only this process moves.
const metricsServer = config.workerMetricsPort > 0 ? await startMetricsServer(config.workerMetricsHost, config.workerMetricsPort, config.metricsToken) : null;
if (metricsServer) logger.info({ host: config.workerMetricsHost, port: config.workerMetricsPort }, 'worker metrics served');

// Periodic maintenance (idempotent upsert: every worker copy may call it). Upserted again
// every few minutes so the schedules, and the outbox sweeper with them, survive a Redis
// that lost its keys.
let schedules: NodeJS.Timeout | undefined;
if (selected.includes('timers')) {
  await upsertMaintenanceSchedules();
  schedules = setInterval(() => {
    upsertMaintenanceSchedules().catch((err: unknown) => logger.error({ err }, 'maintenance schedules: upsert failed; retrying'));
  }, SCHEDULE_REFRESH_MS);
  schedules.unref();
}

let stopping = false;
/** Runs `step` again at once while it finds a full batch, else after OUTBOX_POLL_MS. */
const pollLoop = async (what: string, step: () => Promise<boolean>): Promise<void> => {
  while (!stopping) {
    try {
      if (await step()) continue;
    } catch (err) {
      logger.error({ err }, `${what} failed; retrying`);
    }
    await new Promise((resolve) => setTimeout(resolve, config.outboxPollMs));
  }
};
const loops = [pollLoop('outbox relay', async () => (await relayOnce()) > 0)];
// Stored gateway callbacks are this queue's inbox: reconciled in batches (decision 0009).
if (selected.includes('gateway-callbacks')) {
  loops.push(
    pollLoop('gateway callbacks', async () => {
      const { processed, failed } = await drainCallbacks();
      return processed.length + failed.length >= CALLBACK_BATCH;
    }),
  );
}

logger.info({ queues: selected }, 'workers running');

async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  clearInterval(schedules);
  logger.info({ signal }, 'workers stopping: finishing active jobs');
  const force = setTimeout(() => {
    logger.error('worker shutdown timed out; exiting');
    process.exit(1);
  }, 30_000);
  force.unref();
  await Promise.all(loops);
  await Promise.allSettled(workers.map((w) => w.close()));
  metricsServer?.close();
  await Promise.allSettled([closeQueues(), db.destroy(), redis.quit(), connection.quit(), closeSandboxGateway()]);
  closeMailTransport();
  await stopTracing();
  logger.info('workers stopped');
  process.exit(0);
}

process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
