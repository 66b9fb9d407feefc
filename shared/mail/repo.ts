/** SQL of outgoing e-mail (`outbound_emails`): recorded by the service, delivered by the mail worker. */
import { nativeOf, writeAtCommit, type Db } from '../db.js';
import { outboxInsertSql, outboxItem } from '../outbox.js';

export interface EmailRow {
  id: string;
  to_address: string;
  subject: string;
  body_sealed: string | null;
  sent_at: Date | null;
}

export interface NewEmail {
  user_id: string | null;
  to_address: string;
  template: string;
  subject: string;
  body_sealed: string | null;
  created_at: Date;
  sent_at?: Date;
}

/**
 * The message and its `mail.send` job in one statement (the message INSERT as a CTE of the
 * outbox INSERT); the id is the caller's. Nothing in the request waits on it: in a keyed
 * request it is held for the transaction's COMMIT (`writeAtCommit`, sent with the next
 * statement's round trip or the COMMIT's), elsewhere it runs now as a named statement.
 */
export async function insertEmailWithJob(trx: Db, email: NewEmail & { id: string }): Promise<void> {
  const message = trx('outbound_emails').insert(email).toSQL();
  const job = outboxInsertSql(trx, [outboxItem('mail.send', { emailId: email.id })])!;
  await writeAtCommit(trx, nativeOf(trx, `WITH m AS (${message.sql}) ${job.sql}`, [...message.bindings, ...job.bindings]));
}

export async function findEmail(trx: Db, id: string): Promise<EmailRow | undefined> {
  return (await trx('outbound_emails').where({ id }).first()) as EmailRow | undefined;
}

/** Marks a message sent and drops its body; a second delivery's mark changes nothing. */
export async function markSent(trx: Db, id: string, at: Date, messageId: string | null): Promise<void> {
  await trx('outbound_emails').where({ id }).whereNull('sent_at').update({ sent_at: at, body_sealed: null, message_id: messageId });
}
