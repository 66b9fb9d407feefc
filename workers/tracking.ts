import { UnrecoverableError } from 'bullmq';
import { refreshFromWorker } from '../shared/tracking/service.js';
import type { QueueProcessors } from './types.js';

/** tracking-refresh queue: fetches an escrow's courier snapshot and caches it (about 10 minutes). */
export const tracking: QueueProcessors = {
  queue: 'tracking-refresh',
  processors: {
    'tracking.refresh': async (job) => {
      const id = job.data.escrow_id;
      if (typeof id !== 'string') throw new UnrecoverableError('tracking job data is malformed');
      return refreshFromWorker(id);
    },
  },
};
