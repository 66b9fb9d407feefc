/** The withdrawal error catalogue (consumer spec 4.4; decisions D10, 0008). */
import { errors, fail } from '../errors.js';
import type { WithdrawLimits } from './fees.js';
import type { WithdrawalStatus } from './states.js';

export const withdrawalErrors = {
  notFound: () => errors.notFound({ en: 'Withdrawal not found', id: 'Penarikan tidak ditemukan' }),
  /** A move the transition table does not allow from the status found. */
  invalidState: (status: WithdrawalStatus, needs: readonly string[]) =>
    fail.conflict(
      'INVALID_STATE',
      { en: `The withdrawal is ${status}; this needs ${needs.join(' or ')}`, id: `Penarikan berstatus ${status}; tindakan ini memerlukan status ${needs.join(' atau ')}` },
      { extras: { status } },
    ),
  /** Staff may not mark paid a withdrawal a payout worker is sending (its claim has not run out). */
  beingSent: (status: WithdrawalStatus) =>
    fail.conflict(
      'INVALID_STATE',
      {
        en: 'The withdrawal is processing: the payout worker is sending it; wait for the outcome',
        id: 'Penarikan sedang diproses: pekerja pembayaran sedang mengirimnya; tunggu hasilnya',
      },
      { extras: { status } },
    ),
  invalidAmount: (limits: WithdrawLimits, why: string) =>
    fail.badRequest(
      'INVALID_AMOUNT',
      {
        en: `${why}: amount must be a whole number of rupiah from ${limits.minIdr} to ${limits.maxIdr}, a multiple of ${limits.stepIdr} unless it is your whole balance`,
        id: `${why}: amount harus bilangan bulat rupiah dari ${limits.minIdr} sampai ${limits.maxIdr}, kelipatan ${limits.stepIdr} kecuali seluruh saldo Anda`,
      },
      { extras: { min: limits.minIdr, max: limits.maxIdr, step: limits.stepIdr } },
    ),
  invalidMethod: (methods: readonly string[]) =>
    fail.badRequest('INVALID_METHOD', { en: `method must be one of ${methods.join(', ')}`, id: `method harus salah satu dari ${methods.join(', ')}` }),
  missingDestination: (method: string, hints: string, fields: string[]) =>
    fail.badRequest(
      'MISSING_DESTINATION',
      { en: `destination_details for ${method} needs ${hints}`, id: `destination_details untuk ${method} memerlukan ${hints}` },
      { extras: { fields } },
    ),
  userNotFound: () => fail.notFound('USER_NOT_FOUND', { en: 'User not found', id: 'Pengguna tidak ditemukan' }),
  emailNotVerified: () =>
    fail.forbidden('EMAIL_NOT_VERIFIED', {
      en: 'Verify your e-mail address before withdrawing (POST /v1/auth/verify-email)',
      id: 'Verifikasi alamat e-mail Anda sebelum menarik dana (POST /v1/auth/verify-email)',
    }),
  /** The English message has always carried the Indonesian words too. */
  insufficientBalance: (balance: number) =>
    fail.badRequest(
      'INSUFFICIENT_BALANCE',
      { en: `Saldo tidak mencukupi: your balance is ${balance}`, id: `Saldo tidak mencukupi: saldo Anda ${balance}` },
      { extras: { balance } },
    ),
  feeExceedsAmount: (fee: number) =>
    fail.badRequest(
      'FEE_EXCEEDS_AMOUNT',
      { en: `The fee (${fee}) takes the whole amount; withdraw more`, id: `Biaya (${fee}) menghabiskan seluruh jumlah; tarik lebih banyak` },
      { extras: { fee } },
    ),
  riskBlocked: (flags: readonly string[]) =>
    fail.forbidden(
      'RISK_BLOCKED',
      { en: 'This withdrawal cannot be made; contact support', id: 'Penarikan ini tidak dapat dilakukan; hubungi dukungan' },
      { extras: { risk: { action: 'block', flags } } },
    ),
  voucherTaken: () =>
    fail.conflict('CONCURRENT_MODIFICATION', {
      en: 'The fee voucher was used by another request; retry',
      id: 'Voucher biaya sudah dipakai oleh permintaan lain; coba lagi',
    }),
  reviewNeedsNote: (action: string, flags: readonly string[]) =>
    fail.badRequest(
      'MISSING_FIELDS',
      {
        en: `This withdrawal is held for review (${flags.join(', ')}); approving it needs a note`,
        id: `Penarikan ini ditahan untuk ditinjau (${flags.join(', ')}); menyetujuinya memerlukan catatan`,
      },
      { extras: { risk: { action, flags } } },
    ),
  rejectNeedsNote: () =>
    fail.badRequest('MISSING_FIELDS', {
      en: 'note is required: tell the user why the withdrawal was rejected',
      id: 'note wajib diisi: beri tahu pengguna mengapa penarikan ditolak',
    }),
};
