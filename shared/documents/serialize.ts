/** Spec shapes of documents and notes (enterprise spec 2 "Document record", 4.7). */
import { serializeDocument, type DocumentRow } from '../deals/extras.js';
import { readableUrl } from './files.js';
import type { NoteRow } from './notes-repo.js';

const iso = (d: Date | string): string => new Date(d).toISOString();

/** A Document record for one reader: `uploaded_by` { id, name }; a stored upload's `file_url` is a link signed for the reader. */
export function serializeDocumentFor(d: DocumentRow, readerId: string) {
  return { ...serializeDocument(d), file_url: readableUrl(d.file_url, readerId) };
}

/** The creation answer (4.7): the record with `uploaded_by` as an id. */
export function serializeCreated(d: DocumentRow, readerId: string) {
  return { ...serializeDocumentFor(d, readerId), uploaded_by: d.uploaded_by };
}

/** A note: { id, deal_id, body (plain text, as stored), author { id, name }, created_at }. */
export function serializeNote(n: NoteRow) {
  return { id: n.id, deal_id: n.deal_id, body: n.body, author: { id: n.author_id, name: n.author_name }, created_at: iso(n.created_at) };
}
