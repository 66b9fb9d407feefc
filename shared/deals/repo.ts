/** SQL of deals and their milestones. */
import { NO_SEARCH, queuePage, type QueueCursor, type QueuePage, type StaffSearch } from '../staff/queue.js';
import type { Knex } from 'knex';
import { takeReadAhead, type Db, type ReadAhead } from '../db.js';
import type { Allocation } from './fees.js';
import type { DealStatus, MilestoneStatus, MilestoneTransition } from './states.js';

export interface DealRow {
  id: string;
  workspace_id: string;
  reference: string;
  title: string;
  description: string | null;
  external_ref: string | null;
  currency: string;
  counterparty_id: string;
  owner_id: string;
  is_test: boolean;
  activated_at: Date | null;
  terms_review: boolean;
  cancelled_at: Date | null;
  fee_rate_bp: number;
  fee_min: number;
  fee_tier_min_volume: number | null;
  fee_volume_basis: number;
  fee_allocation: Allocation;
  fee_buyer_percent: number;
  platform_fee: number;
  buyer_fee: number;
  seller_fee: number;
  fee_frozen: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A deal with the names its answers show. */
export interface DealWithNames extends DealRow {
  owner_name: string;
  counterparty_name: string;
  counterparty_country_code: string;
  counterparty_kyb_status: string;
  counterparty_relationship: string;
}

export interface MilestoneRow {
  id: string;
  deal_id: string;
  workspace_id: string;
  sequence_no: number;
  title: string;
  required_evidence: string | null;
  amount: number;
  status: MilestoneStatus;
  due_at: Date | null;
  funded_at: Date | null;
  funding_method: string | null;
  funding_reference: string | null;
  evidence_summary: string | null;
  evidence_document_ids: string[];
  evidence_submitted_at: Date | null;
  evidence_submitted_by: string | null;
  approved_at: Date | null;
  released_at: Date | null;
  disputed_at: Date | null;
  dispute_reason: string | null;
  approvals_required: number;
  /** Evidence rounds so far (one per submit-evidence); approvals and decisions belong to a round. */
  approval_round: number;
  /** Payouts that failed and came back to the milestone's held balance, waiting for a re-release. */
  returned_amount: number;
  /** What a staff ruling refunded to the workspace (of `amount`). */
  refunded_amount: number;
  ruling: 'release' | 'refund' | 'split' | null;
  ruled_at: Date | null;
  buyer_fee: number;
  seller_fee: number;
  funding_amount: number;
  payout_amount: number;
  created_at: Date;
  updated_at: Date;
}

const BIGINT_DEAL = ['fee_min', 'fee_tier_min_volume', 'fee_volume_basis', 'platform_fee', 'buyer_fee', 'seller_fee'] as const;
const BIGINT_MILESTONE = ['amount', 'buyer_fee', 'seller_fee', 'funding_amount', 'payout_amount', 'returned_amount', 'refunded_amount'] as const;

function numbers<T extends object>(row: T, keys: readonly string[]): T {
  const out = { ...row } as Record<string, unknown>;
  for (const k of keys) if (out[k] !== null && out[k] !== undefined) out[k] = Number(out[k]);
  return out as T;
}
const toDeal = <T extends DealRow>(r: T): T => numbers(r, BIGINT_DEAL);
const toMilestone = (r: MilestoneRow): MilestoneRow => numbers(r, BIGINT_MILESTONE);

/** The next deal reference of the workspace (DL-000001, ...), counted on the locked workspace row. */
export async function nextReference(trx: Db, workspaceId: string): Promise<string> {
  const [row] = await trx('workspaces')
    .where({ id: workspaceId })
    .increment('last_deal_number', 1)
    .returning<{ last_deal_number: number }[]>('last_deal_number');
  return `DL-${String(row!.last_deal_number).padStart(6, '0')}`;
}

export async function insertDeal(trx: Db, row: Omit<DealRow, 'id' | 'activated_at' | 'terms_review' | 'cancelled_at' | 'fee_frozen'>): Promise<DealRow> {
  const [created] = await trx('deals').insert(row).returning<DealRow[]>('*');
  return toDeal(created!);
}

export type NewMilestone = Omit<
  MilestoneRow,
  | 'id'
  | 'status'
  | 'funded_at'
  | 'funding_method'
  | 'funding_reference'
  | 'evidence_summary'
  | 'evidence_document_ids'
  | 'evidence_submitted_at'
  | 'evidence_submitted_by'
  | 'approved_at'
  | 'released_at'
  | 'disputed_at'
  | 'dispute_reason'
  | 'approval_round'
  | 'returned_amount'
  | 'refunded_amount'
  | 'ruling'
  | 'ruled_at'
>;

export async function insertMilestones(trx: Db, rows: NewMilestone[]): Promise<void> {
  if (rows.length > 0) await trx('deal_milestones').insert(rows);
}

/** A deal's columns with its owner's and counterparty's names (deals as d, users as u, counterparties as c). */
const DEAL_WITH_NAMES = [
  'd.*',
  'u.full_name as owner_name',
  'c.name as counterparty_name',
  'c.country_code as counterparty_country_code',
  'c.kyb_status as counterparty_kyb_status',
  'c.relationship as counterparty_relationship',
];

const dealWithNames = (trx: Db) =>
  trx('deals as d')
    .join('users as u', 'u.id', 'd.owner_id')
    .join('counterparties as c', 'c.id', 'd.counterparty_id')
    .select(...DEAL_WITH_NAMES);

/**
 * `dealById(trx, workspaceId, id, true)` ahead of time: the same statement as the builder
 * makes (the deal row alone locked, `FOR UPDATE OF d`), its ids bound.
 */
export function lockedDealReadAhead(workspaceId: string, id: string): ReadAhead {
  return {
    key: `deal-locked:${workspaceId}:${id}`,
    sql:
      `SELECT d.*, u.full_name AS owner_name, c.name AS counterparty_name, c.country_code AS counterparty_country_code, ` +
      `c.kyb_status AS counterparty_kyb_status, c.relationship AS counterparty_relationship ` +
      `FROM deals AS d INNER JOIN users AS u ON u.id = d.owner_id INNER JOIN counterparties AS c ON c.id = d.counterparty_id ` +
      `WHERE d.id = $1 AND d.workspace_id = $2 LIMIT 1 FOR UPDATE OF d`,
    bindings: [id, workspaceId],
  };
}

/**
 * `milestonesOf(trx, dealId)` ahead of time, sent after `lockedDealReadAhead` (so read once
 * the deal is locked), of that workspace's deal only: no rows for another workspace's deal.
 */
export function lockedMilestonesReadAhead(workspaceId: string, dealId: string): ReadAhead {
  return {
    key: `milestones-of-locked:${dealId}`,
    sql:
      `SELECT m.* FROM deal_milestones AS m INNER JOIN deals AS d ON d.id = m.deal_id AND d.workspace_id = $1 ` +
      `WHERE m.deal_id = $2 ORDER BY m.sequence_no`,
    bindings: [workspaceId, dealId],
  };
}

/** One deal of the workspace with its names; `lock` takes the deal row for the rest of the transaction. */
export async function dealById(trx: Db, workspaceId: string, id: string, lock = false): Promise<DealWithNames | undefined> {
  // A keyed deal write sent the locking read with its key's statement (lockedDealReadAhead): taken once.
  const ahead = lock ? takeReadAhead<DealWithNames>(trx, `deal-locked:${workspaceId}:${id}`) : undefined;
  if (ahead) return ahead[0] ? toDeal(ahead[0]) : undefined;
  const q = dealWithNames(trx).where({ 'd.id': id, 'd.workspace_id': workspaceId }).first<DealWithNames | undefined>();
  // One query: the deal row alone is locked (FOR UPDATE OF d), not the owner or counterparty it is read with.
  if (lock) q.forUpdate('d');
  const row = await q;
  return row ? toDeal(row) : undefined;
}

export async function milestonesOf(trx: Db, dealId: string): Promise<MilestoneRow[]> {
  const ahead = takeReadAhead<MilestoneRow>(trx, `milestones-of-locked:${dealId}`);
  if (ahead) return ahead.map(toMilestone);
  const rows = await trx('deal_milestones').where({ deal_id: dealId }).orderBy('sequence_no').select<MilestoneRow[]>('*');
  return rows.map(toMilestone);
}

export async function milestonesOfDeals(trx: Db, dealIds: string[]): Promise<MilestoneRow[]> {
  if (dealIds.length === 0) return [];
  const rows = await trx('deal_milestones').whereIn('deal_id', dealIds).orderBy([{ column: 'deal_id' }, { column: 'sequence_no' }]).select<MilestoneRow[]>('*');
  return rows.map(toMilestone);
}

export async function updateDeal(trx: Db, id: string, patch: Partial<DealRow>): Promise<void> {
  await trx('deals').where({ id }).update(patch);
}

export async function updateMilestone(trx: Db, id: string, patch: Partial<MilestoneRow>): Promise<void> {
  await trx('deal_milestones').where({ id }).update(patch);
}

/** Compare-and-set status move of one milestone (states.ts); undefined when it is no longer in a from-state. */
export async function moveMilestone(trx: Db, id: string, move: MilestoneTransition, changes: Partial<MilestoneRow>): Promise<MilestoneRow | undefined> {
  const [row] = await trx('deal_milestones')
    .where({ id })
    .whereIn('status', move.from)
    .update({ ...changes, status: move.to })
    .returning<MilestoneRow[]>('*');
  return row ? toMilestone(row) : undefined;
}

/** The pending approval slots of the milestone's current round (`approval_round`), one per approval required. */
export async function openApprovalRound(trx: Db, m: Pick<MilestoneRow, 'id' | 'workspace_id' | 'approval_round' | 'approvals_required' | 'updated_at'>): Promise<void> {
  const slots = Array.from({ length: m.approvals_required }, (_, i) => ({
    milestone_id: m.id,
    workspace_id: m.workspace_id,
    round: m.approval_round,
    slot: i + 1,
    created_at: m.updated_at,
  }));
  await trx('milestone_approvals').insert(slots);
}

/** How many approve decisions were saved on the deal's milestones (every round): the query, run with the deal's other reads (`readTogether`), and its count from the rows. */
export function approveDecisionsQuery(trx: Db, dealId: string): Knex.QueryBuilder {
  return trx('milestone_decisions').where({ deal_id: dealId, decision: 'approve' }).count('* as count');
}

export function approveDecisionsOf(rows: readonly unknown[]): number {
  return Number((rows[0] as { count: string } | undefined)?.count ?? 0);
}

/** Moves every milestone of a deal that is in a from-state; answers how many moved. */
export async function moveDealMilestones(trx: Db, dealId: string, move: MilestoneTransition, changes: Partial<MilestoneRow>): Promise<number> {
  return trx('deal_milestones')
    .where({ deal_id: dealId })
    .whereIn('status', move.from)
    .update({ ...changes, status: move.to });
}

export interface DealListFilter {
  status?: DealStatus;
  q?: string;
  limit: number;
  offset: number;
}

/**
 * One page of the workspace's deals, newest first (`created_at DESC, id DESC`), with their
 * names, and how many match (GET /deals; decision 0018 "Issue 42: the deal list in SQL").
 * The status filter reads the `deal_statuses` rollup (the rule of `dealStatus`, kept by
 * triggers in the writing transaction), so neither the filter nor the page loads another
 * deal's milestones: with a status, the page is one range of `deal_statuses_list` read
 * backwards; without, of `deal_statuses_order`; the page's ids are cut there first, so an
 * offset skips index entries, and only the page's deals are joined with their names. `q`
 * (title or reference contains, `%`, `_` and `\` taken literally) is checked on the deal
 * rows met along the way. The total is a
 * scalar subquery of the same statement (one snapshot, one round trip); a page past the end
 * has no row to carry it, so only then is it counted alone. Every value is bound.
 */
export async function listDealsPage(trx: Db, workspaceId: string, f: DealListFilter): Promise<{ deals: DealWithNames[]; total: number }> {
  const like = f.q ? `%${f.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : undefined;
  const filtered = (q: Knex.QueryBuilder): Knex.QueryBuilder => {
    q.where('s.workspace_id', workspaceId);
    if (f.status) q.andWhere('s.status', f.status);
    if (like !== undefined) {
      q.andWhere((w) => {
        void w.whereILike('d.title', like).orWhereILike('d.reference', like);
      });
    }
    return q;
  };
  // The rollup alone unless q needs the deal row (deals joined by its own alias inside each subquery).
  const matching = () => filtered(like === undefined ? trx('deal_statuses as s') : trx('deal_statuses as s').join('deals as d', 'd.id', 's.deal_id'));
  // The page's ids first (an offset then skips index entries, not joined deals), then those deals with their names.
  const page = matching()
    .select('s.deal_id', 's.created_at')
    .orderBy([
      { column: 's.created_at', order: 'desc' },
      { column: 's.deal_id', order: 'desc' },
    ])
    .limit(f.limit)
    .offset(f.offset);
  const rows = await trx
    .from(page.as('p'))
    .join('deals as d', 'd.id', 'p.deal_id')
    .join('users as u', 'u.id', 'd.owner_id')
    .join('counterparties as c', 'c.id', 'd.counterparty_id')
    .select<(DealWithNames & { total: string })[]>(
      ...DEAL_WITH_NAMES,
      matching().count('*').as('total'),
    )
    .orderBy([
      { column: 'p.created_at', order: 'desc' },
      { column: 'p.deal_id', order: 'desc' },
    ]);
  if (rows.length === 0) {
    const [row] = await matching().count<{ count: string }[]>('* as count');
    return { deals: [], total: Number(row?.count ?? 0) };
  }
  const total = Number(rows[0]!.total);
  return {
    deals: rows.map((r) => {
      const deal: Partial<typeof r> = { ...r };
      delete deal.total;
      return toDeal(deal as DealWithNames);
    }),
    total,
  };
}

/** Draft deals held in terms_review for this counterparty (it was just verified). */
export async function dealsInTermsReview(trx: Db, counterpartyId: string): Promise<{ id: string; workspace_id: string; reference: string }[]> {
  return trx('deals')
    .where({ counterparty_id: counterpartyId, terms_review: true })
    .whereNull('cancelled_at')
    .forUpdate()
    .select<{ id: string; workspace_id: string; reference: string }[]>('id', 'workspace_id', 'reference');
}

/** Unfinished sandbox deals of a workspace (it went live). */
export async function openSandboxDeals(trx: Db, workspaceId: string): Promise<{ id: string; reference: string }[]> {
  return trx('deals')
    .where({ workspace_id: workspaceId, is_test: true })
    .whereNull('cancelled_at')
    .whereExists(trx('deal_milestones as m').whereRaw('m.deal_id = deals.id').whereNotIn('m.status', ['released', 'cancelled']).select(trx.raw('1')))
    .forUpdate()
    .select<{ id: string; reference: string }[]>('id', 'reference');
}

/** Where a milestone lives (the staff side knows only its id): its deal and workspace. */
export async function milestoneOwner(trx: Db, milestoneId: string): Promise<{ deal_id: string; workspace_id: string } | undefined> {
  return trx('deal_milestones').where({ id: milestoneId }).first<{ deal_id: string; workspace_id: string } | undefined>('deal_id', 'workspace_id');
}

/** A deal's workspace (the staff side knows only the deal id). */
export async function dealWorkspace(trx: Db, dealId: string): Promise<string | undefined> {
  const row = await trx('deals').where({ id: dealId }).first<{ workspace_id: string } | undefined>('workspace_id');
  return row?.workspace_id;
}

/** The fields of CONSOLE_COLUMNS: what every console milestone list shows. */
export interface ConsoleMilestoneRow {
  milestone_id: string;
  deal_id: string;
  reference: string;
  title: string;
  milestone_title: string;
  sequence_no: number;
  amount: number;
  currency: string;
  workspace_id: string;
  workspace_name: string;
}

export interface AwaitingRow extends ConsoleMilestoneRow {
  buyer_fee: number;
  funding_amount: number;
  activated_at: Date | null;
}

/** Milestones of any workspace as the operator console lists them: with their deal and workspace. */
const consoleMilestones = (trx: Db) => trx('deal_milestones as m').join('deals as d', 'd.id', 'm.deal_id').join('workspaces as w', 'w.id', 'd.workspace_id');

/** The columns every console milestone list shows. */
const CONSOLE_COLUMNS = [
  'm.id as milestone_id',
  'd.id as deal_id',
  'd.reference',
  'd.title',
  'm.title as milestone_title',
  'm.sequence_no',
  'm.amount',
  'd.currency',
  'w.id as workspace_id',
  'w.display_name as workspace_name',
] as const;

/** The console's milestone queues' search (issue 46): the milestone's, deal's or workspace's id exactly, or part of the deal's reference or title, the milestone's title or the workspace's name. */
const MILESTONE_SEARCHED = { ids: ['m.id', 'd.id', 'w.id'], text: ['d.reference', 'd.title', 'm.title', 'w.display_name'] } as const;

/** Live milestones awaiting funding confirmation, oldest activation first (keyset pages), narrowed as staff ask (`before`: activated then or earlier). */
export async function awaitingConfirmation(trx: Db, page: QueueCursor, by: StaffSearch = NO_SEARCH): Promise<QueuePage<AwaitingRow>> {
  const q = consoleMilestones(trx)
    .where({ 'm.status': 'awaiting_funding', 'd.is_test': false })
    .select(...CONSOLE_COLUMNS, 'm.buyer_fee', 'm.funding_amount', 'd.activated_at');
  // Live deals only (sandbox funding confirms itself): no sandbox key; a deal's milestones in their order.
  const got = await queuePage<AwaitingRow>(q, { sandbox: null, since: 'd.activated_at', id: 'd.id', rank: 'm.sequence_no' }, page, { by, columns: MILESTONE_SEARCHED });
  return { ...got, rows: got.rows.map((r) => ({ ...r, amount: Number(r.amount), buyer_fee: Number(r.buyer_fee), funding_amount: Number(r.funding_amount) })) };
}

/** How many live milestones await funding confirmation (the console's overview count; the same rows as awaitingConfirmation). */
export async function awaitingCount(trx: Db): Promise<number> {
  const [row] = await trx('deal_milestones as m')
    .join('deals as d', 'd.id', 'm.deal_id')
    .where({ 'm.status': 'awaiting_funding', 'd.is_test': false })
    .count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}

/** A disputed milestone as the operator console lists it (any workspace, sandbox ones marked). */
export interface DisputedRow extends ConsoleMilestoneRow {
  /** What an earlier split ruling refunded already (a ruling splits what is still held: amount - refunded_amount). */
  refunded_amount: number;
  seller_fee: number;
  is_test: boolean;
  dispute_reason: string | null;
  disputed_at: Date | null;
}

/** Disputed milestones waiting for a staff ruling, oldest dispute first. */
export async function disputedForStaff(trx: Db, page: QueueCursor, by: StaffSearch = NO_SEARCH): Promise<QueuePage<DisputedRow>> {
  const q = consoleMilestones(trx)
    .where('m.status', 'disputed')
    .select(
      ...CONSOLE_COLUMNS,
      'm.refunded_amount',
      'm.seller_fee',
      'd.is_test',
      'm.dispute_reason',
      'm.disputed_at',
    );
  // Review R4: live deals' milestones first, oldest dispute first, keyset pages (shared/staff/queue.ts).
  const got = await queuePage<DisputedRow>(q, { sandbox: 'd.is_test', since: 'm.disputed_at', id: 'm.id' }, page, { by, columns: MILESTONE_SEARCHED });
  return { ...got, rows: got.rows.map((r) => ({ ...r, amount: Number(r.amount), refunded_amount: Number(r.refunded_amount), seller_fee: Number(r.seller_fee) })) };
}

/** How many milestones wait for a ruling (the console's overview count; the same rows as disputedForStaff). */
export async function disputedCount(trx: Db): Promise<number> {
  const [row] = await trx('deal_milestones').where({ status: 'disputed' }).count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}
