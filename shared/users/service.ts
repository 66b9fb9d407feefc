/** Profile changes (PATCH /v1/auth/me) and staff moves on accounts (suspend, reactivate). */
import { clock } from '../clock.js';
import { db, pgConstraint, pgErrorCode, PG } from '../db.js';
import { AppError } from '../errors.js';
import { normaliseUsername } from '../auth/passwords.js';
import { revokeUserSessions } from '../auth/sessions.js';
import { recordStaffAction } from '../staff/audit.js';
import * as repo from './repo.js';
import type { TwoFactorMethod, UserRow } from './repo.js';

export interface ProfilePatch {
  full_name?: string;
  username?: string;
  phone?: string | null;
  social_instagram?: string | null;
  social_shopee?: string | null;
  social_tiktokshop?: string | null;
  two_factor_method?: TwoFactorMethod;
  dashboard_tour_completed?: boolean;
}

const usernameTaken = () => new AppError(409, 'USERNAME_TAKEN', 'This username is taken');

export async function updateProfile(userId: string, patch: ProfilePatch): Promise<UserRow> {
  const now = clock.now();
  try {
    return await db.transaction(async (trx) => {
      const user = await repo.findByIdForUpdate(trx, userId);
      if (!user) throw new AppError(404, 'USER_NOT_FOUND', 'User not found');
      const changes: Partial<UserRow> = { updated_at: now };
      if (patch.full_name !== undefined) changes.full_name = patch.full_name.trim();
      if (patch.username !== undefined) {
        const username = normaliseUsername(patch.username);
        if (username !== user.username && (await repo.usernameTaken(trx, username, userId))) throw usernameTaken();
        changes.username = username;
      }
      if (patch.phone !== undefined) changes.phone = patch.phone || null;
      if (patch.social_instagram !== undefined) changes.social_instagram = patch.social_instagram || null;
      if (patch.social_shopee !== undefined) changes.social_shopee = patch.social_shopee || null;
      if (patch.social_tiktokshop !== undefined) changes.social_tiktokshop = patch.social_tiktokshop || null;
      if (patch.two_factor_method !== undefined) changes.two_factor_method = patch.two_factor_method;
      if (patch.dashboard_tour_completed !== undefined) {
        changes.dashboard_tour_completed_at = patch.dashboard_tour_completed ? (user.dashboard_tour_completed_at ?? now) : null;
      }
      const updated = await repo.update(trx, userId, changes);
      if (!updated) throw new AppError(404, 'USER_NOT_FOUND', 'User not found');
      return updated;
    });
  } catch (err) {
    if (pgErrorCode(err) === PG.uniqueViolation && pgConstraint(err) === 'users_username_unique') throw usernameTaken();
    throw err;
  }
}

export interface StaffContext {
  actorId: string;
  ip: string;
  note?: string | null;
}

async function moveAccount(staff: StaffContext, userId: string, action: 'suspend' | 'reactivate'): Promise<UserRow> {
  if (action === 'suspend' && staff.actorId === userId) {
    throw new AppError(400, 'INVALID_ACTION', 'Staff cannot suspend their own account');
  }
  return db.transaction(async (trx) => {
    const now = clock.now();
    const moved =
      action === 'suspend'
        ? await repo.moveStatus(trx, userId, ['active'], 'suspended', now)
        : await repo.moveStatus(trx, userId, ['suspended'], 'active', now);
    if (!moved) {
      const exists = await repo.findById(trx, userId);
      if (!exists) throw new AppError(404, 'USER_NOT_FOUND', 'User not found');
      throw new AppError(409, 'INVALID_STATE', `The account is ${exists.status}; it cannot be ${action === 'suspend' ? 'suspended' : 'reactivated'}`);
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

export const suspendUser = (staff: StaffContext, userId: string) => moveAccount(staff, userId, 'suspend');
export const reactivateUser = (staff: StaffContext, userId: string) => moveAccount(staff, userId, 'reactivate');
