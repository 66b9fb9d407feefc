/**
 * The withdrawal state machine (consumer spec section 3: "stays pending until the
 * operator pays it out"; decision 0008): one table, read by the service for every
 * compare-and-set. A move not in this table does not exist.
 *
 *   pending --approve (staff)--> approved --claim (payout worker)--> processing
 *   approved --markPaid (staff)--> paid; also processing whose claim ran out (no worker
 *     is sending it: a crashed run), never while a worker holds the claim
 *   processing --payoutSent (the worker that holds the claim, the provider paid)--> paid
 *   processing --payoutFailed (worker, the provider refused for good)--> approved
 *   pending | approved --reject (staff)--> rejected   (amount back, voucher restored)
 *
 * `processing` exists so that money cannot leave twice: once the worker has claimed a
 * withdrawal and may be talking to the provider, a rejection (which gives the amount back)
 * and a staff mark-paid (someone paying by hand) are refused. Staff and the worker race
 * on one compare-and-set: staff's approved -> paid against the worker's approved ->
 * processing; whichever lands first wins, the other finds the status it lost to.
 */
export const WITHDRAWAL_STATUSES = ['pending', 'approved', 'processing', 'paid', 'rejected'] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

/** Statuses whose amount is still in payouts in flight. */
export const OPEN_STATUSES: readonly WithdrawalStatus[] = ['pending', 'approved', 'processing'];

export const METHODS = ['bank_transfer', 'dana', 'gopay', 'crypto'] as const;
export type WithdrawalMethod = (typeof METHODS)[number];

/** The destination fields each method needs (spec 4.4), in the order answers show them. */
export const DESTINATION_FIELDS: Record<WithdrawalMethod, readonly string[]> = {
  bank_transfer: ['bank_name', 'account_number', 'account_holder'],
  dana: ['phone'],
  gopay: ['phone'],
  crypto: ['network', 'wallet_address'],
};

export type Mover = 'staff' | 'system';

export interface Transition {
  from: readonly WithdrawalStatus[];
  to: WithdrawalStatus;
  by: readonly Mover[];
}

export const TRANSITIONS = {
  approve: { from: ['pending'], to: 'approved', by: ['staff'] },
  claimPayout: { from: ['approved'], to: 'processing', by: ['system'] },
  payoutFailed: { from: ['processing'], to: 'approved', by: ['system'] },
  /** `processing` only once the worker's claim (payout_lease_until) has run out. */
  markPaid: { from: ['approved', 'processing'], to: 'paid', by: ['staff'] },
  payoutSent: { from: ['processing'], to: 'paid', by: ['system'] },
  reject: { from: ['pending', 'approved'], to: 'rejected', by: ['staff'] },
} as const satisfies Record<string, Transition>;

export type TransitionName = keyof typeof TRANSITIONS;

export const TERMINAL: readonly WithdrawalStatus[] = ['paid', 'rejected'];

export type RiskAction = 'allow' | 'review' | 'block';
