/**
 * The auth error catalogue (consumer spec 4.1 and section 5, decisions D1 and D2): one
 * factory per situation, each owning its code, its kind (which owns the status) and its
 * English and Indonesian text. `message` answers the English text.
 *
 * The Indonesian of the codes an upload route can answer (UNAUTHORIZED, INVALID_TOKEN,
 * SESSION_EXPIRED, CSRF_FAILED, SUSPENDED, ACCOUNT_INACTIVE, FORBIDDEN) is the upload
 * catalogue's common text for that code, so those answers read the same as before.
 */
import { errors, fail } from '../errors.js';

export type InvalidCodeReason = 'wrong' | 'expired' | 'exhausted';
/** How a refused code answers: sign-in (unauthorized) or e-mail verification (badRequest). */
export type CodeErrorKind = 'unauthorized' | 'badRequest';

const INVALID_CODE_TEXT = {
  wrong: { en: 'The code is not correct', id: 'Kode tidak benar' },
  expired: { en: 'The code has expired; ask for a new one', id: 'Kode sudah kedaluwarsa; minta kode baru' },
  exhausted: { en: 'Too many wrong codes; ask for a new one', id: 'Terlalu banyak kode yang salah; minta kode baru' },
} as const;

const INVALID_TOKEN_ID = 'Kunci API tidak sah atau sudah dicabut';

export const authErrors = {
  // ---- Credentials on every authenticated request (api/middleware/auth.ts)
  /** No credentials on a route that needs them. */
  unauthorized: () => errors.unauthorized(),
  staffSignInRequired: () => errors.unauthorized({ en: 'Sign in with a staff account', id: 'Masuk dengan akun staf' }),
  malformedAuthorization: () =>
    fail.unauthorized('INVALID_TOKEN', { en: 'Authorization must be "Bearer <API key>"', id: INVALID_TOKEN_ID }),
  invalidKey: () => fail.unauthorized('INVALID_TOKEN', { en: 'The API key is wrong or has been revoked', id: INVALID_TOKEN_ID }),
  invalidSession: () => fail.unauthorized('INVALID_TOKEN', { en: 'The session is not valid; sign in again', id: INVALID_TOKEN_ID }),
  sessionExpired: () =>
    fail.unauthorized('SESSION_EXPIRED', { en: 'Your session has ended; sign in again', id: 'Sesi sudah berakhir; masuk lagi' }),
  workspaceKeyOnly: () =>
    fail.unauthorized('WORKSPACE_KEY_ONLY', {
      en: 'Workspace keys (rpe_) work only under /v1/enterprise',
      id: 'Kunci workspace (rpe_) hanya berlaku di bawah /v1/enterprise',
    }),
  csrfFailed: () => fail.forbidden('CSRF_FAILED', { en: 'Missing or wrong X-CSRF-Token header', id: 'Token CSRF tidak cocok' }),
  crossOriginWrite: () => fail.forbidden('CSRF_FAILED', { en: 'Cross-origin write refused', id: 'Penulisan dari origin lain ditolak' }),
  staffOnly: () => errors.forbidden({ en: 'Staff only', id: 'Akses ditolak' }),
  /** Too many failed credentials from this address or with this key prefix (api/middleware/rate-limit.ts). */
  tooManyFailedCredentials: (retryAfterSeconds: number) =>
    errors.rateLimited(retryAfterSeconds, 'RATE_LIMITED', {
      en: 'Too many failed sign-in credentials; try again later',
      id: 'Terlalu banyak kredensial masuk yang salah; coba lagi nanti',
    }),
  /** An address blocked for failed credentials is refused even with valid ones until its window ends. */
  addressBlocked: (retryAfterSeconds: number) =>
    errors.rateLimited(retryAfterSeconds, 'RATE_LIMITED', {
      en: 'Too many failed sign-in credentials from this address; try again later',
      id: 'Terlalu banyak kredensial masuk yang salah dari alamat ini; coba lagi nanti',
    }),

  // ---- Account state (spec section 5 rule 2)
  suspended: () => fail.forbidden('SUSPENDED', { en: 'This account is suspended; contact support', id: 'Akun ditangguhkan' }),
  inactive: () => fail.forbidden('ACCOUNT_INACTIVE', { en: 'This account is closed or being deleted', id: 'Akun tidak aktif' }),

  // ---- Sign-up and e-mail verification
  emailTaken: () =>
    fail.conflict('EMAIL_TAKEN', { en: 'An account with this e-mail already exists', id: 'Akun dengan e-mail ini sudah ada' }),
  alreadyVerified: () =>
    fail.conflict('ALREADY_VERIFIED', { en: 'This e-mail address is already verified', id: 'Alamat e-mail ini sudah terverifikasi' }),
  weakPassword: () =>
    fail.badRequest('WEAK_PASSWORD', {
      en: 'Password needs at least 8 characters with upper- and lower-case letters and a digit',
      id: 'Kata sandi minimal 8 karakter dengan huruf besar, huruf kecil dan angka',
    }),
  invalidUsername: () =>
    fail.badRequest('INVALID_USERNAME', {
      en: 'Username must be 3-30 characters: letters, digits, underscore or dot',
      id: 'Nama pengguna harus 3-30 karakter: huruf, angka, garis bawah atau titik',
    }),

  // ---- E-mailed codes and sign-in tickets
  invalidCode: (reason: InvalidCodeReason, kind: CodeErrorKind = 'unauthorized') =>
    fail[kind]('INVALID_CODE', INVALID_CODE_TEXT[reason], { extras: { reason } }),
  invalidTicket: () =>
    fail.unauthorized('INVALID_TICKET', {
      en: 'The sign-in ticket is unknown or has expired; sign in again',
      id: 'Tiket masuk tidak dikenal atau sudah kedaluwarsa; masuk lagi',
    }),

  // ---- Sign-in (spec section 5 rule 3)
  accountLocked: () =>
    fail.locked('ACCOUNT_LOCKED', {
      en: 'Too many failed sign-ins; sign-in is locked for a while',
      id: 'Terlalu banyak percobaan masuk gagal; masuk dikunci untuk sementara',
    }),
  addressLocked: (retryAfterSeconds: number) =>
    errors.rateLimited(retryAfterSeconds, 'LOGIN_LOCKED', {
      en: 'Too many failed sign-ins from this address; try again later',
      id: 'Terlalu banyak percobaan masuk gagal dari alamat ini; coba lagi nanti',
    }),
  turnstileRequired: () =>
    fail.badRequest(
      'TURNSTILE_REQUIRED',
      { en: 'Complete the bot check and try again', id: 'Selesaikan pemeriksaan bot lalu coba lagi' },
      { extras: { requires_captcha: true } },
    ),
  turnstileFailed: () =>
    fail.badRequest(
      'TURNSTILE_FAILED',
      { en: 'The bot check failed; try it again', id: 'Pemeriksaan bot gagal; coba lagi' },
      { extras: { requires_captcha: true } },
    ),
  wrongCredentials: (requiresCaptcha: boolean) =>
    fail.unauthorized(
      'INVALID_CREDENTIALS',
      { en: 'E-mail or password is wrong', id: 'E-mail atau kata sandi salah' },
      { extras: { requires_captcha: requiresCaptcha } },
    ),
  twoFactorMethodUnsupported: () =>
    fail.notImplemented('TWO_FACTOR_METHOD_UNSUPPORTED', {
      en: 'This two-step method is not supported',
      id: 'Metode verifikasi dua langkah ini tidak didukung',
    }),

  // ---- Personal API keys
  rotateLimited: (retryAfterSeconds: number) =>
    errors.rateLimited(retryAfterSeconds, 'ROTATE_LIMITED', {
      en: 'At most 5 key rotations per hour; your current key keeps working',
      id: 'Paling banyak 5 rotasi kunci per jam; kunci Anda saat ini tetap berlaku',
    }),

  // ---- Passwords
  invalidResetToken: () =>
    fail.badRequest('INVALID_RESET_TOKEN', {
      en: 'This reset link is unknown, used or expired; ask for a new one',
      id: 'Tautan atur ulang ini tidak dikenal, sudah dipakai atau kedaluwarsa; minta tautan baru',
    }),
  wrongCurrentPassword: () =>
    fail.unauthorized('INVALID_CREDENTIALS', { en: 'The current password is wrong', id: 'Kata sandi saat ini salah' }),
};
