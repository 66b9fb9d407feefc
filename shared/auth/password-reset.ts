/** Forgotten, reset and changed passwords (consumer spec 4.1): each ends every other way in. */
import { clock } from '../clock.js';
import { config } from '../config.js';
import { randomToken, sha256Hex } from '../crypto.js';
import { db, type Db } from '../db.js';
import { queueMail, queueSuppressedMail } from '../mail/service.js';
import { userErrors } from '../users/errors.js';
import * as users from '../users/repo.js';
import type { UserRow } from '../users/repo.js';
import { assertCanAct } from './account-state.js';
import { authErrors } from './errors.js';
import { assertStrongPassword, hashPassword, verifyPassword } from './passwords.js';
import * as repo from './repo.js';
import { revokeUserSessions } from './sessions.js';

export const PASSWORD_RESET_TTL_MS = 60 * 60_000;

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
    await repo.voidResetLinks(trx, target?.id ?? NO_USER, now);
    await repo.insertReset(trx, {
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

/** The new password ends every key, every other session and every live reset link. */
async function setPassword(trx: Db, user: UserRow, password: string, keepSessionId?: string) {
  const now = clock.now();
  await users.update(trx, user.id, { password_hash: await hashPassword(password), updated_at: now });
  await repo.revokeUserKeys(trx, user.id, 'password_changed', now);
  await revokeUserSessions(trx, user.id, keepSessionId);
  await repo.voidResetLinks(trx, user.id, now);
}

export async function resetPassword(token: string, password: string): Promise<void> {
  assertStrongPassword(password);
  await db.transaction(async (trx) => {
    const reset = await repo.useReset(trx, sha256Hex(token), clock.now());
    if (!reset) throw authErrors.invalidResetToken();
    const user = await users.findByIdForUpdate(trx, reset.user_id);
    if (!user) throw authErrors.invalidResetToken();
    assertCanAct(user);
    await setPassword(trx, user, password);
  });
}

export async function changePassword(userId: string, current: string, next: string, keepSessionId?: string): Promise<void> {
  assertStrongPassword(next);
  const user = await users.findById(db, userId);
  if (!user) throw userErrors.notFound();
  if (!(await verifyPassword(user.password_hash, current))) throw authErrors.wrongCurrentPassword();
  await db.transaction(async (trx) => {
    const locked = await users.findByIdForUpdate(trx, userId);
    if (!locked) throw userErrors.notFound();
    await setPassword(trx, locked, next, keepSessionId);
  });
}
