/**
 * The delivery worker's side of outbound webhooks (D8; decision 0020 "Webhooks").
 *
 * ORDER. Each endpoint follows the workspace feed with a cursor (`cursor_seq`: the last seq
 * it is done with) and has at most one delivery in flight: the lease on its row. A run
 * takes the next event after the cursor that the endpoint's filter takes, sends it, and
 * moves the cursor past it only when the receiver answered 2xx; a failure keeps that event
 * at the head of the line until a retry succeeds or the endpoint is disabled. So a
 * receiver sees an endpoint's events in feed order, never a later one before an earlier one
 * (a retry or a redelivery repeats an earlier message, with its own webhook-id).
 *
 * Why the cursor never skips: the feed writes an event and bumps workspaces.last_event_seq
 * in one transaction under the workspace row lock (enterprise/events.ts), so every event up
 * to the committed last_event_seq is committed. A run reads that value first and only then
 * looks for events up to it; with no match it moves the cursor to it.
 *
 * Why a nudge is never lost: the lease is given up only in a transaction that, holding the
 * endpoint row lock, found nothing more to send (or scheduled a retry). A nudge for a newer
 * event locks the same row after that event committed: either it finds the lease free and
 * runs, or the lease holder has not yet made its final check, which then sees the event.
 *
 * Each step holds a transaction only around reads and writes of our own rows; the HTTP
 * attempt runs with no transaction and no connection held (ARCHITECTURE rule 7). A worker
 * that dies mid-send leaves a lease that runs out (attempt timeout + 15 s); the sweeper then
 * runs the endpoint again and the event is sent again with the same webhook-id.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { decryptSecret } from '../crypto.js';
import { db, deleteInBatches, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { logger } from '../logger.js';
import { enqueue } from '../outbox.js';
import { redis } from '../redis.js';
import { getQueue } from '../queues.js';
import { appendEvent } from '../enterprise/events.js';
import type { EventRow } from '../enterprise/events-repo.js';
import { mailOptedInMembers } from '../enterprise/mail.js';
import { lockWorkspace } from '../enterprise/repo.js';
import { eventMessage } from './messages.js';
import * as repo from './repo.js';
import type { EndpointRow } from './repo.js';
import { webhookSettings } from './settings.js';
import { signedHeaders } from './signing.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from './states.js';
import { attempt as httpAttempt, type AttemptResult } from './transport.js';

export type RunState = 'idle' | 'busy' | 'waiting' | 'inactive' | 'gone' | 'superseded' | 'more' | 'retry_scheduled' | 'disabled';

export interface RunResult {
  endpoint_id: string;
  delivered: number;
  failed: number;
  state: RunState;
}

interface Sending {
  kind: 'send';
  endpoint: EndpointRow;
  event: EventRow;
  token: string;
  /** This attempt's number on this event (1 = first). */
  attempt: number;
}
type Step = Sending | { kind: 'stop'; state: RunState };

const leaseFor = (now: Date): Date => new Date(now.getTime() + webhookSettings.timeoutMs + webhookSettings.leaseMarginMs);

/** The next event for the endpoint after its cursor, with the committed last seq it looked up to. */
async function findNext(trx: Db, e: EndpointRow, after: number): Promise<{ event: EventRow | undefined; upTo: number }> {
  const upTo = await repo.lastEventSeq(trx, e.workspace_id);
  const event = await repo.nextEvent(trx, e.workspace_id, after, upTo, e.events.includes('*') ? null : e.events);
  return { event, upTo };
}

/** Holding the endpoint's row lock: the next event to send (taking the lease), or nothing (giving the lease up). */
async function takeNext(trx: Db, e: EndpointRow, token: string, after: number, base: Parameters<typeof repo.updateEndpoint>[2]): Promise<Step> {
  const { event, upTo } = await findNext(trx, e, after);
  if (!event) {
    const cursor = Math.max(after, upTo);
    // Nothing changes for an idle endpoint nudged again: no write.
    if (Object.keys(base).length > 0 || e.lease_token !== null || cursor !== Number(e.cursor_seq)) {
      await repo.updateEndpoint(trx, e.id, { ...base, cursor_seq: cursor, lease_until: null, lease_token: null });
    }
    return { kind: 'stop', state: 'idle' };
  }
  await repo.updateEndpoint(trx, e.id, { ...base, cursor_seq: after, lease_until: leaseFor(clock.now()), lease_token: token });
  return { kind: 'send', endpoint: { ...e, ...base, cursor_seq: after, lease_token: token }, event, token, attempt: (base.attempts ?? e.attempts) + 1 };
}

/** Step 1: lock the endpoint; if it is active, free, and due, take the next event and the lease. */
async function claim(endpointId: string): Promise<Step> {
  return db.transaction(async (trx): Promise<Step> => {
    const e = await repo.lockEndpoint(trx, endpointId);
    if (!e) return { kind: 'stop', state: 'gone' };
    if (e.status !== 'active') return { kind: 'stop', state: 'inactive' };
    const now = clock.now();
    if (e.lease_until && e.lease_until > now) return { kind: 'stop', state: 'busy' };
    if (e.next_attempt_at && e.next_attempt_at > now) return { kind: 'stop', state: 'waiting' };
    return takeNext(trx, e, randomUUID(), Number(e.cursor_seq), {});
  });
}

/** Step 2, no transaction open: one signed POST. */
async function send(s: Sending): Promise<{ result: AttemptResult; at: Date; body: string }> {
  const msg = eventMessage(s.event);
  const at = clock.now();
  const secret = decryptSecret(s.endpoint.secret_sealed);
  const result = await httpAttempt({
    url: s.endpoint.url,
    headers: { 'content-type': 'application/json', 'user-agent': 'Escrow-Webhooks/1.0', ...signedHeaders(secret, msg.messageId, msg.body, at.getTime()) },
    body: msg.body,
    timeoutMs: webhookSettings.timeoutMs,
    connectTimeoutMs: webhookSettings.connectTimeoutMs,
    capBytes: webhookSettings.responseCapBytes,
    allowLoopback: config.sandboxMode,
  });
  return { result, at, body: msg.body };
}

const excerpt = (body: string | null): string | null => (body === null ? null : body.slice(0, webhookSettings.excerptChars));

/**
 * Step 3: record the attempt and move on. Success: the cursor passes the event and, within
 * the run's budget, the next event is taken at once (or the lease given up). Failure: the
 * next retry is scheduled through the outbox (a durable timer), or after the last one the
 * endpoint is disabled and the workspace's admins are e-mailed.
 */
async function settle(s: Sending, sent: { result: AttemptResult; at: Date; body: string }, goOn: boolean): Promise<Step> {
  const { result } = sent;
  // Disabling appends an event: the workspace row first (the lock order), then the endpoint.
  const mayDisable = !result.ok && s.attempt >= MAX_ATTEMPTS;
  return db.transaction(async (trx): Promise<Step> => {
    if (mayDisable) await lockWorkspace(trx, s.endpoint.workspace_id);
    const e = await repo.lockEndpoint(trx, s.endpoint.id);
    if (!e) return { kind: 'stop', state: 'gone' };
    const now = clock.now();
    const ours = e.lease_token === s.token;
    // Failed attempts on the head event after this one: counted from the row, which a resume
    // or a new URL (PATCH) may have set back to 0 while this attempt was out.
    const failures = e.attempts + 1;
    const last = !result.ok && failures >= MAX_ATTEMPTS;
    const retryAt = !result.ok && !last && ours && e.status === 'active' ? new Date(now.getTime() + Math.round(RETRY_DELAYS_MS[failures - 1]! * webhookSettings.retryScale)) : null;
    await repo.insertDelivery(trx, {
      endpoint_id: e.id,
      workspace_id: e.workspace_id,
      message_id: eventMessage(s.event).messageId,
      event_id: s.event.id,
      event_seq: s.event.seq,
      event_type: s.event.event,
      kind: 'event',
      attempt: s.attempt,
      status: result.ok ? 'succeeded' : 'failed',
      payload: sent.body,
      response_status: result.status,
      response_excerpt: excerpt(result.body),
      error: result.error,
      duration_ms: result.durationMs,
      next_attempt_at: retryAt,
      requested_by: null,
      created_at: sent.at,
      attempted_at: sent.at,
    });
    // Another run took over after this one's lease ran out: it owns the endpoint now.
    if (!ours) return { kind: 'stop', state: 'superseded' };
    if (result.ok) {
      const base = { attempts: 0, next_attempt_at: null };
      if (e.status === 'active' && goOn) return takeNext(trx, e, s.token, Number(s.event.seq), base);
      await repo.updateEndpoint(trx, e.id, { ...base, cursor_seq: s.event.seq, lease_until: null, lease_token: null });
      return { kind: 'stop', state: e.status === 'active' ? 'more' : 'inactive' };
    }
    const free = { lease_until: null, lease_token: null };
    if (e.status !== 'active') {
      await repo.updateEndpoint(trx, e.id, { ...free, attempts: Math.min(failures, MAX_ATTEMPTS) });
      return { kind: 'stop', state: 'inactive' };
    }
    if (last) {
      await disable(trx, e, s, result);
      return { kind: 'stop', state: 'disabled' };
    }
    await repo.updateEndpoint(trx, e.id, { ...free, attempts: failures, next_attempt_at: retryAt });
    await enqueue(trx, 'webhooks.deliver', { endpoint_id: e.id }, { runAt: retryAt! });
    return { kind: 'stop', state: 'retry_scheduled' };
  });
}

async function disable(trx: Db, e: EndpointRow, s: Sending, result: AttemptResult): Promise<void> {
  const now = clock.now();
  const host = new URL(e.url).host;
  const reason = `${MAX_ATTEMPTS} attempts to deliver event ${s.event.event} (seq ${Number(s.event.seq)}) failed over about three days; last: ${result.error ?? 'no answer'}`.slice(0, 500);
  await repo.updateEndpoint(trx, e.id, { status: 'disabled', disabled_at: now, disabled_reason: reason, attempts: MAX_ATTEMPTS, next_attempt_at: null, lease_until: null, lease_token: null, updated_at: now });
  await appendEvent(trx, e.workspace_id, {
    event: 'webhook_endpoint.disabled',
    entityType: 'webhook_endpoint',
    entityId: e.id,
    actor: null,
    summary: `Webhook endpoint for ${host} disabled: every attempt failed for about three days`,
  });
  await mailOptedInMembers(
    trx,
    e.workspace_id,
    {
      template: 'enterprise.webhook-disabled',
      subject: `Webhook endpoint disabled: ${host}`,
      text: [
        `Your webhook endpoint for ${host}${e.description ? ` ("${e.description}")` : ''} was disabled.`,
        `Event ${s.event.event} (seq ${Number(s.event.seq)}) could not be delivered after ${MAX_ATTEMPTS} attempts over about three days.`,
        `Last attempt: ${result.error ?? 'no answer'}.`,
        'Events are kept: once the receiver works again, resume the endpoint in the webhooks settings of your workspace and it receives everything it missed, in order.',
      ].join('\n'),
    },
    { minRole: 'admin' },
  );
  logger.warn({ endpoint_id: e.id, workspace_id: e.workspace_id, host }, 'webhook endpoint disabled after the retry schedule failed');
}

/**
 * Runs one endpoint's line of events (job `webhooks.deliver`): sends events in order until
 * none is left, a failure schedules a retry, or the run's budget (100 events or 30 s) is
 * spent, when a new job takes over. Safe to run twice and at the same time: the lease lets
 * one run in; the others return `busy`.
 */
export async function runEndpoint(endpointId: string): Promise<RunResult> {
  const out: RunResult = { endpoint_id: endpointId, delivered: 0, failed: 0, state: 'gone' };
  if (!isUuid(endpointId)) return out;
  const started = performance.now();
  let step = await claim(endpointId);
  while (step.kind === 'send') {
    const sent = await send(step);
    if (sent.result.ok) out.delivered += 1;
    else out.failed += 1;
    const goOn = out.delivered < webhookSettings.runEvents && performance.now() - started < webhookSettings.runMs;
    step = await settle(step, sent, goOn);
  }
  out.state = step.state;
  if (step.state === 'more') await nudgeEndpoints([endpointId]);
  return out;
}

/** Adds a `webhooks.deliver` job per endpoint (a run that finds nothing to do ends at once). */
export async function nudgeEndpoints(ids: string[]): Promise<void> {
  const queue = getQueue('webhooks');
  for (const id of ids) await queue.add('webhooks.deliver', { endpoint_id: id }, { removeOnComplete: { count: 1000 } });
}

/** Job `webhooks.dispatch`: after events of the workspace committed, each active endpoint's run is nudged. */
export async function dispatch(workspaceId: string): Promise<{ nudged: number }> {
  if (!isUuid(workspaceId)) return { nudged: 0 };
  const ids = await repo.activeEndpointIds(db, workspaceId);
  await nudgeEndpoints(ids);
  return { nudged: ids.length };
}

export type OneOffResult = { outcome: 'succeeded' | 'failed'; delivery_id: string; status: number | null } | { outcome: 'skipped' | 'deferred'; delivery_id: string };

/**
 * Job `webhooks.send-once`: a test message or a redelivery, one attempt, recorded on its
 * row. It runs beside the endpoint's line of events, whatever the endpoint's status, and
 * is not retried (ask again to send it again).
 */
export async function sendOnce(deliveryId: string): Promise<OneOffResult> {
  const d = isUuid(deliveryId) ? await repo.pendingDelivery(db, deliveryId) : undefined;
  if (!d) return { outcome: 'skipped', delivery_id: deliveryId };
  const at = clock.now();
  const lease = await takeOneOffSlot(d.workspace_id, d.id, at.getTime());
  if (!lease) {
    // The workspace's slots are taken: try again shortly, through the outbox (durable), the
    // delivery still pending; this job ends now and frees its worker slot for other workspaces.
    await enqueue(db, 'webhooks.send-once', { delivery_id: d.id }, { runAt: new Date(at.getTime() + webhookSettings.oneOffWaitMs + Math.floor(Math.random() * webhookSettings.oneOffWaitMs)) });
    return { outcome: 'deferred', delivery_id: d.id };
  }
  try {
    return await sendOneOff(d, at);
  } finally {
    await redis.zrem(oneOffKey(d.workspace_id), d.id).catch(() => undefined);
  }
}

const oneOffKey = (workspaceId: string): string => `webhooks:one-offs:${workspaceId}`;

/**
 * A slot among the workspace's `oneOffsPerWorkspace` (review R2): a sorted set of the
 * deliveries being sent, each scored with when its lease runs out (the attempt's timeout and
 * the lease margin), so a worker that died mid-attempt leaks nothing: its entry expires.
 * Two takers racing for the last slot may both step back (never both take it over the limit).
 */
async function takeOneOffSlot(workspaceId: string, deliveryId: string, now: number): Promise<boolean> {
  const key = oneOffKey(workspaceId);
  const until = now + webhookSettings.timeoutMs + webhookSettings.leaseMarginMs;
  const replies = await redis
    .multi()
    .zremrangebyscore(key, '-inf', now)
    .zadd(key, until, deliveryId)
    .zcard(key)
    .pexpire(key, webhookSettings.timeoutMs + webhookSettings.leaseMarginMs)
    .exec();
  const count = Number(replies?.[2]?.[1] ?? Number.POSITIVE_INFINITY);
  if (count <= webhookSettings.oneOffsPerWorkspace) return true;
  await redis.zrem(key, deliveryId);
  return false;
}

async function sendOneOff(d: NonNullable<Awaited<ReturnType<typeof repo.pendingDelivery>>>, at: Date): Promise<OneOffResult> {
  const result = await httpAttempt({
    url: d.url,
    headers: { 'content-type': 'application/json', 'user-agent': 'Escrow-Webhooks/1.0', ...signedHeaders(decryptSecret(d.secret_sealed), d.message_id, d.payload, at.getTime()) },
    body: d.payload,
    timeoutMs: webhookSettings.timeoutMs,
    connectTimeoutMs: webhookSettings.connectTimeoutMs,
    capBytes: webhookSettings.responseCapBytes,
    allowLoopback: config.sandboxMode,
  });
  await repo.completeDelivery(db, d.id, {
    status: result.ok ? 'succeeded' : 'failed',
    response_status: result.status,
    response_excerpt: excerpt(result.body),
    error: result.error,
    duration_ms: result.durationMs,
    attempted_at: at,
  });
  return { outcome: result.ok ? 'succeeded' : 'failed', delivery_id: d.id, status: result.status };
}

/**
 * Job `webhooks.sweep` (every minute): nudges active endpoints that have events after their
 * cursor with nobody on them (lease free or run out, no retry waiting), whatever nudge was
 * lost; and deletes every delivery record older than 30 days.
 */
export async function sweepWebhooks(): Promise<{ nudged: number; purged: number }> {
  const ids = await repo.endpointsWithWork(db, clock.now(), 500);
  await nudgeEndpoints(ids);
  // Every expired record, a batch per statement: at most one batch a minute would leave the
  // 30 days unkept past ~83 deliveries a second (docs/scaling.md).
  const before = new Date(clock.nowMs() - webhookSettings.retentionMs);
  const purged = await deleteInBatches(webhookSettings.purgeBatch, (limit) => repo.purgeDeliveries(db, before, limit));
  return { nudged: ids.length, purged };
}
