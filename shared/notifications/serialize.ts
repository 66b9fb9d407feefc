/** The answer shapes of the notification routes (consumer spec 4.6). */
import type { NotificationRow } from './types.js';

/** A list item; `total_count` repeats the list's total as a string (spec 4.6). */
export function serializeNotification(n: NotificationRow, total: number) {
  return {
    id: n.id,
    user_id: n.user_id,
    type: n.type,
    title: n.title,
    body: n.body,
    metadata: n.metadata,
    is_read: n.is_read,
    created_at: n.created_at.toISOString(),
    total_count: String(total),
  };
}

/** The unread count answers as a string. */
export const serializeUnreadCount = (count: number) => ({ count: String(count) });

export const serializeReadMark = (n: NotificationRow) => ({ id: n.id, is_read: true });
