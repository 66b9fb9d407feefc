/**
 * Accounts and access (consumer spec 4.1 and 5, decisions D1 and D2): sign-up and e-mail
 * verification here; sign-in and its second step (signin.ts), passwords (password-reset.ts),
 * personal API keys (api-keys.ts) and the account-state check (account-state.ts) live
 * beside it and are re-exported, so callers import the feature from one place. All SQL is
 * in repo.ts; nothing here knows about HTTP.
 */
import { clock } from '../clock.js';
import { db, pgConstraint, pgErrorCode, PG } from '../db.js';
import { userErrors } from '../users/errors.js';
import * as users from '../users/repo.js';
import type { UserRow } from '../users/repo.js';
import { findLiveCode, consumeCode, issueAndMailCode } from './codes.js';
import { authErrors } from './errors.js';
import { assertStrongPassword, hashPassword, normaliseUsername } from './passwords.js';
import { createSession, type NewSession, type RequestMeta } from './sessions.js';

export { assertAccountActive, assertCanAct } from './account-state.js';
export { liveKeyOf, rotateApiKey } from './api-keys.js';
export { changePassword, forgotPassword, PASSWORD_RESET_TTL_MS, resetPassword } from './password-reset.js';
export type { RequestMeta } from './sessions.js';
export { login, loginTwoFactor, logout, twoFactorMethodAtSignIn, type LoginInput, type SignInResult } from './signin.js';

export interface RegisterInput {
  email: string;
  password: string;
  username: string;
  full_name: string;
}

/** The unique index that refused a racing sign-up, as the answer the first check gives. */
function takenBy(err: unknown): Error | undefined {
  if (pgErrorCode(err) !== PG.uniqueViolation) return undefined;
  if (pgConstraint(err) === 'users_email_unique') return authErrors.emailTaken();
  if (pgConstraint(err) === 'users_username_unique') return userErrors.usernameTaken();
  return undefined;
}

export async function register(input: RegisterInput, meta: RequestMeta): Promise<{ user: UserRow; session: NewSession }> {
  const email = input.email.trim().toLowerCase();
  const username = normaliseUsername(input.username);
  assertStrongPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  try {
    return await db.transaction(async (trx) => {
      if (await users.findByEmail(trx, email)) throw authErrors.emailTaken();
      if (await users.usernameTaken(trx, username)) throw userErrors.usernameTaken();
      const now = clock.now();
      const user = await users.insert(trx, {
        email,
        username,
        full_name: input.full_name.trim(),
        password_hash: passwordHash,
        created_at: now,
        updated_at: now,
      });
      await issueAndMailCode(trx, user, 'verify_email');
      const session = await createSession(trx, user.id, meta);
      return { user, session };
    });
  } catch (err) {
    // Two sign-ups racing for the same e-mail or username: the unique index decides.
    throw takenBy(err) ?? err;
  }
}

export async function verifyEmail(userId: string, code: string): Promise<UserRow> {
  const user = await users.findById(db, userId);
  if (!user) throw userErrors.notFound();
  if (user.email_verified_at) return user;
  const row = await findLiveCode(db, userId, 'verify_email');
  if (!row) throw authErrors.invalidCode('expired', 'badRequest');
  // Not inside a transaction: a wrong try must stay counted.
  await consumeCode(db, row, code, 'badRequest');
  const now = clock.now();
  const updated = await users.update(db, userId, { email_verified_at: now, updated_at: now });
  return updated ?? user;
}

export async function resendVerification(userId: string): Promise<void> {
  await db.transaction(async (trx) => {
    const user = await users.findByIdForUpdate(trx, userId);
    if (!user) throw userErrors.notFound();
    if (user.email_verified_at) throw authErrors.alreadyVerified();
    await issueAndMailCode(trx, user, 'verify_email');
  });
}
