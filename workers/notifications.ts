import { UnrecoverableError } from 'bullmq';
import { createFromJob, createNotices, noticeOf } from '../shared/notifications/service.js';
import type { QueueProcessors } from './types.js';

/**
 * notifications queue: writes one in-app notification per job (and its e-mail when due); a
 * re-run writes nothing. Open streams on every API copy hear of it once it is committed.
 */
export const notifications: QueueProcessors = {
  queue: 'notifications',
  processors: {
    'notifications.create': async (job) => {
      const notice = noticeOf(job.data);
      if (!notice) throw new UnrecoverableError('notification job data is malformed');
      // The job id (outbox-<id>) is the row's source key: a job sent twice inserts once.
      return createFromJob(job.id ?? `job-${job.name}-${notice.escrow_id ?? notice.withdrawal_id}`, notice);
    },
    'notifications.create-batch': async (job) => {
      const list = job.data.notices;
      const notices = Array.isArray(list) ? list.map(noticeOf) : [];
      if (notices.length === 0 || notices.some((n) => n === undefined)) throw new UnrecoverableError('notification batch job data is malformed');
      // Source key `<job id>:<index>`: a batch sent twice inserts each notice once.
      const base = job.id ?? `job-${job.name}`;
      const created = await createNotices(notices.map((notice, i) => ({ sourceKey: `${base}:${i}`, notice: notice! })));
      return { created, notices: notices.length };
    },
  },
};
