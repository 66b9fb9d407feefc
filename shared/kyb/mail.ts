/** The e-mails of KYB: a counterparty's verification link and a review's outcome (Indonesian first, then English, as the consumer mails). */
import { config } from '../config.js';
import type { MemberMail } from '../enterprise/mail.js';
import { plainName } from '../mail/plain.js';
import type { KybApplicationRow } from './repo.js';
import { subjectName, type KybSubject } from './subject.js';

const OUTCOMES: Record<string, { id: string; en: string }> = {
  'kyb.changes_requested': { id: 'memerlukan perubahan', en: 'needs changes' },
  'kyb.approved': { id: 'disetujui', en: 'was approved' },
  'kyb.rejected': { id: 'ditolak', en: 'was rejected' },
};

/**
 * A review's outcome, to the counterparty's holder (someone the workspace sent a link to)
 * or to the workspace's members. The subject's name is customer text (a counterparty's name
 * the workspace typed), so it is set in as a plain name (shared/mail/plain.ts), like the
 * invite mail's workspace name; staff's own reason and notes are the platform's words.
 */
export function outcomeMail(action: string, subject: KybSubject, app: KybApplicationRow): MemberMail {
  const outcome = OUTCOMES[action] ?? { id: 'ditinjau', en: 'was reviewed' };
  const name = plainName(subjectName(subject)) || (subject.counterparty ? 'Counterparty' : 'Workspace');
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

/**
 * A counterparty's verification link (issue 42). It goes to an address the workspace typed,
 * so it carries the platform's own words only: the workspace's display name as a plain name
 * (shared/mail/plain.ts: no URL, e-mail address, line break or control character, at most
 * 60 characters), the link and its lifetime. Nothing else the workspace wrote (not the
 * counterparty's name, not the inviter's) reaches it.
 */
export function inviteMail(workspaceDisplayName: string, url: string, ttlDays: number): MemberMail {
  const by = plainName(workspaceDisplayName) || 'Workspace';
  return {
    template: 'kyb-invite',
    subject: `Verifikasi bisnis untuk ${by} / Business verification for ${by}`,
    text: [
      `Workspace "${by}" meminta perusahaan Anda menyelesaikan verifikasi bisnis (KYB) di ${config.publicBaseUrl}.`,
      `Buka tautan ini untuk mengisi aplikasi (berlaku ${ttlDays} hari): ${url}`,
      'Tautan ini hanya untuk satu orang; jangan diteruskan. Jika Anda tidak mengenal workspace ini, abaikan pesan ini.',
      '',
      '---',
      '',
      `The workspace "${by}" asks your company to complete business verification (KYB) at ${config.publicBaseUrl}.`,
      `Open this link to fill in the application (valid for ${ttlDays} days): ${url}`,
      'The link is for one person only; do not forward it. If you do not know this workspace, you can ignore this message.',
    ].join('\n'),
  };
}
