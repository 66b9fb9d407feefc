import { UnrecoverableError } from 'bullmq';
import { clock } from '../shared/clock.js';
import { config } from '../shared/config.js';
import { decryptSecret } from '../shared/crypto.js';
import { db } from '../shared/db.js';
import { findEmail, markSent } from '../shared/mail/repo.js';
import { mailTransport } from '../shared/mail/transport.js';
import { traced } from '../shared/tracing.js';
import { queueProcessors } from './types.js';

/** mail queue: delivers one recorded e-mail; a second run after delivery does nothing. */
export const mail = queueProcessors('mail', {
  'mail.send': async (job) => {
    const { emailId } = job.data;
    const row = await findEmail(db, emailId);
    if (!row) throw new UnrecoverableError(`outbound e-mail ${emailId} does not exist`);
    if (row.sent_at || row.body_sealed === null) return { skipped: 'already sent' };
    const body = decryptSecret(row.body_sealed);
    // The SMTP exchange as a span of its own when tracing is on (no address or subject on it).
    const info = (await traced('smtp send', () => mailTransport().sendMail({ from: config.mailFrom, to: row.to_address, subject: row.subject, text: body }), {
      kind: 'client',
    })) as { messageId?: string };
    await markSent(db, row.id, clock.now(), info.messageId ?? null);
    return { sent: true };
  },
});
