/**
 * Payments (consumer spec 4.2 pay / payment-status / claim-payment / available-methods,
 * section 6 inbound callbacks; decisions D4, D5, 0009). A buyer opens a payment link on a
 * gateway (links.ts); the gateway's verified callbacks are stored raw and reconciled by the
 * gateway-callbacks worker (callbacks.ts) through one path (reconcile.ts), which the status
 * poller (poll.ts) and staff confirmations (manual.ts) use too. The sandbox gateway's tools
 * are in sandbox.ts.
 *
 * This module is the feature's front door: what other features, routes and workers import.
 */
export type { PaymentRow, GatewayRow } from './repo.js';
export {
  LINK_LIFETIME_MS,
  FIRST_POLL_AFTER_MS,
  availableGateways,
  prepareEscrowLink,
  prepareEscrowLinkAdmitting,
  prepareOrderLink,
  recordLink,
  abandonLink,
  pay,
  recordPrepared,
  parseMethod,
  paymentStatus,
  type PayInput,
  type PreparedLink,
  type LinkTarget,
} from './links.js';
export {
  ingestCallback,
  processCallback,
  drainCallbacks,
  UNKNOWN_ORDER_RETRY_MS,
  CALLBACK_BATCH,
  CALLBACK_MAX_BACKOFF_S,
  type IngestResult,
  type DrainResult,
} from './callbacks.js';
export { settlePaid, type GatewayReport } from './reconcile.js';
export { pollPending, POLL_BACKOFF_MS, EXPIRE_GRACE_MS } from './poll.js';
export { simulateSandbox, sandboxEnabled } from './sandbox.js';
