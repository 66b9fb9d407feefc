import { db } from '../shared/db.js';
import { purgeExpired } from '../shared/idempotency.js';
import type { QueueProcessors } from './types.js';

/** timers queue: durable due-time work and periodic maintenance. */
export const timers: QueueProcessors = {
  queue: 'timers',
  processors: {
    'maintenance.purge-idempotency-keys': async () => ({ purged: await purgeExpired(db) }),
  },
};
