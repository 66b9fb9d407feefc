/** SQL of the in-app notifications of workspace members. */
import type { Db } from '../db.js';

export interface NotificationRow {
  id: string;
  workspace_id: string;
  user_id: string;
  type: string;
  title: string;
  body: string;
  is_read: boolean;
  read_at: Date | null;
  created_at: Date;
}

export async function insertNotification(
  trx: Db,
  input: { workspace_id: string; user_id: string; type: string; title: string; body: string; created_at: Date },
): Promise<void> {
  await trx('enterprise_notifications').insert(input);
}

/** One page of a member's notifications, newest first, with the total and the unread count. */
export async function listNotifications(
  trx: Db,
  workspaceId: string,
  userId: string,
  page: number,
  limit: number,
): Promise<{ rows: NotificationRow[]; total: number; unread: number }> {
  const base = trx('enterprise_notifications').where({ workspace_id: workspaceId, user_id: userId });
  const [countRow] = await base.clone().count<{ count: string }[]>('* as count');
  const [unreadRow] = await base.clone().where({ is_read: false }).count<{ count: string }[]>('* as count');
  const rows = (await base
    .clone()
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit)
    .offset((page - 1) * limit)) as NotificationRow[];
  return { rows, total: Number(countRow?.count ?? 0), unread: Number(unreadRow?.count ?? 0) };
}

/** Marks a member's unread notifications read (those of `ids` only, when given); answers how many. */
export async function markRead(trx: Db, workspaceId: string, userId: string, ids: string[] | undefined, now: Date): Promise<number> {
  const q = trx('enterprise_notifications').where({ workspace_id: workspaceId, user_id: userId, is_read: false });
  if (ids) q.whereIn('id', ids);
  return q.update({ is_read: true, read_at: now });
}
