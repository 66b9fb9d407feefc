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
  const [fees] = await rows<{ held: string; expected: string }>(
    trx,
    `SELECT COALESCE((SELECT balance FROM ledger_accounts WHERE code = 'enterprise:buyer_fees_held'), 0)::text AS held,
            COALESCE((SELECT SUM(m.buyer_fee) FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
                       WHERE NOT d.is_test AND m.status IN ${HELD}), 0)::text AS expected`,
  );
  if (fees && fees.held !== fees.expected) {
    out.push({ rule: 'enterprise-fees-held', detail: `buyer fees held ${fees.held} but live held milestones carry ${fees.expected}` });
  }

  // Enterprise payouts and fees (issue 27): in flight = open live payouts, sent = settled
  // ones, fees = the platform fee of every live milestone released, refunds = what rulings returned (a full refund returns the buyer fee too).
  const [ent] = await rows<Record<'in_flight' | 'in_flight_expected' | 'sent' | 'sent_expected' | 'fees' | 'fees_expected' | 'refunds' | 'refunds_expected', string>>(
    trx,
    `SELECT COALESCE((SELECT balance FROM ledger_accounts WHERE code = 'enterprise:payouts_in_flight'), 0)::text AS in_flight,
            COALESCE((SELECT SUM(amount) FROM disbursements WHERE NOT is_test AND status IN ('queued', 'processing')), 0)::text AS in_flight_expected,
            COALESCE((SELECT balance FROM ledger_accounts WHERE code = 'enterprise:payouts_sent'), 0)::text AS sent,
            COALESCE((SELECT SUM(amount) FROM disbursements WHERE NOT is_test AND status = 'settled'), 0)::text AS sent_expected,
            COALESCE((SELECT balance FROM ledger_accounts WHERE code = 'platform:enterprise_fees'), 0)::text AS fees,
            COALESCE((SELECT SUM(m.buyer_fee + m.seller_fee) FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
                       WHERE NOT d.is_test AND m.status = 'released'), 0)::text AS fees_expected,
            COALESCE((SELECT balance FROM ledger_accounts WHERE code = 'enterprise:refunds_sent'), 0)::text AS refunds,
            COALESCE((SELECT SUM(m.refunded_amount + CASE WHEN m.ruling = 'refund' THEN m.buyer_fee ELSE 0 END)
                        FROM deal_milestones m JOIN deals d ON d.id = m.deal_id WHERE NOT d.is_test), 0)::text AS refunds_expected`,
  );
  if (ent) {
    for (const [name, got, want] of [
      ['enterprise-payouts-in-flight', ent.in_flight, ent.in_flight_expected],
      ['enterprise-payouts-sent', ent.sent, ent.sent_expected],
      ['enterprise-fees', ent.fees, ent.fees_expected],
      ['enterprise-refunds', ent.refunds, ent.refunds_expected],
    ] as const) {
      if (got !== want) out.push({ rule: name, detail: `${name.replace(/-/g, ' ')}: ledger ${got}, derived from milestones and payouts ${want}` });
    }
  }

  const [total] = await rows<{ total: string }>(trx, `SELECT COALESCE(SUM(balance), 0)::text AS total FROM ledger_accounts`);
  if (total && total.total !== '0') {
    out.push({ rule: 'books-balance', detail: `all account balances sum to ${total.total}, not 0` });
  }
  return out;
}
