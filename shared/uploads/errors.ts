/**
 * Upload errors (consumer spec 4.5): every one carries `message_id` (Indonesian) and
 * `message_en`; `message` is Indonesian unless the request asked `X-Service-Lang: en`
 * (see `localise` in api/routes/uploads.ts).
 */
import { AppError, errors, type ErrorKind, type Text } from '../errors.js';
import { escrowErrors } from '../escrows/errors.js';

interface Entry extends Text {
  kind: ErrorKind;
}

export const UPLOAD_ERRORS = {
  INVALID_TYPE: { kind: 'badRequest', id: 'Jenis unggahan harus escrow, chat, atau kyc', en: 'Upload type must be escrow, chat or kyc' },
  NO_FILE: { kind: 'badRequest', id: 'Kirim tepat satu berkas di kolom "file" (multipart/form-data)', en: 'Send exactly one file in the "file" field (multipart/form-data)' },
  FILE_EMPTY: { kind: 'badRequest', id: 'Berkas kosong', en: 'The file is empty' },
  TYPE_NOT_ALLOWED: { kind: 'badRequest', id: 'Jenis berkas ini tidak diizinkan untuk unggahan ini', en: 'This kind of file is not allowed for this upload type' },
  TYPE_MISMATCH: { kind: 'badRequest', id: 'Isi berkas tidak cocok dengan jenis atau ekstensi yang dinyatakan', en: 'The file content does not match its declared type or extension' },
  POLYGLOT: { kind: 'badRequest', id: 'Berkas memuat isi dari jenis berkas lain dan ditolak', en: 'The file also carries content of another file type and is refused' },
  IMAGE_TOO_LARGE: { kind: 'badRequest', id: 'Gambar terlalu besar: paling banyak sekitar 40 megapiksel dan 12.000 piksel per sisi', en: 'Image too large: at most about 40 megapixels and 12,000 pixels per side' },
  IMAGE_DECODE_FAILED: { kind: 'badRequest', id: 'Gambar tidak dapat dibaca', en: 'The image could not be decoded' },
  PDF_PASSWORD_PROTECTED: { kind: 'badRequest', id: 'PDF dilindungi kata sandi', en: 'The PDF is password-protected' },
  PDF_DAMAGED: { kind: 'badRequest', id: 'PDF rusak atau tidak lengkap', en: 'The PDF is damaged or incomplete' },
  PDF_TOO_MANY_PAGES: { kind: 'badRequest', id: 'PDF memiliki terlalu banyak halaman', en: 'The PDF has too many pages' },
  PDF_UNSUPPORTED_ENCODING: { kind: 'badRequest', id: 'PDF memakai pengodean yang tidak didukung', en: 'The PDF uses an encoding that is not supported' },
  PDF_ACTIVE_CONTENT: { kind: 'badRequest', id: 'PDF memuat konten aktif yang tidak dapat dihapus', en: 'The PDF carries active content that could not be removed' },
  PDF_EMBEDDED_FILE: { kind: 'badRequest', id: 'PDF memuat berkas lampiran yang tidak dapat dihapus', en: 'The PDF carries an embedded file that could not be removed' },
  FILE_TOO_LARGE: { kind: 'tooLarge', id: 'Berkas melebihi ukuran maksimum untuk jenis unggahan ini', en: 'The file is larger than this upload type allows' },
  QUOTA_EXCEEDED: { kind: 'tooMany', id: 'Kuota unggahan harian tercapai; coba lagi besok', en: 'Daily upload quota reached; try again tomorrow' },
  STORAGE_FAILED: { kind: 'internal', id: 'Berkas tidak dapat disimpan; coba lagi', en: 'The file could not be stored; try again' },
  UPLOAD_INVALID_REF: { kind: 'badRequest', id: 'Tautan unggahan tidak dikenali', en: 'The upload reference is not a link to an upload of this service' },
  UPLOAD_NOT_FOUND: { kind: 'badRequest', id: 'Unggahan tidak ditemukan', en: 'Upload not found' },
  UPLOAD_NOT_OWNED: { kind: 'badRequest', id: 'Unggahan ini bukan milik Anda', en: 'This upload is not yours' },
  UPLOAD_WRONG_PURPOSE: { kind: 'badRequest', id: 'Jenis unggahan ini tidak dapat dilampirkan di sini', en: 'This upload type cannot be attached here' },
  UPLOAD_ALREADY_BOUND: { kind: 'conflict', id: 'Unggahan ini sudah dilampirkan', en: 'This upload is already attached' },
  UPLOAD_QUOTA: { kind: 'conflict', id: 'Jumlah lampiran maksimum sudah tercapai', en: 'The maximum number of attachments is reached' },
  LINK_INVALID: { kind: 'forbidden', id: 'Tautan berkas tidak sah', en: 'The file link is not valid' },
  LINK_EXPIRED: { kind: 'gone', id: 'Tautan berkas sudah kedaluwarsa; muat ulang untuk tautan baru', en: 'The file link has expired; reload for a fresh link' },
  LINK_NOT_YOURS: { kind: 'forbidden', id: 'Tautan berkas ini diterbitkan untuk pengguna lain', en: 'This file link was issued to another user' },
} as const satisfies Record<string, Entry>;

export type UploadErrorCode = keyof typeof UPLOAD_ERRORS;

export function uploadError(code: UploadErrorCode, extras: Record<string, unknown> = {}, headers: Record<string, string> = {}): AppError {
  const t: Entry = UPLOAD_ERRORS[code];
  return new AppError(t.kind, code, { en: t.en, id: t.id }, { extras, headers, bilingual: true });
}

/** The upload errors that are not in the table: a shared code, or the escrow's own. */
export const uploadErrors = {
  /** The link was valid but the upload (row or bytes) is gone: the shared NOT_FOUND (its Indonesian as the upload routes answered it). */
  fileNotFound: () => errors.notFound({ en: 'File not found', id: 'Tidak ditemukan' }),
  escrowNotFound: escrowErrors.notFound,
  notParty: escrowErrors.notParty,
};

export function isUploadErrorCode(code: string): code is UploadErrorCode {
  return Object.prototype.hasOwnProperty.call(UPLOAD_ERRORS, code);
}

/**
 * The error as an upload route answers it: `message_id` and `message_en` always present,
 * `message` in Indonesian unless English was asked for. Every factory carries its own
 * Indonesian text (the common codes' as the auth, idempotency and shared catalogues write them).
 */
export function localised(err: AppError, english: boolean): AppError {
  return err.localised(english);
}
