/**
 * The user error catalogue (consumer spec 4.1 profile, staff moves on accounts): one
 * factory per situation, each owning its code, its kind and its English and Indonesian
 * text. `message` answers the English text.
 */
import { fail } from '../errors.js';
import type { UserStatus } from './repo.js';

export const userErrors = {
  notFound: () => fail.notFound('USER_NOT_FOUND', { en: 'User not found', id: 'Pengguna tidak ditemukan' }),
  usernameTaken: () => fail.conflict('USERNAME_TAKEN', { en: 'This username is taken', id: 'Nama pengguna ini sudah dipakai' }),
  /** In production an admin cannot turn two-step sign-in off. */
  twoFactorRequired: () =>
    fail.forbidden('TWO_FACTOR_REQUIRED', {
      en: 'Staff accounts must keep two-step sign-in on in production',
      id: 'Akun staf wajib tetap memakai verifikasi dua langkah di produksi',
    }),
  cannotSuspendSelf: () =>
    fail.badRequest('INVALID_ACTION', { en: 'Staff cannot suspend their own account', id: 'Staf tidak dapat menangguhkan akunnya sendiri' }),
  lastAdmin: () =>
    fail.conflict('LAST_ADMIN', {
      en: 'At least one active staff account must remain; this is the last active admin',
      id: 'Minimal satu akun staf aktif harus tetap ada; ini admin aktif terakhir',
    }),
  /** A staff move the transition table does not allow from the status found. */
  invalidState: (status: UserStatus, action: 'suspend' | 'reactivate') =>
    fail.conflict('INVALID_STATE', {
      en: `The account is ${status}; it cannot be ${action === 'suspend' ? 'suspended' : 'reactivated'}`,
      id: `Akun berstatus ${status}; akun tidak dapat ${action === 'suspend' ? 'ditangguhkan' : 'diaktifkan kembali'}`,
    }),
};
