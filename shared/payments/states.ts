/**
 * The payment-link state machine (consumer spec 4.2; decisions D10, 0009, 0012): one table,
 * read for every status move. Single moves are a compare-and-set through `transition()`
 * (transition.ts); the settlement of a batch of gateway reports decides in memory with
 * `allows()` and writes its rows in one compare-and-set statement
 * (repo.applyPaymentChanges). A move not in this table does not exist.
 */
import type { Text } from '../errors.js';

export const PAYMENT_STATUSES = ['pending', 'awaiting_confirmation', 'paid', 'expired', 'failed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export type PaymentMover = 'buyer' | 'staff' | 'gateway' | 'system';

export interface PaymentTransition {
  from: readonly PaymentStatus[];
  to: PaymentStatus;
  by: readonly PaymentMover[];
  /** What the move needs, for its INVALID_STATE answer ("The payment is X; <needs>"). */
  needs: Text;
}

export const PAYMENT_TRANSITIONS = {
  // The buyer says the manual transfer is made (late ones too, flagged late_claim).
  claim: {
    from: ['pending'],
    to: 'awaiting_confirmation',
    by: ['buyer'],
    needs: { en: 'only a pending manual payment can be claimed', id: 'hanya pembayaran manual yang masih pending yang dapat diklaim' },
  },
  // Staff confirm a claimed transfer; it then settles like a gateway's paid report (`settle`).
  confirm: {
    from: ['awaiting_confirmation'],
    to: 'paid',
    by: ['staff'],
    needs: { en: 'only a claimed manual transfer can be confirmed', id: 'hanya transfer manual yang sudah diklaim yang dapat dikonfirmasi' },
  },
  reject: {
    from: ['awaiting_confirmation'],
    to: 'failed',
    by: ['staff'],
    needs: { en: 'only a claimed manual transfer can be rejected', id: 'hanya transfer manual yang sudah diklaim yang dapat ditolak' },
  },
  // Money arrived (a gateway's paid report, or staff confirming): a paid report wins over
  // expired and failed, so money paid on a link that lapsed is still taken.
  settle: {
    from: ['pending', 'expired', 'failed', 'awaiting_confirmation'],
    to: 'paid',
    by: ['gateway', 'staff'],
    needs: { en: 'only an unpaid payment can be settled', id: 'hanya pembayaran yang belum dibayar yang dapat diselesaikan' },
  },
  expire: { from: ['pending'], to: 'expired', by: ['gateway', 'system'], needs: { en: 'only a pending payment can expire', id: 'hanya pembayaran pending yang dapat kedaluwarsa' } },
  fail: { from: ['pending'], to: 'failed', by: ['gateway', 'system'], needs: { en: 'only a pending payment can fail', id: 'hanya pembayaran pending yang dapat gagal' } },
  // Staff settle late or mismatched money (credit to the balance, or returned outside): paid with a flag.
  staffSettle: {
    from: ['pending', 'expired', 'failed', 'awaiting_confirmation'],
    to: 'paid',
    by: ['staff'],
    needs: {
      en: 'only an unsettled amount mismatch or a late manual claim can be settled by staff',
      id: 'hanya selisih jumlah yang belum diselesaikan atau klaim manual yang terlambat yang dapat diselesaikan staf',
    },
  },
} as const satisfies Record<string, PaymentTransition>;

export type PaymentTransitionName = keyof typeof PAYMENT_TRANSITIONS;

/** True when the table allows the named move from the status. */
export const allows = (name: PaymentTransitionName, from: PaymentStatus): boolean =>
  (PAYMENT_TRANSITIONS[name].from as readonly PaymentStatus[]).includes(from);
