/**
 * A payout worker process for the stalled-job test (test/integration/withdrawals/stalled.test.ts):
 * the real payouts processor and worker options (WORKER_LOCK_MS, WORKER_STALLED_CHECK_MS,
 * PAYOUT_LEASE_MS from the environment), with a payout adapter that never answers: the
 * provider call is in flight when the test SIGKILLs the process. Prints `ready` once the
 * worker runs and `sending <withdrawal id>` when the adapter is called.
 */
import { Worker } from 'bullmq';
import { config } from '../../shared/config.js';
import { createQueueConnection } from '../../shared/redis.js';
import { setPayoutAdapter } from '../../shared/withdrawals/payout-adapter.js';
import { buildRegistry, queueProcessor, workerResilience } from '../../workers/registry.js';

setPayoutAdapter({
  name: 'never-answers',
  automatic: true,
  send: (req) => {
    process.stdout.write(`sending ${req.withdrawalId}\n`);
    return new Promise(() => undefined);
  },
});

const worker = new Worker('payouts', queueProcessor(buildRegistry(), 'payouts'), {
  connection: createQueueConnection(),
  prefix: config.queuePrefix,
  ...workerResilience(),
});
worker.on('error', (err) => process.stderr.write(`worker error: ${err.message}\n`));
await worker.waitUntilReady();
process.stdout.write('ready\n');
