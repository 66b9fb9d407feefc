/**
 * SQL of the console's record pages (issue 46; ./records.ts): one account, one escrow, one
 * payment-service order, one workspace, each with what staff need beside it. Reads only;
 * every list is the newest `limit` rows, so a page stays one screen however old the record.
 */
import type { Db } from '../db.js';
import type { EscrowRow } from '../escrows/repo.js';
import type { OrderRow } from '../orders/repo.js';
import type { UserRow } from '../users/repo.js';

/** What a record page shows of an account (never its password hash). */
export type StaffUserRow = Omit<UserRow, 'password_hash'>;

export async function user(trx: Db, id: string): Promise<StaffUserRow | undefined> {
  const row = (await trx('users').where({ id }).first()) as UserRow | undefined;
  if (!row) return undefined;
  const { password_hash: _hidden, ...shown } = row;
  return shown;
}

export type EscrowLine = Pick<EscrowRow, 'id' | 'item_name' | 'amount' | 'status' | 'buyer_id' | 'seller_id' | 'created_at'>;

/** The escrows the user buys or sells in, newest first. */
export async function escrowsOf(trx: Db, userId: string, limit: number): Promise<EscrowLine[]> {
  return trx('escrows')
    .where((w) => void w.where('buyer_id', userId).orWhere('seller_id', userId))
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit)
    .select<EscrowLine[]>('id', 'item_name', 'amount', 'status', 'buyer_id', 'seller_id', 'created_at');
}

export type OrderLine = Pick<OrderRow, 'id' | 'target_label' | 'target_url' | 'total' | 'status' | 'created_at'>;

/** The payment-service orders the user placed, newest first. */
export async function ordersOf(trx: Db, userId: string, limit: number): Promise<OrderLine[]> {
  return trx('service_orders')
    .where('buyer_id', userId)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit)
    .select<OrderLine[]>('id', 'target_label', 'target_url', 'total', 'status', 'created_at');
}

export interface SessionLine {
  id: string;
  ip: string | null;
  user_agent: string | null;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

/** The user's sign-in sessions, newest first (never their tokens). */
export async function sessionsOf(trx: Db, userId: string, limit: number): Promise<SessionLine[]> {
  return trx('sessions')
    .where('user_id', userId)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit)
    .select<SessionLine[]>('id', 'ip', 'user_agent', 'created_at', 'expires_at', 'revoked_at');
}

export interface AuditLine {
  id: number;
  action: string;
  target_type: string;
  target_id: string;
  note: string | null;
  created_at: Date;
  actor_id: string;
  actor_name: string;
}

/** Staff actions on any of `targetIds`, newest first, with who took them. */
export async function auditOn(trx: Db, targetIds: readonly string[], limit: number): Promise<AuditLine[]> {
  if (targetIds.length === 0) return [];
  return trx('staff_audit as a')
    .join('users as u', 'u.id', 'a.actor_id')
    .whereIn('a.target_id', [...targetIds])
    .orderBy([{ column: 'a.created_at', order: 'desc' }, { column: 'a.id', order: 'desc' }])
    .limit(limit)
    .select<AuditLine[]>('a.id', 'a.action', 'a.target_type', 'a.target_id', 'a.note', 'a.created_at', 'a.actor_id', 'u.full_name as actor_name');
}

/** The moves a staff member made, newest first. */
export async function auditBy(trx: Db, actorId: string, limit: number): Promise<AuditLine[]> {
  return trx('staff_audit as a')
    .join('users as u', 'u.id', 'a.actor_id')
    .where('a.actor_id', actorId)
    .orderBy([{ column: 'a.created_at', order: 'desc' }, { column: 'a.id', order: 'desc' }])
    .limit(limit)
    .select<AuditLine[]>('a.id', 'a.action', 'a.target_type', 'a.target_id', 'a.note', 'a.created_at', 'a.actor_id', 'u.full_name as actor_name');
}

/** Ids of the disputes of these escrows (their staff actions belong to the escrow's story). */
export async function disputeIdsOf(trx: Db, escrowIds: readonly string[]): Promise<string[]> {
  if (escrowIds.length === 0) return [];
  return (await trx('disputes').whereIn('escrow_id', [...escrowIds]).pluck('id')) as string[];
}

/** An escrow with both parties' names and e-mails. */
export type EscrowRecordRow = Pick<
  EscrowRow,
  | 'id' | 'item_name' | 'description' | 'amount' | 'fee_amount' | 'category' | 'status' | 'source' | 'partner_ref' | 'courier' | 'tracking_number' | 'expires_at'
  | 'auto_release_at' | 'paid_at' | 'sent_at' | 'received_at' | 'released_at' | 'disputed_at' | 'refunded_at' | 'cancelled_at' | 'cancel_reason' | 'created_at'
  | 'buyer_id' | 'seller_id'
> & { buyer_name: string; buyer_email: string; seller_name: string; seller_email: string };

export async function escrow(trx: Db, id: string): Promise<EscrowRecordRow | undefined> {
  return trx('escrows as e')
    .join('users as b', 'b.id', 'e.buyer_id')
    .join('users as s', 's.id', 'e.seller_id')
    .where('e.id', id)
    .first<EscrowRecordRow | undefined>(
      'e.id', 'e.item_name', 'e.description', 'e.amount', 'e.fee_amount', 'e.category', 'e.status', 'e.source', 'e.partner_ref', 'e.courier', 'e.tracking_number',
      'e.expires_at', 'e.auto_release_at', 'e.paid_at', 'e.sent_at', 'e.received_at', 'e.released_at', 'e.disputed_at', 'e.refunded_at', 'e.cancelled_at',
      'e.cancel_reason', 'e.created_at',
      'b.id as buyer_id', 'b.full_name as buyer_name', 'b.email as buyer_email', 's.id as seller_id', 's.full_name as seller_name', 's.email as seller_email',
    );
}

export interface DisputeRecordRow {
  id: string;
  status: string;
  outcome: string | null;
  reason_category: string;
  description: string;
  resolution_note: string | null;
  created_at: Date;
  resolved_at: Date | null;
}

/** The escrow's disputes, newest first. */
export async function disputesOf(trx: Db, escrowId: string): Promise<DisputeRecordRow[]> {
  return trx('disputes')
    .where('escrow_id', escrowId)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .select<DisputeRecordRow[]>('id', 'status', 'outcome', 'reason_category', 'description', 'resolution_note', 'created_at', 'resolved_at');
}

export interface EventLine {
  id: number;
  event: string;
  actor_role: string | null;
  created_at: Date;
}

/** An escrow's or an order's events, newest first. */
export async function eventsOf(trx: Db, table: 'escrow_events' | 'service_order_events', key: { escrow_id: string } | { order_id: string }, limit: number): Promise<EventLine[]> {
  return trx(table)
    .where(key)
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit)
    .select<EventLine[]>('id', 'event', 'actor_role', 'created_at');
}

/** A payment-service order with its buyer's name and e-mail, never its sealed credentials. */
export type OrderRecordRow = Pick<
  OrderRow,
  | 'id' | 'buyer_id' | 'target_url' | 'target_label' | 'notes' | 'item_price' | 'service_fee' | 'total' | 'status' | 'paid_via' | 'sla_deadline_at' | 'paid_at'
  | 'delivered_at' | 'delivery_note' | 'refunded_at' | 'refund_reason' | 'auto_refunded' | 'cancelled_at' | 'created_at'
> & { buyer_name: string; buyer_email: string };

/** A payment-service order (never its sealed credentials). */
export async function order(trx: Db, id: string): Promise<OrderRecordRow | undefined> {
  return trx('service_orders as o')
    .join('users as u', 'u.id', 'o.buyer_id')
    .where('o.id', id)
    .first<OrderRecordRow | undefined>(
      'o.id', 'o.buyer_id', 'u.full_name as buyer_name', 'u.email as buyer_email', 'o.target_url', 'o.target_label', 'o.notes', 'o.item_price', 'o.service_fee', 'o.total',
      'o.status', 'o.paid_via', 'o.sla_deadline_at', 'o.paid_at', 'o.delivered_at', 'o.delivery_note', 'o.refunded_at', 'o.refund_reason', 'o.auto_refunded',
      'o.cancelled_at', 'o.created_at',
    );
}

// ---- A workspace ---------------------------------------------------------------------------

export interface MemberLine {
  id: string;
  user_id: string;
  full_name: string;
  email: string;
  role: string;
  status: string;
  joined_at: Date | null;
  removed_at: Date | null;
}

/** The workspace's members (removed ones too), owners first, then by joining. */
export async function membersOf(trx: Db, workspaceId: string, limit: number): Promise<MemberLine[]> {
  return trx('workspace_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.workspace_id', workspaceId)
    .orderByRaw("m.removed_at IS NOT NULL, (m.role = 'owner') DESC, m.created_at, m.id")
    .limit(limit)
    .select<MemberLine[]>('m.id', 'm.user_id', 'u.full_name', 'u.email', 'm.role', 'm.status', 'm.joined_at', 'm.removed_at');
}

export interface KybVersionLine {
  id: string;
  version: number;
  status: string;
  legal_name: string | null;
  submitted_at: Date | null;
  decided_at: Date | null;
  risk_tier_assigned: string | null;
  decision_reason: string | null;
}

/** Every version of the workspace's own KYB application, newest first. */
export async function kybVersionsOf(trx: Db, workspaceId: string): Promise<KybVersionLine[]> {
  return trx('kyb_applications')
    .where({ workspace_id: workspaceId })
    .whereNull('counterparty_id')
    .orderBy('version', 'desc')
    .select<KybVersionLine[]>('id', 'version', 'status', 'legal_name', 'submitted_at', 'decided_at', 'risk_tier_assigned', 'decision_reason');
}

export interface CounterpartyLine {
  id: string;
  name: string;
  email: string | null;
  relationship: string;
  kyb_status: string;
  created_at: Date;
}

/** The workspace's counterparties, newest first. */
export async function counterpartiesOf(trx: Db, workspaceId: string, limit: number): Promise<CounterpartyLine[]> {
  return trx('counterparties')
    .where({ workspace_id: workspaceId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit)
    .select<CounterpartyLine[]>('id', 'name', 'email', 'relationship', 'kyb_status', 'created_at');
}

export interface InstructionLine {
  id: string;
  counterparty_name: string;
  label: string;
  bank_name: string;
  account_holder: string;
  account_number_last4: string;
  status: string;
  destination_version: number;
  pending_since: Date | null;
  verified_at: Date | null;
  decline_reason: string | null;
}

/** The workspace's payout instructions not deleted (never the sealed number), newest first. */
export async function instructionsOf(trx: Db, workspaceId: string, limit: number): Promise<InstructionLine[]> {
  return trx('payout_instructions as p')
    .join('counterparties as c', 'c.id', 'p.counterparty_id')
    .where('p.workspace_id', workspaceId)
    .whereNull('p.deleted_at')
    .orderBy([{ column: 'p.created_at', order: 'desc' }, { column: 'p.id', order: 'desc' }])
    .limit(limit)
    .select<InstructionLine[]>(
      'p.id', 'c.name as counterparty_name', 'p.label', 'p.bank_name', 'p.account_holder', 'p.account_number_last4', 'p.status', 'p.destination_version',
      'p.pending_since', 'p.verified_at', 'p.decline_reason',
    );
}

export interface KeyLine {
  id: string;
  label: string;
  scopes: string[];
  key_preview: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** The workspace's API keys (revoked ones too; never their hashes), newest first. */
export async function keysOf(trx: Db, workspaceId: string, limit: number): Promise<KeyLine[]> {
  return trx('workspace_api_keys')
    .where({ workspace_id: workspaceId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit)
    .select<KeyLine[]>('id', 'label', 'scopes', 'key_preview', 'created_at', 'last_used_at', 'revoked_at');
}

export interface DealLine {
  id: string;
  reference: string;
  title: string;
  currency: string;
  status: string;
  is_test: boolean;
  created_at: Date;
}

/** The workspace's newest deals with their status (the `deal_statuses` rollup). */
export async function dealsOf(trx: Db, workspaceId: string, limit: number): Promise<DealLine[]> {
  return trx('deals as d')
    .join('deal_statuses as s', 's.deal_id', 'd.id')
    .where('d.workspace_id', workspaceId)
    .orderBy([{ column: 'd.created_at', order: 'desc' }, { column: 'd.id', order: 'desc' }])
    .limit(limit)
    .select<DealLine[]>('d.id', 'd.reference', 'd.title', 'd.currency', 's.status', 'd.is_test', 'd.created_at');
}

export interface WorkspaceEventLine {
  seq: number;
  event: string;
  summary: string;
  actor_name: string | null;
  deal_id: string | null;
  deal_reference: string | null;
  created_at: Date;
}

/** The workspace's feed, newest first. */
export async function workspaceEventsOf(trx: Db, workspaceId: string, limit: number): Promise<WorkspaceEventLine[]> {
  return trx('workspace_events')
    .where({ workspace_id: workspaceId })
    .orderBy('seq', 'desc')
    .limit(limit)
    .select<WorkspaceEventLine[]>('seq', 'event', 'summary', 'actor_name', 'deal_id', 'deal_reference', 'created_at');
}
