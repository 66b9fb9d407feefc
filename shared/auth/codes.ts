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
import { queueMail } from '../mail/service.js';
import type { UserRow } from '../users/repo.js';
import { authErrors, type CodeErrorKind } from './errors.js';
import * as repo from './repo.js';
import type { CodePurpose, CodeRow } from './repo.js';

export type { CodePurpose, CodeRow } from './repo.js';

export const CODE_POLICY = {
  verify_email: { codeTtlMs: 24 * 3600_000, ticketTtlMs: 0, maxAttempts: 5 },
  login: { codeTtlMs: 10 * 60_000, ticketTtlMs: 30 * 60_000, maxAttempts: 5 },
} as const;

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
  await repo.retireCodes(trx, userId, purpose, now);
  const code = randomDigits(6);
  const ticket = purpose === 'login' ? randomToken(32) : null;
  const id = await repo.insertCode(trx, {
    user_id: userId,
    purpose,
    code_hash: keyedHash('code', code),
    ticket_hash: ticket ? keyedHash('ticket', ticket) : null,
    max_attempts: policy.maxAttempts,
    created_at: now,
    code_expires_at: new Date(now.getTime() + policy.codeTtlMs),
    ticket_expires_at: ticket ? new Date(now.getTime() + policy.ticketTtlMs) : null,
  });
  return { id, code, ticket };
}

const CODE_MAILS = {
  verify_email: {
    template: 'verify-email',
    subject: 'Verify your e-mail address',
    text: (user: UserRow, code: string) =>
      `Hello ${user.full_name},\n\nYour e-mail verification code is ${code}.\n` +
      `It is valid for 24 hours. If you did not create an account, you can ignore this message.\n`,
  },
  login: {
    template: 'login-code',
    subject: 'Your sign-in code',
    text: (_user: UserRow, code: string) =>
      `Your sign-in code is ${code}. It is valid for 10 minutes.\n` +
      `If you did not try to sign in, change your password now.\n`,
  },
} as const;

/** Issues a 6-digit code and e-mails it, in the caller's transaction. */
export async function issueAndMailCode(trx: Db, user: UserRow, purpose: CodePurpose): Promise<IssuedCode> {
  const issued = await issueCode(trx, user.id, purpose);
  const mail = CODE_MAILS[purpose];
  await queueMail(trx, {
    to: user.email,
    userId: user.id,
    template: mail.template,
    subject: mail.subject,
    text: mail.text(user, issued.code),
  });
  return issued;
}

/** Finds a live sign-in ticket; 401 INVALID_TICKET when unknown, used or expired. */
export async function findTicket(trx: Db, ticket: string): Promise<CodeRow> {
  const row = await repo.findLoginCodeByTicket(trx, keyedHash('ticket', ticket));
  if (!row || row.consumed_at || !row.ticket_expires_at || row.ticket_expires_at <= clock.now()) {
    throw authErrors.invalidTicket();
  }
  return row;
}

/** The live code of a user for a purpose (newest), or undefined. */
export const findLiveCode = repo.findLiveCode;

/**
 * Checks `code` against the row: INVALID_CODE with reason expired, exhausted or wrong.
 * Every try, right or wrong, first spends one attempt atomically
 * (`UPDATE ... SET attempts = attempts + 1 WHERE attempts < max_attempts RETURNING`), and
 * only a try that got an attempt is compared; so a parallel burst is checked at most
 * `max_attempts` times, whatever count each request read before. Success is a guarded
 * compare-and-set (unconsumed, within its attempts, not expired), so two concurrent
 * correct tries succeed once. `kind` lets e-mail verification answer badRequest (400)
 * where sign-in answers unauthorized (401).
 */
export async function consumeCode(trx: Db, row: CodeRow, code: string, kind: CodeErrorKind = 'unauthorized'): Promise<void> {
  const fail = (reason: 'wrong' | 'expired' | 'exhausted') => authErrors.invalidCode(reason, kind);
  const now = clock.now();
  if (row.code_expires_at <= now) throw fail('expired');
  const spent = await repo.spendAttempt(trx, row.id);
  if (!spent) {
    // No attempt left, or the code was used or replaced meanwhile.
    throw fail((await repo.codeUnused(trx, row.id)) ? 'exhausted' : 'expired');
  }
  if (!safeEqual(keyedHash('code', code), row.code_hash)) {
    throw fail(spent.attempts < spent.max_attempts ? 'wrong' : 'exhausted');
  }
  if (!(await repo.consumeCode(trx, row.id, now))) throw fail('expired');
}
