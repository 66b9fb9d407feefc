/** The dispute error catalogue (consumer spec 4.3). */
import { errors, fail } from '../errors.js';

export const disputeErrors = {
  notFound: () => errors.notFound({ en: 'Dispute not found', id: 'Sengketa tidak ditemukan' }),
  notParty: () => errors.forbidden({ en: 'You are not a party to this dispute', id: 'Anda bukan pihak dalam sengketa ini' }),
  escrowNotFound: () => errors.notFound({ en: 'Escrow not found', id: 'Escrow tidak ditemukan' }),
  notPartyToEscrow: () =>
    errors.forbidden({ en: 'Only the buyer or the seller can open a dispute', id: 'Hanya pembeli atau penjual yang dapat membuka sengketa' }),
  notDisputable: (status: string) =>
    fail.conflict(
      'NOT_DISPUTABLE',
      {
        en: `The escrow is ${status}; only paid, sent or received escrows can be disputed`,
        id: `Escrow berstatus ${status}; hanya escrow yang dibayar, dikirim atau diterima yang dapat disengketakan`,
      },
      { extras: { status } },
    ),
  disputeExists: () => fail.conflict('DISPUTE_EXISTS', { en: 'This escrow already has an open dispute', id: 'Escrow ini sudah memiliki sengketa terbuka' }),
  escrowMoved: () =>
    fail.conflict('ESCROW_MOVED', {
      en: 'The escrow changed while the dispute was being opened; reload it and try again',
      id: 'Escrow berubah saat sengketa sedang dibuka; muat ulang lalu coba lagi',
    }),
  closed: () => fail.conflict('DISPUTE_CLOSED', { en: 'This dispute is resolved; it takes no more messages', id: 'Sengketa ini sudah selesai; tidak menerima pesan lagi' }),
  /** A ruling on a dispute that is no longer open or on hold (the only such state is resolved). */
  alreadyResolved: (status: string, outcome: string | null) =>
    fail.conflict(
      'INVALID_STATE',
      { en: `The dispute is already resolved (${outcome})`, id: `Sengketa sudah diselesaikan (${outcome})` },
      { extras: { status, outcome } },
    ),
};
