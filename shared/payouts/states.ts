/**
 * The disbursement (payout) state machine (enterprise spec 2 Milestone `disbursements`, 3
 * "payout status values seen: queued, processing", 4.6; D10 settle/fail; decision 0019).
 * One table, read for every compare-and-set; a move not in it does not exist.
 *
 *   queued --claim (payout worker)--> processing (with a lease)
 *   processing --reclaim (payout worker; the lease ran out: a dead run)--> processing
 *   processing --sent (the worker holding the claim; the provider paid)--> settled
 *   processing --refused (the worker holding the claim; the provider refused for good, or
 *     the payout or its destination no longer matches what was signed)--> failed; also
 *     queued, when a worker with no provider (manual) finds it may not be paid
 *   queued | processing whose lease ran out --settle (staff, by hand)--> settled
 *   queued, never sent to a provider --fail (staff, by hand)--> failed
 *
 * `processing` exists so that money cannot leave twice: while a worker holds the claim it
 * may be talking to the provider, so staff cannot settle or fail it. A payout that was
 * ever sent to a provider (attempts > 0) is never failed by hand: the provider may have
 * paid it, and a failure would return its money for a second release; only the provider's
 * answer (the worker's retry, same reference) may fail it. A failed payout's money returns
 * to its milestone's held balance (`returned_amount`) for a re-release.
 */
export const DISBURSEMENT_STATUSES = ['queued', 'processing', 'settled', 'failed'] as const;
export type DisbursementStatus = (typeof DISBURSEMENT_STATUSES)[number];

/** Statuses whose amount is still in payouts in flight. */
export const OPEN: readonly DisbursementStatus[] = ['queued', 'processing'];

export interface DisbursementTransition {
  from: readonly DisbursementStatus[];
  to: DisbursementStatus;
}

export const DISBURSEMENT_TRANSITIONS = {
  claim: { from: ['queued'], to: 'processing' },
  reclaim: { from: ['processing'], to: 'processing' },
  sent: { from: ['processing'], to: 'settled' },
  refused: { from: ['queued', 'processing'], to: 'failed' },
  settle: { from: ['queued', 'processing'], to: 'settled' },
  fail: { from: ['queued'], to: 'failed' },
} as const satisfies Record<string, DisbursementTransition>;

export type DisbursementMove = keyof typeof DISBURSEMENT_TRANSITIONS;
