import { UnrecoverableError } from 'bullmq';
import { clock } from '../shared/clock.js';
import { config } from '../shared/config.js';
import { decryptSecret } from '../shared/crypto.js';
import { db } from '../shared/db.js';
import { mailTransport } from '../shared/mail/transport.js';
import { queueProcessors } from './types.js';

interface EmailRow {
  id: string;
  to_address: string;
  subject: string;
  body_sealed: string | null;
  sent_at: Date | null;
}

/** mail queue: delivers one recorded e-mail; a second run after delivery does nothing. */
export const mail = queueProcessors('mail', {
  'mail.send': async (job) => {
    const { emailId } = job.data;
    const row = (await db('outbound_emails').where({ id: emailId }).first()) as EmailRow | undefined;
    if (!row) throw new UnrecoverableError(`outbound e-mail ${emailId} does not exist`);
    if (row.sent_at || row.body_sealed === null) return { skipped: 'already sent' };
    const info = (await mailTransport().sendMail({
      from: config.mailFrom,
      to: row.to_address,
      subject: row.subject,
      text: decryptSecret(row.body_sealed),
    })) as { messageId?: string };
    await db('outbound_emails')
      .where({ id: row.id })
      .whereNull('sent_at')
      .update({ sent_at: clock.now(), body_sealed: null, message_id: info.messageId ?? null });
    return { sent: true };
  },
});
