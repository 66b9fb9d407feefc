/** The tracking error catalogue (consumer spec 4.2 tracking endpoints). */
import { errors, fail } from '../errors.js';

export const trackingErrors = {
  /** The tracking routes answer the shared NOT_FOUND code for an unknown escrow. */
  escrowNotFound: () => errors.notFound({ en: 'Escrow not found', id: 'Escrow tidak ditemukan' }),
  notParty: () => errors.forbidden({ en: 'You are not a party to this escrow', id: 'Anda bukan pihak dalam escrow ini' }),
  noTracking: () =>
    fail.badRequest('NO_TRACKING', {
      en: 'No tracking number is attached to this escrow',
      id: 'Belum ada nomor resi yang dilampirkan pada escrow ini',
    }),
  /** One forced refresh per escrow per window. */
  refreshedRecently: (retryAfterSeconds: number) =>
    errors.rateLimited(retryAfterSeconds, 'RATE_LIMITED', {
      en: 'Tracking was refreshed recently; try again later',
      id: 'Pelacakan baru saja diperbarui; coba lagi nanti',
    }),
};
