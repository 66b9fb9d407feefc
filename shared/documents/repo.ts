/** SQL of deal documents (the names they are answered with come from deals/extras.ts). */
import type { Knex } from 'knex';
import type { Db } from '../db.js';
import { documentsWithNames, type DocumentRow } from '../deals/extras.js';
import type { DocumentType, Visibility } from './schemas.js';

const NEWEST_FIRST = [
  { column: 'doc.created_at', order: 'desc' as const },
  { column: 'doc.id', order: 'desc' as const },
];

export interface DocumentFilter {
  deal_id?: string;
  milestone_id?: string;
  document_type?: DocumentType;
}

/** One page of the workspace's documents, newest first, and how many match. */
export async function listDocuments(trx: Db, workspaceId: string, f: DocumentFilter, page: number, limit: number): Promise<{ rows: DocumentRow[]; total: number }> {
  const filter = (w: Knex.QueryBuilder): void => {
    void w.where('doc.workspace_id', workspaceId);
    if (f.deal_id) void w.andWhere('doc.deal_id', f.deal_id);
    if (f.milestone_id) void w.andWhere('doc.milestone_id', f.milestone_id);
    if (f.document_type) void w.andWhere('doc.document_type', f.document_type);
  };
  const rows = (await documentsWithNames(trx)
    .where(filter)
    .orderBy(NEWEST_FIRST)
    .limit(limit)
    .offset((page - 1) * limit)) as DocumentRow[];
  const [row] = await trx('deal_documents as doc').where(filter).count<{ count: string }[]>('* as count');
  return { rows, total: Number(row?.count ?? 0) };
}

export async function documentById(trx: Db, workspaceId: string, id: string): Promise<DocumentRow | undefined> {
  return (await documentsWithNames(trx).where({ 'doc.id': id, 'doc.workspace_id': workspaceId }).first()) as DocumentRow | undefined;
}

export interface NewDocument {
  id: string;
  workspace_id: string;
  deal_id: string | null;
  milestone_id: string | null;
  document_type: DocumentType;
  title: string;
  file_url: string;
  upload_id: string | null;
  checksum_sha256: string | null;
  visibility: Visibility;
  uploaded_by: string;
  created_at: Date;
}

export async function insertDocument(trx: Db, row: NewDocument): Promise<void> {
  await trx('deal_documents').insert(row);
}

export async function deleteDocument(trx: Db, workspaceId: string, id: string): Promise<boolean> {
  return (await trx('deal_documents').where({ id, workspace_id: workspaceId }).delete()) > 0;
}

/**
 * True when the document is evidence of a milestone of its deal that keeps it: approved or
 * released (spec 4.7), disputed, or under review with an approval already given in the
 * current round; evidence is attached to it (milestone_id) or named in its evidence_document_ids.
 */
export async function isKeptEvidence(trx: Db, doc: Pick<DocumentRow, 'id' | 'deal_id' | 'milestone_id'>): Promise<boolean> {
  if (!doc.deal_id) return false;
  const row: unknown = await trx('deal_milestones')
    .where('deal_id', doc.deal_id)
    .andWhere((s) => {
      // Approved or released (4.7), disputed (a ruling decides on it), or under review with an
      // approval already given in this round (the next approver sees what the first one saw).
      void s
        .whereIn('status', ['approved', 'released', 'disputed'])
        .orWhere((r) => {
          void r
            .where('status', 'evidence_submitted')
            .whereExists((e) => {
              void e
                .from('milestone_approvals as a')
                .whereRaw('a.milestone_id = deal_milestones.id AND a.round = deal_milestones.approval_round')
                .where('a.status', 'approved')
                .select(trx.raw('1'));
            });
        });
    })
    .andWhere((w) => {
      if (doc.milestone_id) void w.where('id', doc.milestone_id);
      void w.orWhereRaw('evidence_document_ids @> ?::jsonb', [JSON.stringify([doc.id])]);
    })
    .first('id');
  return row !== undefined;
}

/** Milestone statuses whose current round may hold an approval (a revision request closes the round: the next evidence opens a new one). */
const ROUND_LIVE_OR_DECIDED = ['evidence_submitted', 'approved', 'released', 'disputed'];

/**
 * True when the milestone's evidence is frozen for additions (issue 42): its current round
 * has an approval (the first approver decided on what was there). From revision_requested
 * on, documents go to the next round, which submit-evidence opens.
 */
export async function roundHasApproval(trx: Db, milestone: { id: string; status: string; approval_round: number }): Promise<boolean> {
  if (!ROUND_LIVE_OR_DECIDED.includes(milestone.status)) return false;
  const row: unknown = await trx('milestone_approvals').where({ milestone_id: milestone.id, round: milestone.approval_round, status: 'approved' }).first('id');
  return row !== undefined;
}

/** Documents attached to the milestone or named in its evidence ids, newest first. */
export async function evidenceOf(trx: Db, milestone: { id: string; evidence_document_ids: string[] }): Promise<DocumentRow[]> {
  // A row written as `{}` by older code names none.
  const ids: unknown = milestone.evidence_document_ids;
  const named = Array.isArray(ids) && ids.length > 0 ? (ids as string[]) : null;
  return (await documentsWithNames(trx)
    .where((w) => {
      void w.where('doc.milestone_id', milestone.id);
      if (named) void w.orWhereIn('doc.id', named);
    })
    .orderBy(NEWEST_FIRST)) as DocumentRow[];
}

/** How many of `ids` are documents of this deal (same workspace). */
export async function countOfDeal(trx: Db, workspaceId: string, dealId: string, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const [row] = await trx('deal_documents').where({ workspace_id: workspaceId, deal_id: dealId }).whereIn('id', ids).count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}
