/**
 * In-app notifications (consumer spec 2, 4.6, 6). Services call `notify` inside the
 * transaction that makes the change; the outbox carries ids only, and the notifications
 * worker builds the row from the state it reads (`createNotices`), so a rolled-back
 * change notifies no one and a re-run job inserts nothing twice.
 *
 * A transaction that makes many changes at once (the gateway-callbacks worker reconciles
 * payments in batches) runs inside `collectNotices`: its notices leave in one outbox row
 * (`notifications.create-batch`) instead of one each.
 *
 * Every change of a user's unread count is published once committed (`publishUnreadChanged`),
 * so every API copy's open streams recount.
 */
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import type { Actor } from '../actors.js';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { db, type Db } from '../db.js';
import { enqueue, enqueueMany, outboxItem, type OutboxItem } from '../outbox.js';
import { redis as sharedRedis } from '../redis.js';
import { createNoticesIn } from './create.js';
import { notificationErrors } from './errors.js';
import * as repo from './repo.js';
import { NOTIFICATION_TYPES, type ListQuery, type NotificationJob, type NotificationRefs, type NotificationRow, type NotificationType, type Preference, type PreferenceChanges } from './types.js';

// The names other features and tests have always imported from here.
export { NOTIFICATION_TYPES, isNotificationType } from './types.js';
export type { NotificationJob, NotificationRefs, NotificationRow, NotificationType, Preference, PreferenceChanges } from './types.js';
export { EMAIL_TYPES, escapeHtml, htmlToText } from './templates.js';
export { createNoticesIn, type CreatedNotices } from './create.js';

/** Notices waiting for the end of a `collectNotices` transaction, by transaction. */
const collecting = new WeakMap<object, NotificationJob[]>();
/** Notices per batch job (one outbox row each). */
export const NOTICE_BATCH_SIZE = 500;

export async function notify(trx: Db, userId: string, type: NotificationType, refs: NotificationRefs): Promise<void> {
  const item = noticeJob(trx, userId, type, refs);
  if (item) await enqueueMany(trx, [item]);
}

/** A notice for `notifyAll`. */
export interface Notice {
  userId: string;
  type: NotificationType;
  refs: NotificationRefs;
}

/**
 * Several notices, and any further outbox jobs of the same change, in one outbox INSERT
 * (one round trip; rows in the order given). Inside `collectNotices` the notices join the
 * batch as `notify`'s do; the jobs are written at once.
 */
export async function notifyAll(trx: Db, notices: readonly Notice[], jobs: readonly OutboxItem[] = []): Promise<void> {
  await enqueueMany(trx, [...noticeJobs(trx, notices), ...jobs]);
}

/** `notifyAll`'s notices as outbox items for a caller that writes them in its own statement (none inside `collectNotices`: they join the batch). */
export function noticeJobs(trx: Db, notices: readonly Notice[]): OutboxItem[] {
  return notices.flatMap((n) => noticeJob(trx, n.userId, n.type, n.refs) ?? []);
}

/**
 * `notify` for a caller that writes the notice's outbox row together with its own rows
 * (`enqueueMany`: one INSERT): the row to write, or undefined when the transaction runs
 * inside `collectNotices` (the notice then leaves with the batch).
 */
export function noticeJob(trx: Db, userId: string, type: NotificationType, refs: NotificationRefs): OutboxItem | undefined {
  if (!refs.escrow_id && !refs.withdrawal_id) throw new Error(`notify(${type}): an escrow_id or a withdrawal_id is required`);
  const notice: NotificationJob = {
    user_id: userId,
    type,
    escrow_id: refs.escrow_id ?? null,
    dispute_id: refs.dispute_id ?? null,
    outcome: refs.outcome ?? null,
  };
  // Escrow notices keep the job shape they always had; only a withdrawal's carries its id.
  if (refs.withdrawal_id) notice.withdrawal_id = refs.withdrawal_id;
  const batch = collecting.get(trx);
  if (batch) {
    batch.push(notice);
    return undefined;
  }
  return outboxItem('notifications.create', notice);
}

/**
 * Runs `fn` in `trx`, gathering the notices it makes; before returning, queues them in as
 * few outbox rows as possible, in the same transaction (so they leave only if it commits).
 */
export async function collectNotices<T>(trx: Knex.Transaction, fn: () => Promise<T>): Promise<T> {
  if (collecting.has(trx)) return fn();
  const batch: NotificationJob[] = [];
  collecting.set(trx, batch);
  try {
    const result = await fn();
    for (let i = 0; i < batch.length; i += NOTICE_BATCH_SIZE) {
      await enqueue(trx, 'notifications.create-batch', { notices: batch.slice(i, i + NOTICE_BATCH_SIZE) });
    }
    return result;
  } finally {
    collecting.delete(trx);
  }
}

// ---- Preferences -----------------------------------------------------------------------------

/** Every type with its channels (a type never set has both on). */
export async function preferencesOf(userId: string, trx: Db = db): Promise<Record<NotificationType, Preference>> {
  const set = new Map((await repo.preferenceRows(trx, [userId])).map((r) => [r.type, r]));
  const out = {} as Record<NotificationType, Preference>;
  for (const type of NOTIFICATION_TYPES) {
    const r = set.get(type);
    out[type] = { in_app: r?.in_app ?? true, email: r?.email ?? true };
  }
  return out;
}

/** Changes the named types' channels (a channel left out keeps its value). */
export async function updatePreferences(userId: string, changes: PreferenceChanges): Promise<Record<NotificationType, Preference>> {
  await db.transaction(async (trx) => {
    const current = await preferencesOf(userId, trx);
    const now = clock.now();
    const rows = Object.entries(changes).map(([type, change]) => {
      const base = current[type as NotificationType];
      return { user_id: userId, type, in_app: change?.in_app ?? base.in_app, email: change?.email ?? base.email, updated_at: now };
    });
    await repo.upsertPreferences(trx, rows);
  });
  return preferencesOf(userId);
}

// ---- Creating rows (the worker's half) ---------------------------------------------------------

/** `createNoticesIn` in a transaction of its own, then the users' streams are told. Returns how many rows were new. */
export async function createNotices(entries: { sourceKey: string; notice: NotificationJob }[]): Promise<number> {
  const result = await db.transaction((trx) => createNoticesIn(trx, entries));
  await publishUnreadChanged(result.users);
  return result.created;
}

/** One notice from one job (`notifications.create`). */
export async function createFromJob(sourceKey: string, notice: NotificationJob): Promise<{ created: boolean }> {
  return { created: (await createNotices([{ sourceKey, notice }])) > 0 };
}

// ---- Cross-process change signal ---------------------------------------------------------------

/** The Redis channel on which a user id means "this user's unread count may have changed". */
export function unreadChannel(): string {
  return `${config.queuePrefix}:notifications:unread`;
}

/** Call only after the change is committed: every API copy's open streams of these users recount. */
export async function publishUnreadChanged(userIds: readonly string[], client: Redis = sharedRedis): Promise<void> {
  for (const id of new Set(userIds)) await client.publish(unreadChannel(), id);
}

// ---- Reading and read marks (the routes' half) ---------------------------------------------------

export async function unreadCount(userId: string, trx: Db = db): Promise<number> {
  return repo.unreadCount(trx, userId);
}

export async function listFor(actor: Actor, q: ListQuery): Promise<{ rows: NotificationRow[]; total: number }> {
  return repo.listFor(db, actor.userId, q);
}

/**
 * Marks the owner's notification read and, when that changed it, tells the owner's streams
 * (through `redis`, the API copy's client). Another user's notification is 403 (as for a
 * stranger on an escrow; nothing of it is shown or changed); no such notification, 404.
 */
export async function markRead(actor: Actor, id: string, redis?: Redis): Promise<NotificationRow> {
  const moved = await repo.markReadIfUnread(db, actor.userId, id, clock.now());
  if (moved) {
    await publishUnreadChanged([actor.userId], redis);
    return moved;
  }
  const row = await repo.findOwn(db, actor.userId, id);
  if (row) return row;
  if (await repo.belongsToAnother(db, actor.userId, id)) throw notificationErrors.notYours();
  throw notificationErrors.notFound();
}

/** Marks every unread notification of the owner read; their streams are told when any was. */
export async function markAllRead(actor: Actor, redis?: Redis): Promise<number> {
  const updated = await repo.markAllRead(db, actor.userId, clock.now());
  if (updated > 0) await publishUnreadChanged([actor.userId], redis);
  return updated;
}
