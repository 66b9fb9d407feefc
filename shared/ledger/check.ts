/**
 * Verifies every ledger invariant, each currency on its own (decision 0023), and the hash chains of the journal lines
 * and the staff audit (decision 0028); `npm run ledger:check` prints the result and exits non-zero on any violation.
 */
import type { Db } from '../db.js';
import { checkChains } from './chains.js';

export interface LedgerViolation {
  rule: string;
  detail: string;
}

async function rows<T>(trx: Db, sql: string, bindings: readonly string[] = []): Promise<T[]> {
  const result = await trx.raw<{ rows: T[] }>(sql, bindings);
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

  // Enterprise milestones (issues 26, 27): a live milestone's account holds its amount (less
  // what a split ruling refunded) exactly while money is held for it, what failed payouts
  // brought back once released, and nothing otherwise; sandbox milestones never touch the
  // ledger (spec 4.5 rule 4); the buyer fees held equal those of the live milestones held.
  const HELD = `('funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed')`;
  for (const r of await rows<{ id: string; status: string; amount: string; balance: string | null; is_test: boolean }>(
    trx,
    `SELECT m.id, m.status, m.amount::text, a.balance::text, d.is_test
       FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
       LEFT JOIN ledger_accounts a ON a.code = 'milestone:' || m.id::text
      WHERE (d.is_test AND a.id IS NOT NULL)
         OR (NOT d.is_test AND COALESCE(a.balance, 0) <> CASE WHEN m.status IN ${HELD} THEN m.amount - m.refunded_amount
                                                               WHEN m.status = 'released' THEN m.returned_amount ELSE 0 END)`,
  )) {
    out.push({
      rule: 'milestone-held',
      detail: `${r.is_test ? 'sandbox' : 'live'} milestone ${r.id} (${r.status}, amount ${r.amount}) has a ledger balance of ${r.balance ?? 'no account'}`,
    });
  }
  // Per currency (decision 0023): each enterprise account of a currency against the live
  // milestones and payouts of deals in that currency.
  // The accounts' codes are bound, in the order the text names them.
  const codes: string[] = [];
  const account = (base: string) => {
    codes.push(base, base);
    return `SELECT currency, balance FROM ledger_accounts WHERE code = ? OR starts_with(code, ? || ':')`;
  };
  for (const r of await rows<{ rule: string; currency: string; got: string; want: string }>(
    trx,
    `WITH live AS (SELECT m.*, d.currency FROM deal_milestones m JOIN deals d ON d.id = m.deal_id WHERE NOT d.is_test),
          pays AS (SELECT * FROM disbursements WHERE NOT is_test),
          figures AS (
       SELECT 'enterprise-fees-held' AS rule, currency, 0::numeric AS got, SUM(buyer_fee) AS want FROM live WHERE status IN ${HELD} GROUP BY currency
       UNION ALL SELECT 'enterprise-fees-held', currency, balance, 0 FROM (${account('enterprise:buyer_fees_held')}) a
       UNION ALL SELECT 'enterprise-payouts-in-flight', currency, 0, SUM(amount) FROM pays WHERE status IN ('queued', 'processing') GROUP BY currency
       UNION ALL SELECT 'enterprise-payouts-in-flight', currency, balance, 0 FROM (${account('enterprise:payouts_in_flight')}) a
       UNION ALL SELECT 'enterprise-payouts-sent', currency, 0, SUM(amount) FROM pays WHERE status = 'settled' GROUP BY currency
       UNION ALL SELECT 'enterprise-payouts-sent', currency, balance, 0 FROM (${account('enterprise:payouts_sent')}) a
       UNION ALL SELECT 'enterprise-fees', currency, 0, SUM(buyer_fee + seller_fee) FROM live WHERE status = 'released' GROUP BY currency
       UNION ALL SELECT 'enterprise-fees', currency, balance, 0 FROM (${account('platform:enterprise_fees')}) a
       UNION ALL SELECT 'enterprise-refunds', currency, 0, SUM(refunded_amount + CASE WHEN ruling = 'refund' THEN buyer_fee ELSE 0 END) FROM live GROUP BY currency
       UNION ALL SELECT 'enterprise-refunds', currency, balance, 0 FROM (${account('enterprise:refunds_sent')}) a)
     SELECT rule, currency, SUM(got)::text AS got, SUM(want)::text AS want FROM figures
      GROUP BY rule, currency HAVING SUM(got) <> SUM(want) ORDER BY rule, currency`,
    codes,
  )) {
    out.push({ rule: r.rule, detail: `${r.rule.replace(/-/g, ' ')} (${r.currency}): ledger ${r.got}, derived from milestones and payouts ${r.want}` });
  }

  // A milestone's account is in its deal's currency.
  for (const r of await rows<{ id: string; deal: string; account: string }>(
    trx,
    `SELECT m.id, d.currency AS deal, a.currency AS account
       FROM deal_milestones m JOIN deals d ON d.id = m.deal_id JOIN ledger_accounts a ON a.code = 'milestone:' || m.id::text
      WHERE a.currency <> d.currency`,
  )) {
    out.push({ rule: 'milestone-currency', detail: `milestone ${r.id} is a ${r.deal} deal's but its ledger account is in ${r.account}` });
  }

  // Every entry's lines in one currency. The exceptions are history: entries of non-IDR deals
  // made before accounts had a currency (their milestone's account is in the deal's currency,
  // the shared accounts were IDR) and the entries that moved that history onto per-currency
  // accounts (migration 20261209300000), all before its first reclassifying entry. The
  // database refuses any other since.
  for (const r of await rows<{ entry_id: number; currencies: string }>(
    trx,
    `SELECT l.entry_id, string_agg(DISTINCT a.currency, ', ') AS currencies
       FROM journal_lines l JOIN ledger_accounts a ON a.id = l.account_id JOIN journal_entries e ON e.id = l.entry_id
      WHERE e.kind <> 'ledger.currency_reclassified'
        AND e.id > COALESCE((SELECT min(id) FROM journal_entries WHERE kind = 'ledger.currency_reclassified'), 0)
      GROUP BY l.entry_id HAVING count(DISTINCT a.currency) > 1`,
  )) {
    out.push({ rule: 'entry-one-currency', detail: `journal entry ${r.entry_id} has lines in ${r.currencies}` });
  }

  // The books balance in each currency on its own: amounts of two currencies are never added.
  for (const r of await rows<{ currency: string; total: string }>(
    trx,
    `SELECT currency, SUM(balance)::text AS total FROM ledger_accounts GROUP BY currency HAVING SUM(balance) <> 0 ORDER BY currency`,
  )) {
    out.push({ rule: 'books-balance', detail: `the ${r.currency} account balances sum to ${r.total}, not 0` });
  }

  // Tamper evidence (decision 0028): every journal line and staff audit row in its hash chain, and the recorded heads.
  out.push(...(await checkChains(trx)));
  return out;
}
