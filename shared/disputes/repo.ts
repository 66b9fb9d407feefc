/** SQL for disputes and their messages. */
import type { Db } from '../db.js';
import { queuePage, type QueueCursor, type QueuePage, type StaffSearch } from '../staff/queue.js';
import type { DisputeStatus, Outcome } from './states.js';

export interface DisputeRow {
  id: string;
  escrow_id: string;
  initiator_id: string;
  reason_category: string;
  description: string;
  status: DisputeStatus;
  outcome: Outcome | null;
  priority: string;
  escrow_status_before: string;
  resolution_note: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The extended Dispute of list and get answers. */
export interface DisputeView extends DisputeRow {
  item_name: string;
  amount: number;
  escrow_status: string;
  buyer_id: string;
  seller_id: string;
  buyer_email: string;
  buyer_full_name: string;
  seller_email: string;
  seller_full_name: string;
}

export interface MessageRow {
  id: string;
  dispute_id: string;
  sender_id: string;
  sender_role: 'buyer' | 'seller' | 'admin';
  message: string;
  evidence_urls: string[];
  created_at: Date;
}

export async function insert(
  trx: Db,
  row: Pick<DisputeRow, 'escrow_id' | 'initiator_id' | 'reason_category' | 'description' | 'escrow_status_before' | 'created_at' | 'updated_at'>,
): Promise<DisputeRow> {
  const [created] = (await trx('disputes').insert(row).returning('*')) as DisputeRow[];
  if (!created) throw new Error('disputes insert returned no row');
  return created;
}

export async function activeForEscrow(trx: Db, escrowId: string): Promise<boolean> {
  return (await trx('disputes').where({ escrow_id: escrowId }).whereNot({ status: 'resolved' }).first('id')) !== undefined;
}

export async function findById(trx: Db, id: string): Promise<DisputeRow | undefined> {
  return (await trx('disputes').where({ id }).first()) as DisputeRow | undefined;
}

/**
 * Compare-and-set (ARCHITECTURE rule 3): changes the dispute only if its status is still
 * one of `from`. Undefined when someone else moved it first.
 */
export async function move(trx: Db, id: string, from: readonly DisputeStatus[], changes: Partial<DisputeRow>): Promise<DisputeRow | undefined> {
  const [row] = (await trx('disputes').where({ id }).whereIn('status', from).update(changes).returning('*')) as DisputeRow[];
  return row;
}

export async function activeStaffIds(trx: Db): Promise<string[]> {
  const rows = (await trx('users').select('id').where({ role: 'admin', status: 'active' }).orderBy('id').limit(50)) as { id: string }[];
  return rows.map((r) => r.id);
}

function viewQuery(trx: Db) {
  return trx('disputes as d')
    .join('escrows as e', 'e.id', 'd.escrow_id')
    .join('users as b', 'b.id', 'e.buyer_id')
    .join('users as s', 's.id', 'e.seller_id')
    .select(
      'd.*',
      'e.item_name',
      'e.amount',
      'e.status as escrow_status',
      'e.buyer_id',
      'e.seller_id',
      'b.email as buyer_email',
      'b.full_name as buyer_full_name',
      's.email as seller_email',
      's.full_name as seller_full_name',
    );
}

export async function view(trx: Db, id: string): Promise<DisputeView | undefined> {
  return (await viewQuery(trx).where('d.id', id).first()) as DisputeView | undefined;
}

export interface ListFilter {
  /** Null: every dispute (staff). */
  userId: string | null;
  status?: string;
  page: number;
  limit: number;
}

export async function list(trx: Db, f: ListFilter): Promise<{ rows: DisputeView[]; total: number }> {
  const scope = <Q extends ReturnType<typeof viewQuery>>(q: Q): Q => {
    if (f.userId) void q.where((w) => void w.where('e.buyer_id', f.userId).orWhere('e.seller_id', f.userId));
    if (f.status) void q.where('d.status', f.status);
    return q;
  };
  const rows = (await scope(viewQuery(trx))
    .orderBy([{ column: 'd.created_at', order: 'desc' }, { column: 'd.id', order: 'desc' }])
    .limit(f.limit)
    .offset((f.page - 1) * f.limit)) as DisputeView[];
  const countQuery = trx('disputes as d').join('escrows as e', 'e.id', 'd.escrow_id');
  if (f.userId) void countQuery.where((w) => void w.where('e.buyer_id', f.userId).orWhere('e.seller_id', f.userId));
  if (f.status) void countQuery.where('d.status', f.status);
  const [count] = await countQuery.count<{ count: string }[]>('* as count');
  return { rows, total: Number(count?.count ?? 0) };
}

/** What staff narrow the dispute queue by (issue 46): statuses, a search term, how long it has waited. */
export interface StaffQueueFilter extends StaffSearch {
  statuses: readonly DisputeStatus[];
}

/** `q`: a dispute's or escrow's id exactly, or part of the item, or of either party's e-mail, username or name; `before`: opened then or earlier. */
const SEARCHED = { ids: ['d.id', 'e.id'], text: ['e.item_name', 'b.email', 'b.username', 'b.full_name', 's.email', 's.username', 's.full_name'] } as const;

/** One page of the staff dispute queue: oldest first (the longest waiting is the first row), keyset pages (shared/staff/queue.ts). */
export async function staffQueue(trx: Db, f: StaffQueueFilter, page: QueueCursor): Promise<QueuePage<DisputeView>> {
  const q = viewQuery(trx).whereIn('d.status', f.statuses);
  return queuePage<DisputeView>(q, { sandbox: null, since: 'd.created_at', id: 'd.id' }, page, { by: f, columns: SEARCHED });
}

export async function insertMessage(trx: Db, row: Omit<MessageRow, 'id' | 'evidence_urls'> & { evidence_urls: string }): Promise<MessageRow> {
  const [created] = (await trx('dispute_messages').insert(row).returning('*')) as MessageRow[];
  if (!created) throw new Error('dispute_messages insert returned no row');
  return created;
}

export async function messages(trx: Db, disputeId: string): Promise<MessageRow[]> {
  return (await trx('dispute_messages').where({ dispute_id: disputeId }).orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(500)) as MessageRow[];
}
