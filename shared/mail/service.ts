/**
 * Outgoing e-mail. `queueMail` records the message (body sealed) and its `mail.send` job
 * in the caller's transaction; the mail worker delivers it through SMTP. `queueSuppressedMail`
 * does the same writes for a message that is never delivered.
 */
import { randomUUID } from 'node:crypto';
import { clock } from '../clock.js';
import { encryptSecret } from '../crypto.js';
import type { Db } from '../db.js';
import { insertEmailWithJob } from './repo.js';

export interface MailMessage {
  to: string;
  userId?: string | null;
  /** Template name, kept for audit (e.g. `login-code`). */
  template: string;
  subject: string;
  text: string;
}

export async function queueMail(trx: Db, message: MailMessage): Promise<string> {
  const id = randomUUID();
  await insertEmailWithJob(trx, {
    id,
    user_id: message.userId ?? null,
    to_address: message.to,
    template: message.template,
    subject: message.subject,
    body_sealed: encryptSecret(message.text),
    created_at: clock.now(),
  });
  return id;
}

/**
 * Does the same writes as `queueMail` (a recorded message and its `mail.send` job) for a
 * message that must never be delivered: no recipient, no body, already marked sent, so
 * the worker skips it. For callers that must cost the same whether or not a mail is due
 * (forgot-password for an unknown address). Nothing about the intended recipient is stored.
 */
export async function queueSuppressedMail(trx: Db, message: Pick<MailMessage, 'template' | 'subject' | 'text'>): Promise<string> {
  encryptSecret(message.text); // the same CPU work as sealing a real body; the result is dropped
  const now = clock.now();
  const id = randomUUID();
  await insertEmailWithJob(trx, { id, user_id: null, to_address: '', template: message.template, subject: message.subject, body_sealed: null, created_at: now, sent_at: now });
  return id;
}
