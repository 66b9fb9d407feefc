/** Profile changes (PATCH /v1/auth/me) and staff moves on accounts (suspend, reactivate). */
import { clock } from '../clock.js';
import { config } from '../config.js';
import { db, pgConstraint, pgErrorCode, PG, type Db } from '../db.js';
import type { StaffActor } from '../actors.js';
import { normaliseUsername, verifyPassword } from '../auth/passwords.js';
import { queueMail } from '../mail/service.js';
import { revokeUserSessions } from '../auth/sessions.js';
import { recordStaffAction } from '../staff/audit.js';
import { userErrors } from './errors.js';
import * as repo from './repo.js';
import type { TwoFactorMethod, UserRow } from './repo.js';
import { ACCOUNT_TRANSITIONS, type AccountAction } from './states.js';
import { authErrors } from '../auth/errors.js';

export interface ProfilePatch {
  full_name?: string;
  username?: string;
  phone?: string | null;
  social_instagram?: string | null;
  social_shopee?: string | null;
  social_tiktokshop?: string | null;
  two_factor_method?: TwoFactorMethod;
  dashboard_tour_completed?: boolean;
  /** Needed (and checked) only to turn two-step sign-in off; ignored otherwise. */
  current_password?: string;
}

/** The caller's row (routes pass the one `auth()` loaded when they have it); 404 USER_NOT_FOUND. */
export async function getUser(userId: string, loaded?: UserRow): Promise<UserRow> {
  if (loaded) return loaded;
  const user = await repo.findById(db, userId);
  if (!user) throw userErrors.notFound();
  return user;
}

export async function updateProfile(userId: string, patch: ProfilePatch): Promise<UserRow> {
  const now = clock.now();
  try {
    return await db.transaction(async (trx) => {
      const user = await repo.findByIdForUpdate(trx, userId);
      if (!user) throw userErrors.notFound();
      const changes: Partial<UserRow> = { updated_at: now };
      if (patch.full_name !== undefined) changes.full_name = patch.full_name.trim();
      if (patch.username !== undefined) {
        const username = normaliseUsername(patch.username);
        if (username !== user.username && (await repo.usernameTaken(trx, username, userId))) throw userErrors.usernameTaken();
        changes.username = username;
      }
      if (patch.phone !== undefined) changes.phone = patch.phone || null;
      if (patch.social_instagram !== undefined) changes.social_instagram = patch.social_instagram || null;
      if (patch.social_shopee !== undefined) changes.social_shopee = patch.social_shopee || null;
      if (patch.social_tiktokshop !== undefined) changes.social_tiktokshop = patch.social_tiktokshop || null;
      const turningOff = patch.two_factor_method === 'none' && user.two_factor_method !== 'none';
      if (patch.two_factor_method === 'none') await assertMayTurnOffTwoFactor(user, patch.current_password);
      if (patch.two_factor_method !== undefined) changes.two_factor_method = patch.two_factor_method;
      if (patch.dashboard_tour_completed !== undefined) {
        changes.dashboard_tour_completed_at = patch.dashboard_tour_completed ? (user.dashboard_tour_completed_at ?? now) : null;
      }
      const updated = await repo.update(trx, userId, changes);
      if (!updated) throw userErrors.notFound();
      if (turningOff) await mailTwoFactorOff(trx, updated, now);
      return updated;
    });
  } catch (err) {
    if (pgErrorCode(err) === PG.uniqueViolation && pgConstraint(err) === 'users_username_unique') throw userErrors.usernameTaken();
    throw err;
  }
}

/**
 * Turning two-step sign-in off needs the account's current password (a stolen session or
 * key alone must not remove the second step); in production an admin cannot turn it off.
 */
async function assertMayTurnOffTwoFactor(user: UserRow, currentPassword: string | undefined): Promise<void> {
  if (config.nodeEnv === 'production' && user.role === 'admin') throw userErrors.twoFactorRequired();
  if (!(await verifyPassword(user.password_hash, currentPassword ?? ''))) throw authErrors.wrongCurrentPassword();
}

async function mailTwoFactorOff(trx: Db, user: UserRow, now: Date): Promise<void> {
  await queueMail(trx, {
    to: user.email,
    userId: user.id,
    template: 'two-factor-off',
    subject: 'Two-step sign-in was turned off',
    text:
      `Two-step sign-in was turned off for your account at ${now.toISOString()}.\n` +
      `From now on, signing in needs only your password.\n` +
      `If this was not you, change your password now and turn two-step sign-in back on.\n`,
  });
}

/** Staff on an operator route (the shared StaffActor; the earlier name is kept). */
export type StaffContext = StaffActor;

async function moveAccount(staff: StaffActor, userId: string, action: AccountAction): Promise<UserRow> {
  if (action === 'suspend' && staff.actorId === userId) throw userErrors.cannotSuspendSelf();
  return db.transaction(async (trx) => {
    const now = clock.now();
    if (action === 'suspend') {
      // "Never suspend the last active admin" must hold when two admins suspend each other
      // at once: lock the set of active admins first; the second transaction waits and
      // then sees the first one's suspension.
      const admins = await repo.lockActiveAdmins(trx);
      if (admins.includes(userId) && admins.length <= 1) throw userErrors.lastAdmin();
    }
    const { from, to } = ACCOUNT_TRANSITIONS[action];
    const moved = await repo.moveStatus(trx, userId, from, to, now);
    if (!moved) {
      const exists = await repo.findById(trx, userId);
      if (!exists) throw userErrors.notFound();
      throw userErrors.invalidState(exists.status, action);
    }
    // A suspended account is refused on every request anyway; its sessions end too.
    if (action === 'suspend') await revokeUserSessions(trx, userId);
    await recordStaffAction(trx, {
      actorId: staff.actorId,
      action: `user.${action}`,
      targetType: 'user',
      targetId: userId,
      note: staff.note ?? null,
      ip: staff.ip,
    });
    return moved;
  });
}

export const suspendUser = (staff: StaffActor, userId: string) => moveAccount(staff, userId, 'suspend');
export const reactivateUser = (staff: StaffActor, userId: string) => moveAccount(staff, userId, 'reactivate');
