/**
 * The release and payout error catalogue (enterprise spec 4.6, 7; D7, D10; decision 0019):
 * one factory per situation, each owning its code, its kind and its English and Indonesian text.
 */
import { errors, fail } from '../errors.js';

const splitsField = (message: string) => errors.invalidBody({ formErrors: [], fieldErrors: { splits: [message] } });

export const payoutErrors = {
  payoutNotFound: () => errors.notFound({ en: 'No payout with this id', id: 'Tidak ada pembayaran dengan id ini' }),
  /** The milestone is not approved (nor released with returned payouts to send again), or changed meanwhile. */
  notReleasable: () =>
    fail.conflict('CONCURRENT_MODIFICATION', {
      en: 'The milestone is not approved for release (or was released meanwhile); reload it',
      id: 'Milestone belum disetujui untuk dicairkan (atau baru saja dicairkan); muat ulang',
    }),
  splitsSum: (due: number, sum: number) => splitsField(`must add up to ${due} (the milestone's payout amount still to send), not ${sum}`),
  duplicateInstruction: () => splitsField('must name each payout instruction once'),
  unknownInstruction: (id: string) => splitsField(`payout instruction ${id} is not an instruction of this workspace`),
  otherCounterparty: (id: string) => splitsField(`payout instruction ${id} belongs to another counterparty; splits go to the deal's counterparty`),
  notVerified: (label: string) =>
    fail.conflict('INVALID_STATE', {
      en: `Payout instruction "${label}" is not verified; money only leaves to verified instructions`,
      id: `Instruksi pembayaran "${label}" belum diverifikasi; dana hanya dicairkan ke instruksi terverifikasi`,
    }),
  signatureBroken: (label: string) =>
    fail.conflict('INVALID_STATE', {
      en: `Payout instruction "${label}" changed after its verification; it must be verified again`,
      id: `Instruksi pembayaran "${label}" berubah setelah diverifikasi; harus diverifikasi ulang`,
    }),
  /** Staff settle/fail: already settled or failed, or a worker holds the claim and may be sending it. */
  notOpen: () =>
    fail.conflict('INVALID_STATE', { en: 'The payout is already settled or failed', id: 'Pembayaran sudah selesai atau gagal' }),
  destinationRefused: (reason: string) =>
    fail.conflict('INVALID_STATE', {
      en: `This payout may not be paid: its row or its destination changed after it was signed (${reason}); fail it instead`,
      id: `Pembayaran ini tidak boleh dibayar: datanya atau tujuannya berubah setelah ditandatangani (${reason}); gagalkan saja`,
    }),
  sentToProvider: () =>
    fail.conflict('INVALID_STATE', {
      en: 'This payout was sent to the payout provider and may have been paid; only the provider\'s answer can fail it',
      id: 'Pembayaran ini sudah dikirim ke penyedia dan mungkin sudah dibayar; hanya jawaban penyedia yang dapat menggagalkannya',
    }),
  workerSending: () =>
    fail.conflict('CONCURRENT_MODIFICATION', {
      en: 'The payout worker is sending this payout now; wait for its outcome',
      id: 'Pembayaran ini sedang dikirim oleh worker; tunggu hasilnya',
    }),
};
