/**
 * Sign-in (consumer spec 4.1 and section 5 rule 3, decision D2): the password step with
 * the bot check and the lockout ladder (login-throttle.ts), the e-mailed second step, and
 * sign-out. Nothing here knows about HTTP.
 */
import type { Redis } from 'ioredis';
import { config } from '../config.js';
import { db } from '../db.js';
import * as users from '../users/repo.js';
import type { UserRow } from '../users/repo.js';
import { assertCanAct } from './account-state.js';
import { consumeCode, findTicket, issueAndMailCode } from './codes.js';
import { authErrors } from './errors.js';
import * as throttle from './login-throttle.js';
import { verifyPassword } from './passwords.js';
import { createSession, revokeSession, type NewSession, type RequestMeta } from './sessions.js';
import { turnstileEnabled, verifyTurnstile } from './turnstile.js';

export type SignInResult =
  | { kind: 'session'; user: UserRow; session: NewSession }
  | { kind: 'two_factor'; ticket: string };

export interface LoginInput {
  email: string;
  password: string;
  turnstile_token?: string;
}

async function startSession(user: UserRow, meta: RequestMeta): Promise<SignInResult> {
  const session = await createSession(db, user.id, meta);
  return { kind: 'session', user, session };
}

/** The bot check, when it is on and the ladder asks for it; a refusal gives the attempt back. */
async function checkBot(redis: Redis, input: LoginInput, email: string, meta: RequestMeta, before: throttle.LoginCounts): Promise<void> {
  if (!turnstileEnabled()) return;
  const token = input.turnstile_token ?? '';
  if (token === '' && throttle.captchaNeeded(before)) {
    await throttle.releaseAttempt(redis, meta.ip, email);
    throw authErrors.turnstileRequired();
  }
  if (token !== '' && !(await verifyTurnstile(token, meta.ip))) {
    await throttle.releaseAttempt(redis, meta.ip, email);
    throw authErrors.turnstileFailed();
  }
}

export async function login(redis: Redis, input: LoginInput, meta: RequestMeta): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  // Count the attempt first (atomically), so parallel attempts each see the ones before.
  const counted = await throttle.recordFailure(redis, meta.ip, email);
  const before = throttle.priorTo(counted);
  if (throttle.addressLocked(before)) throw authErrors.addressLocked(counted.ipTtl);
  if (throttle.accountLocked(before)) throw authErrors.accountLocked();
  await checkBot(redis, input, email, meta, before);

  // Same path, same work for an unknown e-mail and a wrong password.
  const user = await users.findByEmail(db, email);
  const passwordOk = await verifyPassword(user?.password_hash, input.password);
  if (!user || !passwordOk) {
    if (throttle.accountLocked(counted)) throw authErrors.accountLocked();
    throw authErrors.wrongCredentials(turnstileEnabled() && throttle.captchaNeeded(counted));
  }
  if (user.status !== 'active') {
    // Not a guessing failure: the answer says why (403), the attempt is given back.
    await throttle.releaseAttempt(redis, meta.ip, email);
    assertCanAct(user);
  }

  const method = twoFactorMethodAtSignIn(user);
  if (method === 'email') {
    // The password alone proves nothing yet: the attempt stays counted (address and
    // e-mail) until the second step succeeds, so a known password cannot reset the ladder.
    const issued = await db.transaction((trx) => issueAndMailCode(trx, user, 'login'));
    const ticket = issued.ticket!;
    return { kind: 'two_factor', ticket };
  }
  await throttle.releaseAttempt(redis, meta.ip, email);
  if (method !== 'none') throw authErrors.twoFactorMethodUnsupported();
  await throttle.clearEmail(redis, email);
  return startSession(user, meta);
}

/**
 * The second step a sign-in must pass: the account's own setting, except that in
 * production an admin always gets the e-mailed code (whatever the setting).
 */
export function twoFactorMethodAtSignIn(user: UserRow): UserRow['two_factor_method'] {
  if (config.nodeEnv === 'production' && user.role === 'admin') return 'email';
  return user.two_factor_method;
}

export async function loginTwoFactor(redis: Redis, ticket: string, code: string, meta: RequestMeta): Promise<SignInResult> {
  const row = await findTicket(db, ticket);
  const user = await users.findById(db, row.user_id);
  if (!user) throw authErrors.invalidTicket();
  assertCanAct(user);
  // Without the attempt of this sign-in's own password step, which stays counted until now.
  const counts = throttle.priorTo(await throttle.readCounts(redis, meta.ip, user.email));
  if (throttle.accountLocked(counts)) throw authErrors.accountLocked();
  await consumeCode(db, row, code, 'unauthorized');
  // Both steps passed: the attempt counted at the password step was not a failure.
  await throttle.releaseAttempt(redis, meta.ip, user.email);
  await throttle.clearEmail(redis, user.email);
  return startSession(user, meta);
}

export async function logout(sessionId: string): Promise<void> {
  await revokeSession(db, sessionId);
}
