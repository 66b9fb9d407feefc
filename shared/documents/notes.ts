/**
 * Deal notes (enterprise spec 4.7, section 8: 60 per minute): plain text, stored exactly as
 * given and never rendered as HTML, newest first. A note that carries a bank account
 * number, a password or a key is refused (400 INVALID_BODY on `body`, secrets.ts). Each
 * write locks the workspace row, then the deal, and appends note.added / note.deleted to the
 * deal's feed in its transaction; the feed's summary never repeats the note's text.
 */
import { clock } from '../clock.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import type { WorkspaceActor } from '../enterprise/access.js';
import { dealEvent } from '../deals/events.js';
import { lockDeal } from '../deals/lock.js';
import * as dealsRepo from '../deals/repo.js';
import { documentErrors } from './errors.js';
import * as repo from './notes-repo.js';
import type { NoteRow } from './notes-repo.js';
import type { NoteInput } from './schemas.js';
import { findSecret } from './secrets.js';

export type { NoteRow } from './notes-repo.js';

/** GET /deals/:id/notes: 404 NOT_FOUND for a deal the workspace does not have. */
export async function listNotes(actor: WorkspaceActor, dealId: string, page: number, limit: number): Promise<{ rows: NoteRow[]; total: number }> {
  if (!isUuid(dealId) || !(await dealsRepo.dealById(db, actor.workspaceId, dealId))) throw documentErrors.dealNotFound();
  return repo.listNotes(db, actor.workspaceId, dealId, page, limit);
}

/** POST /deals/:id/notes: 201 with the note. */
export async function addNote(trx: Db | undefined, actor: WorkspaceActor, dealId: string, input: NoteInput): Promise<NoteRow> {
  const secret = findSecret(input.body);
  if (secret) throw documentErrors.noteSecret(secret);
  return inTransaction(trx, async (t) => {
    const { deal } = await lockDeal(t, actor, dealId);
    const id = await repo.insertNote(t, { workspace_id: actor.workspaceId, deal_id: deal.id, body: input.body, author_id: actor.userId, created_at: clock.now() });
    await dealEvent(t, actor, deal, 'note.added', `Note added to deal ${deal.reference}`, { entityType: 'note', entityId: id });
    return (await repo.noteById(t, actor.workspaceId, deal.id, id))!;
  });
}

/** DELETE /deals/:id/notes/:nid: { id, deleted: true }; 404 NOT_FOUND for another deal's note (or none). */
export async function deleteNote(trx: Db | undefined, actor: WorkspaceActor, dealId: string, noteId: string): Promise<{ id: string; deleted: true }> {
  return inTransaction(trx, async (t) => {
    const { deal } = await lockDeal(t, actor, dealId);
    if (!isUuid(noteId) || !(await repo.deleteNote(t, actor.workspaceId, deal.id, noteId))) throw documentErrors.noteNotFound();
    await dealEvent(t, actor, deal, 'note.deleted', `Note deleted from deal ${deal.reference}`, { entityType: 'note', entityId: noteId });
    return { id: noteId, deleted: true };
  });
}
