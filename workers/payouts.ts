import { UnrecoverableError } from 'bullmq';
import { runDisbursement, sweepDisbursements } from '../shared/payouts/worker.js';
import { runPayout, sweepStuckPayouts } from '../shared/withdrawals/service.js';
import { queueProcessors } from './types.js';

/**
 * payouts queue: sends approved withdrawals through the payout adapter (decision 0008).
 * The job re-reads the withdrawal and does nothing unless it is approved (or a crashed
 * run's claim ran out), so running it twice pays once. A provider's final refusal puts the
 * withdrawal back to approved and fails the job for good, so an operator sees it (and may
 * retry it from the dashboard, or reject the withdrawal); any other error is retried.
 *
 * Enterprise disbursements (decision 0019) take the same path: payouts.disburse claims,
 * re-checks the destination's verification signature, sends and settles or fails (a
 * failed payout's money returns to its milestone, so the job itself succeeds).
 */
export const payouts = queueProcessors('payouts', {
  'payouts.send': async (job) => {
    const run = await runPayout(job.data.withdrawal_id);
    if (run.outcome === 'failed') throw new UnrecoverableError(`payout refused: ${run.reason}`);
    return run;
  },
  // Every PAYOUT_SWEEP_MS: re-queues withdrawals left processing whose claim ran out.
  'payouts.sweep-stuck': async () => sweepStuckPayouts(),
  'payouts.disburse': async (job) => runDisbursement(job.data.disbursement_id),
  // Every PAYOUT_SWEEP_MS: re-queues disbursements whose claim ran out or whose job was lost.
  'payouts.sweep-disbursements': async () => sweepDisbursements(),
});
