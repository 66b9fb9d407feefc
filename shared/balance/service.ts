/**
 * GET /v1/user/balance (consumer spec 2 "Balance", 4.4; decision 0008). Everything comes
 * from the ledger: `balance` is the users.balance projection, `recent_transactions` are the
 * journal lines of the user's account (newest first), `stats_30d` sums them over 30 days.
 */
import { clock } from '../clock.js';
import { db } from '../db.js';
import { isUuid } from '../ids.js';
import * as withdrawalsRepo from '../withdrawals/repo.js';
import { balanceErrors } from './errors.js';
import * as repo from './repo.js';
import { serializeBalance } from './serialize.js';

export const RECENT_TRANSACTIONS = 20;
export const RECENT_WITHDRAWALS = 5;
const DAY_MS = 24 * 3600_000;

export async function balanceFor(userId: string) {
  const user = isUuid(userId) ? await repo.userBalance(db, userId) : undefined;
  if (!user) throw balanceErrors.userNotFound();
  const account = await repo.accountId(db, user.id);
  const since = new Date(clock.nowMs() - 30 * DAY_MS);
  const [lines, totals, pendingCount, withdrawals] = await Promise.all([
    account !== undefined ? repo.recentLines(db, account, RECENT_TRANSACTIONS) : Promise.resolve([]),
    account !== undefined ? repo.totalsSince(db, account, since) : Promise.resolve(undefined),
    repo.openWithdrawals(db, user.id),
    withdrawalsRepo.recentForUser(db, user.id, RECENT_WITHDRAWALS),
  ]);
  const escrowIds = [...new Set(lines.filter((l) => l.ref_type === 'escrow' && l.ref_id).map((l) => l.ref_id!))];
  const withdrawalIds = [...new Set(lines.filter((l) => l.ref_type === 'withdrawal' && l.ref_id).map((l) => l.ref_id!))];
  const [escrows, moves] = await Promise.all([repo.escrowAmounts(db, escrowIds), repo.withdrawalStatuses(db, withdrawalIds)]);
  return serializeBalance({
    balance: user.balance,
    lines,
    escrowById: new Map(escrows.map((e) => [e.id, e])),
    withdrawalStatus: new Map(moves.map((w) => [w.id, w.status])),
    withdrawals,
    totals,
    pendingCount,
  });
}
