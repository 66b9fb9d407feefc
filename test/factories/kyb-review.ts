/**
 * Submitted KYB applications for the review tests (operator console), made through the
 * KYB service as the routes call it (shared/kyb/service.ts with a subject and a caller):
 * a workspace's own application, or a counterparty's opened from its verification link.
 */
import { clock } from '../../shared/clock.js';
import { createCounterparty } from '../../shared/enterprise/counterparties.js';
import type { WorkspaceRow } from '../../shared/enterprise/repo.js';
import { createInvite, openInvite } from '../../shared/kyb/invites.js';
import type { KybApplicationRow } from '../../shared/kyb/repo.js';
import * as kyb from '../../shared/kyb/service.js';
import type { UserRow } from '../../shared/users/repo.js';
import { createUploadRow } from './uploads.js';
import { createUser } from './users.js';
import { createWorkspace } from './enterprise.js';

export const REVIEW_NIK = '3171234567890123';
export const REVIEW_ACCOUNT_NO = '0987654321012';

export interface SubmittedApplication {
  workspace: WorkspaceRow;
  owner: UserRow;
  /** Who filled the application (the owner, or the user who opened the counterparty's link). */
  applicant: UserRow;
  application: KybApplicationRow;
  subject: kyb.KybSubject;
}

export interface SubmittedOptions {
  /** The workspace's display name. */
  name?: string;
  /** A counterparty's application (named so) instead of the workspace's own. */
  counterparty?: string;
  /** Bytes stored for every document (default: a row without a file). */
  bytes?: Buffer;
  /** Made and submitted at this instant (the clock is pinned meanwhile, then back to the system clock). */
  at?: Date;
}

/** A complete application (pt: company, one director, bank, every required document), submitted now. */
export async function submittedApplication(options: SubmittedOptions = {}): Promise<SubmittedApplication> {
  if (!options.at) return make(options);
  clock.set(options.at);
  try {
    return await make(options);
  } finally {
    clock.reset();
  }
}

async function make(options: SubmittedOptions): Promise<SubmittedApplication> {
  const { workspace, owner, ownerMember } = await createWorkspace(undefined, options.name);
  let applicant = owner;
  let subject: kyb.KybSubject = { type: 'account', workspace, counterparty: null, invitedBy: null };
  if (options.counterparty) {
    const actor = { workspaceId: workspace.id, memberId: ownerMember.id, role: ownerMember.role, userId: owner.id, userName: owner.full_name };
    const cp = await createCounterparty(undefined, actor, { name: options.counterparty, country_code: 'ID', relationship: 'seller' });
    const invite = await createInvite(undefined, actor, cp.id);
    applicant = (await createUser({ fullName: `Applicant of ${options.counterparty}` })).user;
    subject = await openInvite(invite.token, { userId: applicant.id });
  }
  const caller: kyb.KybCaller = { userId: applicant.id, userName: applicant.full_name, full: true, mayEdit: true };
  const drafted = await kyb.saveDraft(undefined, caller, subject, {
    company: {
      ...(options.counterparty ? { legal_name: `PT ${options.counterparty}`, entity_type: 'pt' as const, nib: '1234567890123' } : {}),
      npwp: '012345678901234',
      address: 'Jl. Jend. Sudirman 1, Jakarta',
      industry: 'Retail',
      monthly_volume: '1b_to_10b',
      website: 'https://contoh.example',
    },
    people: [
      { full_name: 'Budi Santoso', position: 'Direktur Utama', roles: ['director', 'beneficial_owner'], id_type: 'nik', id_number: REVIEW_NIK, nationality: 'ID', ownership_pct: 60 },
    ],
    bank: { bank_name: 'BCA', bank_account_holder: 'PT Contoh', account_number: REVIEW_ACCOUNT_NO },
  });
  const personId = drafted.application.people[0]!.id;
  const docs: kyb.AttachInput[] = [
    { upload_id: '', doc_type: 'akta_pendirian' },
    { upload_id: '', doc_type: 'sk_kemenkumham' },
    { upload_id: '', doc_type: 'bank_proof' },
    { upload_id: '', doc_type: 'ktp', person_id: personId },
  ];
  for (const d of docs) {
    const up = await createUploadRow(applicant.id, { purpose: 'kyb', ...(options.bytes ? { bytes: options.bytes } : {}) });
    await kyb.attachDocument(undefined, caller, subject, { ...d, upload_id: up.id });
  }
  const submitted = await kyb.submit(undefined, caller, subject);
  return { workspace, owner, applicant, application: submitted.application, subject: submitted.subject };
}
