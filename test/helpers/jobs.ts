/**
 * Runs the outbox relay, the gateway-callbacks inbox and then every queued job in-process,
 * with the real processors.
 */
import { randomUUID } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import { config } from '../../shared/config.js';
import { relayAll } from '../../shared/outbox.js';
import { drainCallbacks } from '../../shared/payments/service.js';
import { QUEUE_NAMES, type JobData, type QueueName } from '../../shared/queues.js';
import { createQueueConnection } from '../../shared/redis.js';
import { buildRegistry, queueProcessor } from '../../workers/registry.js';

export interface RanJob {
  queue: QueueName;
  name: string;
  id: string | undefined;
  data: JobData;
  result?: unknown;
  error?: string;
}

const registry = buildRegistry();

/** Name of the records `runJobs` adds for stored callbacks the gateway-callbacks inbox reconciled. */
export const CALLBACK_RECORD = 'callbacks.reconcile';

/**
 * Drains the due gateway callbacks (as the worker's loop does), relays the outbox, then runs
 * waiting jobs until none are left. Returns what ran; each reconciled or failed callback is
 * a record named `callbacks.reconcile` with result `{ outcome }` or an error.
 */
export async function runJobs(queues: readonly QueueName[] = QUEUE_NAMES): Promise<RanJob[]> {
  const ran: RanJob[] = [];
  if (queues.includes('gateway-callbacks')) {
    for (;;) {
      const { processed, failed } = await drainCallbacks();
      const records: RanJob[] = [
        ...processed.map((p) => ({ queue: 'gateway-callbacks' as const, name: CALLBACK_RECORD, id: `callback-${p.id}`, data: { callback_id: p.id }, result: { outcome: p.outcome } })),
        ...failed.map((f) => ({ queue: 'gateway-callbacks' as const, name: CALLBACK_RECORD, id: `callback-${f.id}`, data: { callback_id: f.id }, error: f.error })),
      ];
      // In arrival order, as the worker takes them.
      ran.push(...records.sort((a, b) => Number(a.data.callback_id) - Number(b.data.callback_id)));
      if (processed.length + failed.length === 0 || failed.length > 0) break;
    }
  }
  await relayAll();
  const runner = runners.pop() ?? newRunner();
  try {
    for (const queue of queues) {
      const worker = runner.worker(queue);
      const token = randomUUID();
      const process = queueProcessor(registry, queue);
      for (;;) {
        const job = (await worker.getNextJob(token, { block: false })) as Job<JobData> | undefined;
        if (!job) break;
        const record: RanJob = { queue, name: job.name, id: job.id, data: job.data };
        try {
          record.result = await process(job);
          await job.moveToCompleted(record.result, token, false);
        } catch (err) {
          record.error = err instanceof Error ? err.message : String(err);
          await job.moveToFailed(err instanceof Error ? err : new Error(String(err)), token, false);
        }
        ran.push(record);
      }
    }
  } finally {
    runners.push(runner);
  }
  return ran;
}

/**
 * A Redis connection and one non-running Worker per queue, only ever asked for the next
 * job (`getNextJob` without blocking; no lock renewal, no stalled checks). Kept for the
 * whole process instead of opened and closed on every `runJobs` call (each Worker opens a
 * connection of its own); calls running at the same time each take a separate one.
 */
interface Runner {
  worker(queue: QueueName): Worker<JobData>;
}

const runners: Runner[] = [];

function newRunner(): Runner {
  const connection = createQueueConnection();
  const workers = new Map<QueueName, Worker<JobData>>();
  return {
    worker(queue) {
      let worker = workers.get(queue);
      if (!worker) {
        worker = new Worker<JobData>(queue, null, { connection, prefix: config.queuePrefix, autorun: false });
        workers.set(queue, worker);
      }
      return worker;
    },
  };
}

export interface StartedJob {
  job: Job<JobData>;
  /** Runs the job's processor and completes (or fails) it, as a worker would. */
  finish(): Promise<RanJob>;
}

/**
 * Takes the next waiting job of a queue and leaves it active (locked, as a worker holding
 * it would), without running it yet; `finish()` runs it. Undefined when none is waiting.
 */
export async function startJob(queue: QueueName): Promise<StartedJob | undefined> {
  const connection = createQueueConnection();
  const worker = new Worker<JobData>(queue, null, { connection, prefix: config.queuePrefix, autorun: false });
  const token = randomUUID();
  const close = async () => {
    await worker.close();
    await connection.quit();
  };
  const job = (await worker.getNextJob(token, { block: false })) as Job<JobData> | undefined;
  if (!job) {
    await close();
    return undefined;
  }
  return {
    job,
    async finish() {
      const record: RanJob = { queue, name: job.name, id: job.id, data: job.data };
      try {
        record.result = await queueProcessor(registry, queue)(job);
        await job.moveToCompleted(record.result, token, false);
      } catch (err) {
        record.error = err instanceof Error ? err.message : String(err);
        await job.moveToFailed(err instanceof Error ? err : new Error(String(err)), token, false);
      } finally {
        await close();
      }
      return record;
    },
  };
}
