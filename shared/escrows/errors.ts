/**
 * The escrow error catalogue (consumer spec 4.2, section 3, 5.5): one factory per situation,
 * each owning its code, its kind (which owns the status) and its English and Indonesian
 * text. `message` answers the English text.
 */
import { errors, fail } from '../errors.js';
import type { EscrowStatus } from './states.js';

export const escrowErrors = {
  notFound: () => fail.notFound('ESCROW_NOT_FOUND', { en: 'Escrow not found', id: 'Escrow tidak ditemukan' }),
  /** The public preview answers the shared NOT_FOUND code. */
  previewNotFound: () => errors.notFound({ en: 'Escrow not found', id: 'Escrow tidak ditemukan' }),
  notParty: () => errors.forbidden({ en: 'You are not a party to this escrow', id: 'Anda bukan pihak dalam escrow ini' }),
  notBuyer: () => fail.forbidden('NOT_BUYER', { en: 'Only the buyer can do this', id: 'Hanya pembeli yang dapat melakukan ini' }),
  notSeller: () => fail.forbidden('NOT_SELLER', { en: 'Only the seller can do this', id: 'Hanya penjual yang dapat melakukan ini' }),
  /** A move the transition table does not allow from the status found. */
  invalidState: (status: EscrowStatus, needs: readonly string[]) =>
    fail.conflict(
      'INVALID_STATE',
      { en: `The escrow is ${status}; this needs ${needs.join(' or ')}`, id: `Escrow berstatus ${status}; tindakan ini memerlukan status ${needs.join(' atau ')}` },
      { extras: { status } },
    ),
  invalidAmount: (min: number, max: number) =>
    fail.badRequest('INVALID_AMOUNT', {
      en: `amount must be a whole number of rupiah from ${min} to ${max}`,
      id: `amount harus bilangan bulat rupiah dari ${min} sampai ${max}`,
    }),
  invalidCategory: () =>
    fail.unprocessable('INVALID_CATEGORY', { en: 'category must be goods, service or digital', id: 'category harus goods, service atau digital' }),
  invalidItemName: () => fail.unprocessable('INVALID_ITEM', { en: 'item_name must be 1 to 200 characters', id: 'item_name harus 1 sampai 200 karakter' }),
  counterpartyNotFound: (username: string) =>
    fail.notFound('USER_NOT_FOUND', { en: `No active user named ${username}`, id: `Tidak ada pengguna aktif bernama ${username}` }),
  sameAccount: () =>
    fail.unprocessable('SELLER_IS_BUYER', {
      en: 'The buyer and the seller must be different accounts',
      id: 'Pembeli dan penjual harus akun yang berbeda',
    }),
  sellerNotFound: () =>
    fail.unprocessable('SELLER_NOT_FOUND', { en: 'The seller of this link has no active account', id: 'Penjual tautan ini tidak memiliki akun aktif' }),
  signatureMismatch: () =>
    fail.unprocessable('SIG_MISMATCH', {
      en: 'The link signature does not match; ask the seller for a new link',
      id: 'Tanda tangan tautan tidak cocok; minta tautan baru kepada penjual',
    }),
  ownLink: () => fail.unprocessable('SELLER_IS_BUYER', { en: 'You cannot buy from your own link', id: 'Anda tidak dapat membeli dari tautan Anda sendiri' }),
  duplicateRef: (ref: string) =>
    fail.conflict('DUPLICATE_REF', { en: `This seller already has an escrow for ref ${ref}`, id: `Penjual ini sudah memiliki escrow untuk ref ${ref}` }),
  expired: () => fail.gone('EXPIRED', { en: 'This escrow expired before it was paid', id: 'Escrow ini kedaluwarsa sebelum dibayar' }),
  trackingIncomplete: () =>
    fail.badRequest('TRACKING_INCOMPLETE', {
      en: 'courier and tracking_number must be sent together (or both left out)',
      id: 'courier dan tracking_number harus dikirim bersama (atau keduanya dikosongkan)',
    }),
  unknownCourier: (courier: string) => fail.badRequest('INVALID_COURIER', { en: `unknown courier ${courier}`, id: `kurir ${courier} tidak dikenal` }),
  reasonRequired: () => fail.badRequest('MISSING_FIELDS', { en: 'reason is required', id: 'reason wajib diisi' }),
  reasonTooLong: () =>
    fail.badRequest('REASON_TOO_LONG', { en: 'reason may be at most 2000 characters', id: 'reason paling banyak 2000 karakter' }),
  /** Decision 0009: a payment underway wins over a cancel. */
  paymentInProgress: () =>
    fail.conflict('PAYMENT_IN_PROGRESS', {
      en: 'A payment for this escrow is underway; it can be cancelled once that payment expires or fails',
      id: 'Pembayaran untuk escrow ini sedang berlangsung; escrow dapat dibatalkan setelah pembayaran itu kedaluwarsa atau gagal',
    }),
  notExtendable: (status: EscrowStatus) =>
    fail.conflict(
      'INVALID_STATE',
      { en: `The escrow is ${status}; only a sent or received escrow can be extended`, id: `Escrow berstatus ${status}; hanya escrow yang dikirim atau diterima yang dapat diperpanjang` },
      { extras: { status } },
    ),
  releaseDue: (status: EscrowStatus) =>
    fail.conflict(
      'INVALID_STATE',
      { en: 'The release time has already passed; the escrow is being released', id: 'Waktu pelepasan sudah lewat; escrow sedang dilepaskan' },
      { extras: { status } },
    ),
  movedWhileExtending: () =>
    fail.conflict('INVALID_STATE', { en: 'The escrow moved while it was being extended', id: 'Escrow berubah saat sedang diperpanjang' }),
  extendDisabled: (category: string) =>
    fail.conflict('EXTEND_DISABLED', { en: `Escrows of category ${category} cannot be extended`, id: `Escrow kategori ${category} tidak dapat diperpanjang` }),
  extendLimitReached: (category: string, maxHours: number, extensionCount: number) =>
    fail.conflict(
      'EXTEND_LIMIT_REACHED',
      {
        en: `The release time is already at the ${category} maximum of ${maxHours} hours after shipping`,
        id: `Waktu pelepasan sudah mencapai batas ${category} yaitu ${maxHours} jam setelah pengiriman`,
      },
      { extras: { extension_count: extensionCount } },
    ),
};

/** The refusals of a signed partner link (spec 5.5, decision D3), in the order they are checked. */
export const linkErrors = {
  invalidUrl: () =>
    fail.badRequest('INVALID_URL', { en: 'link must be an absolute http or https URL', id: 'link harus URL http atau https yang absolut' }),
  repeatedParam: (name: string) =>
    fail.badRequest('INVALID_URL', { en: `link carries ${name} more than once`, id: `link memuat ${name} lebih dari sekali` }),
  hostNotAllowed: (allowed: readonly string[], host: string) =>
    fail.unprocessable('HOST_NOT_ALLOWED', {
      en: `links must point at this service (${allowed.join(', ')}), not ${host}`,
      id: `tautan harus mengarah ke layanan ini (${allowed.join(', ')}), bukan ${host}`,
    }),
  unsignedPartnerParams: () =>
    fail.badRequest('SIGNATURE_REQUIRED', {
      en: 'partner parameters must come with a signature (sig)',
      id: 'parameter mitra harus disertai tanda tangan (sig)',
    }),
  signatureRequired: () =>
    fail.badRequest('SIGNATURE_REQUIRED', { en: 'a signed partner link is required', id: 'diperlukan tautan mitra yang ditandatangani' }),
  unsupportedVersion: (version: string) =>
    fail.unprocessable('UNSUPPORTED_SIG_VERSION', {
      en: `signature version ${version} is not supported (supported: 1)`,
      id: `versi tanda tangan ${version} tidak didukung (yang didukung: 1)`,
    }),
  incomplete: (missing: readonly string[]) =>
    fail.unprocessable('SIG_INCOMPLETE', {
      en: `the link lacks ${missing.join(', ')} (ref, expires and v are required)`,
      id: `tautan tidak memuat ${missing.join(', ')} (ref, expires dan v wajib ada)`,
    }),
  invalidRef: () =>
    fail.unprocessable('SIG_INCOMPLETE', { en: 'ref must be at most 128 printable characters', id: 'ref paling banyak 128 karakter yang dapat dicetak' }),
  invalidExpires: () =>
    fail.unprocessable('INVALID_EXPIRES', { en: 'expires must be a unix timestamp in seconds', id: 'expires harus stempel waktu unix dalam detik' }),
  expired: () =>
    fail.unprocessable('LINK_EXPIRED', { en: 'this link has expired; ask the seller for a new one', id: 'tautan ini sudah kedaluwarsa; minta tautan baru kepada penjual' }),
  expiresTooFar: () => fail.unprocessable('EXPIRES_TOO_FAR', { en: 'expires may be at most 30 days ahead', id: 'expires paling lama 30 hari ke depan' }),
  invalidSeller: () => fail.unprocessable('INVALID_SELLER', { en: 'seller must be a UUID v4', id: 'seller harus UUID v4' }),
  invalidCategory: () => escrowErrors.invalidCategory(),
  invalidItem: (max: number) =>
    fail.unprocessable('INVALID_ITEM', { en: `item must be 1 to ${max} printable characters`, id: `item harus 1 sampai ${max} karakter yang dapat dicetak` }),
  invalidDescription: (max: number) =>
    fail.unprocessable('INVALID_ITEM', { en: `desc must be at most ${max} printable characters`, id: `desc paling banyak ${max} karakter yang dapat dicetak` }),
  buyerMismatch: () => fail.unprocessable('BUYER_MISMATCH', { en: 'this link was made for another buyer', id: 'tautan ini dibuat untuk pembeli lain' }),
};
