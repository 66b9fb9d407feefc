/** SQL of KYB applications, their documents and counterparty invite links. */
import { NO_SEARCH, queuePage, type QueueCursor, type QueuePage, type StaffSearch } from '../staff/queue.js';
import type { Db } from '../db.js';
import type { EntityType } from '../enterprise/states.js';
import type { ApplicationStatus, ApplicationTransition } from './states.js';

/** One person of an application as stored: the identity number sealed, its last four digits in clear. */
export interface StoredPerson {
  id: string;
  full_name: string;
  position: string;
  roles: string[];
  id_type: 'nik' | 'passport';
  id_number_sealed: string | null;
  id_number_last4: string | null;
  nationality: string;
  ownership_pct: number | null;
}

export interface ChangeRequest {
  field: string;
  note: string;
}

export interface KybApplicationRow {
  id: string;
  workspace_id: string;
  /** Null for the workspace's own application. */
  counterparty_id: string | null;
  version: number;
  status: ApplicationStatus;
  entity_type: EntityType | null;
  legal_name: string | null;
  country_code: string | null;
  nib: string | null;
  npwp: string | null;
  address: string | null;
  industry: string | null;
  monthly_volume: string | null;
  website: string | null;
  bank_name: string | null;
  bank_account_holder: string | null;
  bank_account_number_sealed: string | null;
  bank_account_last4: string | null;
  people: StoredPerson[];
  change_requests: ChangeRequest[];
  submitted_at: Date | null;
  decided_at: Date | null;
  decided_by: string | null;
  decision_reason: string | null;
  risk_tier_assigned: string | null;
  /**
   * A counterparty's application: the user who claimed a link to this version, the only one
   * who reads or writes it through a link (issue 42; null until a link is claimed, and for a
   * workspace's own application).
   */
  holder_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Whose application: the workspace itself (counterpartyId null) or one of its counterparties. */
export interface SubjectKey {
  workspaceId: string;
  counterpartyId: string | null;
}

/** The fields a version carries to the next one (a change request or a restart after rejection). */
export const CARRIED = [
  'workspace_id',
  'counterparty_id',
  'entity_type',
  'legal_name',
  'country_code',
  'nib',
  'npwp',
  'address',
  'industry',
  'monthly_volume',
  'website',
  'bank_name',
  'bank_account_holder',
  'bank_account_number_sealed',
  'bank_account_last4',
  'people',
] as const satisfies readonly (keyof KybApplicationRow)[];

export type DraftPatch = Partial<Pick<KybApplicationRow, (typeof CARRIED)[number]>>;

const JSON_COLUMNS = ['people', 'change_requests'] as const;

function toDb(patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...patch };
  for (const c of JSON_COLUMNS) if (c in out) out[c] = JSON.stringify(out[c]);
  return out;
}

const ofSubject = (q: ReturnType<Db>, s: SubjectKey) =>
  s.counterpartyId === null ? q.where({ workspace_id: s.workspaceId }).whereNull('counterparty_id') : q.where({ workspace_id: s.workspaceId, counterparty_id: s.counterpartyId });

/**
 * Serialises every change of one subject's application for the rest of the transaction
 * (edits, submission, review, new versions, new links). A row lock on the newest version
 * would not do: a writer that waited for it would still see the version it first found,
 * not the one the other writer added.
 */
export async function lockSubject(trx: Db, s: SubjectKey): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`kyb:${s.workspaceId}:${s.counterpartyId ?? '-'}`]);
}

/** The subject's newest version, locked for the rest of the transaction when `lock` (every edit takes it). */
export async function currentApplication(trx: Db, s: SubjectKey, lock = false): Promise<KybApplicationRow | undefined> {
  const q = ofSubject(trx('kyb_applications'), s).orderBy('version', 'desc').first();
  if (lock) q.forUpdate();
  return (await q) as KybApplicationRow | undefined;
}

export async function applicationById(trx: Db, id: string, lock = false): Promise<KybApplicationRow | undefined> {
  const q = trx('kyb_applications').where({ id }).first();
  if (lock) q.forUpdate();
  return (await q) as KybApplicationRow | undefined;
}

/** Every version of the subject, newest first. */
export async function versions(trx: Db, s: SubjectKey): Promise<KybApplicationRow[]> {
  return (await ofSubject(trx('kyb_applications'), s).orderBy('version', 'desc')) as KybApplicationRow[];
}

/** A new version (version 1 at registration or at a counterparty's first invite). */
export async function insertApplication(
  trx: Db,
  row: DraftPatch & { workspace_id: string; counterparty_id: string | null; version: number; change_requests?: ChangeRequest[]; holder_id?: string | null },
  now: Date,
): Promise<KybApplicationRow> {
  const [created] = (await trx('kyb_applications')
    .insert(toDb({ status: 'draft', ...row, created_at: now, updated_at: now }))
    .returning('*')) as KybApplicationRow[];
  return created!;
}

/** Saves draft fields; a compare-and-set on the draft status (undefined when the version is no longer a draft). */
export async function updateDraft(trx: Db, id: string, patch: DraftPatch, now: Date): Promise<KybApplicationRow | undefined> {
  const [row] = (await trx('kyb_applications')
    .where({ id, status: 'draft' })
    .update(toDb({ ...patch, updated_at: now }))
    .returning('*')) as KybApplicationRow[];
  return row;
}

/** The first claim of a link to this version makes its user the holder (compare-and-set: only while nobody holds it). */
export async function setHolder(trx: Db, id: string, userId: string): Promise<boolean> {
  return (await trx('kyb_applications').where({ id }).whereNull('holder_id').update({ holder_id: userId })) === 1;
}

/**
 * A fresh start of a draft (issue 42): every field the representative entered goes (people
 * and their numbers, bank, company details, the reviewer's notes) and nobody holds it; the
 * company's name and country are the counterparty's again, as at the first link.
 */
export async function clearDraft(trx: Db, id: string, start: { legal_name: string; country_code: string }, now: Date): Promise<KybApplicationRow | undefined> {
  const cleared: Record<string, unknown> = {};
  for (const k of CARRIED) if (k !== 'workspace_id' && k !== 'counterparty_id') cleared[k] = k === 'people' ? [] : null;
  const [row] = (await trx('kyb_applications')
    .where({ id, status: 'draft' })
    .update(toDb({ ...cleared, ...start, change_requests: [], holder_id: null, updated_at: now }))
    .returning('*')) as KybApplicationRow[];
  return row;
}

/** Compare-and-set status move (states.ts); undefined when the version is no longer in a from-state. */
export async function moveApplication(
  trx: Db,
  id: string,
  move: ApplicationTransition,
  changes: Partial<Pick<KybApplicationRow, 'submitted_at' | 'decided_at' | 'decided_by' | 'decision_reason' | 'risk_tier_assigned' | 'change_requests'>>,
  now: Date,
): Promise<KybApplicationRow | undefined> {
  const [row] = (await trx('kyb_applications')
    .where({ id })
    .whereIn('status', move.from)
    .update(toDb({ ...changes, status: move.to, updated_at: now }))
    .returning('*')) as KybApplicationRow[];
  return row;
}

// ---- Documents ------------------------------------------------------------------------------

export interface DocumentRow {
  id: string;
  application_id: string;
  upload_id: string;
  doc_type: string;
  person_id: string | null;
  created_by: string | null;
  created_at: Date;
  /** From the upload. */
  stored_name: string;
  mime: string;
  size: number;
  sha256: string;
}

const DOCUMENT_COLUMNS = [
  'd.id',
  'd.application_id',
  'd.upload_id',
  'd.doc_type',
  'd.person_id',
  'd.created_by',
  'd.created_at',
  'u.stored_name',
  'u.mime',
  'u.size',
  'u.sha256',
];

const toDocument = (r: DocumentRow): DocumentRow => ({ ...r, size: Number(r.size) });

export async function documentsOf(trx: Db, applicationId: string): Promise<DocumentRow[]> {
  const rows = (await trx('kyb_documents as d')
    .join('uploads as u', 'u.id', 'd.upload_id')
    .where('d.application_id', applicationId)
    .orderBy([{ column: 'd.created_at' }, { column: 'd.id' }])
    .select<DocumentRow[]>(DOCUMENT_COLUMNS));
  return rows.map(toDocument);
}

export async function documentById(trx: Db, applicationId: string, id: string): Promise<DocumentRow | undefined> {
  const row = (await trx('kyb_documents as d')
    .join('uploads as u', 'u.id', 'd.upload_id')
    .where({ 'd.application_id': applicationId, 'd.id': id })
    .first<DocumentRow | undefined>(DOCUMENT_COLUMNS));
  return row ? toDocument(row) : undefined;
}

export async function insertDocument(
  trx: Db,
  row: { application_id: string; upload_id: string; doc_type: string; person_id: string | null; created_by: string },
  now: Date,
): Promise<void> {
  await trx('kyb_documents').insert({ ...row, created_at: now });
}

export async function countDocuments(trx: Db, applicationId: string): Promise<number> {
  const row = (await trx('kyb_documents').where({ application_id: applicationId }).count<{ n: string }[]>('* as n'))[0];
  return Number(row?.n ?? 0);
}

/** Removes one document row; answers its upload id, or undefined when there was none. */
export async function deleteDocument(trx: Db, applicationId: string, id: string): Promise<string | undefined> {
  const [row] = (await trx('kyb_documents').where({ application_id: applicationId, id }).delete().returning<{ upload_id: string }[]>('upload_id'));
  return row?.upload_id;
}

/** A new version carries the previous version's documents (same files, rows of its own). */
export async function copyDocuments(trx: Db, fromId: string, toId: string): Promise<void> {
  await trx.raw(
    `INSERT INTO kyb_documents (application_id, upload_id, doc_type, person_id, created_by, created_at)
     SELECT ?, upload_id, doc_type, person_id, created_by, created_at FROM kyb_documents WHERE application_id = ?`,
    [toId, fromId],
  );
}

/**
 * Lets the purge take an upload no version holds any more (its binding is cleared; the
 * daily `uploads.purge-unbound` deletes it, as it does any upload unbound for a day).
 */
export async function releaseUploadIfUnused(trx: Db, uploadId: string): Promise<void> {
  await trx('uploads')
    .where({ id: uploadId, bound_kind: 'kyb' })
    .whereNotExists(trx('kyb_documents').where('upload_id', uploadId).select(trx.raw('1')))
    .update({ bound_kind: null, bound_id: null, bound_at: null });
}

// ---- The review queue ---------------------------------------------------------------------

/** What the queue shows: no sealed number ever leaves the database for a list. */
const QUEUE_COLUMNS = ['a.id', 'a.workspace_id', 'a.counterparty_id', 'a.version', 'a.status', 'a.legal_name', 'a.entity_type', 'a.submitted_at'];

export interface QueueRow extends Pick<KybApplicationRow, 'id' | 'workspace_id' | 'counterparty_id' | 'version' | 'status' | 'legal_name' | 'entity_type' | 'submitted_at'> {
  workspace_name: string;
  counterparty_name: string | null;
}

/** The KYB queue's search (issue 46): the application's, workspace's or counterparty's id exactly, or part of the workspace's or counterparty's name or the legal name applied with. */
const SEARCHED = { ids: ['a.id', 'a.workspace_id', 'a.counterparty_id'], text: ['w.display_name', 'c.name', 'a.legal_name'] } as const;

/** Submitted applications, oldest submission first, narrowed as staff ask (`before`: submitted then or earlier). */
export async function reviewQueue(trx: Db, page: QueueCursor, by: StaffSearch = NO_SEARCH): Promise<QueuePage<QueueRow>> {
  const q = trx('kyb_applications as a')
    .join('workspaces as w', 'w.id', 'a.workspace_id')
    .leftJoin('counterparties as c', 'c.id', 'a.counterparty_id')
    .where('a.status', 'submitted')
    .select([...QUEUE_COLUMNS, 'w.display_name as workspace_name', 'c.name as counterparty_name']);
  // Review R4: live workspaces' applications (their counterparties') first, oldest submission first, keyset pages (shared/staff/queue.ts).
  return queuePage<QueueRow>(q, { sandbox: 'w.is_sandbox', since: 'a.submitted_at', id: 'a.id' }, page, { by, columns: SEARCHED });
}

// ---- Counterparty invite links ---------------------------------------------------------------

export interface InviteRow {
  id: string;
  workspace_id: string;
  counterparty_id: string;
  created_by: string;
  expires_at: Date;
  claimed_by: string | null;
  claimed_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

export interface InviteWithInviter extends InviteRow {
  inviter_name: string;
}

/** A new link; `boundTo` claims it at creation for the application's holder (nobody else can claim it). */
export async function insertInvite(
  trx: Db,
  row: Pick<InviteRow, 'workspace_id' | 'counterparty_id' | 'created_by' | 'expires_at'>,
  boundTo: string | null,
  now: Date,
): Promise<InviteRow> {
  const claim = boundTo === null ? {} : { claimed_by: boundTo, claimed_at: now };
  const [created] = (await trx('kyb_invites').insert({ ...row, ...claim, created_at: now }).returning('*')) as InviteRow[];
  return created!;
}

/**
 * When the workspace made its `limit`-th newest link of the window starting at `since`
 * (undefined while it made fewer): the daily cap of links (issue 42) frees a place when
 * that one leaves the window.
 */
export async function nthNewestInviteSince(trx: Db, workspaceId: string, since: Date, limit: number): Promise<Date | undefined> {
  const row = (await trx('kyb_invites')
    .where('workspace_id', workspaceId)
    .where('created_at', '>', since)
    .orderBy('created_at', 'desc')
    .offset(limit - 1)
    .first<{ created_at: Date } | undefined>('created_at'));
  return row?.created_at;
}

/** Revokes the counterparty's earlier live links (a new link replaces them). */
export async function revokeInvites(trx: Db, counterpartyId: string, now: Date): Promise<number> {
  return trx('kyb_invites').where({ counterparty_id: counterpartyId }).whereNull('revoked_at').update({ revoked_at: now });
}

export async function inviteById(trx: Db, id: string): Promise<InviteWithInviter | undefined> {
  return (await trx('kyb_invites as i')
    .join('users as u', 'u.id', 'i.created_by')
    .where('i.id', id)
    .first<InviteWithInviter | undefined>('i.*', 'u.full_name as inviter_name'));
}

/** Compare-and-set: the first user to open a live link claims it. */
export async function claimInvite(trx: Db, id: string, userId: string, now: Date): Promise<boolean> {
  const n = await trx('kyb_invites').where({ id }).whereNull('claimed_by').whereNull('revoked_at').update({ claimed_by: userId, claimed_at: now });
  return n === 1;
}

// ---- The operator console -------------------------------------------------------------------

/** How many applications wait for review (the console's overview count). */
export async function countSubmitted(trx: Db): Promise<number> {
  const row = (await trx('kyb_applications').where({ status: 'submitted' }).count<{ n: string }[]>('* as n'))[0];
  return Number(row?.n ?? 0);
}
