/**
 * Double-entry postings (ARCHITECTURE rule 2). A posting is one journal entry whose lines
 * sum to zero; the users rows and then the accounts it touches are locked in id order.
 * Inserting the lines moves the balances: a database trigger applies them to
 * ledger_accounts.balance and the users.balance projection in the same statement, and
 * refuses any other change of a balance (decision 0005). The database also refuses an
 * unbalanced entry or a negative balance even if this code were wrong.
 */
import { AppError } from '../errors.js';
import { clock } from '../clock.js';
import { inTransaction, pgConstraint, pgErrorCode, PG, type Db } from '../db.js';
import { assertRupiah, sumRupiah } from '../money.js';
import { accountSpec, ensureAccounts, type AccountRef } from './accounts.js';

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

export class InsufficientFundsError extends AppError {
  constructor(message = 'Saldo tidak mencukupi / insufficient balance') {
    super(400, 'INSUFFICIENT_BALANCE', message);
  }
}

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
  validate(posting);
  return inTransaction(trxOrDb, async (trx) => {
    if (posting.postingKey) {
      const existing = (await trx('journal_entries').select('id').where({ posting_key: posting.postingKey }).first()) as
        | { id: number }
        | undefined;
      if (existing) return { entryId: existing.id, duplicate: true };
    }
    const specs = posting.lines.map((l) => accountSpec(l.account));
    // Lock order, everywhere: the users rows first (services often lock a user row before
    // posting), then the ledger accounts, each in id order, so two transactions over the
    // same accounts never wait on each other in a circle. The users rows are locked before
    // any escrow or system account is created, so a transaction that holds a user row never
    // waits on one that created an account and now waits for that row.
    const userIds = [...new Set(specs.map((sp) => sp.userId).filter((u): u is string => u !== null))].sort();
    if (userIds.length > 0) await trx('users').select('id').whereIn('id', userIds).orderBy('id').forUpdate();
    const ids = await ensureAccounts(trx, specs);
    const deltas = new Map<number, number>();
    posting.lines.forEach((line, i) => {
      const spec = specs[i]!;
      const id = ids.get(spec.code);
      if (id === undefined) {
        throw new Error(
          spec.userId ? `user ${spec.userId} has no ledger account (no such user?)` : `ledger account ${spec.code} missing`,
        );
      }
      deltas.set(id, sumRupiah([deltas.get(id) ?? 0, line.amount]));
    });
    const locked = (await trx('ledger_accounts')
      .select('id', 'code', 'balance', 'allow_negative')
      .whereIn('id', [...deltas.keys()])
      .orderBy('id')
      .forUpdate()) as LockedAccount[];
    for (const acc of locked) {
      const next = acc.balance + (deltas.get(acc.id) ?? 0);
      if (!acc.allow_negative && next < 0) throw new InsufficientFundsError();
    }
    const now = clock.now();
    let entryId: number;
    try {
      const [entry] = (await trx('journal_entries')
        .insert({
          kind: posting.kind,
          ref_type: posting.refType ?? null,
          ref_id: posting.refId ?? null,
          posting_key: posting.postingKey ?? null,
          memo: posting.memo ?? null,
          created_at: now,
        })
        .returning<{ id: number }[]>('id'));
      entryId = entry!.id;
    } catch (err) {
      if (pgErrorCode(err) === PG.uniqueViolation && pgConstraint(err) === 'journal_entries_posting_key_unique') {
        throw new AppError(409, 'CONCURRENT_MODIFICATION', 'This posting was made by another request');
      }
      throw err;
    }
    try {
      // One statement: the database applies the lines to the balances as one net change per account.
      await trx('journal_lines').insert(
        posting.lines.map((line, i) => ({ entry_id: entryId, account_id: ids.get(specs[i]!.code)!, amount: line.amount })),
      );
    } catch (err) {
      // The schema's non-negative constraints are the last line of defence.
      if (pgErrorCode(err) === PG.checkViolation && NON_NEGATIVE.has(pgConstraint(err) ?? '')) {
        throw new InsufficientFundsError();
      }
      throw err;
    }
    return { entryId, duplicate: false };
  });
}
