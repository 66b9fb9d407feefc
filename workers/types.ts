import type { Job } from 'bullmq';
import type { JobData, JobName, JobPayloads, JOBS, QueueName } from '../shared/queues.js';

/** A processor as the registry holds it: the job's data is checked before it runs (workers/registry.ts). */
export type Processor = (job: Job<JobData>) => Promise<unknown>;

/** The jobs of queue Q. */
export type JobsOf<Q extends QueueName> = { [N in JobName]: (typeof JOBS)[N] extends Q ? N : never }[JobName];

/** A processor of job N: it receives the payload its job's schema checked. */
export type JobProcessor<N extends JobName> = (job: Job<JobPayloads[N], unknown, N>) => Promise<unknown>;

/** What each workers/<queue>.ts file exports. */
export interface QueueProcessors {
  queue: QueueName;
  processors: Record<string, Processor>;
}

/** A queue's processors, one per job of that queue (the compiler names a missing one). */
export function queueProcessors<Q extends QueueName>(queue: Q, processors: { [N in JobsOf<Q>]: JobProcessor<N> }): QueueProcessors {
  // Each processor runs only after the registry checked its job's payload.
  return { queue, processors: processors as unknown as Record<string, Processor> };
}
