/**
 * The error catalogue of the hosted pages: the checkout at /pay/:id, its sign-in, the
 * operator console under /admin, and the form bodies they read. A page shows `message`
 * (the English text) unless the factory's caller localises it for the page's language.
 */
import { errors, fail } from '../errors.js';

const STALE_FORM = {
  en: 'The form is stale or did not come from this site; reload the page and try again',
  id: 'Formulir sudah usang atau tidak berasal dari situs ini; muat ulang halaman lalu coba lagi',
};

export const pageErrors = {
  /** A static page file that is not one of ours. */
  staticNotFound: () => errors.notFound(),
  /** The form's CSRF token (synchronizer or sign-in double-submit) does not match. */
  staleForm: () => fail.forbidden('CSRF_FAILED', STALE_FORM),
  formNotUrlencoded: () =>
    errors.unsupportedMediaType({ en: 'Send the form as application/x-www-form-urlencoded', id: 'Kirim formulir sebagai application/x-www-form-urlencoded' }),
  formTooLarge: () => fail.tooLarge('FST_ERR_CTP_BODY_TOO_LARGE', { en: 'Form too large', id: 'Formulir terlalu besar' }),
};

export const checkoutErrors = {
  /** An unknown id, or an escrow whose seller is gone: the shared NOT_FOUND. */
  escrowNotFound: () => errors.notFound({ en: 'Escrow not found', id: 'Escrow tidak ditemukan' }),
  signInFirst: () => errors.unauthorized({ en: 'Sign in first', id: 'Silakan masuk terlebih dahulu' }),
  missingMethod: () => fail.badRequest('MISSING_METHOD', { en: 'Choose a payment method', id: 'Pilih metode pembayaran' }),
  referenceTooLong: () =>
    fail.badRequest('INVALID_BODY', { en: 'reference may be at most 200 characters', id: 'reference paling banyak 200 karakter' }),
};

export const consoleErrors = {
  /** The console's verify form names the destination_version its reveal showed (issue 42). */
  destinationVersionRequired: () =>
    fail.badRequest('INVALID_BODY', {
      en: 'Reveal the instruction and verify from its page: destination_version (the version you were shown) is required',
      id: 'Tampilkan instruksi dan verifikasi dari halamannya: destination_version (versi yang Anda lihat) wajib diisi',
    }),
  /** A console list's filter out of its range (issue 46: the queues' search and filters). */
  invalidFilter: (en: string, id: string) => fail.badRequest('INVALID_QUERY', { en, id }),
  noteTooLong: () => fail.badRequest('NOTE_TOO_LONG', { en: 'The note may be at most 2000 characters', id: 'Catatan paling banyak 2000 karakter' }),
  invalidOutcome: () =>
    fail.badRequest('INVALID_OUTCOME', { en: 'outcome must be release, refund or hold', id: 'outcome harus release, refund atau hold' }),
  returnNoteRequired: () =>
    fail.badRequest('INVALID_BODY', {
      en: 'A note is required: where and how the money was returned',
      id: 'Catatan wajib diisi: ke mana dan bagaimana uang dikembalikan',
    }),
  fieldTooLong: (name: string, max: number) =>
    fail.badRequest('INVALID_BODY', { en: `${name} may be at most ${max} characters`, id: `${name} paling banyak ${max} karakter` }),
  credentialsOrNote: () =>
    fail.badRequest('MISSING_FIELDS', { en: 'Give the credentials or a delivery note', id: 'Isi kredensial atau catatan pengiriman' }),
  // KYB review: the admin API's body rules (shared/kyb/schemas.ts) for the console's forms.
  changeRequestsRequired: () =>
    fail.badRequest('INVALID_BODY', { en: 'Give at least one change request: a field and a note', id: 'Isi setidaknya satu permintaan perubahan: kolom dan catatan' }),
  changeRequestIncomplete: (row: number) =>
    fail.badRequest('INVALID_BODY', { en: `Change request ${row} needs both a field and a note`, id: `Permintaan perubahan ${row} perlu kolom dan catatan` }),
  tooManyChangeRequests: (max: number) =>
    fail.badRequest('INVALID_BODY', { en: `At most ${max} change requests at once`, id: `Paling banyak ${max} permintaan perubahan sekaligus` }),
  invalidRiskTier: () =>
    fail.badRequest('INVALID_BODY', { en: 'risk_tier must be low, standard, elevated or high', id: 'risk_tier harus low, standard, elevated atau high' }),
  reasonRequired: () =>
    fail.badRequest('INVALID_BODY', { en: 'Give the reason for the rejection (at least 2 characters)', id: 'Isi alasan penolakan (minimal 2 karakter)' }),
  // Deal fee override: the admin API's body rules (shared/deals/schemas.ts feeOverride) for the console's form.
  invalidAllocation: () =>
    fail.badRequest('INVALID_BODY', { en: 'fee_allocation must be buyer, seller or split', id: 'fee_allocation harus buyer, seller atau split' }),
  invalidBuyerPercent: () =>
    fail.badRequest('INVALID_BODY', {
      en: 'fee_buyer_percent must be a whole number from 0 to 100',
      id: 'fee_buyer_percent harus bilangan bulat dari 0 sampai 100',
    }),
  allocationRequired: () =>
    fail.badRequest('INVALID_BODY', { en: 'Choose fee_allocation or give fee_buyer_percent', id: 'Pilih fee_allocation atau isi fee_buyer_percent' }),
  overrideReasonRequired: () =>
    fail.badRequest('INVALID_BODY', {
      en: 'Give the reason for the override (at least 2 characters)',
      id: 'Isi alasan perubahan pembagian biaya (minimal 2 karakter)',
    }),
  // Payouts and deal rulings (issue 27): the admin API's body rules (shared/payouts/schemas.ts fail, shared/deals/schemas.ts resolveDispute).
  failReasonRequired: () =>
    fail.badRequest('INVALID_BODY', { en: 'Give the reason the payout failed (1 to 1000 characters)', id: 'Isi alasan pembayaran gagal (1 sampai 1000 karakter)' }),
  declineReasonRequired: () =>
    fail.badRequest('INVALID_BODY', {
      en: 'Give the reason the instruction is declined (1 to 1000 characters; the workspace sees it)',
      id: 'Isi alasan instruksi ditolak (1 sampai 1000 karakter; workspace melihatnya)',
    }),
  invalidRulingOutcome: () =>
    fail.badRequest('INVALID_BODY', { en: 'outcome must be release, refund or split', id: 'outcome harus release, refund atau split' }),
  releaseAmountRequired: () =>
    fail.badRequest('INVALID_BODY', {
      en: 'A split needs release_amount: a whole number of rupiah from 1 to 50000000000',
      id: 'Pembagian memerlukan release_amount: bilangan bulat rupiah dari 1 sampai 50000000000',
    }),
  releaseAmountOnlyWithSplit: () =>
    fail.badRequest('INVALID_BODY', { en: 'release_amount is given only with the split outcome', id: 'release_amount hanya diisi untuk hasil split' }),
};
