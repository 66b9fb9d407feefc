/**
 * E-mailed 6-digit codes (e-mail verification, two-step sign-in). Codes and tickets are
 * stored as HMAC-SHA256 under a key derived from ENCRYPTION_KEY (a bare hash of six
 * digits could be reversed by trying all of them). Attempts are counted atomically before
 * a code is compared.
 */
import { createHmac } from 'node:crypto';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { randomDigits, randomToken, safeEqual } from '../crypto.js';
import type { Db } from '../db.js';
import { AppError } from '../errors.js';

export type CodePurpose = 'verify_email' | 'login';

export const CODE_POLICY = {
  verify_email: { codeTtlMs: 24 * 3600_000, ticketTtlMs: 0, maxAttempts: 5 },
  login: { codeTtlMs: 10 * 60_000, ticketTtlMs: 30 * 60_000, maxAttempts: 5 },
} as const;

interface CodeRow {
  id: string;
  user_id: string;
  purpose: CodePurpose;
  code_hash: string;
  attempts: number;
  max_attempts: number;
  code_expires_at: Date;
  ticket_expires_at: Date | null;
  consumed_at: Date | null;
}

function keyedHash(kind: string, value: string): string {
  return createHmac('sha256', config.encryptionKey).update(`${kind}:${value}`).digest('hex');
}

export interface IssuedCode {
  id: string;
  code: string;
  ticket: string | null;
}

/** Issues a new code (and a ticket for sign-in); earlier unused codes of the same purpose stop working. */
export async function issueCode(trx: Db, userId: string, purpose: CodePurpose): Promise<IssuedCode> {
  const policy = CODE_POLICY[purpose];
  const now = clock.now();
  await trx('auth_codes').where({ user_id: userId, purpose }).whereNull('consumed_at').update({ consumed_at: now });
  const code = randomDigits(6);
  const ticket = purpose === 'login' ? randomToken(32) : null;
  const [row] = (await trx('auth_codes')
    .insert({
      user_id: userId,
      purpose,
      code_hash: keyedHash('code', code),
      ticket_hash: ticket ? keyedHash('ticket', ticket) : null,
      max_attempts: policy.maxAttempts,
      created_at: now,
      code_expires_at: new Date(now.getTime() + policy.codeTtlMs),
      ticket_expires_at: ticket ? new Date(now.getTime() + policy.ticketTtlMs) : null,
    })
    .returning<{ id: string }[]>('id'));
  return { id: row!.id, code, ticket };
}

function invalidCode(reason: 'wrong' | 'expired' | 'exhausted'): AppError {
  const messages = {
    wrong: 'The code is not correct',
    expired: 'The code has expired; ask for a new one',
    exhausted: 'Too many wrong codes; ask for a new one',
  } as const;
  return AppError.legacy(401, 'INVALID_CODE', messages[reason], { reason });
}

/** Finds a live sign-in ticket; 401 INVALID_TICKET when unknown, used or expired. */
export async function findTicket(trx: Db, ticket: string): Promise<CodeRow> {
  const row = (await trx('auth_codes').where({ ticket_hash: keyedHash('ticket', ticket), purpose: 'login' }).first()) as
    | CodeRow
    | undefined;
  if (!row || row.consumed_at || !row.ticket_expires_at || row.ticket_expires_at <= clock.now()) {
    throw AppError.legacy(401, 'INVALID_TICKET', 'The sign-in ticket is unknown or has expired; sign in again');
  }
  return row;
}

/** The live code of a user for a purpose (newest), or undefined. */
export async function findLiveCode(trx: Db, userId: string, purpose: CodePurpose): Promise<CodeRow | undefined> {
  return (await trx('auth_codes')
    .where({ user_id: userId, purpose })
    .whereNull('consumed_at')
    .orderBy('created_at', 'desc')
    .first()) as CodeRow | undefined;
}

/**
 * Checks `code` against the row: INVALID_CODE with reason expired, exhausted or wrong.
 * Every try, right or wrong, first spends one attempt atomically
 * (`UPDATE ... SET attempts = attempts + 1 WHERE attempts < max_attempts RETURNING`), and
 * only a try that got an attempt is compared; so a parallel burst is checked at most
 * `max_attempts` times, whatever count each request read before. Success is a guarded
 * compare-and-set (unconsumed, within its attempts, not expired), so two concurrent
 * correct tries succeed once. `httpStatus` lets e-mail verification answer 400.
 */
export async function consumeCode(trx: Db, row: CodeRow, code: string, httpStatus = 401): Promise<void> {
  const fail = (reason: 'wrong' | 'expired' | 'exhausted') => {
    const e = invalidCode(reason);
    return AppError.legacy(httpStatus, e.code, e.message, e.extras);
  };
  const now = clock.now();
  if (row.code_expires_at <= now) throw fail('expired');
  const [spent] = (await trx('auth_codes')
    .where({ id: row.id })
    .whereNull('consumed_at')
    .whereRaw('attempts < max_attempts')
    .increment('attempts', 1)
    .returning<{ attempts: number; max_attempts: number }[]>(['attempts', 'max_attempts']));
  if (!spent) {
    // No attempt left, or the code was used or replaced meanwhile.
    const current = await trx<{ id: string; consumed_at: Date | null }>('auth_codes').where({ id: row.id }).first('consumed_at');
    throw fail(current && current.consumed_at === null ? 'exhausted' : 'expired');
  }
  if (!safeEqual(keyedHash('code', code), row.code_hash)) {
    throw fail(spent.attempts < spent.max_attempts ? 'wrong' : 'exhausted');
  }
  const consumed = await trx('auth_codes')
    .where({ id: row.id })
    .whereNull('consumed_at')
    .whereRaw('attempts <= max_attempts')
    .where('code_expires_at', '>', now)
    .update({ consumed_at: now });
  if (consumed !== 1) throw fail('expired');
}
