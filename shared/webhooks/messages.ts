/**
 * What a webhook carries (D8): the body `{ id, type, created_at, livemode, data }` with
 * `data` the Event item exactly as the feed serializes it (GET /v1/enterprise/events), and
 * `id` the message id, also sent as `webhook-id`. A feed event's message id comes from the
 * event's own id, so every endpoint, retry and redelivery of one event carries the same id
 * (a receiver drops repeats by it). The body is built once per attempt from the stored,
 * unchanging event row, and stored with the delivery record: a redelivery sends those bytes.
 */
import { randomUUID } from 'node:crypto';
import type { EventRow } from '../enterprise/events-repo.js';
import { serializeEvent } from '../enterprise/serialize.js';
import { TEST_EVENT } from './states.js';

export interface Message {
  messageId: string;
  type: string;
  body: string;
}

export const messageIdOf = (eventId: string): string => `msg_${eventId}`;

export function eventMessage(e: EventRow): Message {
  const id = messageIdOf(e.id);
  const body = JSON.stringify({ id, type: e.event, created_at: new Date(e.created_at).toISOString(), livemode: e.livemode, data: serializeEvent(e) });
  return { messageId: id, type: e.event, body };
}

/**
 * The `webhook.test` message of `POST /webhooks/:id/test`: an Event item of its own (never in
 * the feed, so `seq` is null), about the endpoint, by the person who asked; `livemode`
 * false, as it moves no money.
 */
export function testMessage(endpointId: string, by: { id: string; name: string }, at: Date): Message {
  const eventId = randomUUID();
  const id = messageIdOf(eventId);
  const created = at.toISOString();
  const data = {
    seq: null,
    id: eventId,
    event: TEST_EVENT,
    entity_type: 'webhook_endpoint',
    entity_id: endpointId,
    deal_id: null,
    deal_reference: null,
    actor: by,
    actor_label: null,
    amount: null,
    summary: 'Test message sent from the dashboard',
    created_at: created,
    livemode: false,
  };
  return { messageId: id, type: TEST_EVENT, body: JSON.stringify({ id, type: TEST_EVENT, created_at: created, livemode: false, data }) };
}
