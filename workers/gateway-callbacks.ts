import { pollPending, processCallback } from '../shared/payments/service.js';
import { queueProcessors } from './types.js';

/**
 * gateway-callbacks queue: reconciles stored gateway deliveries, and asks the gateways about
 * links still pending past their expected time (a lost callback never loses a payment).
 */
export const gatewayCallbacks = queueProcessors('gateway-callbacks', {
  'payments.process-callback': async (job) => processCallback(job.data.callback_id),
  'payments.poll-pending': async () => pollPending(),
});
