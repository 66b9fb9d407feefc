import { refreshFromWorker } from '../shared/tracking/service.js';
import { queueProcessors } from './types.js';

/** tracking-refresh queue: fetches an escrow's courier snapshot and caches it (about 10 minutes). */
export const tracking = queueProcessors('tracking-refresh', {
  'tracking.refresh': async (job) => refreshFromWorker(job.data.escrow_id),
});
