/** The public pages' error catalogue (consumer spec 4.7). */
import { fail } from '../errors.js';

export const publicErrors = {
  /** No public-able user by that name (or a malformed name). */
  userNotFound: () => fail.notFound('USER_NOT_FOUND', { en: 'User not found', id: 'Pengguna tidak ditemukan' }),
};
