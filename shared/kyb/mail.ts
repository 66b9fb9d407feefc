/** The e-mails of a review's outcome (Indonesian first, then English, as the consumer mails). */
import { config } from '../config.js';
import type { MemberMail } from '../enterprise/mail.js';
import type { KybApplicationRow } from './repo.js';
import { subjectName, type KybSubject } from './subject.js';

const OUTCOMES: Record<string, { id: string; en: string }> = {
  'kyb.changes_requested': { id: 'memerlukan perubahan', en: 'needs changes' },
  'kyb.approved': { id: 'disetujui', en: 'was approved' },
  'kyb.rejected': { id: 'ditolak', en: 'was rejected' },
};

export function outcomeMail(action: string, subject: KybSubject, app: KybApplicationRow): MemberMail {
  const outcome = OUTCOMES[action] ?? { id: 'ditinjau', en: 'was reviewed' };
  const name = subjectName(subject);
  const lines = [
    `Aplikasi verifikasi bisnis (KYB) ${name}, versi ${app.version}, ${outcome.id}.`,
    app.decision_reason ? `Alasan: ${app.decision_reason}` : null,
    app.change_requests.length ? `Perubahan yang diminta:\n${app.change_requests.map((c) => `- ${c.field}: ${c.note}`).join('\n')}` : null,
    `Buka ${config.publicBaseUrl} untuk melihat aplikasi.`,
    '',
    `The business verification (KYB) application of ${name}, version ${app.version}, ${outcome.en}.`,
    app.decision_reason ? `Reason: ${app.decision_reason}` : null,
    app.change_requests.length ? `Changes requested:\n${app.change_requests.map((c) => `- ${c.field}: ${c.note}`).join('\n')}` : null,
    `Open ${config.publicBaseUrl} to see the application.`,
  ];
  return {
    template: action.replace('.', '-'),
    subject: `KYB ${name}: ${outcome.id} / ${outcome.en}`,
    text: lines.filter((l): l is string => l !== null).join('\n'),
  };
}
