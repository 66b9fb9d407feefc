/**
 * SQL of the e-mail that workspace members get (mail.ts): who receives it and at which
 * address. Only accounts whose status is `active` receive e-mail (users.status; suspended,
 * closed and deleting accounts get none), as consumer notices do.
 */
import { db, readAheadOf, takeReadAhead, type Db, type ReadAhead } from '../db.js';
import type { Role } from './states.js';

export interface Recipient {
  user_id: string;
  email: string;
}

/** What a message is about, beside e-mail itself: the member's `notify.approvals` or `notify.money` must be on too. */
export type MailTopic = 'approvals' | 'money';

/**
 * The active members of the workspace who opted in to e-mail (notify_email), and to the
 * topic when one is given (notify_approvals, notify_money), with an active account, whose
 * role is one of `roles` (every role when omitted), leaving out `exceptUserId`; ordered by
 * user id, so a caller sends in the same order each time.
 */
export async function optedInRecipients(trx: Db, workspaceId: string, roles?: readonly Role[], topic?: MailTopic, exceptUserId?: string): Promise<Recipient[]> {
  return (
    takeReadAhead<Recipient>(trx, recipientsKey(workspaceId, roles, topic, exceptUserId)) ??
    ((await recipientsQuery(trx, workspaceId, roles, topic, exceptUserId)) as Recipient[])
  );
}

/** `optedInRecipients` ahead of time, for a keyed request that will mail them (a release: shared/payouts/release.ts). */
export function optedInRecipientsReadAhead(workspaceId: string, roles?: readonly Role[], topic?: MailTopic, exceptUserId?: string): ReadAhead {
  return readAheadOf(recipientsKey(workspaceId, roles, topic, exceptUserId), recipientsQuery(db, workspaceId, roles, topic, exceptUserId));
}

const recipientsKey = (workspaceId: string, roles?: readonly Role[], topic?: MailTopic, exceptUserId?: string) =>
  `mail-recipients:${workspaceId}:${roles?.join('|') ?? '*'}:${topic ?? '*'}:${exceptUserId ?? '*'}`;

function recipientsQuery(trx: Db, workspaceId: string, roles?: readonly Role[], topic?: MailTopic, exceptUserId?: string) {
  const q = trx('workspace_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where({ 'm.workspace_id': workspaceId, 'm.status': 'active', 'm.notify_email': true, 'u.status': 'active' });
  if (roles) void q.whereIn('m.role', roles);
  if (topic) void q.where(`m.notify_${topic}`, true);
  if (exceptUserId) void q.whereNot('u.id', exceptUserId);
  return q.orderBy('u.id', 'asc').select('u.id as user_id', 'u.email');
}

/** The address of a user whose account is active; undefined for a missing or inactive account. */
export async function activeUserEmail(trx: Db, userId: string): Promise<string | undefined> {
  const row = await trx('users').where({ id: userId, status: 'active' }).first<{ email: string } | undefined>('email');
  return row?.email;
}
