import { db } from '../shared/db.js';
import { purgeExpired } from '../shared/idempotency.js';
import { sweepOutbox } from '../shared/outbox.js';
import type { QueueProcessors } from './types.js';

/** timers queue: durable due-time work and periodic maintenance. */
export const timers: QueueProcessors = {
  queue: 'timers',
  processors: {
    'maintenance.purge-idempotency-keys': async () => ({ purged: await purgeExpired(db) }),
    // Re-sends outbox rows whose job Redis lost, dead-letters jobs that failed for good,
    // purges completed rows past retention (decision 0006).
    'maintenance.sweep-outbox': async () => ({ ...(await sweepOutbox()) }),
  },
};
