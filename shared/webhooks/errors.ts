/**
 * The webhooks error catalogue (enterprise spec 4.11, 7; D8): shared codes with webhook
 * wording, and the endpoint limit of the workspace.
 */
import { errors, fail } from '../errors.js';

export const webhookErrors = {
  endpointNotFound: () =>
    errors.notFound({ en: 'No webhook endpoint with this id in the workspace', id: 'Tidak ada endpoint webhook dengan id ini di workspace' }),
  deliveryNotFound: () =>
    errors.notFound({ en: 'No delivery with this id for this webhook endpoint', id: 'Tidak ada pengiriman dengan id ini untuk endpoint webhook ini' }),
  limit: (max: number) =>
    fail.conflict('WEBHOOK_LIMIT', {
      en: `A workspace can have at most ${max} webhook endpoints; delete one first`,
      id: `Satu workspace paling banyak memiliki ${max} endpoint webhook; hapus salah satu terlebih dahulu`,
    }),
  disabledNotPaused: () =>
    fail.conflict('INVALID_STATE', {
      en: 'A disabled endpoint is not paused; resume it with status active',
      id: 'Endpoint yang dinonaktifkan tidak dapat dijeda; aktifkan kembali dengan status active',
    }),
  /** The URL breaks a rule the schema cannot see (scheme by mode, private addresses). */
  invalidUrl: (message: string) => errors.invalidField('url', message),
};
