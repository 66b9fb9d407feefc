/**
 * KYB helpers for integration tests: a complete draft body, attaching factory uploads
 * through the API, and a workspace whose application is complete or already submitted
 * (all through the routes, as a client would do it).
 */
import { expect } from 'chai';
import type { api } from '../helpers/app.js';
import { db } from '../../shared/db.js';
import type { UserRow } from '../../shared/users/repo.js';
import { createUploadRow } from './uploads.js';
import { createUser } from './users.js';
import { createWorkspace, headersOf, sessionOf } from './enterprise.js';

export type Client = ReturnType<typeof api>;
export type Headers = Record<string, string>;

/** A 16-digit NIK and an account number that must never be stored or answered in clear. */
export const NIK = '3171234567890123';
export const NIK_2 = '3273019876543210';
export const PASSPORT_NO = 'X9182736';
export const ACCOUNT_NO = '0987654321012';

export const KYB = '/v1/enterprise/kyb';

/** The answer shapes (enterprise spec 2 "KYB application" and its GET wrapper). */
export interface DocumentView {
  id: string;
  doc_type: string;
  person_id: string | null;
  slot_key: string;
  mime: string;
  size_bytes: number;
  sha256: string;
  created_at: string;
}

export interface PersonView {
  id: string;
  full_name: string;
  position: string;
  roles: string[];
  id_type: string;
  id_number_last4: string | null;
  has_id_number: boolean;
  nationality: string;
  ownership_pct: number | null;
}

export interface ApplicationView {
  id: string;
  version: number;
  status: string;
  entity_type: string;
  legal_name: string | null;
  country_code: string | null;
  nib: string | null;
  npwp: string | null;
  address: string | null;
  industry: string | null;
  monthly_volume: string | null;
  website: string | null;
  bank: { bank_name: string | null; bank_account_holder: string | null; account_number_last4: string | null; has_account_number: boolean };
  people: PersonView[];
  documents: DocumentView[];
  change_requests: { field: string; note: string }[];
  submitted_at: string | null;
  decided_at: string | null;
  decision_reason: string | null;
  risk_tier_assigned: string | null;
  updated_at: string;
}

export interface SlotView {
  key: string;
  type: string;
  label: string;
  hint: string;
  required: boolean;
  person_id: string | null;
}

export interface FullView {
  view: 'full';
  subject: { type: string; id: string; name: string; kyb_status: string; is_sandbox: boolean | null; account_manager: unknown; invited_by: unknown };
  application: ApplicationView;
  progress: { steps: { company: boolean; people: boolean; bank: boolean; documents: boolean }; done: number; total: number; missing_documents: string[]; complete: boolean };
  slots: SlotView[];
  history: { version: number; status: string; submitted_at: string | null; decided_at: string | null; decision_reason: string | null }[];
  review: { min_days: number; max_days: number; due_by: string | null };
  can_edit: boolean;
}

/** The full view a KYB answer carries. */
export const fullOf = (res: { body: { data?: unknown } }): FullView => res.body.data as FullView;

export interface PersonBody {
  id?: string;
  full_name: string;
  position: string;
  roles: string[];
  id_type: 'nik' | 'passport';
  id_number?: string;
  nationality: string;
  ownership_pct?: number | null;
}

export const director = (over: Partial<PersonBody> = {}): PersonBody => ({
  full_name: 'Budi Santoso',
  position: 'Direktur Utama',
  roles: ['director', 'beneficial_owner'],
  id_type: 'nik',
  id_number: NIK,
  nationality: 'ID',
  ownership_pct: 60,
  ...over,
});

/** Everything a pt needs besides what registration stored (legal name, entity type, NIB, country) and the documents. */
export function completeDraft() {
  return {
    company: { npwp: '012345678901234', address: 'Jl. Jend. Sudirman 1, Jakarta', industry: 'Retail', monthly_volume: '1b_to_10b', website: 'https://contoh.example' },
    people: [director()],
    bank: { bank_name: 'BCA', bank_account_holder: 'PT Contoh', account_number: ACCOUNT_NO },
  };
}

/** A fresh KYB upload of `userId` attached through the API (the raw answer, for its status). */
export async function attach(client: Client, h: Headers, userId: string, docType: string, personId?: string) {
  const up = await createUploadRow(userId, { purpose: 'kyb' });
  const res = await client.post(`${KYB}/documents`).set(h).send({ upload_id: up.id, doc_type: docType, ...(personId ? { person_id: personId } : {}) });
  return Object.assign(res, { uploadId: up.id });
}

export async function attachOk(client: Client, h: Headers, userId: string, docType: string, personId?: string) {
  const res = await attach(client, h, userId, docType, personId);
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res;
}

export async function patchOk(client: Client, h: Headers, body: object) {
  const res = await client.patch(KYB).set(h).send(body);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res;
}

export async function viewOf(client: Client, h: Headers): Promise<FullView> {
  const res = await client.get(KYB).set(h);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return fullOf(res);
}

/** A workspace (pt) whose owner filled every field and attached every required document; not submitted. */
export async function completeWorkspace(client: Client, owner?: UserRow) {
  const made = await createWorkspace(owner);
  const h = headersOf(await sessionOf(made.owner));
  const p = await patchOk(client, h, completeDraft());
  const personId = fullOf(p).application.people[0]!.id;
  for (const t of ['akta_pendirian', 'sk_kemenkumham', 'bank_proof']) await attachOk(client, h, made.owner.id, t);
  const last = await attachOk(client, h, made.owner.id, 'ktp', personId);
  expect(fullOf(last).progress.complete).to.equal(true);
  return { ...made, h, personId, applicationId: fullOf(last).application.id };
}

/** A complete workspace application, submitted. */
export async function submittedWorkspace(client: Client, owner?: UserRow) {
  const made = await completeWorkspace(client, owner);
  const res = await client.post(`${KYB}/submit`).set(made.h).send({});
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  expect(res.body.data.application.status).to.equal('submitted');
  return made;
}

/** Headers of a staff member (platform admin) with a session. */
export async function staffHeaders(): Promise<Headers> {
  const { user } = await createUser({ role: 'admin', fullName: 'Staff Reviewer' });
  return headersOf(await sessionOf(user));
}

export const review = (client: Client, h: Headers, applicationId: string, move: 'approve' | 'reject' | 'request-changes', body: object) =>
  client.post(`/v1/admin/enterprise/kyb/${applicationId}/${move}`).set(h).send(body);

export interface ApplicationDbRow {
  id: string;
  version: number;
  status: string;
  people: { id: string; id_number_sealed: string | null; id_number_last4: string | null }[];
  bank_account_number_sealed: string | null;
  bank_account_last4: string | null;
  change_requests: { field: string; note: string }[];
  decision_reason: string | null;
  risk_tier_assigned: string | null;
  decided_at: Date | null;
  submitted_at: Date | null;
}

/** The workspace's own application rows, newest version first. */
export const applicationRows = (workspaceId: string) =>
  db('kyb_applications').where({ workspace_id: workspaceId }).whereNull('counterparty_id').orderBy('version', 'desc').select<ApplicationDbRow[]>('*');

export const workspaceRow = (workspaceId: string) =>
  db('workspaces').where({ id: workspaceId }).first<{ kyb_status: string; is_sandbox: boolean; risk_tier: string; legal_name: string }>('*');
