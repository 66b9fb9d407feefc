import { dispatch, runEndpoint, sendOnce, sweepWebhooks } from '../shared/webhooks/delivery.js';
import { queueProcessors } from './types.js';

/**
 * webhooks queue: outbound webhooks (D8; decision 0020 "Webhooks"). Every processor
 * re-reads Postgres and is safe to run twice or at once: an endpoint's lease lets one run
 * deliver its events in feed order; a queued one-off delivery is sent while it is pending.
 * A receiver's failure never fails a job: it is recorded and retried on the schedule.
 */
export const webhooks = queueProcessors('webhooks', {
  // Written to the outbox by the feed (enterprise/events.ts) when a workspace with an active endpoint appends events.
  'webhooks.dispatch': async (job) => dispatch(job.data.workspace_id),
  'webhooks.deliver': async (job) => runEndpoint(job.data.endpoint_id),
  'webhooks.send-once': async (job) => sendOnce(job.data.delivery_id),
  // Every minute: endpoints with events past their cursor and nobody on them; old delivery records.
  'webhooks.sweep': async () => sweepWebhooks(),
});
