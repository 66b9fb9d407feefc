/**
 * E-mail to workspace members and invitees. Each message goes through `queueMail`
 * (shared/mail/service.ts): recorded with its body sealed and its `mail.send` job in the
 * outbox, in the caller's transaction, so it is sent only if the change commits. Accounts
 * that are not active (users.status) get no e-mail (mail-repo.ts).
 */
import type { Db, ReadAhead } from '../db.js';
import { queueMail } from '../mail/service.js';
import * as repo from './mail-repo.js';
import type { MailTopic } from './mail-repo.js';
import { ROLES, rankOf, type Role } from './states.js';

export interface MemberMail {
  /** Template name, kept for audit (e.g. `enterprise.member-invited`). */
  template: string;
  subject: string;
  text: string;
}

/** A subject is one header line: line breaks and runs of spaces (a display name may carry them) become one space. */
function oneLine(subject: string): string {
  return subject.replace(/\s+/g, ' ').trim();
}

function queue(trx: Db, to: string, userId: string, mail: MemberMail): Promise<string> {
  return queueMail(trx, { to, userId, template: mail.template, subject: oneLine(mail.subject), text: mail.text });
}

/**
 * Queues one e-mail per active member of the workspace who opted in
 * (workspace_members.notify_email = true), in the caller's transaction. Returns how many
 * were queued. Invited, suspended and removed members get none, nor do members whose
 * account is not active; `minRole` keeps members of that role or higher, `topic` those who
 * also opted in to that kind of message (approvals, money), `exceptUserId` leaves one out.
 */
export async function mailOptedInMembers(trx: Db, workspaceId: string, mail: MemberMail, filter?: MemberFilter): Promise<number> {
  const recipients = await repo.optedInRecipients(trx, workspaceId, rolesOf(filter), filter?.topic, filter?.exceptUserId);
  for (const r of recipients) await queue(trx, r.email, r.user_id, mail);
  return recipients.length;
}

/** Who `mailOptedInMembers` mails, read ahead of time (a keyed request sends it with its key's statement). */
export function mailOptedInMembersReadAhead(workspaceId: string, filter?: MemberFilter): ReadAhead {
  return repo.optedInRecipientsReadAhead(workspaceId, rolesOf(filter), filter?.topic, filter?.exceptUserId);
}

export interface MemberFilter {
  minRole?: Role;
  topic?: MailTopic;
  exceptUserId?: string;
}

const rolesOf = (filter?: MemberFilter) => (filter?.minRole ? ROLES.slice(rankOf(filter.minRole)) : undefined);

/**
 * One e-mail to one user (by id) through shared/mail/service.ts queueMail, in the caller's
 * transaction, whatever their workspace preferences. Nothing is queued when the account
 * is missing or not active.
 */
export async function mailUser(trx: Db, userId: string, mail: MemberMail): Promise<void> {
  const to = await repo.activeUserEmail(trx, userId);
  if (to) await queue(trx, to, userId, mail);
}
