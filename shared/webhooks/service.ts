/**
 * Webhook endpoint management (enterprise spec 4.11; D8; decision 0020 "Webhooks").
 *
 * Every change locks the workspace row, then the endpoint (the lock order), and appends its
 * event (webhook_endpoint.created, .updated, .paused, .resumed, .deleted, .secret_rotated;
 * livemode the workspace's, as every event). The signing secret is made here, sealed with encryptSecret
 * (the worker must sign with it) and answered once, by create and rotate-secret; those two
 * take no Idempotency-Key: a stored answer would keep the plaintext secret in the
 * idempotency table for a day, as the API keys route refuses to (4.10).
 *
 * A new endpoint starts after the workspace's last event (its own `created` included): it
 * receives what happens from now on. Test sends and redeliveries are queued delivery
 * records sent once by the worker; they are recorded on the endpoint's delivery log with
 * who asked, and append no feed event (a feed event would itself be sent to every endpoint).
 */
import { randomUUID } from 'node:crypto';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { encryptSecret } from '../crypto.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { byOf, type WorkspaceActor } from '../enterprise/access.js';
import { appendEvent } from '../enterprise/events.js';
import { lockWorkspace } from '../enterprise/repo.js';
import { enqueue } from '../outbox.js';
import { urlProblem } from './address.js';
import { webhookErrors } from './errors.js';
import { testMessage } from './messages.js';
import * as repo from './repo.js';
import type { DeliveryRow, DeliveryView, EndpointRow, EndpointView } from './repo.js';
import type { EndpointInput, EndpointPatch } from './schemas.js';
import { newSecret } from './signing.js';
import { webhookSettings } from './settings.js';
import { ENDPOINT_TRANSITIONS, TEST_EVENT, type DeliveryStatus } from './states.js';

export type { DeliveryView, EndpointView } from './repo.js';
export type { EndpointInput, EndpointPatch } from './schemas.js';

function checkUrl(url: string): void {
  const problem = urlProblem(url, config.sandboxMode);
  if (problem) throw webhookErrors.invalidUrl(problem);
}

/** The host alone names an endpoint in the feed: a URL's path or query may carry a receiver's token. */
const hostOf = (url: string): string => new URL(url).host;
const eventsText = (events: string[]): string => (events.includes('*') ? 'every event' : events.join(', '));

async function lockedEndpoint(trx: Db, actor: WorkspaceActor, id: string): Promise<EndpointRow> {
  const row = await repo.lockEndpointIn(trx, actor.workspaceId, id);
  if (!row) throw webhookErrors.endpointNotFound();
  return row;
}

export async function listEndpoints(actor: WorkspaceActor, page: number, limit: number): Promise<{ rows: EndpointView[]; total: number }> {
  return repo.listEndpoints(db, actor.workspaceId, page, limit);
}

/** Creates an active endpoint (up to 20 per workspace, counted under the workspace lock). */
export async function createEndpoint(actor: WorkspaceActor, input: EndpointInput): Promise<{ endpoint: EndpointView; secret: string }> {
  checkUrl(input.url);
  return db.transaction(async (trx) => {
    await lockWorkspace(trx, actor.workspaceId);
    const max = webhookSettings.endpointsPerWorkspace;
    if ((await repo.countEndpoints(trx, actor.workspaceId)) >= max) throw webhookErrors.limit(max);
    const id = randomUUID();
    const secret = newSecret();
    const created = await appendEvent(trx, actor.workspaceId, {
      event: 'webhook_endpoint.created',
      entityType: 'webhook_endpoint',
      entityId: id,
      actor: byOf(actor),
      summary: `Webhook endpoint for ${hostOf(input.url)} created (${eventsText(input.events)})`,
    });
    const now = clock.now();
    await repo.insertEndpoint(trx, {
      id,
      workspace_id: actor.workspaceId,
      url: input.url,
      description: input.description ? input.description : null,
      events: input.events,
      status: 'active',
      secret_sealed: encryptSecret(secret),
      cursor_seq: Number(created.seq),
      created_by: actor.userId,
      created_at: now,
      updated_at: now,
    });
    return { endpoint: (await repo.endpointById(trx, actor.workspaceId, id))!, secret };
  });
}

/**
 * Changes any of url, events, description, and pauses or resumes (`status`). Resuming, or a
 * new URL, starts the retry state over and nudges the delivery at once; the cursor stays,
 * so a resumed endpoint receives what it missed, in order. A PATCH that changes nothing
 * answers the endpoint as it is, with no event.
 */
export async function updateEndpoint(trx: Db | undefined, actor: WorkspaceActor, id: string, patch: EndpointPatch): Promise<EndpointView> {
  if (!isUuid(id)) throw webhookErrors.endpointNotFound();
  if (patch.url !== undefined) checkUrl(patch.url);
  return inTransaction(trx, async (t) => {
    await lockWorkspace(t, actor.workspaceId);
    const row = await lockedEndpoint(t, actor, id);
    const changes: Parameters<typeof repo.updateEndpoint>[2] = {};
    const changed: string[] = [];
    if (patch.url !== undefined && patch.url !== row.url) {
      changes.url = patch.url;
      changed.push('url');
    }
    if (patch.events !== undefined && patch.events.join('\n') !== row.events.join('\n')) {
      changes.events = patch.events;
      changed.push('events');
    }
    if (patch.description !== undefined && (patch.description ? patch.description : null) !== row.description) {
      changes.description = patch.description ? patch.description : null;
      changed.push('description');
    }
    let event = 'webhook_endpoint.updated';
    if (patch.status !== undefined && patch.status !== row.status) {
      const move = patch.status === 'paused' ? ENDPOINT_TRANSITIONS.pause : ENDPOINT_TRANSITIONS.resume;
      if (!(move.from as readonly string[]).includes(row.status)) throw webhookErrors.disabledNotPaused();
      changes.status = move.to;
      if (move.to === 'active') Object.assign(changes, { disabled_at: null, disabled_reason: null });
      event = move.to === 'paused' ? 'webhook_endpoint.paused' : 'webhook_endpoint.resumed';
      changed.push('status');
    }
    if (changed.length === 0) return (await repo.endpointById(t, actor.workspaceId, id))!;
    const restart = changes.status === 'active' || changes.url !== undefined;
    if (restart) Object.assign(changes, { attempts: 0, next_attempt_at: null });
    await repo.updateEndpoint(t, id, { ...changes, updated_at: clock.now() });
    await appendEvent(t, actor.workspaceId, {
      event,
      entityType: 'webhook_endpoint',
      entityId: id,
      actor: byOf(actor),
      summary: `Webhook endpoint for ${hostOf(changes.url ?? row.url)} ${event === 'webhook_endpoint.updated' ? 'changed' : event.slice('webhook_endpoint.'.length)}: ${changed.join(', ')}`,
    });
    if (restart && (changes.status ?? row.status) === 'active') await enqueue(t, 'webhooks.deliver', { endpoint_id: id });
    return (await repo.endpointById(t, actor.workspaceId, id))!;
  });
}

/** Deletes the endpoint and its delivery log; a delivery in flight finds it gone and records nothing. */
export async function deleteEndpoint(trx: Db | undefined, actor: WorkspaceActor, id: string): Promise<{ id: string; deleted: true }> {
  if (!isUuid(id)) throw webhookErrors.endpointNotFound();
  return inTransaction(trx, async (t) => {
    await lockWorkspace(t, actor.workspaceId);
    const row = await lockedEndpoint(t, actor, id);
    await repo.deleteEndpoint(t, id);
    await appendEvent(t, actor.workspaceId, {
      event: 'webhook_endpoint.deleted',
      entityType: 'webhook_endpoint',
      entityId: id,
      actor: byOf(actor),
      summary: `Webhook endpoint for ${hostOf(row.url)} deleted`,
    });
    return { id, deleted: true as const };
  });
}

/** A new signing secret, answered once; the next attempt signs with it (the old one stops at once). */
export async function rotateSecret(actor: WorkspaceActor, id: string): Promise<{ endpoint: EndpointView; secret: string }> {
  if (!isUuid(id)) throw webhookErrors.endpointNotFound();
  return db.transaction(async (trx) => {
    await lockWorkspace(trx, actor.workspaceId);
    const row = await lockedEndpoint(trx, actor, id);
    const secret = newSecret();
    await repo.updateEndpoint(trx, id, { secret_sealed: encryptSecret(secret), updated_at: clock.now() });
    await appendEvent(trx, actor.workspaceId, {
      event: 'webhook_endpoint.secret_rotated',
      entityType: 'webhook_endpoint',
      entityId: id,
      actor: byOf(actor),
      summary: `Webhook endpoint for ${hostOf(row.url)}: signing secret rotated`,
    });
    return { endpoint: (await repo.endpointById(trx, actor.workspaceId, id))!, secret };
  });
}

type Queued = Omit<DeliveryRow, 'id' | 'position' | 'endpoint_id' | 'workspace_id' | 'requested_by' | 'created_at' | 'kind'>;

/** A pending one-off delivery and its send job, in the caller's transaction. */
async function queueOneOff(t: Db, actor: WorkspaceActor, endpoint: EndpointRow, kind: 'test' | 'redelivery', what: Queued): Promise<DeliveryView> {
  const d = await repo.insertDelivery(t, {
    ...what,
    kind,
    endpoint_id: endpoint.id,
    workspace_id: endpoint.workspace_id,
    requested_by: actor.userId,
    created_at: clock.now(),
  });
  await enqueue(t, 'webhooks.send-once', { delivery_id: d.id });
  return (await repo.deliveryOf(t, endpoint.id, d.id))!;
}

const PENDING = {
  attempt: 1,
  status: 'pending' as const,
  response_status: null,
  response_excerpt: null,
  error: null,
  duration_ms: null,
  next_attempt_at: null,
  attempted_at: null,
};

/** Queues a `webhook.test` message to the endpoint (whatever its status), sent once. */
export async function sendTest(trx: Db | undefined, actor: WorkspaceActor, id: string): Promise<DeliveryView> {
  if (!isUuid(id)) throw webhookErrors.endpointNotFound();
  return inTransaction(trx, async (t) => {
    const endpoint = await lockedEndpoint(t, actor, id);
    const msg = testMessage(id, byOf(actor), clock.now());
    return queueOneOff(t, actor, endpoint, 'test', { ...PENDING, message_id: msg.messageId, event_id: null, event_seq: null, event_type: TEST_EVENT, payload: msg.body });
  });
}

/** Queues the same message again (same webhook-id, same body, signed anew), sent once. */
export async function redeliver(trx: Db | undefined, actor: WorkspaceActor, id: string, deliveryId: string): Promise<DeliveryView> {
  if (!isUuid(id)) throw webhookErrors.endpointNotFound();
  return inTransaction(trx, async (t) => {
    const endpoint = await lockedEndpoint(t, actor, id);
    const original = isUuid(deliveryId) ? await repo.deliveryOf(t, id, deliveryId) : undefined;
    if (!original) throw webhookErrors.deliveryNotFound();
    return queueOneOff(t, actor, endpoint, 'redelivery', {
      ...PENDING,
      message_id: original.message_id,
      event_id: original.event_id,
      event_seq: original.event_seq,
      event_type: original.event_type,
      payload: original.payload,
    });
  });
}

export async function listDeliveries(
  actor: WorkspaceActor,
  id: string,
  q: { page: number; limit: number; status?: DeliveryStatus },
): Promise<{ rows: DeliveryView[]; total: number }> {
  if (!isUuid(id) || !(await repo.endpointById(db, actor.workspaceId, id))) throw webhookErrors.endpointNotFound();
  return repo.listDeliveries(db, id, q);
}
