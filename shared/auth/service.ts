/**
 * Accounts and access (consumer spec 4.1 and 5, decisions D1 and D2): sign-up, e-mail
 * verification, sign-in with the bot check and lockout ladder, two-step codes, sessions,
 * personal API keys and passwords. Routes call these; nothing here knows about HTTP.
 */
import type { Redis } from 'ioredis';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { randomToken, sha256Hex } from '../crypto.js';
import { db, pgConstraint, pgErrorCode, PG, type Db } from '../db.js';
import { AppError, errors } from '../errors.js';
import { queueMail, queueSuppressedMail } from '../mail/service.js';
import * as users from '../users/repo.js';
import type { UserRow } from '../users/repo.js';
import * as keys from './api-keys.js';
import { consumeCode, findLiveCode, findTicket, issueCode, type CodePurpose, type IssuedCode } from './codes.js';
import * as throttle from './login-throttle.js';
import { assertStrongPassword, hashPassword, normaliseUsername, verifyPassword } from './passwords.js';
import { createSession, revokeSession, revokeUserSessions, type NewSession } from './sessions.js';
import { turnstileEnabled, verifyTurnstile } from './turnstile.js';

export interface RequestMeta {
  ip: string;
  userAgent: string;
}

export type SignInResult =
  | { kind: 'session'; user: UserRow; session: NewSession }
  | { kind: 'two_factor'; ticket: string };

export const PASSWORD_RESET_TTL_MS = 60 * 60_000;

// ---------------------------------------------------------------------------------------
// Account state

/** 403 SUSPENDED / ACCOUNT_INACTIVE for accounts that may not act (spec section 5 rule 2). */
export function assertAccountActive(user: UserRow): void {
  if (user.status === 'suspended') throw AppError.legacy(403, 'SUSPENDED', 'This account is suspended; contact support');
  if (user.status !== 'active') throw AppError.legacy(403, 'ACCOUNT_INACTIVE', 'This account is closed or being deleted');
}

// ---------------------------------------------------------------------------------------
// Sign-up and e-mail verification

export interface RegisterInput {
  email: string;
  password: string;
  username: string;
  full_name: string;
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
async function issueAndMailCode(trx: Db, user: UserRow, purpose: CodePurpose): Promise<IssuedCode> {
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

export async function register(input: RegisterInput, meta: RequestMeta): Promise<{ user: UserRow; session: NewSession }> {
  const email = input.email.trim().toLowerCase();
  const username = normaliseUsername(input.username);
  assertStrongPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  try {
    return await db.transaction(async (trx) => {
      if (await users.findByEmail(trx, email)) throw AppError.legacy(409, 'EMAIL_TAKEN', 'An account with this e-mail already exists');
      if (await users.usernameTaken(trx, username)) throw AppError.legacy(409, 'USERNAME_TAKEN', 'This username is taken');
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
    if (pgErrorCode(err) === PG.uniqueViolation) {
      if (pgConstraint(err) === 'users_email_unique') throw AppError.legacy(409, 'EMAIL_TAKEN', 'An account with this e-mail already exists');
      if (pgConstraint(err) === 'users_username_unique') throw AppError.legacy(409, 'USERNAME_TAKEN', 'This username is taken');
    }
    throw err;
  }
}

export async function verifyEmail(userId: string, code: string): Promise<UserRow> {
  const user = await users.findById(db, userId);
  if (!user) throw AppError.legacy(404, 'USER_NOT_FOUND', 'User not found');
  if (user.email_verified_at) return user;
  const row = await findLiveCode(db, userId, 'verify_email');
  if (!row) throw AppError.legacy(400, 'INVALID_CODE', 'The code has expired; ask for a new one', { reason: 'expired' });
  // Not inside a transaction: a wrong try must stay counted.
  await consumeCode(db, row, code, 400);
  const now = clock.now();
  const updated = await users.update(db, userId, { email_verified_at: now, updated_at: now });
  return updated ?? user;
}

export async function resendVerification(userId: string): Promise<void> {
  await db.transaction(async (trx) => {
    const user = await users.findByIdForUpdate(trx, userId);
    if (!user) throw AppError.legacy(404, 'USER_NOT_FOUND', 'User not found');
    if (user.email_verified_at) throw AppError.legacy(409, 'ALREADY_VERIFIED', 'This e-mail address is already verified');
    await issueAndMailCode(trx, user, 'verify_email');
  });
}

// ---------------------------------------------------------------------------------------
// Sign-in

export interface LoginInput {
  email: string;
  password: string;
  turnstile_token?: string;
}

function locked(): AppError {
  return AppError.legacy(423, 'ACCOUNT_LOCKED', 'Too many failed sign-ins; sign-in is locked for a while');
}

function addressLockedError(retryAfter: number): AppError {
  return errors.rateLimited(retryAfter, 'LOGIN_LOCKED', { en: 'Too many failed sign-ins from this address; try again later', id: 'Terlalu banyak percobaan masuk gagal dari alamat ini; coba lagi nanti' });
}

async function startSession(user: UserRow, meta: RequestMeta): Promise<SignInResult> {
  const session = await createSession(db, user.id, meta);
  return { kind: 'session', user, session };
}

export async function login(redis: Redis, input: LoginInput, meta: RequestMeta): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  // Count the attempt first (atomically), so parallel attempts each see the ones before.
  const counted = await throttle.recordFailure(redis, meta.ip, email);
  const before = throttle.priorTo(counted);
  if (throttle.addressLocked(before)) throw addressLockedError(counted.ipTtl);
  if (throttle.accountLocked(before)) throw locked();
  if (turnstileEnabled()) {
    const token = input.turnstile_token ?? '';
    if (token === '' && throttle.captchaNeeded(before)) {
      await throttle.releaseAttempt(redis, meta.ip, email);
      throw AppError.legacy(400, 'TURNSTILE_REQUIRED', 'Complete the bot check and try again', { requires_captcha: true });
    }
    if (token !== '' && !(await verifyTurnstile(token, meta.ip))) {
      await throttle.releaseAttempt(redis, meta.ip, email);
      throw AppError.legacy(400, 'TURNSTILE_FAILED', 'The bot check failed; try it again', { requires_captcha: true });
    }
  }

  // Same path, same work for an unknown e-mail and a wrong password.
  const user = await users.findByEmail(db, email);
  const passwordOk = await verifyPassword(user?.password_hash, input.password);
  if (!user || !passwordOk) {
    if (throttle.accountLocked(counted)) throw locked();
    throw AppError.legacy(401, 'INVALID_CREDENTIALS', 'E-mail or password is wrong', {
      requires_captcha: turnstileEnabled() && throttle.captchaNeeded(counted),
    });
  }
  if (user.status !== 'active') {
    // Not a guessing failure: the answer says why (403), the attempt is given back.
    await throttle.releaseAttempt(redis, meta.ip, email);
    assertAccountActive(user);
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
  if (method !== 'none') {
    throw AppError.legacy(501, 'TWO_FACTOR_METHOD_UNSUPPORTED', 'This two-step method is not supported');
  }
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
  if (!user) throw AppError.legacy(401, 'INVALID_TICKET', 'The sign-in ticket is unknown or has expired; sign in again');
  assertAccountActive(user);
  // Without the attempt of this sign-in's own password step, which stays counted until now.
  const counts = throttle.priorTo(await throttle.readCounts(redis, meta.ip, user.email));
  if (throttle.accountLocked(counts)) throw locked();
  await consumeCode(db, row, code, 401);
  // Both steps passed: the attempt counted at the password step was not a failure.
  await throttle.releaseAttempt(redis, meta.ip, user.email);
  await throttle.clearEmail(redis, user.email);
  return startSession(user, meta);
}

export async function logout(sessionId: string): Promise<void> {
  await revokeSession(db, sessionId);
}

// ---------------------------------------------------------------------------------------
// Personal API keys

export interface ApiKeyView {
  api_key: string | null;
  label: string | null;
  created_at: string | null;
  last_used_at: string | null;
}

export async function getApiKey(userId: string): Promise<ApiKeyView> {
  const key = await keys.findLiveKeyOfUser(db, userId);
  return {
    api_key: key?.preview ?? null,
    label: key?.label ?? null,
    created_at: key?.created_at.toISOString() ?? null,
    last_used_at: key?.last_used_at?.toISOString() ?? null,
  };
}

/**
 * Creates a new key and revokes the previous one at once. At most 5 per account per
 * hour (429 ROTATE_LIMITED; the current key keeps working). The owner is e-mailed the
 * time and IP, never the key.
 */
export async function rotateApiKey(userId: string, label: string | null, ip: string) {
  return db.transaction(async (trx) => {
    const user = await users.findByIdForUpdate(trx, userId); // serialises rotations of one account
    if (!user) throw AppError.legacy(404, 'USER_NOT_FOUND', 'User not found');
    const now = clock.now();
    const recent = await keys.keysCreatedSince(trx, userId, new Date(now.getTime() - 3600_000));
    if (recent.length >= keys.ROTATIONS_PER_HOUR) {
      const oldest = recent[0]!;
      const retryAfter = Math.max(1, Math.ceil((oldest.getTime() + 3600_000 - now.getTime()) / 1000));
      throw errors.rateLimited(retryAfter, 'ROTATE_LIMITED', { en: 'At most 5 key rotations per hour; your current key keeps working', id: 'Paling banyak 5 rotasi kunci per jam; kunci Anda saat ini tetap berlaku' });
    }
    await keys.revokeUserKeys(trx, userId, 'rotated');
    const { row, plaintext } = await keys.insertKey(trx, userId, label, ip);
    await queueMail(trx, {
      to: user.email,
      userId,
      template: 'api-key-rotated',
      subject: 'A new personal API key was created',
      text:
        `A new personal API key was created for your account at ${now.toISOString()} from IP address ${ip}.\n` +
        `Your previous key stopped working at that moment.\n` +
        `If this was not you, change your password now: that also revokes the key.\n`,
    });
    return { api_key: plaintext, label: row.label, created_at: row.created_at.toISOString() };
  });
}

// ---------------------------------------------------------------------------------------
// Passwords

const NO_USER = '00000000-0000-0000-0000-000000000000';

function resetMail(token: string) {
  return {
    template: 'password-reset',
    subject: 'Reset your password',
    text:
      `Someone asked to reset the password of your account. To choose a new one, open\n` +
      `${config.publicBaseUrl}/reset-password?token=${token}\n` +
      `within one hour. If it was not you, ignore this message; your password stays the same.\n`,
  };
}

/**
 * Always succeeds from the caller's view; e-mails a reset link when the account exists
 * and is active. Both paths do the same work in the request (no timing oracle): the same
 * look-up, the same void-earlier-links update, one reset row and one recorded e-mail with
 * its job. For an unknown or inactive address the reset row is born used and belongs to
 * nobody, and the e-mail is suppressed (never delivered, no recipient stored).
 */
export async function forgotPassword(email: string): Promise<void> {
  const user = await users.findByEmail(db, email.trim().toLowerCase());
  const target = user && user.status === 'active' ? user : undefined;
  const token = randomToken(32);
  const mail = resetMail(token);
  await db.transaction(async (trx) => {
    const now = clock.now();
    await voidResetLinks(trx, target?.id ?? NO_USER, now);
    await trx('password_resets').insert({
      user_id: target?.id ?? null,
      token_hash: sha256Hex(token),
      created_at: now,
      expires_at: new Date(now.getTime() + PASSWORD_RESET_TTL_MS),
      used_at: target ? null : now,
    });
    if (target) await queueMail(trx, { to: target.email, userId: target.id, ...mail });
    else await queueSuppressedMail(trx, mail);
  });
}

/** Every live reset link of the user stops working (a newer link, a reset, a change). */
async function voidResetLinks(trx: Db, userId: string, now: Date): Promise<void> {
  await trx('password_resets').where({ user_id: userId }).whereNull('used_at').update({ used_at: now });
}

async function setPassword(trx: Db, user: UserRow, password: string, keepSessionId?: string) {
  const now = clock.now();
  await users.update(trx, user.id, { password_hash: await hashPassword(password), updated_at: now });
  await keys.revokeUserKeys(trx, user.id, 'password_changed');
  await revokeUserSessions(trx, user.id, keepSessionId);
  await voidResetLinks(trx, user.id, now);
}

export async function resetPassword(token: string, password: string): Promise<void> {
  assertStrongPassword(password);
  await db.transaction(async (trx) => {
    const now = clock.now();
    const [reset] = (await trx('password_resets')
      .where({ token_hash: sha256Hex(token) })
      .whereNull('used_at')
      .where('expires_at', '>', now)
      .update({ used_at: now })
      .returning<{ user_id: string }[]>('user_id'));
    if (!reset) throw AppError.legacy(400, 'INVALID_RESET_TOKEN', 'This reset link is unknown, used or expired; ask for a new one');
    const user = await users.findByIdForUpdate(trx, reset.user_id);
    if (!user) throw AppError.legacy(400, 'INVALID_RESET_TOKEN', 'This reset link is unknown, used or expired; ask for a new one');
    assertAccountActive(user);
    await setPassword(trx, user, password);
  });
}

export async function changePassword(userId: string, current: string, next: string, keepSessionId?: string): Promise<void> {
  assertStrongPassword(next);
  const user = await users.findById(db, userId);
  if (!user) throw AppError.legacy(404, 'USER_NOT_FOUND', 'User not found');
  if (!(await verifyPassword(user.password_hash, current))) {
    throw AppError.legacy(401, 'INVALID_CREDENTIALS', 'The current password is wrong');
  }
  await db.transaction(async (trx) => {
    const locked = await users.findByIdForUpdate(trx, userId);
    if (!locked) throw AppError.legacy(404, 'USER_NOT_FOUND', 'User not found');
    await setPassword(trx, locked, next, keepSessionId);
  });
}
