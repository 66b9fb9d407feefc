/**
 * The dispute state machine (consumer spec 4.3, decision D10): one table, read by the
 * service for every compare-and-set. A party opens a dispute (open); staff rule release or
 * refund (resolved: the escrow's money moves) or hold (on_hold: the escrow stays disputed,
 * a later ruling may follow). A resolved dispute takes no more rulings and no messages.
 */
export const DISPUTE_STATUSES = ['open', 'on_hold', 'resolved'] as const;
export type DisputeStatus = (typeof DISPUTE_STATUSES)[number];

export const REASON_CATEGORIES = ['item_not_received', 'item_not_as_described', 'seller_unresponsive', 'other'] as const;
export type ReasonCategory = (typeof REASON_CATEGORIES)[number];

export const OUTCOMES = ['release', 'refund', 'hold'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface Transition {
  from: readonly DisputeStatus[];
  to: DisputeStatus;
  by: readonly 'staff'[];
}

/** One ruling per outcome; the names are the outcomes. */
export const TRANSITIONS = {
  release: { from: ['open', 'on_hold'], to: 'resolved', by: ['staff'] },
  refund: { from: ['open', 'on_hold'], to: 'resolved', by: ['staff'] },
  hold: { from: ['open', 'on_hold'], to: 'on_hold', by: ['staff'] },
} as const satisfies Record<Outcome, Transition>;

export type TransitionName = keyof typeof TRANSITIONS;

export const TERMINAL: readonly DisputeStatus[] = ['resolved'];
