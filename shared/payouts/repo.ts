/** SQL of disbursements (enterprise payouts). */
import { NO_SEARCH, queuePage, type QueueCursor, type QueuePage, type StaffSearch } from '../staff/queue.js';
import type { Knex } from 'knex';
import { db, nativeOf, readAheadOf, takeReadAhead, writeAtCommit, type Db, type ReadAhead } from '../db.js';
import { outboxInsertSql, type OutboxItem } from '../outbox.js';
import type { DisbursementStatus, DisbursementTransition } from './states.js';

export interface DisbursementRow {
  id: string;
  workspace_id: string;
  deal_id: string;
  milestone_id: string;
  payout_instruction_id: string;
  /** The instruction's label when released (the destination below is of the same moment). */
  instruction_label: string;
  /** Where the payout was released to (issue 42): the instruction's bank, holder and last four digits as the release read them. */
  destination_bank_name: string;
  destination_account_holder: string;
  destination_account_last4: string;
  amount: number;
  currency: string;
  is_test: boolean;
  release_no: number;
  /** Its place among the splits of its release (1 to 5). */
  split_no: number;
  /** signPayout of its terms, written by the release (signature.ts); checked before any money moves. */
  signature: string | null;
  status: DisbursementStatus;
  attempts: number;
  lease_until: Date | null;
  provider_reference: string | null;
  failure_reason: string | null;
  settled_at: Date | null;
  failed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A payout as lists show it: with its deal, milestone and counterparty names (its destination is its own columns). */
export interface PayoutListRow extends DisbursementRow {
  deal_reference: string;
  milestone_title: string;
  milestone_sequence_no: number;
  counterparty_name: string;
}

const toRow = <T extends DisbursementRow>(r: T): T => ({ ...r, amount: Number(r.amount) });

export type NewDisbursement = Pick<
  DisbursementRow,
  | 'id'
  | 'signature'
  | 'workspace_id'
  | 'deal_id'
  | 'milestone_id'
  | 'payout_instruction_id'
  | 'instruction_label'
  | 'destination_bank_name'
  | 'destination_account_holder'
  | 'destination_account_last4'
  | 'amount'
  | 'currency'
  | 'is_test'
  | 'release_no'
  | 'split_no'
  | 'created_at'
  | 'updated_at'
>;

/**
 * The disbursements and, when given, their outbox jobs (the payouts to send) in one
 * statement, held for the transaction's COMMIT (`writeAtCommit`: in a keyed release it
 * travels with the answer's reads); the caller made the rows and knows them.
 */
export async function insertMany(trx: Db, rows: NewDisbursement[], jobs: readonly OutboxItem[] = []): Promise<void> {
  const insert = trx('disbursements').insert(rows).toSQL();
  const outbox = outboxInsertSql(trx, jobs);
  await writeAtCommit(
    trx,
    nativeOf(trx, outbox ? `WITH d AS (${insert.sql}) ${outbox.sql}` : insert.sql, [...insert.bindings, ...(outbox?.bindings ?? [])]),
  );
}

export async function byId(trx: Db, id: string, lock = false): Promise<DisbursementRow | undefined> {
  const q = trx('disbursements').where({ id }).first<DisbursementRow | undefined>('*');
  if (lock) q.forUpdate();
  const row = await q;
  return row ? toRow(row) : undefined;
}

/** Compare-and-set move (states.ts); `extra` narrows it (e.g. a lease that ran out). Undefined when it no longer applies. */
export async function move(
  trx: Db,
  id: string,
  t: DisbursementTransition,
  changes: Partial<DisbursementRow>,
  extra?: (q: Knex.QueryBuilder) => void,
): Promise<DisbursementRow | undefined> {
  const q = trx('disbursements').where({ id }).whereIn('status', t.from);
  if (extra) extra(q);
  const [row] = await q.update({ ...changes, status: t.to }).returning<DisbursementRow[]>('*');
  return row ? toRow(row) : undefined;
}

/** Updates a claimed row without moving it (lease renewal, last error), only while this run's claim holds. */
export async function touchClaim(trx: Db, id: string, attempts: number, changes: Partial<DisbursementRow>): Promise<void> {
  await trx('disbursements').where({ id, status: 'processing', attempts }).update(changes);
}

/** The next release number of a milestone (1 for the first release, 2 for the first retry...). */
export async function nextReleaseNo(trx: Db, milestoneId: string): Promise<number> {
  const [row] = takeReadAhead<{ max: number | null }>(trx, `release-no:${milestoneId}`) ?? ((await lastReleaseNo(trx, milestoneId)) as { max: number | null }[]);
  return (row?.max ?? 0) + 1;
}

/** `nextReleaseNo` ahead of time, for a keyed release (release.ts); read after the deal's lock, as the release reads it. */
export function nextReleaseNoReadAhead(milestoneId: string): ReadAhead {
  return readAheadOf(`release-no:${milestoneId}`, lastReleaseNo(db, milestoneId));
}

const lastReleaseNo = (trx: Db, milestoneId: string) => trx('disbursements').where({ milestone_id: milestoneId }).max('release_no as max');

const listed = (trx: Db) =>
  trx('disbursements as p')
    .join('deals as d', 'd.id', 'p.deal_id')
    .join('deal_milestones as m', 'm.id', 'p.milestone_id')
    .join('payout_instructions as i', 'i.id', 'p.payout_instruction_id')
    .join('counterparties as c', 'c.id', 'i.counterparty_id');

// The destination is the payout's own (written at release), never the instruction's current one.
const LIST_COLUMNS = ['p.*', 'd.reference as deal_reference', 'm.title as milestone_title', 'm.sequence_no as milestone_sequence_no', 'c.name as counterparty_name'];

export interface PayoutFilter {
  status?: DisbursementStatus;
  deal_id?: string;
  milestone_id?: string;
}

/** A workspace's payouts, newest first. */
export async function listForWorkspace(trx: Db, workspaceId: string, f: PayoutFilter, page: number, limit: number): Promise<{ rows: PayoutListRow[]; total: number }> {
  const where = (q: Knex.QueryBuilder) => {
    void q.where('p.workspace_id', workspaceId);
    if (f.status) void q.where('p.status', f.status);
    if (f.deal_id) void q.where('p.deal_id', f.deal_id);
    if (f.milestone_id) void q.where('p.milestone_id', f.milestone_id);
  };
  const base = trx('disbursements as p');
  where(base);
  const [count] = await base.count<{ count: string }[]>('* as count');
  const q = listed(trx);
  where(q);
  const rows = await q
    // The splits of one release share a time: newest release first, its splits in their order.
    .orderBy([{ column: 'p.created_at', order: 'desc' }, { column: 'p.milestone_id' }, { column: 'p.release_no', order: 'desc' }, { column: 'p.split_no' }])
    .limit(limit)
    .offset((page - 1) * limit)
    .select<PayoutListRow[]>(LIST_COLUMNS);
  return { rows: rows.map(toRow), total: Number(count?.count ?? 0) };
}

/** One payout with its names (any workspace: staff and the worker). */
export async function listedById(trx: Db, id: string): Promise<PayoutListRow | undefined> {
  const row = await listed(trx).where('p.id', id).first<PayoutListRow | undefined>(LIST_COLUMNS);
  return row ? toRow(row) : undefined;
}

/** The payout queue's search (issue 46): the payout's, deal's, milestone's or workspace's id exactly, or part of the deal's reference, the milestone, the counterparty, the workspace's name or the provider's payout reference. */
const SEARCHED = {
  ids: ['p.id', 'p.deal_id', 'p.milestone_id', 'p.workspace_id'],
  text: ['d.reference', 'm.title', 'c.name', 'w.display_name', 'p.provider_reference'],
} as const;

/** Open payouts for the operator console: queued and processing (or those of `statuses`), oldest first, narrowed as staff ask (`before`: created then or earlier). */
export const OPEN_PAYOUT_STATUSES = ['queued', 'processing'] as const;
export type OpenPayoutStatus = (typeof OPEN_PAYOUT_STATUSES)[number];

export async function openForStaff(
  trx: Db,
  page: QueueCursor,
  by: StaffSearch = NO_SEARCH,
  statuses: readonly OpenPayoutStatus[] = OPEN_PAYOUT_STATUSES,
): Promise<QueuePage<PayoutListRow & { workspace_name: string }>> {
  const q = listed(trx)
    .join('workspaces as w', 'w.id', 'p.workspace_id')
    .whereIn('p.status', [...statuses])
    .select([...LIST_COLUMNS, 'w.display_name as workspace_name']);
  // Review R4: live payouts first, oldest first, keyset pages (shared/staff/queue.ts).
  const got = await queuePage<PayoutListRow & { workspace_name: string }>(q, { sandbox: 'p.is_test', since: 'p.created_at', id: 'p.id' }, page, { by, columns: SEARCHED });
  return { ...got, rows: got.rows.map(toRow) };
}

/** A deal's payouts for the console's deal page: newest release first, its splits in order. */
export async function forDeal(trx: Db, dealId: string): Promise<PayoutListRow[]> {
  const rows = await listed(trx)
    .where('p.deal_id', dealId)
    .orderBy([{ column: 'p.created_at', order: 'desc' }, { column: 'p.milestone_id' }, { column: 'p.release_no', order: 'desc' }, { column: 'p.split_no' }])
    .select<PayoutListRow[]>(LIST_COLUMNS);
  return rows.map(toRow);
}

/** Processing payouts whose claim ran out (their run died), oldest claim first. */
export async function expiredClaims(trx: Db, now: Date, limit: number): Promise<Pick<DisbursementRow, 'id' | 'attempts'>[]> {
  return trx('disbursements')
    .where('status', 'processing')
    .andWhere((l) => void l.whereNull('lease_until').orWhere('lease_until', '<=', now))
    .orderBy([{ column: 'lease_until', order: 'asc', nulls: 'first' }])
    .limit(limit)
    .select('id', 'attempts');
}

/** Payouts still queued since before `before` (their job may be lost): sandbox ones, and live ones when `live`. */
export async function queuedSince(trx: Db, before: Date, live: boolean, limit: number): Promise<Pick<DisbursementRow, 'id' | 'attempts'>[]> {
  const q = trx('disbursements').where('status', 'queued').andWhere('created_at', '<', before);
  if (!live) q.andWhere('is_test', true);
  return q.orderBy('created_at').limit(limit).select('id', 'attempts');
}
