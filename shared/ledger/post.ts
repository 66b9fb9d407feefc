/**
 * Double-entry postings (ARCHITECTURE rule 2). A posting is one journal entry whose lines
 * sum to zero; the users rows and then the accounts it touches are locked in id order.
 * Inserting the lines moves the balances: a database trigger applies them to
 * ledger_accounts.balance and the users.balance projection in the same statement, and
 * refuses any other change of a balance (decision 0005). The database also refuses an
 * unbalanced entry or a negative balance even if this code were wrong.
 */
import type { Knex } from 'knex';
import { clock } from '../clock.js';
import { inTransaction, pgConstraint, pgErrorCode, PG, type Db } from '../db.js';
import { assertRupiah, sumRupiah } from '../money.js';
import { ledgerErrors } from './errors.js';
import { accountSpec, ensureAccounts, type AccountRef, type AccountSpec } from './accounts.js';

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

function validate(posting: Posting): void {
  if (posting.lines.length < 2) throw new UnbalancedPostingError('a posting needs at least two lines');
  for (const line of posting.lines) {
    assertRupiah(line.amount, 'line amount');
    if (line.amount === 0) throw new UnbalancedPostingError('a posting line cannot be zero');
  }
  if (sumRupiah(posting.lines.map((l) => l.amount)) !== 0) {
    throw new UnbalancedPostingError('posting lines must sum to zero');
  }
}

interface LockedAccount {
  id: number;
  code: string;
  balance: number;
  allow_negative: boolean;
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
 * refusal refuses all. It costs a fixed number of statements however many postings it
 * takes (a batch of reconciled payments uses it).
 */
export async function postMany(trxOrDb: Db | undefined, postings: Posting[]): Promise<PostedEntry[]> {
  postings.forEach(validate);
  if (postings.length === 0) return [];
  return inTransaction(trxOrDb, async (trx) => {
    const results: (PostedEntry | undefined)[] = new Array<PostedEntry | undefined>(postings.length);
    const keys = [...new Set(postings.map((p) => p.postingKey).filter((k): k is string => k !== undefined))];
    const used = new Map<string, number>();
    if (keys.length > 0) {
      for (const row of (await trx('journal_entries').select('id', 'posting_key').whereIn('posting_key', keys)) as { id: number; posting_key: string }[]) {
        used.set(row.posting_key, Number(row.id));
      }
    }
    // Which postings move money: not a used key, not a key taken earlier in this list.
    const fresh: number[] = [];
    const firstWithKey = new Map<string, number>();
    postings.forEach((p, i) => {
      if (p.postingKey !== undefined) {
        const existing = used.get(p.postingKey);
        if (existing !== undefined) {
          results[i] = { entryId: existing, duplicate: true };
          return;
        }
        if (firstWithKey.has(p.postingKey)) return; // filled in below, once the first has its id
        firstWithKey.set(p.postingKey, i);
      }
      fresh.push(i);
    });
    if (fresh.length > 0) {
      const entryIds = await insertEntries(trx, fresh.map((i) => postings[i]!));
      fresh.forEach((i, k) => {
        results[i] = { entryId: entryIds[k]!, duplicate: false };
      });
    }
    postings.forEach((p, i) => {
      if (results[i] === undefined) results[i] = { entryId: results[firstWithKey.get(p.postingKey!)!]!.entryId, duplicate: true };
    });
    return results as PostedEntry[];
  });
}

interface Line {
  posting: number;
  line: PostingLine;
  spec: AccountSpec;
}

/** Locks, checks and writes the entries and their lines; returns the entries' ids in order. */
async function insertEntries(trx: Knex.Transaction, postings: Posting[]): Promise<number[]> {
  const lines: Line[] = postings.flatMap((p, k) => p.lines.map((line) => ({ posting: k, line, spec: accountSpec(line.account) })));
  const { accountIds, locked } = await lockAccounts(trx, lines);
  checkBalances(postings.length, lines, accountIds, locked);
  return writeEntries(trx, postings, lines, accountIds);
}

/** Locks the users rows and the accounts the lines touch (creating missing accounts); the lines' account ids in order. */
async function lockAccounts(trx: Knex.Transaction, lines: Line[]): Promise<{ accountIds: number[]; locked: LockedAccount[] }> {
  // Lock order, everywhere: the users rows first (services often lock a user row before
  // posting), then the ledger accounts, each in id order, so two transactions over the
  // same accounts never wait on each other in a circle. The users rows are locked before
  // any escrow or system account is created, so a transaction that holds a user row never
  // waits on one that created an account and now waits for that row.
  const userIds = [...new Set(lines.map((l) => l.spec.userId).filter((u): u is string => u !== null))].sort();
  // FOR NO KEY UPDATE: it serialises balance changes (it conflicts with itself) without blocking
  // the FOR KEY SHARE locks of foreign-key checks, so inserting a row that references the user
  // (an escrow, an event, a notification) never waits on a posting: that wait closed deadlock
  // cycles with the hot ledger accounts under load (npm run chaos).
  if (userIds.length > 0) await trx('users').select('id').whereIn('id', userIds).orderBy('id').forNoKeyUpdate();
  const ids = await ensureAccounts(
    trx,
    lines.map((l) => l.spec),
  );
  const accountOf = (spec: AccountSpec): number => {
    const id = ids.get(spec.code);
    if (id === undefined) {
      throw new Error(spec.userId ? `user ${spec.userId} has no ledger account (no such user?)` : `ledger account ${spec.code} missing`);
    }
    return id;
  };
  const accountIds = lines.map((l) => accountOf(l.spec));
  const locked = (await trx('ledger_accounts')
    .select('id', 'code', 'balance', 'allow_negative')
    .whereIn('id', [...new Set(accountIds)])
    .orderBy('id')
    .forUpdate()) as LockedAccount[];
  return { accountIds, locked };
}

/** Each posting checked as it would leave the balances, in order (its own lines netted). */
function checkBalances(postingCount: number, lines: Line[], accountIds: number[], locked: LockedAccount[]): void {
  const balance = new Map(locked.map((a) => [a.id, { value: a.balance, allowNegative: a.allow_negative }]));
  for (let k = 0; k < postingCount; k += 1) {
    const deltas = new Map<number, number>();
    lines.forEach((l, n) => {
      if (l.posting === k) deltas.set(accountIds[n]!, sumRupiah([deltas.get(accountIds[n]!) ?? 0, l.line.amount]));
    });
    for (const [id, delta] of deltas) {
      const acc = balance.get(id)!;
      acc.value = sumRupiah([acc.value, delta]);
      if (!acc.allowNegative && acc.value < 0) throw ledgerErrors.insufficientBalance();
    }
  }
}

/** Writes the entries and their lines in two statements; the database applies the lines to the balances. */
async function writeEntries(trx: Knex.Transaction, postings: Posting[], lines: Line[], accountIds: number[]): Promise<number[]> {
  // Ids taken from the sequence first, so each line is tied to its entry without relying on
  // the order of RETURNING rows.
  const seq = await trx.raw<{ rows: { id: string | number }[] }>(
    `SELECT nextval(pg_get_serial_sequence('journal_entries', 'id')) AS id FROM generate_series(1, ?::int)`,
    [postings.length],
  );
  const entryIds = seq.rows.map((r) => Number(r.id));
  const now = clock.now();
  try {
    await trx.raw(
      `INSERT INTO journal_entries (id, kind, ref_type, ref_id, posting_key, memo, created_at) OVERRIDING SYSTEM VALUE
       SELECT id, kind, ref_type, ref_id, posting_key, memo, ?::timestamptz
         FROM unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) AS e(id, kind, ref_type, ref_id, posting_key, memo)`,
      [
        now,
        entryIds,
        postings.map((p) => p.kind),
        postings.map((p) => p.refType ?? null),
        postings.map((p) => p.refId ?? null),
        postings.map((p) => p.postingKey ?? null),
        postings.map((p) => p.memo ?? null),
      ] as unknown as Knex.RawBinding[], // pg sends arrays with nulls as Postgres arrays
    );
  } catch (err) {
    if (pgErrorCode(err) === PG.uniqueViolation && pgConstraint(err) === 'journal_entries_posting_key_unique') {
      throw ledgerErrors.postingTaken();
    }
    throw err;
  }
  try {
    // One statement: the database applies the lines to the balances as one net change per account.
    await trx.raw(
      `INSERT INTO journal_lines (entry_id, account_id, amount) SELECT * FROM unnest(?::bigint[], ?::bigint[], ?::bigint[])`,
      [lines.map((l) => entryIds[l.posting]!), accountIds, lines.map((l) => l.line.amount)],
    );
  } catch (err) {
    // The schema's non-negative constraints are the last line of defence.
    if (pgErrorCode(err) === PG.checkViolation && NON_NEGATIVE.has(pgConstraint(err) ?? '')) {
      throw ledgerErrors.insufficientBalance();
    }
    throw err;
  }
  return entryIds;
}
