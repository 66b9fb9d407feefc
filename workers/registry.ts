/**
 * The job registry: every job in shared/queues.ts JOBS must have exactly one processor,
 * in the file of its own queue. Start-up fails otherwise.
 */
import { UnrecoverableError } from 'bullmq';
import { JOBS, isJobName, type QueueName } from '../shared/queues.js';
import { mail } from './mail.js';
import { timers } from './timers.js';
import type { Processor, QueueProcessors } from './types.js';

export const PROCESSOR_FILES: QueueProcessors[] = [mail, timers];

export function buildRegistry(files: QueueProcessors[] = PROCESSOR_FILES): Map<string, Processor> {
  const registry = new Map<string, Processor>();
  const problems: string[] = [];
  for (const file of files) {
    for (const [name, processor] of Object.entries(file.processors)) {
      if (!isJobName(name)) problems.push(`processor for unknown job ${name}`);
      else if (JOBS[name] !== file.queue) problems.push(`job ${name} belongs to queue ${JOBS[name]}, not ${file.queue}`);
      if (registry.has(name)) problems.push(`job ${name} has two processors`);
      registry.set(name, processor);
    }
  }
  for (const name of Object.keys(JOBS)) {
    if (!registry.has(name)) problems.push(`job ${name} has no processor`);
  }
  if (problems.length > 0) throw new Error(`job registry is invalid: ${problems.join('; ')}`);
  return registry;
}

/** One BullMQ processor per queue, dispatching by job name. */
export function queueProcessor(registry: Map<string, Processor>, queue: QueueName): Processor {
  return async (job) => {
    const processor = registry.get(job.name);
    if (!processor || (isJobName(job.name) && JOBS[job.name] !== queue)) {
      throw new UnrecoverableError(`queue ${queue} has no processor for job ${job.name}`);
    }
    return processor(job);
  };
}
