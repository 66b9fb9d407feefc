/**
 * The enterprise error catalogue (enterprise spec sections 4.1, 4.9, 4.10, 5 and 7;
 * decision 0011): one factory per situation, each owning its code, its kind (which owns
 * the status) and its English and Indonesian text. `message` answers the English text.
 * The shared codes (NOT_FOUND, FORBIDDEN, INVALID_BODY, INVALID_QUERY) come from
 * `errors` with the enterprise wording.
 */
import { errors, fail } from '../errors.js';

export const enterpriseErrors = {
  // ---- The caller and the access decision (section 5), in the order they are checked
  /** A workspace key that is unknown, revoked, or whose creator is no longer an active member (rule 3). */
  invalidKey: () =>
    fail.unauthorized('INVALID_TOKEN', {
      en: 'The API key is wrong, revoked, or its creator left the workspace',
      id: 'Kunci API salah, sudah dicabut, atau pembuatnya sudah keluar dari workspace',
    }),
  /** The consumer account check (shared/auth/account-state.ts), worded for the key's creator. */
  keyOwnerSuspended: () =>
    fail.forbidden('SUSPENDED', {
      en: 'The account behind this key is suspended; contact support',
      id: 'Akun di balik kunci ini ditangguhkan; hubungi dukungan',
    }),
  keyOwnerInactive: () =>
    fail.forbidden('ACCOUNT_INACTIVE', {
      en: 'The account behind this key is closed or being deleted',
      id: 'Akun di balik kunci ini sudah ditutup atau sedang dihapus',
    }),
  keyNotAllowed: () =>
    fail.forbidden('KEY_NOT_ALLOWED', {
      en: 'This route is for the dashboard only; API keys cannot use it',
      id: 'Rute ini hanya untuk dasbor; kunci API tidak dapat memakainya',
    }),
  scopeRequired: () =>
    fail.forbidden('SCOPE_REQUIRED', {
      en: 'This key is read-only; use a key with the write scope',
      id: 'Kunci ini hanya-baca; gunakan kunci dengan cakupan write',
    }),
  invalidAccount: () =>
    fail.badRequest('INVALID_ACCOUNT', {
      en: 'X-Enterprise-Account must be a workspace id',
      id: 'X-Enterprise-Account harus berisi id workspace',
    }),
  /** No active membership in the workspace named (or the caller was removed mid-request). */
  noWorkspace: () =>
    fail.forbidden('NO_WORKSPACE', {
      en: 'You are not an active member of this workspace',
      id: 'Anda bukan anggota aktif workspace ini',
    }),
  roleTooLow: (needed: string) =>
    errors.forbidden({
      en: `This needs the ${needed} role or higher in the workspace`,
      id: `Tindakan ini memerlukan peran ${needed} atau lebih tinggi di workspace`,
    }),

  // ---- Registration (4.1)
  /** The bot check is on and the body has no token: a field error like joi's. */
  turnstileRequired: () => errors.invalidBody({ formErrors: [], fieldErrors: { turnstile_token: ['is required'] } }),
  turnstileFailed: () =>
    fail.forbidden('TURNSTILE_FAILED', { en: 'The bot check failed; try it again', id: 'Pemeriksaan bot gagal; coba lagi' }),
  registrationRunning: () =>
    fail.conflict('TRY_AGAIN', {
      en: 'Another workspace sign-up of yours is still running; try again in a moment',
      id: 'Pendaftaran workspace Anda yang lain masih berjalan; coba lagi sebentar lagi',
    }),
  workspaceLimit: (max: number) =>
    fail.conflict('WORKSPACE_LIMIT', {
      en: `One account may own at most ${max} workspaces`,
      id: `Satu akun paling banyak dapat memiliki ${max} workspace`,
    }),

  // ---- Members and invites (4.1, decision D7)
  inviteNotFound: () =>
    errors.notFound({ en: 'No pending invite for you with this id', id: 'Tidak ada undangan tertunda untuk Anda dengan id ini' }),
  inviteeNotFound: () =>
    errors.notFound({
      en: 'No active account uses this e-mail; ask them to sign up first',
      id: 'Tidak ada akun aktif dengan e-mail ini; minta mereka mendaftar dulu',
    }),
  alreadyMember: () =>
    fail.conflict('INVALID_STATE', {
      en: 'This person is already a member or has a pending invite',
      id: 'Orang ini sudah menjadi anggota atau memiliki undangan tertunda',
    }),
  memberNotFound: () =>
    errors.notFound({ en: 'No member with this id in the workspace', id: 'Tidak ada anggota dengan id ini di workspace' }),
  ownerMovesOwnerOnly: () =>
    errors.forbidden({
      en: 'Only an owner can grant or remove the owner role',
      id: 'Hanya pemilik yang dapat memberikan atau mencabut peran pemilik',
    }),
  lastOwner: () =>
    fail.conflict('INVALID_STATE', {
      en: 'The last owner cannot leave or step down; make someone else owner first',
      id: 'Pemilik terakhir tidak dapat keluar atau mundur; jadikan orang lain pemilik terlebih dahulu',
    }),

  // ---- Counterparties, keys, exports
  counterpartyNotFound: () =>
    errors.notFound({ en: 'No counterparty with this id in the workspace', id: 'Tidak ada pihak lawan dengan id ini di workspace' }),
  counterpartyLimit: (max: number) =>
    fail.conflict('COUNTERPARTY_LIMIT', {
      en: `A workspace can have at most ${max} counterparties`,
      id: `Satu workspace paling banyak memiliki ${max} pihak lawan`,
    }),
  keyLimit: (max: number) =>
    fail.conflict('KEY_LIMIT', {
      en: `A workspace can have at most ${max} keys; revoke one first`,
      id: `Satu workspace paling banyak memiliki ${max} kunci; cabut salah satu terlebih dahulu`,
    }),
  keyNotFound: () => errors.notFound({ en: 'No active API key with this id', id: 'Tidak ada kunci API aktif dengan id ini' }),
  /** Decision 0026: the workspace's unexpired exports hold config.exportBytesPerWorkspace bytes or more. */
  exportStorageFull: (retryAfterSeconds: number) =>
    errors.rateLimited(retryAfterSeconds, 'EXPORT_STORAGE_FULL', {
      en: 'This workspace holds too many export bytes; fetch a recent export with its export_id or try again when older ones expire',
      id: 'Workspace ini menyimpan terlalu banyak data ekspor; ambil ekspor terbaru dengan export_id atau coba lagi setelah ekspor lama kedaluwarsa',
    }),
  exportNotFound: () =>
    errors.notFound({ en: 'No export with this id in the workspace', id: 'Tidak ada ekspor dengan id ini di workspace' }),
  /** The audit export's range (4.9): field errors like joi's, as INVALID_QUERY. */
  invalidDate: (field: string) => errors.invalidQuery({ formErrors: [], fieldErrors: { [field]: ['must be a date YYYY-MM-DD'] } }),
  rangeReversed: () => errors.invalidQuery({ formErrors: ['from is after to'], fieldErrors: {} }),
  rangeTooLong: (maxDays: number) => errors.invalidQuery({ formErrors: [`the range is longer than ${maxDays} days`], fieldErrors: {} }),
};
