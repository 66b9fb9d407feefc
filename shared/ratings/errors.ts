/** The ratings error catalogue (consumer spec 4.7). */
import { fail } from '../errors.js';

export const ratingErrors = {
  notReleased: (status: string) =>
    fail.conflict(
      'INVALID_STATE',
      { en: `The escrow is ${status}; ratings open once it is released`, id: `Escrow berstatus ${status}; penilaian dibuka setelah escrow dilepaskan` },
      { extras: { status } },
    ),
  alreadyRated: () => fail.conflict('ALREADY_RATED', { en: 'You have already rated this escrow', id: 'Anda sudah menilai escrow ini' }),
  userNotFound: () => fail.notFound('USER_NOT_FOUND', { en: 'User not found', id: 'Pengguna tidak ditemukan' }),
};
