/** Runs the outbox relay and then every queued job in-process, with the real processors. */
import { randomUUID } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import { config } from '../../shared/config.js';
import { relayAll } from '../../shared/outbox.js';
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

/** Relays the outbox, then runs waiting jobs until none are left. Returns what ran. */
export async function runJobs(queues: readonly QueueName[] = QUEUE_NAMES): Promise<RanJob[]> {
  await relayAll();
  const ran: RanJob[] = [];
  const connection = createQueueConnection();
  try {
    for (const queue of queues) {
      const worker = new Worker<JobData>(queue, null, { connection, prefix: config.queuePrefix, autorun: false });
      const token = randomUUID();
      const process = queueProcessor(registry, queue);
      try {
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
      } finally {
        await worker.close();
      }
    }
  } finally {
    await connection.quit();
  }
  return ran;
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
