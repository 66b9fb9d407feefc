/**
 * Webhook endpoint states and the retry schedule (D8; decision 0020 "Webhooks").
 *
 *   active --PATCH status paused (admin)--> paused
 *   paused | disabled --PATCH status active (admin)--> active (the retry state starts over)
 *   active --the whole retry schedule failed on one event (worker)--> disabled
 *
 * A paused or disabled endpoint keeps its cursor: resumed, it receives what it missed, in
 * feed order. A disabled endpoint is resumed, not paused (409 INVALID_STATE).
 */
export const ENDPOINT_STATUSES = ['active', 'paused', 'disabled'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];

export interface EndpointTransition {
  from: readonly EndpointStatus[];
  to: EndpointStatus;
}

export const ENDPOINT_TRANSITIONS = {
  pause: { from: ['active', 'paused'], to: 'paused' },
  resume: { from: ['active', 'paused', 'disabled'], to: 'active' },
  disable: { from: ['active'], to: 'disabled' },
} as const satisfies Record<string, EndpointTransition>;

export const DELIVERY_KINDS = ['event', 'test', 'redelivery'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const S = 1000;
const M = 60 * S;
const H = 60 * M;

/**
 * The wait before each retry of a failed event: the Standard Webhooks schedule (5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 10 h) stretched to about three days (71 h 35 min after the first
 * attempt). After the last retry fails the endpoint is disabled.
 */
export const RETRY_DELAYS_MS: readonly number[] = [5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H, 14 * H, 14 * H, 16 * H];

/** Attempts of one event on one endpoint: the first and every retry. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The name of the test message (`POST /webhooks/:id/test`). */
export const TEST_EVENT = 'webhook.test';
