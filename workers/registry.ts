/**
 * The job registry: every job in shared/queues.ts JOBS must have exactly one processor,
 * in the file of its own queue. Start-up fails otherwise. Also the periodic maintenance
 * schedules the worker keeps in place.
 */
import { UnrecoverableError, type Worker } from 'bullmq';
import { config } from '../shared/config.js';
import { logger } from '../shared/logger.js';
import { jobsStalled } from '../shared/metrics.js';
import { markCompleted, outboxIdOf } from '../shared/outbox.js';
import { getQueue, JOBS, isJobName, payloadProblem, type JobName, type QueueName } from '../shared/queues.js';
import { PAYOUT_SWEEP_MS } from '../shared/withdrawals/service.js';
import { mail } from './mail.js';
import { gatewayCallbacks } from './gateway-callbacks.js';
import { notifications } from './notifications.js';
import { payouts } from './payouts.js';
import { timers } from './timers.js';
import { exportsQueue } from './exports.js';
import { uploads } from './uploads.js';
import { tracking } from './tracking.js';
import { webhooks } from './webhooks.js';
import type { Processor, QueueProcessors } from './types.js';

export const PROCESSOR_FILES: QueueProcessors[] = [gatewayCallbacks, mail, notifications, payouts, timers, uploads, exportsQueue, tracking, webhooks];

/**
 * The processors by job name. Each one the registry holds first checks the job's payload
 * against its schema (shared/job-payloads.ts): a malformed payload fails the job for good
 * (UnrecoverableError: retrying cannot mend it), so a processor only sees the payload of
 * its type.
 */
export function buildRegistry(files: QueueProcessors[] = PROCESSOR_FILES): Map<string, Processor> {
  const registry = new Map<string, Processor>();
  const problems: string[] = [];
  for (const file of files) {
    for (const [name, processor] of Object.entries(file.processors)) {
      if (!isJobName(name)) problems.push(`processor for unknown job ${name}`);
      else if (JOBS[name] !== file.queue) problems.push(`job ${name} belongs to queue ${JOBS[name]}, not ${file.queue}`);
      if (registry.has(name)) problems.push(`job ${name} has two processors`);
      registry.set(name, isJobName(name) ? checked(name, processor) : processor);
    }
  }
  for (const name of Object.keys(JOBS)) {
    if (!registry.has(name)) problems.push(`job ${name} has no processor`);
  }
  if (problems.length > 0) throw new Error(`job registry is invalid: ${problems.join('; ')}`);
  return registry;
}

/** `processor`, run only on a payload that matches job `name`'s schema. */
function checked(name: JobName, processor: Processor): Processor {
  return async (job) => {
    const problem = payloadProblem(name, job.data);
    if (problem !== null) throw new UnrecoverableError(`job ${name} (${job.id ?? 'no id'}): malformed payload: ${problem}`);
    return processor(job);
  };
}

/**
 * One BullMQ processor per queue, dispatching by job name. When a job sent from the
 * outbox (jobId `outbox-<id>`) succeeds, its row is marked completed before BullMQ marks
 * the job: the sweeper never re-sends a completed row (decision 0006). If that write
 * fails the job fails and is retried; processors are idempotent.
 */
export function queueProcessor(registry: Map<string, Processor>, queue: QueueName): Processor {
  return async (job) => {
    const processor = registry.get(job.name);
    if (!processor || (isJobName(job.name) && JOBS[job.name] !== queue)) {
      throw new UnrecoverableError(`queue ${queue} has no processor for job ${job.name}`);
    }
    const result = await processor(job);
    const outboxId = outboxIdOf(job.id);
    if (outboxId !== null) await markCompleted(outboxId);
    return result;
  };
}

/**
 * A job whose worker died mid-run (SIGKILL, a lost machine) is "stalled": its lock (held
 * for `lockDuration`, renewed every half of it) runs out, and the next stalled check (every
 * `stalledInterval`, by any worker of the queue) puts it back to wait, up to
 * `maxStalledCount` times, then fails it for good. Another worker takes it within about
 * lockDuration + stalledInterval of the death: 10 s + 5 s by default (BullMQ's own 30 s +
 * 30 s left a killed payout's job waiting up to a minute). BullMQ's default
 * `maxStalledCount` of 1 dead-lettered mail jobs when worker copies were killed every 2 s
 * (npm run chaos); processors are idempotent, so a stalled job is simply run again.
 */
export function workerResilience(o: { lockMs?: number; stalledCheckMs?: number } = {}) {
  return {
    maxStalledCount: 10,
    lockDuration: o.lockMs ?? config.workerLockMs,
    stalledInterval: o.stalledCheckMs ?? config.workerStalledCheckMs,
  } as const;
}

/**
 * What a running worker reports (issue 47): every failure logged, every stalled job counted
 * in `queue_jobs_stalled_total` (served by the worker's /metrics) and logged.
 */
export function watchWorker(worker: Worker, queue: QueueName): void {
  worker.on('failed', (job, err) => logger.warn({ queue, job: job?.name, job_id: job?.id, attempts: job?.attemptsMade, err: err.message }, 'job failed'));
  worker.on('error', (err) => logger.error({ queue, err }, 'worker error'));
  worker.on('stalled', (jobId) => {
    jobsStalled.inc({ queue });
    logger.warn({ queue, job_id: jobId }, 'job stalled: its lock ran out, taken again');
  });
}

/** The nightly reconciliation's cron pattern (UTC). */
export const RECONCILE_PATTERN = '0 19 * * *';
/** The daily ledger check's cron pattern (UTC). */
export const LEDGER_CHECK_PATTERN = '0 20 * * *';

/** Periodic maintenance: scheduler id, job (on its own queue), interval or cron pattern (UTC). */
export const MAINTENANCE_SCHEDULES: readonly ({ id: string; job: JobName } & ({ everyMs: number; pattern?: never } | { pattern: string; everyMs?: never }))[] = [
  { id: 'purge-idempotency-keys', job: 'maintenance.purge-idempotency-keys', everyMs: 3600_000 },
  { id: 'sweep-outbox', job: 'maintenance.sweep-outbox', everyMs: 60_000 },
  { id: 'sweep-escrow-timers', job: 'escrows.sweep-timers', everyMs: 60_000 },
  { id: 'sweep-order-sla', job: 'orders.sweep-sla', everyMs: 60_000 },
  { id: 'poll-pending-payments', job: 'payments.poll-pending', everyMs: 60_000 },
  { id: 'purge-unbound-uploads', job: 'uploads.purge-unbound', everyMs: 3600_000 },
  // A withdrawal left processing with a claim that ran out and no job left to retry it.
  { id: 'sweep-stuck-payouts', job: 'payouts.sweep-stuck', everyMs: PAYOUT_SWEEP_MS },
  { id: 'sweep-disbursements', job: 'payouts.sweep-disbursements', everyMs: PAYOUT_SWEEP_MS },
  // Outbound webhooks whose nudge was lost, and delivery records past 30 days (decision 0020).
  { id: 'sweep-webhooks', job: 'webhooks.sweep', everyMs: 60_000 },
  // CSV exports past their 24 hours (issue 42, review R10).
  { id: 'purge-exports', job: 'exports.purge-expired', everyMs: 3600_000 },
  // Nightly at 02:00 WIB (19:00 UTC): the enterprise reconciliation (decision 0020).
  { id: 'reconcile-enterprise', job: 'maintenance.reconcile-enterprise', pattern: RECONCILE_PATTERN },
  // Daily at 03:00 WIB (20:00 UTC), after the reconciliation: every ledger invariant and hash chain, the chains' heads
  // recorded in the staff audit, staff e-mailed on any violation (issue 47, decision 0028).
  { id: 'check-ledger', job: 'maintenance.check-ledger', pattern: LEDGER_CHECK_PATTERN },
];

/**
 * Puts the maintenance schedules in place. Idempotent (an unchanged schedule keeps its
 * next run), so every worker copy calls it at start and again periodically: a Redis that
 * lost its keys (flush, failover) gets the schedules, and with them the outbox sweeper, back.
 */
export async function upsertMaintenanceSchedules(): Promise<void> {
  for (const s of MAINTENANCE_SCHEDULES) {
    // Each schedule lives on its job's own queue. The last runs stay visible in the
    // dashboard; a minutely job kept a week would pile up.
    await getQueue(JOBS[s.job]).upsertJobScheduler(s.id, s.pattern !== undefined ? { pattern: s.pattern, tz: 'UTC' } : { every: s.everyMs }, { name: s.job, data: {}, opts: { removeOnComplete: { count: 100 } } });
  }
}
