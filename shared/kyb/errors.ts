/**
 * The KYB error catalogue (enterprise spec 4.2 and 7; decisions D10, 0017). Upload
 * refusals keep the sanitiser's codes, in the enterprise envelope, except the one the
 * enterprise spec names differently (PDF_ENCRYPTED for the consumer PDF_PASSWORD_PROTECTED).
 */
import { AppError, errors, fail } from '../errors.js';

export const kybErrors = {
  locked: () =>
    fail.conflict('APPLICATION_LOCKED', {
      en: 'The application is submitted or approved and cannot be edited',
      id: 'Aplikasi sudah dikirim atau disetujui dan tidak dapat diubah',
    }),
  incomplete: (missing: { steps: string[]; documents: string[] }) =>
    fail.badRequest(
      'APPLICATION_INCOMPLETE',
      { en: 'The application is not complete; see missing', id: 'Aplikasi belum lengkap; lihat missing' },
      { extras: { missing } },
    ),
  notSubmitted: () =>
    fail.conflict('INVALID_STATE', {
      en: 'Only a submitted application can be reviewed',
      id: 'Hanya aplikasi yang sudah dikirim yang dapat ditinjau',
    }),
  changed: () =>
    fail.conflict('CONCURRENT_MODIFICATION', {
      en: 'The application changed while this request ran; reload and try again',
      id: 'Aplikasi berubah saat permintaan ini berjalan; muat ulang dan coba lagi',
    }),
  fileTooLarge: (maxBytes: number) =>
    fail.tooLarge('FILE_TOO_LARGE', { en: 'The file is larger than 10 MB', id: 'Berkas lebih besar dari 10 MB' }, { extras: { max_bytes: maxBytes } }),
  applicationNotFound: () => errors.notFound({ en: 'No KYB application with this id', id: 'Tidak ada aplikasi KYB dengan id ini' }),
  documentNotFound: () => errors.notFound({ en: 'No document with this id on the application', id: 'Tidak ada dokumen dengan id ini pada aplikasi' }),
  uploadNotFound: () => errors.notFound({ en: 'No upload with this id', id: 'Tidak ada unggahan dengan id ini' }),
  fileNotOwned: () =>
    fail.forbidden('FILE_NOT_OWNED', { en: 'This upload belongs to someone else', id: 'Unggahan ini milik orang lain' }),
  uploadAttached: () =>
    fail.conflict('INVALID_STATE', {
      en: 'This upload is already attached, or is not a KYB upload',
      id: 'Unggahan ini sudah dilampirkan, atau bukan unggahan KYB',
    }),
  tooManyDocuments: (max: number) =>
    fail.conflict('INVALID_STATE', {
      en: `An application holds at most ${max} documents; remove one first`,
      id: `Satu aplikasi paling banyak memuat ${max} dokumen; hapus salah satu terlebih dahulu`,
    }),
  /** A field rule that needs the whole draft (joi sees one section): INVALID_BODY with field errors. */
  invalidField: errors.invalidField,

  // ---- Counterparty invite links (4.2)
  inviteInvalid: () =>
    fail.notFound('INVITE_INVALID', {
      en: 'This verification link is not valid or was revoked',
      id: 'Tautan verifikasi ini tidak sah atau sudah dicabut',
    }),
  inviteExpired: () =>
    fail.gone('INVITE_EXPIRED', { en: 'This verification link has expired; ask for a new one', id: 'Tautan verifikasi ini sudah kedaluwarsa; minta tautan baru' }),
  inviteClaimed: () =>
    fail.forbidden('INVITE_CLAIMED', {
      en: 'Another user has already opened this verification link',
      id: 'Pengguna lain sudah membuka tautan verifikasi ini',
    }),
  underReview: () =>
    fail.conflict('APPLICATION_LOCKED', {
      en: 'The application is under review; a fresh start is possible once staff have decided it',
      id: 'Aplikasi sedang ditinjau; mulai ulang dapat dilakukan setelah staf memutuskannya',
    }),
  counterpartyVerified: () =>
    fail.conflict('INVALID_STATE', { en: 'This counterparty is already verified', id: 'Pihak lawan ini sudah terverifikasi' }),
};

/** The sanitiser's refusal in the enterprise envelope (English message, no bilingual fields), renamed where 4.2 says so. */
export function enterpriseUploadError(err: AppError): AppError {
  const code = err.code === 'PDF_PASSWORD_PROTECTED' ? 'PDF_ENCRYPTED' : err.code;
  const text = err.text;
  const { message_id: _id, message_en: _en, ...extras } = err.extras;
  return new AppError(err.kind, code, text, { extras, headers: err.headers });
}
