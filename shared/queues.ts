/**
 * Queue names, the job registry (job name -> queue) and producers. Job data carries ids
 * only: Redis stores it in clear text; each job's payload type and schema are in
 * shared/job-payloads.ts. Workers (workers/<queue>.ts) provide processors.
 */
import { Queue, type Job, type JobsOptions } from 'bullmq';
import { config } from './config.js';
import { checkPayload, type JobPayloads } from './job-payloads.js';
import { createQueueConnection } from './redis.js';
import { queueTelemetry } from './tracing.js';

export { checkPayload, JobPayloadError, payloadProblem, type JobPayload, type JobPayloads, type NoPayload } from './job-payloads.js';

export const QUEUE_NAMES = [
  'gateway-callbacks',
  'upload-sanitise',
  'tracking-refresh',
  'mail',
  'notifications',
  'timers',
  'payouts',
  'exports',
  'webhooks',
] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/** Every job the system knows, with its queue. A job without a processor stops the worker at start. */
export const JOBS = {
  'mail.send': 'mail',
  'notifications.create': 'notifications',
  'notifications.create-batch': 'notifications',
  'tracking.refresh': 'tracking-refresh',
  'escrows.expire': 'timers',
  'escrows.auto-release': 'timers',
  'escrows.sweep-timers': 'timers',
  'orders.sla-refund': 'timers',
  'orders.sweep-sla': 'timers',
  'payouts.send': 'payouts',
  'payouts.sweep-stuck': 'payouts',
  'payouts.disburse': 'payouts',
  'payouts.sweep-disbursements': 'payouts',
  'payments.process-callback': 'gateway-callbacks',
  'payments.poll-pending': 'gateway-callbacks',
  'maintenance.purge-idempotency-keys': 'timers',
  'maintenance.sweep-outbox': 'timers',
  'maintenance.reconcile-enterprise': 'timers',
  'maintenance.check-ledger': 'timers',
  'exports.audit-csv': 'exports',
  'exports.report-csv': 'exports',
  'exports.purge-expired': 'exports',
  'uploads.sanitise': 'upload-sanitise',
  'uploads.purge-unbound': 'upload-sanitise',
  'webhooks.dispatch': 'webhooks',
  'webhooks.deliver': 'webhooks',
  'webhooks.send-once': 'webhooks',
  'webhooks.sweep': 'webhooks',
} as const satisfies Record<string, QueueName>;
export type JobName = keyof typeof JOBS;

export type JobScalar = string | number | boolean | null;
/** Job data before its job's schema is checked: flat ids and flags, or a list of such records (a batch). */
export type JobData = Record<string, JobScalar | Record<string, JobScalar>[]>;

export const defaultJobOptions: JobsOptions = {
  attempts: 8,
  backoff: { type: 'exponential', delay: 2_000 },
  // Completed jobs are kept for a week so a re-sent jobId is recognised and ignored. The
  // lasting record is outbox.completed_at in Postgres (decision 0006): the sweeper never
  // re-sends a completed row, so nothing depends on BullMQ keeping a job longer.
  removeOnComplete: { age: 7 * 24 * 3600, count: 50_000 },
  removeOnFail: { age: 30 * 24 * 3600 },
};

export function isQueueName(name: string): name is QueueName {
  return (QUEUE_NAMES as readonly string[]).includes(name);
}

export function isJobName(name: string): name is JobName {
  return Object.prototype.hasOwnProperty.call(JOBS, name);
}

/**
 * A producer: BullMQ's Queue whose `add` takes a known job with its payload type, and
 * checks the payload against the job's schema before anything reaches Redis (a wrong one
 * throws JobPayloadError and is never queued). The outbox relay's `addBulk` sends rows
 * whose payload was checked when they were written (shared/outbox.ts).
 */
export class JobQueue extends Queue {
  override async add<N extends JobName>(name: N, data: JobPayloads[N], opts?: JobsOptions): Promise<Job> {
    if (!isJobName(name)) throw new Error(`unknown job ${String(name)}`);
    return super.add(name, checkPayload(name, data), opts);
  }
}

const producers = new Map<QueueName, JobQueue>();
let producerConnection: ReturnType<typeof createQueueConnection> | null = null;

export function getQueue(name: QueueName): JobQueue {
  let q = producers.get(name);
  if (!q) {
    producerConnection ??= createQueueConnection();
    // With tracing on, BullMQ's producer span per add, its context carried in the job (shared/tracing.ts).
    q = new JobQueue(name, { connection: producerConnection, prefix: config.queuePrefix, defaultJobOptions, ...queueTelemetry() });
    producers.set(name, q);
  }
  return q;
}

export function allQueues(): JobQueue[] {
  return QUEUE_NAMES.map(getQueue);
}

export async function closeQueues(): Promise<void> {
  await Promise.all([...producers.values()].map((q) => q.close()));
  producers.clear();
  if (producerConnection) {
    producerConnection.disconnect();
    producerConnection = null;
  }
}
