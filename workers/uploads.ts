import { purgeUnbound, runSanitiseJob } from '../shared/uploads/service.js';
import { queueProcessors } from './types.js';

/** upload-sanitise queue: cleaning uploaded files (the API waits for the result) and the daily purge of unbound uploads. */
export const uploads = queueProcessors('upload-sanitise', {
  'uploads.sanitise': async (job) => runSanitiseJob(job.data),
  'uploads.purge-unbound': async () => purgeUnbound(),
});
