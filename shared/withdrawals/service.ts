/**
 * Withdrawals (consumer spec 2, 3 and 4.4; decisions D1, D2, D10; decision 0008).
 *
 * Money: the amount leaves the balance when the withdrawal is written, in the same
 * transaction (ledger: user -amount, payouts in flight +amount). Paying it out moves
 * payouts in flight -amount to payouts sent +net and platform fees +fee; rejecting it
 * gives the amount back to the balance and restores a used voucher. Each posting has a
 * per-withdrawal posting key, and every move is a compare-and-set through `transition()`
 * (transition.ts) from states.ts.
 *
 * This file holds the request and the reads; the field checks (input.ts), the staff moves
 * (staff.ts) and the payout worker (payout.ts) live beside it and are re-exported here.
 * Services join the caller's transaction (the idempotent request's) or open one.
 */
import { randomUUID } from 'node:crypto';
import { clock } from '../clock.js';
import type { QueueCursor, QueuePage, StaffSearch } from '../staff/queue.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { logger } from '../logger.js';
import { post } from '../ledger/index.js';
import * as users from '../users/repo.js';
import { withdrawalErrors } from './errors.js';
import { LOYALTY_MIN_PAID_WITHDRAWALS, LOYALTY_MIN_RELEASED_ESCROWS, loadWithdrawFeeRule, loadWithdrawLimits, quoteFee } from './fees.js';
import { parseAmount, parseDestination, parseMethod } from './input.js';
import * as repo from './repo.js';
import type { WithdrawalRow } from './repo.js';
import { checkRisk, type RiskResult } from './risk.js';

export type { WithdrawalRow } from './repo.js';
export { parseAmount, parseDestination, parseMethod, type Destination } from './input.js';
export { approve, markPaid, reject, type WithdrawalStaff } from './staff.js';
export { PAYOUT_LEASE_MS, PAYOUT_SWEEP_MS, PayoutBusyError, runPayout, sweepStuckPayouts, type PayoutRun } from './payout.js';

// ---- Loyalty and configuration --------------------------------------------------------------

/** Loyal (decision 0008): enough escrows released to the user as seller, or enough paid withdrawals. */
export async function isLoyal(trx: Db, userId: string): Promise<boolean> {
  if ((await repo.releasedAsSeller(trx, userId)) >= LOYALTY_MIN_RELEASED_ESCROWS) return true;
  return (await repo.paidCount(trx, userId)) >= LOYALTY_MIN_PAID_WITHDRAWALS;
}

/** GET /v1/withdrawals/config: limits and fee from settings (or the fallbacks), the caller's vouchers. */
export async function configFor(userId: string) {
  const [limits, fee, vouchers, loyal] = await Promise.all([
    loadWithdrawLimits(db),
    loadWithdrawFeeRule(db),
    repo.availableVouchers(db, userId, clock.now()),
    isLoyal(db, userId),
  ]);
  return { limits, fee, vouchers, loyal };
}

// ---- Request --------------------------------------------------------------------------------

export interface RequestInput {
  amount?: unknown;
  method?: unknown;
  destination_details?: unknown;
  destination_ack?: boolean;
}

/**
 * POST /v1/withdrawals. Checks in this order: USER_NOT_FOUND, EMAIL_NOT_VERIFIED,
 * INVALID_AMOUNT (shape and limits), INVALID_METHOD, MISSING_DESTINATION, INVALID_AMOUNT
 * (step, unless the whole balance), INSUFFICIENT_BALANCE, FEE_EXCEEDS_AMOUNT, RISK_BLOCKED.
 * The user's row is locked for the whole transaction: two withdrawals of one balance run
 * one after the other, and the second sees what the first took.
 */
export async function requestWithdrawal(trxOrDb: Db | undefined, userId: string, input: RequestInput): Promise<WithdrawalRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const user = isUuid(userId) ? await users.findByIdForUpdate(trx, userId) : undefined;
    if (!user) throw withdrawalErrors.userNotFound();
    if (user.email_verified_at === null) throw withdrawalErrors.emailNotVerified();
    const [limits, rule] = await Promise.all([loadWithdrawLimits(trx), loadWithdrawFeeRule(trx)]);
    const amount = parseAmount(input.amount, limits);
    const method = parseMethod(input.method);
    const destination = parseDestination(method, input.destination_details);
    const wholeBalance = amount === user.balance;
    if (!wholeBalance && amount % limits.stepIdr !== 0) throw withdrawalErrors.invalidAmount(limits, `Not a multiple of ${limits.stepIdr}`);
    if (amount > user.balance) throw withdrawalErrors.insufficientBalance(user.balance);
    const now = clock.now();
    const vouchers = await repo.availableVouchers(trx, user.id, now);
    const quote = quoteFee(amount, rule, { loyal: await isLoyal(trx, user.id), vouchers: vouchers.map(repo.toOffer) });
    if (quote.fee >= amount) throw withdrawalErrors.feeExceedsAmount(quote.fee);
    const risk: RiskResult = await checkRisk(trx, { userId: user.id, amount, destinationKey: destination.key, now });
    if (risk.action === 'block') {
      logger.warn({ user_id: user.id, flags: risk.flags }, 'withdrawal refused by the risk checks');
      throw withdrawalErrors.riskBlocked(risk.flags);
    }
    const id = randomUUID();
    const w = await repo.insert(trx, {
      id,
      user_id: user.id,
      amount,
      fee_base: quote.base,
      loyalty_discount: quote.loyaltyDiscount,
      voucher_discount: quote.voucherDiscount,
      voucher_redemption_id: quote.voucherRedemptionId,
      fee_amount: quote.fee,
      net_amount: quote.net,
      method,
      destination_details: destination.details,
      destination_key: destination.key,
      destination_ack: input.destination_ack === true,
      risk_action: risk.action,
      risk_flags: risk.flags,
      created_at: now,
      updated_at: now,
    });
    if (quote.voucherRedemptionId && !(await repo.consumeVoucher(trx, quote.voucherRedemptionId, user.id, id, now))) {
      // Not reachable while the user's row is locked; kept so a voucher can never be spent twice.
      throw withdrawalErrors.voucherTaken();
    }
    await post(trx, {
      kind: 'withdrawal',
      refType: 'withdrawal',
      refId: id,
      postingKey: `withdrawal:${id}`,
      lines: [
        { account: { userId: user.id }, amount: -amount },
        { account: { system: 'payoutsInFlight' }, amount },
      ],
    });
    return w;
  });
}

// ---- Reads ----------------------------------------------------------------------------------

export async function listForUser(userId: string, filter: Omit<repo.ListFilter, 'userId' | 'oldestFirst'>) {
  return repo.list(db, { ...filter, userId });
}

export interface StaffListed {
  row: WithdrawalRow;
  user: { username: string; email: string; full_name: string } | undefined;
}

/** The console's queue (issue 46): one page of pending requests, the longest waiting first, searched and filtered, with the requester. */
export async function staffQueue(filter: StaffSearch, page: QueueCursor = {}): Promise<QueuePage<StaffListed>> {
  const got = await repo.staffQueue(db, filter, page);
  return {
    rows: got.rows.map((row) => ({ row, user: { username: row.requester_username, email: row.requester_email, full_name: row.requester_full_name } })),
    next: got.next,
  };
}

/** Staff queue: oldest first, with the requester. */
export async function listForStaff(filter: Omit<repo.ListFilter, 'userId' | 'oldestFirst'>): Promise<{ rows: StaffListed[]; total: number }> {
  const { rows, total } = await repo.list(db, { ...filter, oldestFirst: true });
  const people = await repo.requesters(db, [...new Set(rows.map((r) => r.user_id))]);
  const byId = new Map(people.map((p) => [p.id, p]));
  return { rows: rows.map((row) => ({ row, user: byId.get(row.user_id) })), total };
}
