/**
 * Reads of the operator console that no other service offers (the moves themselves go
 * through their own services); their SQL is in ./repo.ts.
 */
import { NO_SEARCH, type QueueCursor, type QueuePage, type StaffSearch } from '../staff/queue.js';
import { db } from '../db.js';
import * as disputeRepo from '../disputes/repo.js';
import type { DisputeView } from '../disputes/repo.js';
import { queueCount } from '../kyb/review.js';
import { awaitingCount, disputedCount } from '../deals/repo.js';
import * as payoutReads from '../payouts/console-repo.js';
import { attentionQueue, listForStaff, type AttentionReason, type StaffPaymentRow } from '../payments/repo.js';
import * as repo from './repo.js';

export type { ListedOrder, ListedUser, OrderToMove } from './repo.js';
export { ORDERS_TO_MOVE } from './repo.js';
export { ATTENTION_REASONS } from '../payments/repo.js';
export type { PendingInstruction } from '../payouts/console-repo.js';

/**
 * Payments waiting for staff, oldest first: claimed manual transfers (escrows and
 * payment-service orders) to confirm or reject, claims that came late and gateway payments
 * whose amount did not match, to credit or mark returned (decision 0009).
 */
export async function attentionPayments(page: QueueCursor = {}, by: StaffSearch = NO_SEARCH, reason: AttentionReason | null = null): Promise<QueuePage<StaffPaymentRow>> {
  return attentionQueue(db, page, by, reason);
}

/** One page of the disputes waiting for a ruling (open or on hold, as `filter` says), the longest waiting first (issue 46: paged, searched, filtered). */
export async function disputesToResolve(filter: disputeRepo.StaffQueueFilter, page: { cursor?: string | null } = {}): Promise<QueuePage<DisputeView>> {
  return disputeRepo.staffQueue(db, filter, page);
}

/** One page of the accounts, newest first: those whose id is `by.q` or whose e-mail, username or name contains it. */
export async function findUsers(page: QueueCursor = {}, by: StaffSearch = NO_SEARCH): Promise<QueuePage<repo.ListedUser>> {
  return repo.findUsers(db, page, by);
}

/** One page of the payment-service orders waiting for the operator (claimed transfer, paid, processing), oldest first. */
export async function ordersToMove(page: QueueCursor = {}, by: StaffSearch = NO_SEARCH, statuses: readonly repo.OrderToMove[] = repo.ORDERS_TO_MOVE): Promise<QueuePage<repo.ListedOrder>> {
  return repo.ordersToMove(db, page, by, statuses);
}

/** One page of the payout instructions of any workspace awaiting staff verification: live workspaces first, oldest pending first (never the account number; review R4). */
export async function instructionsToVerify(page: QueueCursor = {}, by: StaffSearch = NO_SEARCH): Promise<QueuePage<payoutReads.PendingInstruction>> {
  return payoutReads.pendingForStaff(db, page, by);
}

export interface ConsoleCounts {
  disputes: number;
  payments: number;
  withdrawals: number;
  orders: number;
  /** KYB applications waiting for review. */
  kyb: number;
  /** Live deal milestones awaiting funding confirmation. */
  funding: number;
  /** Payout instructions awaiting verification. */
  instructions: number;
  /** Enterprise payouts queued or processing (to settle or fail by hand). */
  payouts: number;
  /** Disputed deal milestones waiting for a ruling. */
  rulings: number;
}

export async function consoleCounts(): Promise<ConsoleCounts> {
  const waiting = await repo.waitingCounts(db);
  const payments = (await listForStaff(db, { attention: true, page: 1, limit: 1 })).total;
  const kyb = await queueCount(db);
  const funding = await awaitingCount(db);
  const instructions = await payoutReads.pendingCount(db);
  const payouts = await payoutReads.openCount(db);
  const rulings = await disputedCount(db);
  return { disputes: waiting.disputes, payments: Number(payments), withdrawals: waiting.withdrawals, orders: waiting.orders, kyb, funding, instructions, payouts, rulings };
}
