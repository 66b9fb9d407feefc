/**
 * The payment-service order state machine (consumer spec section 3, "Payment-service order
 * statuses"): one table, read by the service for every compare-and-set. A move not in this
 * table does not exist.
 */
export const ORDER_STATUSES = ['awaiting_payment', 'pending_review', 'paid', 'processing', 'delivered', 'refunded', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export type OrderMover = 'buyer' | 'admin' | 'system' | 'payment';

export interface OrderTransition {
  from: readonly OrderStatus[];
  to: OrderStatus;
  by: OrderMover;
}

export const ORDER_TRANSITIONS = {
  payByBalance: { from: ['awaiting_payment'], to: 'paid', by: 'buyer' },
  claimManual: { from: ['awaiting_payment'], to: 'pending_review', by: 'buyer' },
  // A gateway's paid report; a claimed manual transfer settled by the operator takes the same path.
  gatewayPaid: { from: ['awaiting_payment', 'pending_review'], to: 'paid', by: 'payment' },
  confirmManual: { from: ['pending_review'], to: 'paid', by: 'admin' },
  startProcessing: { from: ['paid'], to: 'processing', by: 'admin' },
  deliver: { from: ['processing'], to: 'delivered', by: 'admin' },
  refund: { from: ['processing'], to: 'refunded', by: 'admin' },
  slaRefund: { from: ['paid', 'processing'], to: 'refunded', by: 'system' },
  cancel: { from: ['awaiting_payment'], to: 'cancelled', by: 'buyer' },
  // Not in the spec's table (decision 0012): staff reject the claimed transfer, the order can be paid again.
  rejectClaim: { from: ['pending_review'], to: 'awaiting_payment', by: 'admin' },
} as const satisfies Record<string, OrderTransition>;

export type OrderTransitionName = keyof typeof ORDER_TRANSITIONS;

/** Statuses in which the SLA clock runs. */
export const SLA_RUNNING: readonly OrderStatus[] = ['paid', 'processing'];

export const canMove = (name: OrderTransitionName, from: OrderStatus): boolean => (ORDER_TRANSITIONS[name].from as readonly OrderStatus[]).includes(from);

export type OrderEventName =
  | 'order.created'
  | 'order.paid'
  | 'order.payment_claimed'
  // A manual transfer claimed after the order was cancelled or paid another way (staff credit or return it).
  | 'order.payment_claimed_late'
  | 'order.payment_rejected'
  | 'order.processing'
  | 'order.delivered'
  | 'order.credentials_viewed'
  | 'order.refunded'
  | 'order.cancelled';
