/** SQL of deal notes. */
import type { Db } from '../db.js';

export interface NoteRow {
  id: string;
  workspace_id: string;
  deal_id: string;
  body: string;
  author_id: string;
  author_name: string;
  created_at: Date;
}

const withAuthor = (trx: Db) => trx('deal_notes as n').join('users as u', 'u.id', 'n.author_id').select('n.*', 'u.full_name as author_name');

/** One page of a deal's notes, newest first, and how many there are. */
export async function listNotes(trx: Db, workspaceId: string, dealId: string, page: number, limit: number): Promise<{ rows: NoteRow[]; total: number }> {
  const rows = (await withAuthor(trx)
    .where({ 'n.workspace_id': workspaceId, 'n.deal_id': dealId })
    .orderBy([
      { column: 'n.created_at', order: 'desc' },
      { column: 'n.id', order: 'desc' },
    ])
    .limit(limit)
    .offset((page - 1) * limit)) as NoteRow[];
  const [row] = await trx('deal_notes').where({ workspace_id: workspaceId, deal_id: dealId }).count<{ count: string }[]>('* as count');
  return { rows, total: Number(row?.count ?? 0) };
}

export async function noteById(trx: Db, workspaceId: string, dealId: string, id: string): Promise<NoteRow | undefined> {
  return (await withAuthor(trx).where({ 'n.id': id, 'n.workspace_id': workspaceId, 'n.deal_id': dealId }).first()) as NoteRow | undefined;
}

export async function insertNote(trx: Db, row: Omit<NoteRow, 'id' | 'author_name'>): Promise<string> {
  const [made] = await trx('deal_notes').insert(row).returning<{ id: string }[]>('id');
  return made!.id;
}

export async function deleteNote(trx: Db, workspaceId: string, dealId: string, id: string): Promise<boolean> {
  return (await trx('deal_notes').where({ id, workspace_id: workspaceId, deal_id: dealId }).delete()) > 0;
}
