import { UnrecoverableError } from 'bullmq';
import { pollPending, processCallback } from '../shared/payments/service.js';
import type { QueueProcessors } from './types.js';

/**
 * gateway-callbacks queue: reconciles stored gateway deliveries, and asks the gateways about
 * links still pending past their expected time (a lost callback never loses a payment).
 */
export const gatewayCallbacks: QueueProcessors = {
  queue: 'gateway-callbacks',
  processors: {
    'payments.process-callback': async (job) => {
      const id = job.data.callback_id;
      if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw new UnrecoverableError('job data lacks callback_id');
      return processCallback(id);
    },
    'payments.poll-pending': async () => pollPending(),
  },
};
