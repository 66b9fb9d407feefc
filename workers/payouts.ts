import { UnrecoverableError } from 'bullmq';
import { runPayout, sweepStuckPayouts } from '../shared/withdrawals/service.js';
import type { QueueProcessors } from './types.js';

function withdrawalIdOf(data: unknown): string {
  const id = (data as { withdrawal_id?: unknown } | null)?.withdrawal_id;
  if (typeof id !== 'string') throw new UnrecoverableError('job data lacks withdrawal_id');
  return id;
}

/**
 * payouts queue: sends approved withdrawals through the payout adapter (decision 0008).
 * The job re-reads the withdrawal and does nothing unless it is approved (or a crashed
 * run's claim ran out), so running it twice pays once. A provider's final refusal puts the
 * withdrawal back to approved and fails the job for good, so an operator sees it (and may
 * retry it from the dashboard, or reject the withdrawal); any other error is retried.
 */
export const payouts: QueueProcessors = {
  queue: 'payouts',
  processors: {
    'payouts.send': async (job) => {
      const run = await runPayout(withdrawalIdOf(job.data));
      if (run.outcome === 'failed') throw new UnrecoverableError(`payout refused: ${run.reason}`);
      return run;
    },
    // Every PAYOUT_SWEEP_MS: re-queues withdrawals left processing whose claim ran out.
    'payouts.sweep-stuck': async () => sweepStuckPayouts(),
  },
};
