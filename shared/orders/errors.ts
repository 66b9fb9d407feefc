/**
 * The payment-service order ("jasabayar") error catalogue (consumer spec 4.8; issue 11;
 * decision 0012): one factory per situation, each owning its code, its kind (which owns the
 * status) and its English and Indonesian text.
 */
import { errors, fail, type Text } from '../errors.js';
import type { OrderStatus } from './states.js';

/** INVALID_BODY naming one field, as the validator answers it. */
const fieldError = (field: string, text: Text) => errors.invalidBody({ formErrors: [], fieldErrors: { [field]: [text.en] } }, text);

export const orderErrors = {
  notFound: () => errors.notFound({ en: 'Order not found', id: 'Pesanan tidak ditemukan' }),
  notOwner: () => errors.forbidden({ en: 'This order belongs to another user', id: 'Pesanan ini milik pengguna lain' }),
  /** A move the transition table does not allow from the status found. */
  invalidState: (status: OrderStatus, move: string, needs: readonly string[]) =>
    fail.conflict(
      'INVALID_STATE',
      { en: `The order is ${status}; ${move} needs ${needs.join(' or ')}`, id: `Pesanan berstatus ${status}; ${move} memerlukan status ${needs.join(' atau ')}` },
      { extras: { status } },
    ),
  noClaimToConfirm: (status: OrderStatus) =>
    fail.conflict(
      'INVALID_STATE',
      { en: 'The order has no claimed manual transfer to confirm', id: 'Pesanan ini tidak memiliki klaim transfer manual untuk dikonfirmasi' },
      { extras: { status } },
    ),
  slaExpired: (deadline: Date) =>
    fail.conflict(
      'SLA_EXPIRED',
      { en: 'The SLA deadline has passed; the order is being refunded automatically', id: 'Batas waktu SLA telah lewat; pesanan sedang dikembalikan dananya secara otomatis' },
      { extras: { sla_deadline_at: deadline.toISOString() } },
    ),
  featureDisabled: () =>
    fail.unavailable('FEATURE_DISABLED', {
      en: 'Layanan jasa bayar sedang tidak tersedia / the payment service is disabled',
      id: 'Layanan jasa bayar sedang tidak tersedia',
    }),
  decryptFailed: () =>
    fail.internal('DECRYPT_FAILED', { en: 'The delivered credentials could not be decrypted', id: 'Kredensial yang dikirim tidak dapat didekripsi' }),

  // ---- Prices and the purchase URL ----
  priceTooLarge: (max: number) =>
    fail.badRequest('AMOUNT_TOO_LARGE', { en: `item_price must be at most ${max}`, id: `item_price paling banyak ${max}` }, { extras: { max_item_price_idr: max } }),
  priceNotWhole: () => fieldError('item_price', { en: 'item_price must be a whole number of rupiah', id: 'item_price harus bilangan bulat rupiah' }),
  priceTooSmall: (min: number) => fieldError('item_price', { en: `item_price must be at least ${min}`, id: `item_price paling sedikit ${min}` }),
  urlNotHttp: () => fieldError('target_url', { en: 'target_url must be an http or https URL', id: 'target_url harus URL http atau https' }),
  urlWithCredentials: () => fieldError('target_url', { en: 'target_url must not carry credentials', id: 'target_url tidak boleh memuat kredensial' }),
  urlWithoutHost: () => fieldError('target_url', { en: 'target_url needs a host', id: 'target_url memerlukan host' }),
  urlTooLong: (max: number) => fieldError('target_url', { en: `target_url must be at most ${max} characters`, id: `target_url paling banyak ${max} karakter` }),
};
