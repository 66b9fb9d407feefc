/**
 * The escrow state machine of consumer spec section 3: one table, read by the service
 * for every compare-and-set. A move not in this table does not exist.
 */
export const ESCROW_STATUSES = ['pending_payment', 'paid', 'sent', 'received', 'released', 'disputed', 'refunded', 'cancelled'] as const;
export type EscrowStatus = (typeof ESCROW_STATUSES)[number];

export const CATEGORIES = ['goods', 'service', 'digital'] as const;
export type Category = (typeof CATEGORIES)[number];

export type Mover = 'buyer' | 'seller' | 'either' | 'staff' | 'system' | 'payment';

export interface Transition {
  from: readonly EscrowStatus[];
  to: EscrowStatus;
  by: readonly Mover[];
}

export const TRANSITIONS = {
  pay: { from: ['pending_payment'], to: 'paid', by: ['payment'] },
  send: { from: ['paid'], to: 'sent', by: ['seller'] },
  confirmReceived: { from: ['sent'], to: 'received', by: ['buyer'] },
  release: { from: ['received'], to: 'released', by: ['buyer'] },
  dispute: { from: ['paid', 'sent', 'received'], to: 'disputed', by: ['either'] },
  rulingRelease: { from: ['disputed'], to: 'released', by: ['staff'] },
  rulingRefund: { from: ['disputed'], to: 'refunded', by: ['staff'] },
  cancel: { from: ['pending_payment'], to: 'cancelled', by: ['either', 'staff'] },
  expire: { from: ['pending_payment'], to: 'cancelled', by: ['system'] },
  // The buyer who does not act: from sent, and from received (a buyer who confirmed
  // receipt but never released must not strand the seller's money). Decision 0007.
  autoRelease: { from: ['sent', 'received'], to: 'released', by: ['system'] },
} as const satisfies Record<string, Transition>;

export type TransitionName = keyof typeof TRANSITIONS;

export const TERMINAL: readonly EscrowStatus[] = ['released', 'refunded', 'cancelled'];

/** The planned partner event set (spec section 6), plus the internal extension record. */
export type EscrowEventName =
  | 'escrow.created'
  | 'payment.completed'
  | 'escrow.sent'
  | 'escrow.received'
  | 'escrow.released'
  | 'escrow.disputed'
  | 'dispute.resolved'
  | 'escrow.refunded'
  | 'escrow.cancelled'
  | 'escrow.extended';

/** Auto-release windows after `sent` (spec section 3), and how far the buyer may push them. */
export interface CategoryTimer {
  /** Hours from `sent` to auto-release. */
  autoReleaseHours: number;
  /** The longest the window may become with extensions, in hours from `sent`. */
  maxHours: number;
  /** Hours one extension adds (0 disables extending for the category). */
  extendStepHours: number;
}

export const DEFAULT_TIMERS: Record<Category, CategoryTimer> = {
  goods: { autoReleaseHours: 14 * 24, maxHours: 30 * 24, extendStepHours: 7 * 24 },
  service: { autoReleaseHours: 3 * 24, maxHours: 14 * 24, extendStepHours: 3 * 24 },
  digital: { autoReleaseHours: 24, maxHours: 7 * 24, extendStepHours: 24 },
};

/** How long an unpaid escrow waits for its payment before it expires. */
export const PAYMENT_WINDOW_HOURS = 24;
