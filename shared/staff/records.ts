/**
 * The operator console's record pages (issue 46): everything staff need about one account,
 * escrow or payment-service order on one page, so each staff move is made where its facts
 * are. Reads only (the moves go through their own services, which write the staff audit);
 * SQL in ./records-repo.ts. An unknown or malformed id is 404 NOT_FOUND.
 */
import { db } from '../db.js';
import { errors } from '../errors.js';
import { workspaceById, type WorkspaceRow } from '../enterprise/repo.js';
import { isUuid } from '../ids.js';
import { staffPaymentsOf, type StaffPaymentRow } from '../payments/repo.js';
import * as withdrawalsRepo from '../withdrawals/repo.js';
import type { WithdrawalRow } from '../withdrawals/repo.js';

export type { StaffPaymentRow } from '../payments/repo.js';
import * as repo from './records-repo.js';

export type {
  AuditLine, CounterpartyLine, DealLine, DisputeRecordRow, EscrowLine, EscrowRecordRow, EventLine, InstructionLine, KeyLine, KybVersionLine, MemberLine, OrderLine,
  OrderRecordRow, SessionLine, StaffUserRow, WorkspaceEventLine,
} from './records-repo.js';

/** How many of each list a record page shows (the newest). */
export const RECORD_LIST = 20;

const notFound = (what: string) => errors.notFound({ en: `No ${what} with this id`, id: `Tidak ada ${what} dengan id ini` });

export interface UserRecord {
  user: repo.StaffUserRow;
  escrows: repo.EscrowLine[];
  orders: repo.OrderLine[];
  payments: StaffPaymentRow[];
  withdrawals: WithdrawalRow[];
  sessions: repo.SessionLine[];
  /** Staff actions on the account and on the escrows (and their disputes), orders, payments and withdrawals listed. */
  audit: repo.AuditLine[];
  /** For a staff account: the moves it made. */
  moves: repo.AuditLine[];
}

/** One account as staff see it: balance, escrows, orders, payments, withdrawals, sessions and the audit around it. */
export async function userRecord(userId: string): Promise<UserRecord> {
  const user = isUuid(userId) ? await repo.user(db, userId) : undefined;
  if (!user) throw notFound('account');
  const escrows = await repo.escrowsOf(db, user.id, RECORD_LIST);
  const orders = await repo.ordersOf(db, user.id, RECORD_LIST);
  const payments = await staffPaymentsOf(db, { buyer_id: user.id }, RECORD_LIST);
  const withdrawals = await withdrawalsRepo.recentForUser(db, user.id, RECORD_LIST);
  const sessions = await repo.sessionsOf(db, user.id, RECORD_LIST);
  const escrowIds = escrows.map((e) => e.id);
  const targets = [user.id, ...escrowIds, ...(await repo.disputeIdsOf(db, escrowIds)), ...orders.map((o) => o.id), ...payments.map((p) => p.id), ...withdrawals.map((w) => w.id)];
  const audit = await repo.auditOn(db, targets, RECORD_LIST * 2);
  const moves = user.role === 'admin' ? await repo.auditBy(db, user.id, RECORD_LIST) : [];
  return { user, escrows, orders, payments, withdrawals, sessions, audit, moves };
}

export interface EscrowRecord {
  escrow: repo.EscrowRecordRow;
  disputes: repo.DisputeRecordRow[];
  payments: StaffPaymentRow[];
  events: repo.EventLine[];
  audit: repo.AuditLine[];
}

/** One escrow as staff see it: both parties, its payments, disputes, events and staff actions. */
export async function escrowRecord(escrowId: string): Promise<EscrowRecord> {
  const escrow = isUuid(escrowId) ? await repo.escrow(db, escrowId) : undefined;
  if (!escrow) throw notFound('escrow');
  const disputes = await repo.disputesOf(db, escrow.id);
  const payments = await staffPaymentsOf(db, { escrow_id: escrow.id }, RECORD_LIST);
  const events = await repo.eventsOf(db, 'escrow_events', { escrow_id: escrow.id }, RECORD_LIST * 2);
  const audit = await repo.auditOn(db, [escrow.id, ...disputes.map((d) => d.id), ...payments.map((p) => p.id)], RECORD_LIST);
  return { escrow, disputes, payments, events, audit };
}

export interface OrderRecord {
  order: repo.OrderRecordRow;
  payments: StaffPaymentRow[];
  events: repo.EventLine[];
  audit: repo.AuditLine[];
}

/** One payment-service order as staff see it (never its credentials): its buyer, payments, events and staff actions. */
export async function orderRecord(orderId: string): Promise<OrderRecord> {
  const order = isUuid(orderId) ? await repo.order(db, orderId) : undefined;
  if (!order) throw notFound('order');
  const payments = await staffPaymentsOf(db, { order_id: order.id }, RECORD_LIST);
  const events = await repo.eventsOf(db, 'service_order_events', { order_id: order.id }, RECORD_LIST * 2);
  const audit = await repo.auditOn(db, [order.id, ...payments.map((p) => p.id)], RECORD_LIST);
  return { order, payments, events, audit };
}

export interface WorkspaceRecord {
  workspace: WorkspaceRow;
  members: repo.MemberLine[];
  kybVersions: repo.KybVersionLine[];
  counterparties: repo.CounterpartyLine[];
  instructions: repo.InstructionLine[];
  keys: repo.KeyLine[];
  deals: repo.DealLine[];
  events: repo.WorkspaceEventLine[];
  /** Staff actions on the workspace, its KYB versions, counterparties, instructions and the deals listed. */
  audit: repo.AuditLine[];
}

/** One workspace as staff see it: members, KYB versions, counterparties, payout instructions, API keys, deals, its feed and staff actions. */
export async function workspaceRecord(workspaceId: string): Promise<WorkspaceRecord> {
  const workspace = isUuid(workspaceId) ? await workspaceById(db, workspaceId) : undefined;
  if (!workspace) throw notFound('workspace');
  const id = workspace.id;
  const members = await repo.membersOf(db, id, RECORD_LIST * 5);
  const kybVersions = await repo.kybVersionsOf(db, id);
  const counterparties = await repo.counterpartiesOf(db, id, RECORD_LIST * 2);
  const instructions = await repo.instructionsOf(db, id, RECORD_LIST * 2);
  const keys = await repo.keysOf(db, id, RECORD_LIST);
  const deals = await repo.dealsOf(db, id, RECORD_LIST);
  const events = await repo.workspaceEventsOf(db, id, RECORD_LIST);
  const targets = [id, ...kybVersions.map((k) => k.id), ...counterparties.map((c) => c.id), ...instructions.map((i) => i.id), ...deals.map((d) => d.id)];
  const audit = await repo.auditOn(db, targets, RECORD_LIST * 2);
  return { workspace, members, kybVersions, counterparties, instructions, keys, deals, events, audit };
}
