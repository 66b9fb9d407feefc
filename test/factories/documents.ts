/** Deal documents and notes put straight into their tables (lists, locks, cross-workspace checks). */
import { clock } from '../../shared/clock.js';
import { db } from '../../shared/db.js';

export const DOCUMENTS = '/v1/enterprise/documents';
export const notesPath = (dealId: string) => `/v1/enterprise/deals/${dealId}/notes`;

export interface DocumentOptions {
  dealId?: string | null;
  milestoneId?: string | null;
  type?: string;
  title?: string;
  createdAt?: Date;
}

/** A document of the workspace (an https file), made by `userId`; answers its id. */
export async function insertDocument(workspaceId: string, userId: string, o: DocumentOptions = {}): Promise<string> {
  const [row] = await db('deal_documents')
    .insert({
      workspace_id: workspaceId,
      deal_id: o.dealId ?? null,
      milestone_id: o.milestoneId ?? null,
      document_type: o.type ?? 'invoice',
      title: o.title ?? 'Faktur',
      file_url: 'https://files.example.com/faktur.pdf',
      visibility: 'account',
      uploaded_by: userId,
      created_at: o.createdAt ?? clock.now(),
    })
    .returning<{ id: string }[]>('id');
  return row!.id;
}

/** A note on a deal of the workspace; answers its id. */
export async function insertNote(workspaceId: string, dealId: string, authorId: string, body = 'Catatan', createdAt = clock.now()): Promise<string> {
  const [row] = await db('deal_notes').insert({ workspace_id: workspaceId, deal_id: dealId, body, author_id: authorId, created_at: createdAt }).returning<{ id: string }[]>('id');
  return row!.id;
}
