/**
 * Outgoing e-mail. `queueMail` records the message (body sealed) and its `mail.send` job
 * in the caller's transaction; the mail worker delivers it through SMTP.
 */
import { clock } from '../clock.js';
import { encryptSecret } from '../crypto.js';
import type { Db } from '../db.js';
import { enqueue } from '../outbox.js';

export interface MailMessage {
  to: string;
  userId?: string | null;
  /** Template name, kept for audit (e.g. `login-code`). */
  template: string;
  subject: string;
  text: string;
}

export async function queueMail(trx: Db, message: MailMessage): Promise<string> {
  const [row] = (await trx('outbound_emails')
    .insert({
      user_id: message.userId ?? null,
      to_address: message.to,
      template: message.template,
      subject: message.subject,
      body_sealed: encryptSecret(message.text),
      created_at: clock.now(),
    })
    .returning<{ id: string }[]>('id'));
  if (!row) throw new Error('outbound_emails insert returned no row');
  await enqueue(trx, 'mail.send', { emailId: row.id });
  return row.id;
}
