/** The balance error catalogue (consumer spec 4.4). */
import { fail } from '../errors.js';

export const balanceErrors = {
  userNotFound: () => fail.notFound('USER_NOT_FOUND', { en: 'User not found', id: 'Pengguna tidak ditemukan' }),
};
