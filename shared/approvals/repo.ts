/**
 * SQL of approvals (enterprise spec 2 Approval item, 4.6): approval items read from the
 * milestone with its deal, counterparty, workspace and submitter; the decisions and slots
 * of a round (tables milestone_decisions and milestone_approvals, one round per
 * submit-evidence); and the counterparty's payout destination.
 */
import type { Knex } from 'knex';
import type { Db } from '../db.js';
import type { MilestoneStatus } from '../deals/states.js';
import type { Decision } from './schemas.js';

/** One Approval item: a milestone in one approval round (the current one, or a decided round in the decided list). */
export interface ApprovalItemRow {
  milestone_id: string;
  deal_id: string;
  deal_reference: string;
  deal_title: string;
  milestone_title: string;
  status: MilestoneStatus;
  amount: number;
  currency: string;
  counterparty_id: string;
  counterparty_name: string;
  risk_tier: string;
  evidence_summary: string | null;
  evidence_submitted_at: Date | null;
  due_at: Date | null;
  approvals_required: number;
  /** The round this item is about. */
  round: number;
  /** Approved slots of the round. */
  approvals_done: number;
  /** The caller's decision in the round. */
  my_decision: Decision | null;
  submitted_by_id: string | null;
  submitted_by_name: string | null;
}

const toItem = (r: ApprovalItemRow): ApprovalItemRow => ({ ...r, amount: Number(r.amount), approvals_done: Number(r.approvals_done) });

/**
 * The item's columns over `deal_milestones as m` for the round in `round` (a column the
 * code names, never input): approved slots of that round and the caller's decision in it.
 */
function itemColumns(trx: Db, q: Knex.QueryBuilder, userId: string, round: 'm.approval_round' | 'g.round'): Knex.QueryBuilder {
  return q
    .join('deals as d', 'd.id', 'm.deal_id')
    .join('counterparties as c', 'c.id', 'd.counterparty_id')
    .join('workspaces as w', 'w.id', 'm.workspace_id')
    .leftJoin('users as su', 'su.id', 'm.evidence_submitted_by')
    .select(
      'm.id as milestone_id',
      'd.id as deal_id',
      'd.reference as deal_reference',
      'd.title as deal_title',
      'm.title as milestone_title',
      'm.status',
      'm.amount',
      'd.currency',
      'd.counterparty_id',
      'c.name as counterparty_name',
      'w.risk_tier',
      'm.evidence_summary',
      'm.evidence_submitted_at',
      'm.due_at',
      'm.approvals_required',
      `${round} as round`,
      'm.evidence_submitted_by as submitted_by_id',
      'su.full_name as submitted_by_name',
      trx.raw(`(SELECT count(*)::int FROM milestone_approvals a WHERE a.milestone_id = m.id AND a.round = ${round} AND a.status = 'approved') AS approvals_done`),
      trx.raw(`(SELECT md.decision FROM milestone_decisions md WHERE md.milestone_id = m.id AND md.round = ${round} AND md.decided_by = ?) AS my_decision`, [userId]),
    );
}

export interface Paged<T> {
  rows: T[];
  total: number;
}

/** The open queue: milestones of the workspace in evidence_submitted, oldest evidence first. */
export async function queue(trx: Db, workspaceId: string, userId: string, page: number, limit: number): Promise<Paged<ApprovalItemRow>> {
  const open = () => trx('deal_milestones as m').where({ 'm.workspace_id': workspaceId, 'm.status': 'evidence_submitted' });
  const [count] = await open().count<{ count: string }[]>('* as count');
  const rows = (await itemColumns(trx, open(), userId, 'm.approval_round')
    .orderBy([{ column: 'm.evidence_submitted_at' }, { column: 'm.id' }])
    .limit(limit)
    .offset((page - 1) * limit)) as ApprovalItemRow[];
  return { rows: rows.map(toItem), total: Number(count?.count ?? 0) };
}

/**
 * The open queue items `userId` can decide (the overview's needs_you, enterprise spec 4.9):
 * evidence submitted by someone else, and no decision of theirs in the current round yet;
 * oldest evidence first, at most `limit`, with the total.
 */
export async function decidable(trx: Db, workspaceId: string, userId: string, limit: number): Promise<Paged<ApprovalItemRow>> {
  const open = () =>
    trx('deal_milestones as m')
      .where({ 'm.workspace_id': workspaceId, 'm.status': 'evidence_submitted' })
      .where((q) => void q.whereNull('m.evidence_submitted_by').orWhereNot('m.evidence_submitted_by', userId))
      .whereNotExists(trx('milestone_decisions as md').whereRaw('md.milestone_id = m.id AND md.round = m.approval_round').where('md.decided_by', userId).select(trx.raw('1')));
  const [count] = await open().count<{ count: string }[]>('* as count');
  const rows = (await itemColumns(trx, open(), userId, 'm.approval_round')
    .orderBy([{ column: 'm.evidence_submitted_at' }, { column: 'm.id' }])
    .limit(limit)) as ApprovalItemRow[];
  return { rows: rows.map(toItem), total: Number(count?.count ?? 0) };
}

/**
 * The decided list: one item per milestone round with a decision saved since `since` (by
 * anyone in the workspace), the round whose latest such decision is newest first.
 */
export async function decided(trx: Db, workspaceId: string, userId: string, since: Date, page: number, limit: number): Promise<Paged<ApprovalItemRow>> {
  const rounds = () =>
    trx('milestone_decisions')
      .where('workspace_id', workspaceId)
      .where('decided_at', '>=', since)
      .groupBy('milestone_id', 'round')
      .select('milestone_id', 'round', trx.raw('max(decided_at) AS last_decided_at'));
  const [count] = await trx.from(rounds().as('r')).count<{ count: string }[]>('* as count');
  const pageOf = rounds()
    .orderBy([{ column: 'last_decided_at', order: 'desc' }, { column: 'milestone_id', order: 'desc' }, { column: 'round', order: 'desc' }])
    .limit(limit)
    .offset((page - 1) * limit);
  const q = trx.with('g', pageOf).from('g').join('deal_milestones as m', 'm.id', 'g.milestone_id');
  const rows = (await itemColumns(trx, q, userId, 'g.round').orderBy([
    { column: 'g.last_decided_at', order: 'desc' },
    { column: 'g.milestone_id', order: 'desc' },
    { column: 'g.round', order: 'desc' },
  ])) as ApprovalItemRow[];
  return { rows: rows.map(toItem), total: Number(count?.count ?? 0) };
}

/** One milestone of the workspace as an item of its current round. */
export async function itemById(trx: Db, workspaceId: string, userId: string, milestoneId: string): Promise<ApprovalItemRow | undefined> {
  const q = trx('deal_milestones as m').where({ 'm.workspace_id': workspaceId, 'm.id': milestoneId });
  const row = (await itemColumns(trx, q, userId, 'm.approval_round').first()) as ApprovalItemRow | undefined;
  return row ? toItem(row) : undefined;
}

/** The deal of a milestone of the workspace (a milestone never changes deal, so it is read before the locks). */
export async function dealOfMilestone(trx: Db, workspaceId: string, milestoneId: string): Promise<string | undefined> {
  const row = await trx('deal_milestones').where({ id: milestoneId, workspace_id: workspaceId }).first<{ deal_id: string } | undefined>('deal_id');
  return row?.deal_id;
}

export interface NewDecision {
  milestone_id: string;
  deal_id: string;
  workspace_id: string;
  round: number;
  decision: Decision;
  decided_by: string;
  note: string | null;
  decided_at: Date;
}

/** The person's decision in the round, if any. */
export async function decisionOf(trx: Db, milestoneId: string, round: number, userId: string): Promise<Decision | undefined> {
  const row = await trx('milestone_decisions').where({ milestone_id: milestoneId, round, decided_by: userId }).first<{ decision: Decision } | undefined>('decision');
  return row?.decision;
}

/** Saves a decision; false when the person already has one in this round (the unique constraint milestone_decisions_once). */
export async function insertDecision(trx: Db, row: NewDecision): Promise<boolean> {
  const inserted = await trx('milestone_decisions').insert(row).onConflict(['milestone_id', 'round', 'decided_by']).ignore().returning('id');
  return inserted.length === 1;
}

/** Fills the lowest pending slot of the round with an approval; undefined when none is pending. */
export async function fillLowestSlot(trx: Db, milestoneId: string, round: number, approverId: string, note: string | null, at: Date): Promise<{ id: string; slot: number } | undefined> {
  const lowest = trx('milestone_approvals')
    .where({ milestone_id: milestoneId, round, status: 'pending' })
    .orderBy('slot')
    .limit(1)
    .forUpdate()
    .select('id');
  const [row] = await trx('milestone_approvals')
    .whereIn('id', lowest)
    .update({ status: 'approved', approver_id: approverId, note, decided_at: at })
    .returning<{ id: string; slot: number }[]>(['id', 'slot']);
  return row;
}

export async function pendingSlots(trx: Db, milestoneId: string, round: number): Promise<number> {
  const [row] = await trx('milestone_approvals').where({ milestone_id: milestoneId, round, status: 'pending' }).count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}

/** A round closed by a rejection or a revision request keeps its approvals and drops the slots nobody filled. */
export async function dropPendingSlots(trx: Db, milestoneId: string, round: number): Promise<void> {
  await trx('milestone_approvals').where({ milestone_id: milestoneId, round, status: 'pending' }).delete();
}

export interface DestinationRow {
  label: string;
  bank_name: string;
  account_number_last4: string;
}

/** The counterparty's most recently verified payout instruction that is not deleted, if any. */
export async function destinationOf(trx: Db, workspaceId: string, counterpartyId: string): Promise<DestinationRow | undefined> {
  return trx('payout_instructions')
    .where({ workspace_id: workspaceId, counterparty_id: counterpartyId, status: 'verified' })
    .whereNull('deleted_at')
    .orderBy([{ column: 'verified_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .first<DestinationRow | undefined>('label', 'bank_name', 'account_number_last4');
}
