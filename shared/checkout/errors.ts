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
};
