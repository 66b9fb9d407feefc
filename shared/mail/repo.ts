/** SQL of outgoing e-mail (`outbound_emails`): recorded by the service, delivered by the mail worker. */
import type { Db } from '../db.js';

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

export async function insertEmail(trx: Db, email: NewEmail): Promise<string> {
  const [row] = await trx('outbound_emails').insert(email).returning<{ id: string }[]>('id');
  if (!row) throw new Error('outbound_emails insert returned no row');
  return row.id;
}

export async function findEmail(trx: Db, id: string): Promise<EmailRow | undefined> {
  return (await trx('outbound_emails').where({ id }).first()) as EmailRow | undefined;
}

/** Marks a message sent and drops its body; a second delivery's mark changes nothing. */
export async function markSent(trx: Db, id: string, at: Date, messageId: string | null): Promise<void> {
  await trx('outbound_emails').where({ id }).whereNull('sent_at').update({ sent_at: at, body_sealed: null, message_id: messageId });
}
