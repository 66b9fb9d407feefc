import { db } from '../shared/db.js';
import { purgeExpired } from '../shared/idempotency.js';
import { sweepOutbox } from '../shared/outbox.js';
import { runAutoRelease, runExpiry, sweepTimers } from '../shared/escrows/service.js';
import { runSlaRefund, sweepSla } from '../shared/orders/service.js';
import { runNightlyReconciliation } from '../shared/reconciliation/nightly.js';
import { runDailyLedgerCheck } from '../shared/ledger/checkpoint.js';
import { queueProcessors } from './types.js';

/** timers queue: durable due-time work and periodic maintenance. */
export const timers = queueProcessors('timers', {
  'maintenance.purge-idempotency-keys': async () => ({ purged: await purgeExpired(db) }),
  // Re-sends outbox rows whose job Redis lost, dead-letters jobs that failed for good,
  // purges completed rows past retention (decision 0006).
  'maintenance.sweep-outbox': async () => ({ ...(await sweepOutbox()) }),
  // Escrow timers (decision D6): each job re-reads the escrow and does nothing unless the
  // due time has passed, so a job for a time that was extended is harmless.
  'escrows.expire': async (job) => runExpiry(job.data.escrow_id),
  'escrows.auto-release': async (job) => runAutoRelease(job.data.escrow_id),
  // The sweeper fires every due timer whose job was lost.
  'escrows.sweep-timers': async () => sweepTimers(),
  // Payment-service order SLA (issue 11, D6): the job re-reads the order and refunds only past its deadline.
  'orders.sla-refund': async (job) => runSlaRefund(job.data.order_id),
  'orders.sweep-sla': async () => sweepSla(),
  // Nightly enterprise reconciliation (decision 0020): every workspace's ledger against its deals and payouts; staff e-mailed once a day on any difference.
  'maintenance.reconcile-enterprise': async () => ({ ...(await runNightlyReconciliation()) }),
  // Daily ledger check (decision 0028): invariants and hash chains verified, chain heads recorded in the staff audit, staff e-mailed on any violation.
  'maintenance.check-ledger': async () => ({ ...(await runDailyLedgerCheck()) }),
});
