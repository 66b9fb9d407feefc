/**
 * GET /v1/user/balance (consumer spec 2 "Balance", 4.4; decision 0008). Everything comes
 * from the ledger: `balance` is the users.balance projection, `recent_transactions` are the
 * journal lines of the user's account (newest first), `stats_30d` sums them over 30 days.
 */
import { clock } from '../clock.js';
import { db } from '../db.js';
import { AppError } from '../errors.js';
import { isUuid } from '../ids.js';
import * as withdrawalsRepo from '../withdrawals/repo.js';
import { serializeWithdrawal } from '../withdrawals/serialize.js';
import { OPEN_STATUSES } from '../withdrawals/states.js';

export const RECENT_TRANSACTIONS = 20;
export const RECENT_WITHDRAWALS = 5;
const DAY_MS = 24 * 3600_000;

/** Journal entry kinds as the user sees them; any other kind is shown as it is named. */
const TYPES: Record<string, string> = {
  escrow_release: 'release_to_seller',
  escrow_refund: 'refund',
  withdrawal: 'withdrawal',
  withdrawal_refund: 'withdrawal_refund',
};

interface LineRow {
  id: number;
  amount: number;
  kind: string;
  ref_type: string | null;
  ref_id: string | null;
  created_at: Date;
}

export async function balanceFor(userId: string) {
  const user = isUuid(userId) ? ((await db('users').select('id', 'balance').where({ id: userId }).first()) as { id: string; balance: number } | undefined) : undefined;
  if (!user) throw AppError.legacy(404, 'USER_NOT_FOUND', 'User not found');
  const account = (await db('ledger_accounts').select('id').where({ user_id: user.id }).first()) as { id: number } | undefined;
  const since = new Date(clock.nowMs() - 30 * DAY_MS);
  const [lines, stats, pending, withdrawals] = await Promise.all([
    account
      ? (db('journal_lines as l')
          .join('journal_entries as e', 'e.id', 'l.entry_id')
          .where('l.account_id', account.id)
          .select('l.id', 'l.amount', 'e.kind', 'e.ref_type', 'e.ref_id', 'e.created_at')
          .orderBy('l.id', 'desc')
          .limit(RECENT_TRANSACTIONS) as Promise<LineRow[]>)
      : Promise.resolve([] as LineRow[]),
    account
      ? (db('journal_lines as l')
          .join('journal_entries as e', 'e.id', 'l.entry_id')
          .where('l.account_id', account.id)
          .where('e.created_at', '>=', since)
          .first(
            db.raw('COALESCE(SUM(l.amount) FILTER (WHERE l.amount > 0), 0)::bigint AS credit'),
            db.raw('COALESCE(-SUM(l.amount) FILTER (WHERE l.amount < 0), 0)::bigint AS debit'),
          ) as Promise<{ credit: number; debit: number } | undefined>)
      : Promise.resolve(undefined),
    db('withdrawals').where({ user_id: user.id }).whereIn('status', OPEN_STATUSES).count<{ n: string }[]>('* as n'),
    withdrawalsRepo.recentForUser(db, user.id, RECENT_WITHDRAWALS),
  ]);
  const escrowIds = [...new Set(lines.filter((l) => l.ref_type === 'escrow' && l.ref_id).map((l) => l.ref_id!))];
  const withdrawalIds = [...new Set(lines.filter((l) => l.ref_type === 'withdrawal' && l.ref_id).map((l) => l.ref_id!))];
  const [escrows, moves] = await Promise.all([
    escrowIds.length ? (db('escrows').whereIn('id', escrowIds).select('id', 'amount', 'fee_amount') as Promise<{ id: string; amount: number; fee_amount: number | null }[]>) : Promise.resolve([]),
    withdrawalIds.length ? (db('withdrawals').whereIn('id', withdrawalIds).select('id', 'status') as Promise<{ id: string; status: string }[]>) : Promise.resolve([]),
  ]);
  const escrowById = new Map(escrows.map((e) => [e.id, e]));
  const withdrawalStatus = new Map(moves.map((w) => [w.id, w.status]));
  return {
    balance: user.balance,
    recent_transactions: lines.map((l) => {
      const escrow = l.ref_type === 'escrow' && l.ref_id ? escrowById.get(l.ref_id) : undefined;
      const isRelease = l.kind === 'escrow_release' && escrow !== undefined;
      return {
        id: String(l.id),
        type: TYPES[l.kind] ?? l.kind,
        // Signed: credits positive, debits negative (direction says the same in words).
        amount: String(l.amount),
        direction: l.amount > 0 ? 'credit' : 'debit',
        currency: 'IDR',
        // A withdrawal's debit shows the withdrawal's own status; every other posted line is final.
        status: l.kind === 'withdrawal' && l.ref_id ? (withdrawalStatus.get(l.ref_id) ?? 'completed') : 'completed',
        created_at: l.created_at.toISOString(),
        escrow_id: l.ref_type === 'escrow' ? l.ref_id : null,
        withdrawal_id: l.ref_type === 'withdrawal' ? l.ref_id : null,
        escrow_amount: isRelease ? String(escrow.amount) : null,
        platform_fee: isRelease ? String(escrow.fee_amount ?? 0) : null,
      };
    }),
    recent_withdrawals: withdrawals.map(serializeWithdrawal),
    stats_30d: {
      credit: Number(stats?.credit ?? 0),
      debit: Number(stats?.debit ?? 0),
      pending_count: Number(pending[0]?.n ?? 0),
    },
  };
}
