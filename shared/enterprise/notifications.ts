/**
 * In-app notifications of workspace members (decision 0011: role changed, invite
 * accepted), per member and workspace. Written in the change's own transaction.
 */
import { clock } from '../clock.js';
import { db, type Db } from '../db.js';
import type { WorkspaceActor } from './access.js';
import * as repo from './notifications-repo.js';

export type { NotificationRow } from './notifications-repo.js';

/** One in-app notification for a member of the workspace (written in the change's transaction). */
export async function notify(t: Db, workspaceId: string, userId: string, type: string, title: string, body: string): Promise<void> {
  await repo.insertNotification(t, { workspace_id: workspaceId, user_id: userId, type, title, body, created_at: clock.now() });
}

export async function listNotifications(actor: WorkspaceActor, page: number, limit: number) {
  return repo.listNotifications(db, actor.workspaceId, actor.userId, page, limit);
}

export async function markNotificationsRead(trx: Db, actor: WorkspaceActor, ids: string[] | undefined): Promise<number> {
  return repo.markRead(trx, actor.workspaceId, actor.userId, ids, clock.now());
}
