import { createFromJob, createNotices } from '../shared/notifications/service.js';
import { queueProcessors } from './types.js';

/**
 * notifications queue: writes one in-app notification per job (and its e-mail when due); a
 * re-run writes nothing. Open streams on every API copy hear of it once it is committed.
 */
export const notifications = queueProcessors('notifications', {
  'notifications.create': async (job) => {
    const notice = job.data;
    // The job id (outbox-<id>) is the row's source key: a job sent twice inserts once.
    return createFromJob(job.id ?? `job-${job.name}-${notice.escrow_id ?? notice.withdrawal_id}`, notice);
  },
  'notifications.create-batch': async (job) => {
    const { notices } = job.data;
    // Source key `<job id>:<index>`: a batch sent twice inserts each notice once.
    const base = job.id ?? `job-${job.name}`;
    const created = await createNotices(notices.map((notice, i) => ({ sourceKey: `${base}:${i}`, notice })));
    return { created, notices: notices.length };
  },
});
