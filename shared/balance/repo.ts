/** SQL of the balance answer: the users.balance projection and the user's ledger lines. Callers pass the connection. */
import type { Db } from '../db.js';
import { OPEN_STATUSES } from '../withdrawals/states.js';

/** One journal line of the user's account, with its entry. */
export interface LineRow {
  id: number;
  amount: number;
  kind: string;
  ref_type: string | null;
  ref_id: string | null;
  created_at: Date;
}

export async function userBalance(trx: Db, userId: string): Promise<{ id: string; balance: number } | undefined> {
  return (await trx('users').select('id', 'balance').where({ id: userId }).first()) as { id: string; balance: number } | undefined;
}

export async function accountId(trx: Db, userId: string): Promise<number | undefined> {
  const row = (await trx('ledger_accounts').select('id').where({ user_id: userId }).first()) as { id: number } | undefined;
  return row?.id;
}

/** The account's latest lines, newest first. */
export async function recentLines(trx: Db, accountId: number, limit: number): Promise<LineRow[]> {
  return (await trx('journal_lines as l')
    .join('journal_entries as e', 'e.id', 'l.entry_id')
    .where('l.account_id', accountId)
    .select('l.id', 'l.amount', 'e.kind', 'e.ref_type', 'e.ref_id', 'e.created_at')
    .orderBy('l.id', 'desc')
    .limit(limit)) as LineRow[];
}

/** What came in and went out of the account since `since`. */
export async function totalsSince(trx: Db, accountId: number, since: Date): Promise<{ credit: number; debit: number } | undefined> {
  return trx('journal_lines as l')
    .join('journal_entries as e', 'e.id', 'l.entry_id')
    .where('l.account_id', accountId)
    .where('e.created_at', '>=', since)
    .first<{ credit: number; debit: number } | undefined>(
      trx.raw('COALESCE(SUM(l.amount) FILTER (WHERE l.amount > 0), 0)::bigint AS credit'),
      trx.raw('COALESCE(-SUM(l.amount) FILTER (WHERE l.amount < 0), 0)::bigint AS debit'),
    );
}

/** Withdrawals whose amount is still in payouts in flight. */
export async function openWithdrawals(trx: Db, userId: string): Promise<number> {
  const [row] = await trx('withdrawals').where({ user_id: userId }).whereIn('status', OPEN_STATUSES).count<{ n: string }[]>('* as n');
  return Number(row?.n ?? 0);
}

export async function escrowAmounts(trx: Db, ids: readonly string[]): Promise<{ id: string; amount: number; fee_amount: number | null }[]> {
  if (ids.length === 0) return [];
  return trx('escrows').whereIn('id', [...ids]).select<{ id: string; amount: number; fee_amount: number | null }[]>('id', 'amount', 'fee_amount');
}

export async function withdrawalStatuses(trx: Db, ids: readonly string[]): Promise<{ id: string; status: string }[]> {
  if (ids.length === 0) return [];
  return trx('withdrawals').whereIn('id', [...ids]).select<{ id: string; status: string }[]>('id', 'status');
}
