/**
 * KYB applications (enterprise spec 2, 3, 4.2; decisions D9, D10, 0017). One implementation
 * serves the workspace's own application (/v1/enterprise/kyb) and a counterparty's, opened
 * from a verification link (/v1/kyb/invite/:token, invites.ts): reading it, saving the
 * draft, attaching and removing documents, their 5-minute links, and submitting. Staff
 * review is in review.ts. Every edit locks the subject's current version first, so edits,
 * submission and review of one application run one at a time; all SQL is in repo.ts.
 */
import { randomUUID } from 'node:crypto';
import { clock } from '../clock.js';
import { encryptSecret } from '../crypto.js';
import { db, inTransaction, type Db } from '../db.js';
import { AppError } from '../errors.js';
import { isUuid } from '../ids.js';
import { appendEvent } from '../enterprise/events.js';
import { signLink } from '../uploads/links.js';
import * as uploads from '../uploads/service.js';
import * as uploadsRepo from '../uploads/repo.js';
import type { UploadRow } from '../uploads/repo.js';
import { ACCEPTS } from '../uploads/rules.js';
import { enterpriseUploadError, kybErrors } from './errors.js';
import * as repo from './repo.js';
import type { DocumentRow, KybApplicationRow, StoredPerson } from './repo.js';
import { MAX_DOCUMENTS, PERSON_DOC_TYPES, progressOf, slotOf, slotsOf, type DocType } from './slots.js';
import { assertHolder, editableVersion, keyOf, lockCurrent, subjectName, transition, type KybSubject } from './subject.js';
import { EDITABLE } from './states.js';

export type { KybSubject } from './subject.js';

/** Who is asking, and what they may see and do (decided by the route: workspace role and credential, or the invite's user). */
export interface KybCaller {
  userId: string;
  userName: string;
  /** The full view (finance and above with a session, or the invite's user); otherwise the status view. */
  full: boolean;
  /** May edit the draft (admin and above with a session, or the invite's user). */
  mayEdit: boolean;
}

/** What GET answers and every edit answers again (serialize.ts shapes it). */
export interface KybView {
  full: boolean;
  subject: KybSubject;
  application: KybApplicationRow;
  documents: DocumentRow[];
  history: KybApplicationRow[];
  canEdit: boolean;
}

/** Document links last 5 minutes (4.2). */
export const DOCUMENT_LINK_SECONDS = 300;

/**
 * What the caller sees of the subject's current version. Through a link (a counterparty's
 * application) only its holder sees it, and the history lists only the versions they held:
 * nothing of an application someone else filled before a fresh start (issue 42).
 */
export async function viewOf(subject: KybSubject, caller: KybCaller, trx: Db = db): Promise<KybView> {
  const application = await repo.currentApplication(trx, keyOf(subject));
  if (!application) throw kybErrors.applicationNotFound();
  assertHolder(subject, application, caller.userId);
  if (!caller.full) return { full: false, subject, application, documents: [], history: [], canEdit: false };
  const [documents, versions] = await Promise.all([repo.documentsOf(trx, application.id), repo.versions(trx, keyOf(subject))]);
  const history = subject.counterparty ? versions.filter((v) => v.holder_id === caller.userId) : versions;
  return { full: true, subject, application, documents, history, canEdit: caller.mayEdit && EDITABLE.includes(application.status) };
}

// ---- The draft ----------------------------------------------------------------------------

export interface PersonInput {
  id?: string;
  full_name: string;
  position: string;
  roles: string[];
  id_type: 'nik' | 'passport';
  id_number?: string;
  nationality: string;
  ownership_pct?: number | null;
}

export interface DraftInput {
  company?: Partial<Pick<KybApplicationRow, 'legal_name' | 'entity_type' | 'nib' | 'npwp' | 'country_code' | 'address' | 'industry' | 'monthly_volume' | 'website'>>;
  people?: PersonInput[];
  bank?: { bank_name?: string; bank_account_holder?: string; account_number?: string };
}

const last4 = (v: string): string => v.slice(-4);

function mergePeople(current: StoredPerson[], input: PersonInput[]): StoredPerson[] {
  return input.map((p, i) => {
    const existing = p.id === undefined ? undefined : current.find((c) => c.id === p.id);
    if (p.id !== undefined && !existing) throw kybErrors.invalidField(`people.${i}.id`, 'is not a person of this application');
    if (p.id_number !== undefined && p.id_type === 'nik' && !/^\d{16}$/.test(p.id_number)) {
      throw kybErrors.invalidField(`people.${i}.id_number`, 'a NIK is 16 digits');
    }
    const keepNumber = p.id_number === undefined && existing !== undefined && existing.id_type === p.id_type;
    return {
      id: existing?.id ?? randomUUID(),
      full_name: p.full_name,
      position: p.position,
      roles: p.roles,
      id_type: p.id_type,
      id_number_sealed: p.id_number !== undefined ? encryptSecret(p.id_number) : keepNumber ? existing.id_number_sealed : null,
      id_number_last4: p.id_number !== undefined ? last4(p.id_number) : keepNumber ? existing.id_number_last4 : null,
      nationality: p.nationality,
      ownership_pct: p.ownership_pct ?? null,
    };
  });
}

/** The rules that need the whole draft after the merge (as registration checks them, 4.1). */
function checkMerged(next: KybApplicationRow): void {
  const foreign = next.entity_type === 'foreign';
  if (next.country_code !== null && foreign === (next.country_code === 'ID')) {
    throw kybErrors.invalidField('company.country_code', foreign ? 'a foreign entity is registered outside Indonesia' : 'an Indonesian entity must have country_code ID');
  }
  if (next.nib !== null && !foreign && !/^\d{13}$/.test(next.nib)) throw kybErrors.invalidField('company.nib', 'must be the 13-digit NIB');
  const owned = next.people.reduce((sum, p) => sum + (p.ownership_pct ?? 0), 0);
  if (owned > 100) throw kybErrors.invalidField('people', 'ownership_pct adds up to more than 100');
}

function draftPatch(app: KybApplicationRow, input: DraftInput): repo.DraftPatch {
  const patch: repo.DraftPatch = { ...input.company };
  if (input.people) patch.people = mergePeople(app.people, input.people);
  const bank = input.bank;
  if (bank?.bank_name !== undefined) patch.bank_name = bank.bank_name;
  if (bank?.bank_account_holder !== undefined) patch.bank_account_holder = bank.bank_account_holder;
  if (bank?.account_number !== undefined) {
    patch.bank_account_number_sealed = encryptSecret(bank.account_number);
    patch.bank_account_last4 = last4(bank.account_number);
  }
  return patch;
}

/** PATCH of the draft: company and bank merge field by field, people replace the list; 409 APPLICATION_LOCKED once submitted. */
export async function saveDraft(trx: Db | undefined, caller: KybCaller, subject: KybSubject, input: DraftInput): Promise<KybView> {
  return inTransaction(trx, async (t) => {
    const { app, subject: s } = await editableVersion(t, subject, caller.userId);
    const patch = draftPatch(app, input);
    const merged = { ...app, ...patch };
    checkMerged(merged);
    // Documents that no slot of the saved draft takes any more go: a dropped person's, a
    // ktp after the person's id type became passport (or the other way), a company
    // document the new entity type does not bring. Their files are purged once no version holds them.
    const slots = slotsOf(merged);
    for (const doc of await repo.documentsOf(t, app.id)) {
      if (slotOf(slots, doc.doc_type, doc.person_id)) continue;
      const uploadId = await repo.deleteDocument(t, app.id, doc.id);
      if (uploadId) await repo.releaseUploadIfUnused(t, uploadId);
    }
    if (!(await repo.updateDraft(t, app.id, patch, clock.now()))) throw kybErrors.changed();
    return viewOf(s, caller, t);
  });
}

// ---- Documents ----------------------------------------------------------------------------

/** KYB upload (4.2): the shared sanitiser and store, purpose `kyb`; refusals in the enterprise envelope. A retry stores another file. */
export async function upload(userId: string, file: uploads.IncomingFile): Promise<UploadRow> {
  let sanitised: uploads.SanitisedFile;
  try {
    sanitised = await uploads.sanitiseIncoming(userId, 'kyb', file);
  } catch (err) {
    throw err instanceof AppError ? enterpriseUploadError(err) : err;
  }
  try {
    return await uploads.record(db, userId, 'kyb', sanitised);
  } catch (err) {
    await uploads.discard(sanitised);
    throw err instanceof AppError ? enterpriseUploadError(err) : err;
  }
}

export interface AttachInput {
  upload_id: string;
  doc_type: DocType;
  person_id?: string;
}

/** Attaches the caller's own unattached KYB upload to a slot of the draft. */
export async function attachDocument(trx: Db | undefined, caller: KybCaller, subject: KybSubject, input: AttachInput): Promise<KybView> {
  return inTransaction(trx, async (t) => {
    const { app, subject: s } = await editableVersion(t, subject, caller.userId);
    const personId = PERSON_DOC_TYPES.includes(input.doc_type) ? (input.person_id ?? null) : null;
    if (personId !== null && !app.people.some((p) => p.id === personId)) throw kybErrors.invalidField('person_id', 'is not a person of this application');
    if (!slotOf(slotsOf(app), input.doc_type, personId)) {
      const why = personId ? "is not this person's identity document (ktp for a NIK, passport otherwise)" : 'is not a document this entity type brings';
      throw kybErrors.invalidField('doc_type', why);
    }
    if ((await repo.countDocuments(t, app.id)) >= MAX_DOCUMENTS) throw kybErrors.tooManyDocuments(MAX_DOCUMENTS);
    const now = clock.now();
    // The upload pipeline's own compare-and-set binding (the caller's, a kyb upload, still unbound).
    const upload = await uploadsRepo.byId(t, input.upload_id);
    if (!upload) throw kybErrors.uploadNotFound();
    if (upload.user_id !== caller.userId) throw kybErrors.fileNotOwned();
    if (!(await uploadsRepo.bind(t, upload.stored_name, caller.userId, ACCEPTS.kyb, { kind: 'kyb', id: app.id, at: now }))) throw kybErrors.uploadAttached();
    await repo.insertDocument(t, { application_id: app.id, upload_id: input.upload_id, doc_type: input.doc_type, person_id: personId, created_by: caller.userId }, now);
    return viewOf(s, caller, t);
  });
}

/** Removes a document from the draft; its file is purged once no version holds it. */
export async function removeDocument(trx: Db | undefined, caller: KybCaller, subject: KybSubject, documentId: string): Promise<KybView> {
  return inTransaction(trx, async (t) => {
    const current = await lockCurrent(t, subject, caller.userId);
    if (!isUuid(documentId) || !(await repo.documentById(t, current.id, documentId))) throw kybErrors.documentNotFound();
    const { app, subject: s } = await editableVersion(t, subject, caller.userId);
    // A restart after rejection copied the rows: the document has a new id in the new version.
    const target = app.id === current.id ? documentId : await sameDocumentIn(t, current.id, documentId, app.id);
    const uploadId = await repo.deleteDocument(t, app.id, target);
    if (!uploadId) throw kybErrors.changed();
    await repo.releaseUploadIfUnused(t, uploadId);
    return viewOf(s, caller, t);
  });
}

async function sameDocumentIn(trx: Db, fromApp: string, documentId: string, toApp: string): Promise<string> {
  const doc = await repo.documentById(trx, fromApp, documentId);
  const copy = (await repo.documentsOf(trx, toApp)).find((d) => d.upload_id === doc?.upload_id && d.doc_type === doc.doc_type && d.person_id === doc.person_id);
  if (!copy) throw kybErrors.changed();
  return copy.id;
}

/** A 5-minute link to one document of the current version, signed for the caller alone. */
export async function documentLink(caller: KybCaller, subject: KybSubject, documentId: string): Promise<{ url: string; expires_at: Date }> {
  const app = await repo.currentApplication(db, keyOf(subject));
  if (app) assertHolder(subject, app, caller.userId);
  const doc = app && isUuid(documentId) ? await repo.documentById(db, app.id, documentId) : undefined;
  if (!doc) throw kybErrors.documentNotFound();
  // signLink counts whole seconds: the answer's expiry is the link's own.
  const expires = (Math.floor(clock.nowMs() / 1000) + DOCUMENT_LINK_SECONDS) * 1000;
  return { url: signLink(doc.stored_name, caller.userId, DOCUMENT_LINK_SECONDS), expires_at: new Date(expires) };
}

// ---- Submission ----------------------------------------------------------------------------

/** Submits a complete draft for review (1 to 3 business days); an incomplete one is refused with what is missing. */
export async function submit(trx: Db | undefined, caller: KybCaller, subject: KybSubject): Promise<KybView> {
  return inTransaction(trx, async (t) => {
    const app = await lockCurrent(t, subject, caller.userId);
    if (app.status !== 'draft') throw kybErrors.locked();
    const progress = progressOf(app, await repo.documentsOf(t, app.id));
    if (!progress.complete) {
      const steps = Object.entries(progress.steps)
        .filter(([, done]) => !done)
        .map(([step]) => step);
      throw kybErrors.incomplete({ steps, documents: progress.missing_documents });
    }
    const { app: moved, subject: s } = await transition(t, subject, app, 'submit', { submitted_at: clock.now() });
    await appendEvent(t, s.workspace.id, {
      event: 'kyb.submitted',
      entityType: s.counterparty ? 'counterparty' : 'kyb_application',
      entityId: s.counterparty?.id ?? moved.id,
      actor: { id: caller.userId, name: caller.userName },
      summary: `KYB application v${moved.version} of ${subjectName(s)} submitted for review`,
    });
    return viewOf(s, caller, t);
  });
}
