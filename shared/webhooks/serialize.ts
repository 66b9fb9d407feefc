/**
 * Answers of the webhook routes (enterprise spec 4.11: "not shown"; decision 0020). The
 * signing secret appears only in the answers of create and rotate-secret (`secret`), never
 * in a list; neither the sealed secret nor the lease is ever answered.
 */
import type { DeliveryView, EndpointView } from './repo.js';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export function serializeEndpoint(e: EndpointView) {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.events,
    status: e.status,
    disabled_at: iso(e.disabled_at),
    disabled_reason: e.disabled_reason,
    /** Every event up to this seq that the filter takes has been delivered (or the endpoint was made after it). */
    delivered_through_seq: Number(e.cursor_seq),
    /** Failed attempts on the event at the head of the line, and when the next one is due. */
    failed_attempts: e.attempts,
    next_retry_at: iso(e.next_attempt_at),
    created_by: e.created_by ? { id: e.created_by, name: e.creator_name } : null,
    created_at: iso(e.created_at),
    updated_at: iso(e.updated_at),
  };
}

/** Create and rotate-secret: the endpoint and its secret, shown this once. */
export function serializeWithSecret(made: { endpoint: EndpointView; secret: string }) {
  return { ...serializeEndpoint(made.endpoint), secret: made.secret };
}

export function serializeDelivery(d: DeliveryView) {
  return {
    id: d.id,
    endpoint_id: d.endpoint_id,
    message_id: d.message_id,
    event_id: d.event_id,
    event_seq: d.event_seq === null ? null : Number(d.event_seq),
    event_type: d.event_type,
    kind: d.kind,
    attempt: d.attempt,
    status: d.status,
    response_status: d.response_status,
    response_excerpt: d.response_excerpt,
    error: d.error,
    duration_ms: d.duration_ms,
    next_retry_at: iso(d.next_attempt_at),
    requested_by: d.requested_by ? { id: d.requested_by, name: d.requester_name } : null,
    created_at: iso(d.created_at),
    attempted_at: iso(d.attempted_at),
  };
}
