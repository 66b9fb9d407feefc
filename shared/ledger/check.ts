/**
 * Verifies every ledger invariant; `npm run ledger:check` prints the result and exits
 * non-zero on any violation.
 */
import type { Db } from '../db.js';

export interface LedgerViolation {
  rule: string;
  detail: string;
}

async function rows<T>(trx: Db, sql: string): Promise<T[]> {
  const result = await trx.raw<{ rows: T[] }>(sql);
  return result.rows;
}

export async function checkLedger(trx: Db): Promise<LedgerViolation[]> {
  const out: LedgerViolation[] = [];

  for (const r of await rows<{ entry_id: number; total: string; n: number }>(
    trx,
    `SELECT e.id AS entry_id, COALESCE(SUM(l.amount), 0)::text AS total, COUNT(l.id)::int AS n
       FROM journal_entries e LEFT JOIN journal_lines l ON l.entry_id = e.id
      GROUP BY e.id HAVING COALESCE(SUM(l.amount), 0) <> 0 OR COUNT(l.id) < 2`,
  )) {
    out.push({ rule: 'entry-balances', detail: `journal entry ${r.entry_id} has ${r.n} line(s) summing to ${r.total}` });
  }

  for (const r of await rows<{ code: string; balance: number; lines: string }>(
    trx,
    `SELECT a.code, a.balance, COALESCE(SUM(l.amount), 0)::text AS lines
       FROM ledger_accounts a LEFT JOIN journal_lines l ON l.account_id = a.id
      GROUP BY a.id HAVING a.balance <> COALESCE(SUM(l.amount), 0)`,
  )) {
    out.push({ rule: 'account-projection', detail: `account ${r.code} balance ${r.balance} but its lines sum to ${r.lines}` });
  }

  for (const r of await rows<{ code: string; balance: number }>(
    trx,
    `SELECT code, balance FROM ledger_accounts WHERE balance < 0 AND NOT allow_negative`,
  )) {
    out.push({ rule: 'non-negative', detail: `account ${r.code} is negative (${r.balance})` });
  }

  for (const r of await rows<{ id: string; user_balance: number; account_balance: number }>(
    trx,
    `SELECT u.id, u.balance AS user_balance, COALESCE(a.balance, 0) AS account_balance
       FROM users u LEFT JOIN ledger_accounts a ON a.user_id = u.id
      WHERE u.balance <> COALESCE(a.balance, 0)`,
  )) {
    out.push({
      rule: 'user-projection',
      detail: `user ${r.id} balance ${r.user_balance} but ledger account holds ${r.account_balance}`,
    });
  }

  // Every user has an account from sign-up on (trigger users_open_ledger_account).
  for (const r of await rows<{ id: string }>(
    trx,
    `SELECT u.id FROM users u WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.user_id = u.id)`,
  )) {
    out.push({ rule: 'user-account', detail: `user ${r.id} has no ledger account` });
  }

  const [total] = await rows<{ total: string }>(trx, `SELECT COALESCE(SUM(balance), 0)::text AS total FROM ledger_accounts`);
  if (total && total.total !== '0') {
    out.push({ rule: 'books-balance', detail: `all account balances sum to ${total.total}, not 0` });
  }
  return out;
}
