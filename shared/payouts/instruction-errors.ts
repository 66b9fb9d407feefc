/**
 * The payout instruction error catalogue (enterprise spec 4.6, 7; D7, D10): one factory per
 * situation, each owning its code, its kind (which owns the status) and its English and
 * Indonesian text.
 */
import { errors, fail } from '../errors.js';

export const instructionErrors = {
  notFound: () =>
    errors.notFound({ en: 'No payout instruction with this id in the workspace', id: 'Tidak ada instruksi pembayaran dengan id ini di workspace' }),
  /** Staff side: no instruction with this id in any workspace (or deleted). */
  notFoundAnywhere: () => errors.notFound({ en: 'No payout instruction with this id', id: 'Tidak ada instruksi pembayaran dengan id ini' }),
  counterpartyNotFound: () =>
    errors.invalidBody({ formErrors: [], fieldErrors: { counterparty_id: ['is not a counterparty of this workspace'] } }),
  /** PATCH or DELETE while money is on its way to this destination. */
  payoutInFlight: () =>
    fail.conflict('INVALID_STATE', {
      en: 'A payout to this instruction is queued or processing; change or delete it once the payout is settled or failed',
      id: 'Pembayaran ke instruksi ini sedang antre atau diproses; ubah atau hapus setelah pembayaran selesai atau gagal',
    }),
  /** Staff verify names the destination_version they were shown; the row moved on since (an edit, the workspace going live). */
  versionMoved: () =>
    fail.conflict('CONCURRENT_MODIFICATION', {
      en: 'The payout instruction changed since it was shown (destination_version differs); reveal it again and verify what you see',
      id: 'Instruksi pembayaran berubah sejak ditampilkan (destination_version berbeda); tampilkan lagi dan verifikasi yang Anda lihat',
    }),
  alreadyVerified: () =>
    fail.conflict('INVALID_STATE', {
      en: 'The payout instruction is already verified',
      id: 'Instruksi pembayaran sudah diverifikasi',
    }),
  /** Staff verify or decline an instruction that is not pending_verification (declined: the workspace edits it first). */
  notPending: () =>
    fail.conflict('INVALID_STATE', {
      en: 'The payout instruction is not waiting for verification',
      id: 'Instruksi pembayaran tidak sedang menunggu verifikasi',
    }),
  /** Review R4: a workspace holds at most PENDING_INSTRUCTIONS_PER_WORKSPACE instructions not verified (pending or declined). */
  tooManyPending: (cap: number) =>
    fail.conflict('TOO_MANY_PENDING_INSTRUCTIONS', {
      en: `The workspace already has ${cap} payout instructions waiting for verification or declined; delete one, or wait for staff to verify one`,
      id: `Workspace sudah memiliki ${cap} instruksi pembayaran yang menunggu verifikasi atau ditolak; hapus salah satu, atau tunggu verifikasi staf`,
    }),
};
