import { UnrecoverableError } from 'bullmq';
import { createFromJob, isNotificationType } from '../shared/notifications/service.js';
import type { QueueProcessors } from './types.js';

/** notifications queue: writes one in-app notification per job; a re-run writes nothing. */
export const notifications: QueueProcessors = {
  queue: 'notifications',
  processors: {
    'notifications.create': async (job) => {
      const { user_id, type, escrow_id, dispute_id, outcome } = job.data;
      if (typeof user_id !== 'string' || typeof escrow_id !== 'string' || !isNotificationType(type)) {
        throw new UnrecoverableError('notification job data is malformed');
      }
      // The job id (outbox-<id>) is the row's source key: a job sent twice inserts once.
      return createFromJob(job.id ?? `job-${job.name}-${escrow_id}`, {
        user_id,
        type,
        escrow_id,
        dispute_id: typeof dispute_id === 'string' ? dispute_id : null,
        outcome: typeof outcome === 'string' ? outcome : null,
      });
    },
  },
};
