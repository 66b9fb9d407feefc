/**
 * The payments error catalogue (consumer spec 4.2 pay / payment-status / claim-payment,
 * section 6 callbacks; decisions D4, D10, 0009): one factory per situation, each owning its
 * code, its kind (which owns the status) and its English and Indonesian text.
 */
import { errors, fail, type Text } from '../errors.js';

export const paymentErrors = {
  // ---- Choosing a gateway and a method ----
  noGateways: () =>
    fail.unavailable('NO_GATEWAYS', {
      en: 'No payment gateway is available right now; try again later',
      id: 'Tidak ada gateway pembayaran yang tersedia saat ini; coba lagi nanti',
    }),
  providerUnavailable: (provider: string, method: string) =>
    fail.badRequest('UNSUPPORTED_METHOD', {
      en: `Provider ${provider} is not available for ${method}`,
      id: `Penyedia ${provider} tidak tersedia untuk ${method}`,
    }),
  noGatewayForMethod: (method: string) =>
    fail.badRequest('UNSUPPORTED_METHOD', { en: `No available gateway supports ${method}`, id: `Tidak ada gateway tersedia yang mendukung ${method}` }),
  adapterNotLoaded: (method: string) =>
    fail.unavailable('ADAPTER_NOT_LOADED', {
      en: `The gateway for ${method} is not configured on this server`,
      id: `Gateway untuk ${method} belum dikonfigurasi di server ini`,
    }),
  missingMethod: () => fail.badRequest('MISSING_METHOD', { en: 'method is required', id: 'method wajib diisi' }),
  unsupportedMethod: (methods: readonly string[]) =>
    fail.badRequest('UNSUPPORTED_METHOD', { en: `method must be one of ${methods.join(', ')}`, id: `method harus salah satu dari ${methods.join(', ')}` }),
  gatewayRefused: (reason: string) =>
    fail.badGateway('GATEWAY_ERROR', { en: `The payment gateway refused the charge: ${reason}`, id: `Gateway pembayaran menolak tagihan: ${reason}` }),

  // ---- The escrow a payment is for ----
  escrowNotFound: () => fail.notFound('ESCROW_NOT_FOUND', { en: 'Escrow not found', id: 'Escrow tidak ditemukan' }),
  notBuyerToPay: () => fail.forbidden('NOT_BUYER', { en: 'Only the buyer can pay this escrow', id: 'Hanya pembeli yang dapat membayar escrow ini' }),
  notBuyerToClaim: () => fail.forbidden('NOT_BUYER', { en: 'Only the buyer can claim a payment', id: 'Hanya pembeli yang dapat mengklaim pembayaran' }),
  notEscrowParty: () => errors.forbidden({ en: 'You are not a party to this escrow', id: 'Anda bukan pihak dalam escrow ini' }),
  escrowNotPayable: (status: string) =>
    fail.conflict(
      'INVALID_STATE',
      { en: `The escrow is ${status}; only a pending_payment escrow can be paid`, id: `Escrow berstatus ${status}; hanya escrow pending_payment yang dapat dibayar` },
      { extras: { status } },
    ),
  escrowPastDeadline: (status: string) =>
    fail.conflict(
      'INVALID_STATE',
      { en: 'The escrow passed its payment deadline and is expiring', id: 'Escrow melewati batas waktu pembayaran dan sedang kedaluwarsa' },
      { extras: { status } },
    ),

  // ---- Payments ----
  notFound: () => errors.notFound({ en: 'Payment not found', id: 'Pembayaran tidak ditemukan' }),
  /** `what`: escrow or order. */
  noPayment: (what: 'escrow' | 'order') =>
    fail.notFound('NO_PAYMENT', {
      en: `No payment has been started for this ${what}`,
      id: `Belum ada pembayaran yang dimulai untuk ${what === 'escrow' ? 'escrow' : 'pesanan'} ini`,
    }),
  notManual: () =>
    fail.conflict('NOT_MANUAL', {
      en: 'The latest payment is not a manual transfer; it completes by itself',
      id: 'Pembayaran terakhir bukan transfer manual; pembayaran itu selesai dengan sendirinya',
    }),
  /** A status move the payment transition table does not allow from the status found. */
  invalidState: (status: string, needs: Text) =>
    fail.conflict(
      'INVALID_STATE',
      { en: `The payment is ${status}; ${needs.en}`, id: `Pembayaran berstatus ${status}; ${needs.id}` },
      { extras: { status } },
    ),
  /** Staff credit or return: the payment is not late or mismatched money. */
  notSettleable: (status: string, flag: string | null, how: 'credit' | 'return') =>
    fail.conflict(
      'INVALID_STATE',
      {
        en: `The payment is ${status}${flag ? ` (${flag})` : ''}; only an unsettled amount mismatch or a late manual claim can be ${how === 'credit' ? 'credited' : 'marked returned'}`,
        id: `Pembayaran berstatus ${status}${flag ? ` (${flag})` : ''}; hanya selisih jumlah yang belum diselesaikan atau klaim manual yang terlambat yang dapat ${how === 'credit' ? 'dikreditkan' : 'ditandai dikembalikan'}`,
      },
      { extras: { status, flag } },
    ),

  // ---- Inbound callbacks (spec section 6) ----
  unknownProvider: () =>
    fail.badRequest('UNKNOWN_PROVIDER', {
      en: 'The callback does not come from a configured payment gateway',
      id: 'Callback tidak berasal dari gateway pembayaran yang dikonfigurasi',
    }),
  invalidSignature: () => fail.forbidden('INVALID_SIGNATURE', { en: 'The callback signature does not verify', id: 'Tanda tangan callback tidak valid' }),
  invalidCallback: () =>
    fail.badRequest('INVALID_CALLBACK', {
      en: 'The callback payload is not one this gateway sends',
      id: 'Isi callback bukan yang dikirim oleh gateway ini',
    }),
  callbackNotJson: () =>
    fail.badRequest('INVALID_CALLBACK', {
      en: 'A gateway callback must be a JSON body (Content-Type: application/json)',
      id: 'Callback gateway harus berupa isi JSON (Content-Type: application/json)',
    }),

  // ---- Sandbox (decision D4) ----
  noSandboxPayment: () =>
    errors.notFound({ en: 'No sandbox payment with this gateway_order_id', id: 'Tidak ada pembayaran sandbox dengan gateway_order_id ini' }),
  notBuyerToSimulate: () => errors.forbidden({ en: 'Only the buyer can simulate this payment', id: 'Hanya pembeli yang dapat menyimulasikan pembayaran ini' }),
};
