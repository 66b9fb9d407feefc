/**
 * SQL of the notifications feature: notifications, notification_preferences, and the
 * reads the worker makes of escrows, withdrawals and users to build a notice. Callers pass
 * the transaction (or the pool).
 */
import type { Db } from '../db.js';
import type { EscrowFacts, WithdrawalFacts } from './templates.js';
import type { ListQuery, NotificationRow, NotificationType, Preference } from './types.js';

const ROW_COLUMNS = ['id', 'user_id', 'type', 'title', 'body', 'metadata', 'is_read', 'created_at'] as const;

// ---- Preferences -----------------------------------------------------------------------------

export type PreferenceRow = { user_id: string; type: string } & Preference;

/** The preference rows of these users (a type never set has no row). */
export async function preferenceRows(trx: Db, userIds: readonly string[]): Promise<PreferenceRow[]> {
  return trx('notification_preferences').whereIn('user_id', userIds).select<PreferenceRow[]>('user_id', 'type', 'in_app', 'email');
}

export async function upsertPreferences(trx: Db, rows: (PreferenceRow & { updated_at: Date })[]): Promise<void> {
  if (rows.length > 0) await trx('notification_preferences').insert(rows).onConflict(['user_id', 'type']).merge(['in_app', 'email', 'updated_at']);
}

// ---- What the worker reads to build notices ------------------------------------------------------

export async function escrowFacts(trx: Db, ids: readonly string[]): Promise<EscrowFacts[]> {
  if (ids.length === 0) return [];
  return (await trx('escrows').select('id', 'item_name', 'amount', 'status').whereIn('id', ids)) as EscrowFacts[];
}

export async function withdrawalFacts(trx: Db, ids: readonly string[]): Promise<WithdrawalFacts[]> {
  if (ids.length === 0) return [];
  const rows = (await trx('withdrawals').select('id', 'amount', 'net_amount', 'method', 'admin_note').whereIn('id', ids)) as WithdrawalFacts[];
  return rows.map((w) => ({ ...w, amount: Number(w.amount), net_amount: Number(w.net_amount) }));
}

/** E-mail addresses of the active users among these, by user id. */
export async function activeEmails(trx: Db, userIds: readonly string[]): Promise<Map<string, string>> {
  const rows = await trx('users').whereIn('id', userIds).where({ status: 'active' }).select<{ id: string; email: string }[]>('id', 'email');
  return new Map(rows.map((u) => [u.id, u.email]));
}

export interface NewNotice {
  user_id: string;
  type: NotificationType;
  title: string;
  body: string;
  metadata: string;
  source_key: string;
  created_at: Date;
  in_app: boolean;
}

export type InsertedNotice = Pick<NewNotice, 'user_id' | 'type' | 'title' | 'body' | 'in_app'> & { id: string };

/** Inserts the rows whose (source key, user) is new; returns only those. */
export async function insertNotices(trx: Db, rows: NewNotice[]): Promise<InsertedNotice[]> {
  return trx('notifications')
    .insert(rows)
    .onConflict(['source_key', 'user_id'])
    .ignore()
    .returning<InsertedNotice[]>(['id', 'user_id', 'type', 'title', 'body', 'in_app']);
}

// ---- The owner's reads and read marks -----------------------------------------------------------

export async function unreadCount(trx: Db, userId: string): Promise<number> {
  const [row] = (await trx('notifications').where({ user_id: userId, is_read: false, in_app: true }).count<{ n: string }[]>('* as n')) as { n: string }[];
  return Number(row?.n ?? 0);
}

/** One page of the owner's shown notifications, newest first, and how many there are. */
export async function listFor(trx: Db, userId: string, q: ListQuery): Promise<{ rows: NotificationRow[]; total: number }> {
  const base = () => {
    const b = trx('notifications').where({ user_id: userId, in_app: true });
    if (q.unread_only) b.where({ is_read: false });
    return b;
  };
  const [rows, [count]] = await Promise.all([
    base()
      .select(...ROW_COLUMNS)
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
      .limit(q.limit)
      .offset((q.page - 1) * q.limit) as Promise<NotificationRow[]>,
    base().count<{ n: string }[]>('* as n') as Promise<{ n: string }[]>,
  ]);
  return { rows, total: Number(count?.n ?? 0) };
}

/** Compare-and-set: the owner's shown notification, unread, becomes read; undefined when it was not so. */
export async function markReadIfUnread(trx: Db, userId: string, id: string, now: Date): Promise<NotificationRow | undefined> {
  const [moved] = await trx('notifications')
    .where({ id, user_id: userId, in_app: true, is_read: false })
    .update({ is_read: true, read_at: now })
    .returning<NotificationRow[]>([...ROW_COLUMNS]);
  return moved;
}

/** The owner's shown notification by id. */
export async function findOwn(trx: Db, userId: string, id: string): Promise<NotificationRow | undefined> {
  return trx('notifications').where({ id, user_id: userId, in_app: true }).first<NotificationRow | undefined>(...ROW_COLUMNS);
}

/** True when the id names another user's notification. */
export async function belongsToAnother(trx: Db, userId: string, id: string): Promise<boolean> {
  return (await trx('notifications').where({ id }).whereNot({ user_id: userId }).first<{ id: string } | undefined>('id')) !== undefined;
}

/** Marks every unread notification of the owner read (hidden ones too); returns how many. */
export async function markAllRead(trx: Db, userId: string, now: Date): Promise<number> {
  return trx('notifications').where({ user_id: userId, is_read: false }).update({ is_read: true, read_at: now });
}
