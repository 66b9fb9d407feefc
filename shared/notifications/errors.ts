/**
 * The notifications error catalogue (consumer spec 4.6, 6): another user's notification
 * is FORBIDDEN, as for a stranger on an escrow; the stream is refused when this process
 * holds its maximum of open streams.
 */
import { errors, fail } from '../errors.js';

export const notificationErrors = {
  notFound: () => errors.notFound({ en: 'Notification not found', id: 'Notifikasi tidak ditemukan' }),
  notYours: () => errors.forbidden({ en: 'Not your notification', id: 'Ini bukan notifikasi Anda' }),
  streamUnavailable: () =>
    fail.unavailable('STREAM_UNAVAILABLE', {
      en: 'Too many open streams on this server; poll unread-count instead',
      id: 'Terlalu banyak stream terbuka di server ini; gunakan unread-count sebagai gantinya',
    }),
};
