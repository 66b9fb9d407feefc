/**
 * Upload errors (consumer spec 4.5): every one carries `message_id` (Indonesian) and
 * `message_en`; `message` is Indonesian unless the request asked `X-Service-Lang: en`
 * (see `localise` in api/routes/uploads.ts).
 */
import { AppError } from '../errors.js';

interface Text {
  status: number;
  id: string;
  en: string;
}

export const UPLOAD_ERRORS = {
  INVALID_TYPE: { status: 400, id: 'Jenis unggahan harus escrow, chat, atau kyc', en: 'Upload type must be escrow, chat or kyc' },
  NO_FILE: { status: 400, id: 'Kirim tepat satu berkas di kolom "file" (multipart/form-data)', en: 'Send exactly one file in the "file" field (multipart/form-data)' },
  FILE_EMPTY: { status: 400, id: 'Berkas kosong', en: 'The file is empty' },
  TYPE_NOT_ALLOWED: { status: 400, id: 'Jenis berkas ini tidak diizinkan untuk unggahan ini', en: 'This kind of file is not allowed for this upload type' },
  TYPE_MISMATCH: { status: 400, id: 'Isi berkas tidak cocok dengan jenis atau ekstensi yang dinyatakan', en: 'The file content does not match its declared type or extension' },
  POLYGLOT: { status: 400, id: 'Berkas memuat isi dari jenis berkas lain dan ditolak', en: 'The file also carries content of another file type and is refused' },
  IMAGE_TOO_LARGE: { status: 400, id: 'Gambar terlalu besar: paling banyak sekitar 40 megapiksel dan 12.000 piksel per sisi', en: 'Image too large: at most about 40 megapixels and 12,000 pixels per side' },
  IMAGE_DECODE_FAILED: { status: 400, id: 'Gambar tidak dapat dibaca', en: 'The image could not be decoded' },
  PDF_PASSWORD_PROTECTED: { status: 400, id: 'PDF dilindungi kata sandi', en: 'The PDF is password-protected' },
  PDF_DAMAGED: { status: 400, id: 'PDF rusak atau tidak lengkap', en: 'The PDF is damaged or incomplete' },
  PDF_TOO_MANY_PAGES: { status: 400, id: 'PDF memiliki terlalu banyak halaman', en: 'The PDF has too many pages' },
  PDF_UNSUPPORTED_ENCODING: { status: 400, id: 'PDF memakai pengodean yang tidak didukung', en: 'The PDF uses an encoding that is not supported' },
  PDF_ACTIVE_CONTENT: { status: 400, id: 'PDF memuat konten aktif yang tidak dapat dihapus', en: 'The PDF carries active content that could not be removed' },
  PDF_EMBEDDED_FILE: { status: 400, id: 'PDF memuat berkas lampiran yang tidak dapat dihapus', en: 'The PDF carries an embedded file that could not be removed' },
  FILE_TOO_LARGE: { status: 413, id: 'Berkas melebihi ukuran maksimum untuk jenis unggahan ini', en: 'The file is larger than this upload type allows' },
  QUOTA_EXCEEDED: { status: 429, id: 'Kuota unggahan harian tercapai; coba lagi besok', en: 'Daily upload quota reached; try again tomorrow' },
  STORAGE_FAILED: { status: 500, id: 'Berkas tidak dapat disimpan; coba lagi', en: 'The file could not be stored; try again' },
  UPLOAD_INVALID_REF: { status: 400, id: 'Tautan unggahan tidak dikenali', en: 'The upload reference is not a link to an upload of this service' },
  UPLOAD_NOT_FOUND: { status: 400, id: 'Unggahan tidak ditemukan', en: 'Upload not found' },
  UPLOAD_NOT_OWNED: { status: 400, id: 'Unggahan ini bukan milik Anda', en: 'This upload is not yours' },
  UPLOAD_WRONG_PURPOSE: { status: 400, id: 'Jenis unggahan ini tidak dapat dilampirkan di sini', en: 'This upload type cannot be attached here' },
  UPLOAD_ALREADY_BOUND: { status: 409, id: 'Unggahan ini sudah dilampirkan', en: 'This upload is already attached' },
  UPLOAD_QUOTA: { status: 409, id: 'Jumlah lampiran maksimum sudah tercapai', en: 'The maximum number of attachments is reached' },
  LINK_INVALID: { status: 403, id: 'Tautan berkas tidak sah', en: 'The file link is not valid' },
  LINK_EXPIRED: { status: 410, id: 'Tautan berkas sudah kedaluwarsa; muat ulang untuk tautan baru', en: 'The file link has expired; reload for a fresh link' },
  LINK_NOT_YOURS: { status: 403, id: 'Tautan berkas ini diterbitkan untuk pengguna lain', en: 'This file link was issued to another user' },
} as const satisfies Record<string, Text>;

export type UploadErrorCode = keyof typeof UPLOAD_ERRORS;

export function uploadError(code: UploadErrorCode, extras: Record<string, unknown> = {}, headers: Record<string, string> = {}): AppError {
  const t: Text = UPLOAD_ERRORS[code];
  return new AppError(t.status, code, t.id, { message_id: t.id, message_en: t.en, ...extras }, headers);
}

export function isUploadErrorCode(code: string): code is UploadErrorCode {
  return Object.prototype.hasOwnProperty.call(UPLOAD_ERRORS, code);
}

/** Indonesian messages for the common errors an upload route can answer (the English is the error's own message). */
const COMMON_ID: Record<string, string> = {
  UNAUTHORIZED: 'Masuk atau kirim kunci API pribadi',
  INVALID_TOKEN: 'Kunci API tidak sah atau sudah dicabut',
  SESSION_EXPIRED: 'Sesi sudah berakhir; masuk lagi',
  CSRF_FAILED: 'Token CSRF tidak cocok',
  ACCOUNT_INACTIVE: 'Akun tidak aktif',
  SUSPENDED: 'Akun ditangguhkan',
  FORBIDDEN: 'Akses ditolak',
  NOT_FOUND: 'Tidak ditemukan',
  RATE_LIMITED: 'Terlalu banyak permintaan; coba lagi nanti',
  IDEMPOTENCY_KEY_INVALID: 'Idempotency-Key harus UUID v4',
  IDEMPOTENCY_KEY_CONFLICT: 'Idempotency-Key ini sudah dipakai dengan isi permintaan lain',
  IDEMPOTENCY_KEY_IN_FLIGHT: 'Permintaan dengan Idempotency-Key ini masih berjalan; coba lagi sebentar',
  IDEMPOTENCY_LOOKUP_FAILED: 'Idempotency-Key tidak dapat diperiksa; coba lagi dengan kunci yang sama',
  IDEMPOTENCY_INSERT_FAILED: 'Idempotency-Key tidak dapat dicatat; coba lagi dengan kunci yang sama',
  INTERNAL_ERROR: 'Terjadi kesalahan di sisi kami; coba lagi nanti',
};

/**
 * The error as an upload route answers it: `message_id` and `message_en` always present,
 * `message` in Indonesian unless English was asked for.
 */
export function localised(err: AppError, english: boolean): AppError {
  const en = typeof err.extras.message_en === 'string' ? err.extras.message_en : err.message;
  const id = typeof err.extras.message_id === 'string' ? err.extras.message_id : (COMMON_ID[err.code] ?? err.message);
  return new AppError(err.status, err.code, english ? en : id, { ...err.extras, message_id: id, message_en: en }, err.headers);
}
