import type { Job } from 'bullmq';
import type { JobData, QueueName } from '../shared/queues.js';

export type Processor = (job: Job<JobData>) => Promise<unknown>;

/** What each workers/<queue>.ts file exports. */
export interface QueueProcessors {
  queue: QueueName;
  processors: Record<string, Processor>;
}
