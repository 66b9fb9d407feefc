/**
 * Deal documents (enterprise spec 2 "Document record", 4.7; D7 submit-evidence
 * `document_ids`). A document belongs to the workspace and optionally to one of its deals
 * and one milestone of that deal (the deal is taken from the milestone). Its file is an
 * https link kept elsewhere or the operator's own upload in this service's store; an
 * upload is bound to the document with the upload pipeline's compare-and-set bind, so it
 * cannot also be attached elsewhere and the purge of unbound uploads leaves it alone (a
 * deleted document unbinds it, and the purge takes it).
 *
 * Lock order (as every deal write): the workspace row, then the deal row. Deleting a
 * document takes both before it looks at the milestones, so it cannot race an approval
 * (approvals lock the deal too): evidence of an approved or released milestone is kept
 * (409 LOCKED). Each write appends its event (document.added, document.deleted) in its
 * transaction: a deal's feed entry when the document has a deal, a workspace one otherwise.
 */
import { randomUUID } from 'node:crypto';
import { clock } from '../clock.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { byOf, type WorkspaceActor } from '../enterprise/access.js';
import { appendEvent } from '../enterprise/events.js';
import { lockWorkspace } from '../enterprise/repo.js';
import { dealEvent } from '../deals/events.js';
import type { DocumentRow } from '../deals/extras.js';
import { lockDeal } from '../deals/lock.js';
import * as dealsRepo from '../deals/repo.js';
import type { DealWithNames } from '../deals/repo.js';
import * as uploadsRepo from '../uploads/repo.js';
import { ACCEPTS } from '../uploads/rules.js';
import { documentErrors } from './errors.js';
import { fileRefOf, uploadAddress } from './files.js';
import * as repo from './repo.js';
import type { DocumentInput, ListQuery } from './schemas.js';

export type { DocumentRow } from '../deals/extras.js';
export type { DocumentInput, ListQuery, NoteInput } from './schemas.js';

/** GET /documents: the workspace's documents, newest first, filtered by deal, milestone and type. */
export async function listDocuments(actor: WorkspaceActor, q: ListQuery): Promise<{ rows: DocumentRow[]; total: number }> {
  return repo.listDocuments(db, actor.workspaceId, { deal_id: q.deal_id, milestone_id: q.milestone_id, document_type: q.document_type }, q.page, q.limit);
}

/** Where a new document goes: its deal (locked, workspace row first) and milestone, or the workspace alone (locked). */
async function placeOf(trx: Db, actor: WorkspaceActor, input: DocumentInput): Promise<{ deal: DealWithNames | null; milestoneNo: number | null }> {
  let dealId = input.deal_id ?? null;
  if (input.milestone_id) {
    const owner = await dealsRepo.milestoneOwner(trx, input.milestone_id);
    if (!owner || owner.workspace_id !== actor.workspaceId) throw documentErrors.milestoneNotFound();
    if (dealId && dealId !== owner.deal_id) throw documentErrors.milestoneOfOtherDeal();
    dealId = owner.deal_id;
  }
  if (!dealId) {
    await lockWorkspace(trx, actor.workspaceId);
    return { deal: null, milestoneNo: null };
  }
  // 404 NOT_FOUND for a deal of another workspace (or none).
  const locked = await lockDeal(trx, actor, dealId);
  const milestone = input.milestone_id ? locked.milestones.find((m) => m.id === input.milestone_id) : undefined;
  if (input.milestone_id && !milestone) throw documentErrors.milestoneNotFound();
  // Issue 42: once a round has an approval its evidence is frozen (the deal's lock orders this against decisions).
  if (milestone && (await repo.roundHasApproval(trx, milestone))) throw documentErrors.evidenceFrozen();
  return { deal: locked.deal, milestoneNo: milestone?.sequence_no ?? null };
}

/**
 * The file of a new document: an https link as given, or the caller's own upload, bound to
 * the document (compare-and-set). 400 FILE_NOT_OWNED for an upload that is someone
 * else's, unknown, or already attached (an escrow, a chat, a dispute, KYB, another
 * document); 400 INVALID_BODY for an upload of a type documents do not take.
 */
async function fileOf(trx: Db, actor: WorkspaceActor, documentId: string, input: DocumentInput, at: Date) {
  const ref = fileRefOf(input.file_url);
  if (ref.kind === 'invalid') throw documentErrors.invalidFileUrl(ref.reason);
  if (ref.kind === 'external') return { file_url: ref.url, upload_id: null, checksum_sha256: input.checksum_sha256 ?? null };
  const upload = await uploadsRepo.byStoredName(trx, ref.name);
  if (!upload || upload.user_id !== actor.userId || upload.bound_at !== null) throw documentErrors.fileNotOwned();
  if (!ACCEPTS.deal_document.includes(upload.purpose)) throw documentErrors.wrongUploadType();
  const bound = await uploadsRepo.bind(trx, upload.stored_name, actor.userId, ACCEPTS.deal_document, { kind: 'deal_document', id: documentId, at });
  if (!bound) throw documentErrors.fileNotOwned();
  return { file_url: uploadAddress(upload.stored_name), upload_id: upload.id, checksum_sha256: input.checksum_sha256 ?? upload.sha256 };
}

/** POST /documents: 201 with the record; 404 NOT_FOUND for a deal or milestone the workspace does not have. */
export async function addDocument(trx: Db | undefined, actor: WorkspaceActor, input: DocumentInput): Promise<DocumentRow> {
  return inTransaction(trx, async (t) => {
    const { deal, milestoneNo } = await placeOf(t, actor, input);
    const id = randomUUID();
    const now = clock.now();
    const file = await fileOf(t, actor, id, input, now);
    await repo.insertDocument(t, {
      id,
      workspace_id: actor.workspaceId,
      deal_id: deal?.id ?? null,
      milestone_id: input.milestone_id ?? null,
      document_type: input.document_type,
      title: input.title,
      ...file,
      visibility: input.visibility,
      uploaded_by: actor.userId,
      created_at: now,
    });
    const what = `Document "${input.title}" (${input.document_type})`;
    if (deal) {
      const where = milestoneNo === null ? `deal ${deal.reference}` : `milestone ${milestoneNo} of deal ${deal.reference}`;
      await dealEvent(t, actor, deal, 'document.added', `${what} added to ${where}`, { entityType: 'document', entityId: id });
    } else {
      await appendEvent(t, actor.workspaceId, { event: 'document.added', entityType: 'document', entityId: id, actor: byOf(actor), summary: `${what} added` });
    }
    return (await repo.documentById(t, actor.workspaceId, id))!;
  });
}

/** DELETE /documents/:id: { id, deleted: true }; 404 NOT_FOUND; 409 LOCKED for evidence of an approved or released milestone. */
export async function deleteDocument(trx: Db | undefined, actor: WorkspaceActor, id: string): Promise<{ id: string; deleted: true }> {
  if (!isUuid(id)) throw documentErrors.documentNotFound();
  return inTransaction(trx, async (t) => {
    await lockWorkspace(t, actor.workspaceId);
    const doc = await repo.documentById(t, actor.workspaceId, id);
    if (!doc) throw documentErrors.documentNotFound();
    // The deal row next (lock order): an approval of one of its milestones waits for this delete, or this delete for it.
    const deal = doc.deal_id ? await dealsRepo.dealById(t, actor.workspaceId, doc.deal_id, true) : undefined;
    if (await repo.isKeptEvidence(t, doc)) throw documentErrors.locked();
    if (!(await repo.deleteDocument(t, actor.workspaceId, id))) throw documentErrors.documentNotFound();
    // Its upload is free again: the daily purge of unbound uploads takes the file.
    if (doc.upload_id) await uploadsRepo.unbind(t, doc.upload_id, { kind: 'deal_document', id: doc.id });
    const summary = `Document "${doc.title}" (${doc.document_type}) deleted`;
    if (deal) await dealEvent(t, actor, deal, 'document.deleted', summary, { entityType: 'document', entityId: id });
    else await appendEvent(t, actor.workspaceId, { event: 'document.deleted', entityType: 'document', entityId: id, actor: byOf(actor), summary });
    return { id, deleted: true };
  });
}

/**
 * The evidence of a milestone (the approvals detail answers it): documents attached to the
 * milestone or named in its evidence_document_ids, newest first.
 */
export async function evidenceOf(trx: Db, milestone: { id: string; evidence_document_ids: string[] }): Promise<DocumentRow[]> {
  return repo.evidenceOf(trx, milestone);
}

/** True when every id names a document of this deal (same workspace); submit-evidence refuses anything else. */
export async function allOfDeal(trx: Db, workspaceId: string, dealId: string, ids: readonly string[]): Promise<boolean> {
  const unique = [...new Set(ids)];
  if (!unique.every(isUuid)) return false;
  return (await repo.countOfDeal(trx, workspaceId, dealId, unique)) === unique.length;
}
