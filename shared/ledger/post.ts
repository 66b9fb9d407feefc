/**
 * Double-entry postings (ARCHITECTURE rule 2). A posting is one journal entry whose lines
 * sum to zero; the users rows and then the accounts it touches are locked in id order.
 * Inserting the lines moves the balances: a database trigger applies them to
 * ledger_accounts.balance and the users.balance projection in the same statement, and
 * refuses any other change of a balance (decision 0005). The database also refuses an
 * unbalanced entry or a negative balance even if this code were wrong.
 *
 * The steps of a posting (keys, lock order, balance check, writes) run in the database
 * function `ledger_post_many`, one round trip per call; its migration
 * (migrations/20261208000100_ledger-post-function.ts) explains each step and why the users
 * rows are locked FOR NO KEY UPDATE before the accounts.
 */
import { clock } from '../clock.js';
import { db, pgConstraint, pgErrorCode, PG, prepared, type Db } from '../db.js';
import { assertRupiah, sumRupiah } from '../money.js';
import { ledgerErrors } from './errors.js';
import { accountSpec, type AccountRef } from './accounts.js';

export interface PostingLine {
  account: AccountRef;
  /** Positive adds to the account's balance, negative takes from it. Whole rupiah, not zero. */
  amount: number;
}

export interface Posting {
  kind: string;
  refType?: string;
  refId?: string;
  /** Unique per business event: a second posting with the same key is refused (returns the first). */
  postingKey?: string;
  memo?: string;
  lines: PostingLine[];
}

export interface PostedEntry {
  entryId: number;
  duplicate: boolean;
}

export { InsufficientFundsError } from './errors.js';

export class UnbalancedPostingError extends Error {}

/** A posting whose lines are in more than one currency, or a line in another currency than its account's (decision 0023). */
export class MixedCurrencyError extends Error {}

function validate(posting: Posting): void {
  if (posting.lines.length < 2) throw new UnbalancedPostingError('a posting needs at least two lines');
  for (const line of posting.lines) {
    assertRupiah(line.amount, 'line amount');
    if (line.amount === 0) throw new UnbalancedPostingError('a posting line cannot be zero');
  }
  if (sumRupiah(posting.lines.map((l) => l.amount)) !== 0) {
    throw new UnbalancedPostingError('posting lines must sum to zero');
  }
  const currencies = new Set(posting.lines.map((l) => accountSpec(l.account).currency));
  if (currencies.size > 1) throw new MixedCurrencyError(`a posting's lines must share one currency, not ${[...currencies].join(' and ')}`);
}

/** The CHECK constraints that keep balances at or above zero (the last line of defence). */
const NON_NEGATIVE = new Set(['ledger_accounts_balance_non_negative', 'users_balance_non_negative']);

export async function post(trxOrDb: Db | undefined, posting: Posting): Promise<PostedEntry> {
  return (await postMany(trxOrDb, [posting]))[0]!;
}

/**
 * Makes several postings in one go, with the meaning of making them one after another in
 * the given order: a posting whose key is already used (or used earlier in the list) is a
 * duplicate and moves nothing; balances are checked as each posting would leave them; any
 * refusal refuses all. One statement however many postings it takes: the database
 * function `ledger_post_many` (migration 20261208000100) checks the keys, locks the users
 * rows and then the accounts in id order (creating missing escrow and system accounts),
 * checks the balances and writes the entries and lines. Being one statement, it is atomic
 * without a transaction of its own; inside the caller's it runs on that connection. A
 * refusal (InsufficientFundsError, a posting key taken meanwhile) is a Postgres error: it
 * aborts the caller's transaction (recover with a savepoint, if ever needed).
 */
export async function postMany(trxOrDb: Db | undefined, postings: Posting[]): Promise<PostedEntry[]> {
  postings.forEach(validate);
  if (postings.length === 0) return [];
  const lines = postings.flatMap((p, k) => p.lines.map((line) => ({ posting: k + 1, amount: line.amount, spec: accountSpec(line.account) })));
  const values = [
    postings.map((p) => p.kind),
    postings.map((p) => p.refType ?? null),
    postings.map((p) => p.refId ?? null),
    postings.map((p) => p.postingKey ?? null),
    postings.map((p) => p.memo ?? null),
    lines.map((l) => l.posting),
    lines.map((l) => l.spec.code),
    lines.map((l) => l.spec.kind),
    lines.map((l) => l.spec.userId),
    lines.map((l) => l.spec.allowNegative),
    lines.map((l) => l.amount),
    lines.map((l) => l.spec.currency),
    clock.now(),
  ];
  let rows: { posting: number; entry_id: string | number; duplicate: boolean }[];
  try {
    rows = await prepared(
      'ledger_post_many_v2',
      'SELECT * FROM ledger_post_many($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)',
      values,
      trxOrDb ?? db,
    );
  } catch (err) {
    const code = pgErrorCode(err);
    const constraint = pgConstraint(err) ?? '';
    if (code === PG.uniqueViolation && constraint === 'journal_entries_posting_key_unique') throw ledgerErrors.postingTaken();
    // The function's own check, and the schema's non-negative constraints behind it.
    if (code === PG.checkViolation && NON_NEGATIVE.has(constraint)) throw ledgerErrors.insufficientBalance();
    // An entry across currencies, or a line in another currency than its account (decision 0023).
    if ((code === PG.checkViolation && constraint === 'journal_entries_one_currency') || code === PG.invalidParameterValue) throw new MixedCurrencyError(String((err as Error).message));
    throw err;
  }
  // One row per posting, by its 1-based index.
  const results = new Array<PostedEntry>(postings.length);
  for (const r of rows) results[r.posting - 1] = { entryId: Number(r.entry_id), duplicate: r.duplicate };
  return results;
}
