/**
 * The one way an order becomes paid (balance, gateway report, operator-confirmed manual
 * transfer): compare-and-set to paid, the SLA clock starts, the money moves into the
 * orders-held account, an event, and the durable SLA timer (decision D6). Kept apart from
 * the order service so the payments settlement can call it without an import cycle.
 */
import type { Db } from '../db.js';
import { postMany, type PostingLine } from '../ledger/index.js';
import { enqueue } from '../outbox.js';
import { loadOrderConfig } from './fees.js';
import * as repo from './repo.js';
import type { OrderRow } from './repo.js';
import { ORDER_TRANSITIONS } from './states.js';

export interface OrderPayment {
  orderId: string;
  /** How it was paid. */
  via: 'balance' | 'gateway' | 'manual';
  /** What paid it: a payment link id, or the buyer for a balance payment. */
  reference: string;
  /** Gateway surcharge paid on top of the order total (gateway fees). */
  surcharge: number;
  actorRole: 'buyer' | 'admin' | 'system';
  actorId: string | null;
}

const HOUR = 3600_000;

/** Moves each order to paid. Throws when one is not payable any more: callers hold the row locked and checked it. */
export async function markOrdersPaid(trx: Db, items: readonly OrderPayment[], now: Date): Promise<OrderRow[]> {
  if (items.length === 0) return [];
  const { sla_hours: slaHours } = await loadOrderConfig(trx);
  const slaDeadline = new Date(now.getTime() + slaHours * HOUR);
  const out: OrderRow[] = [];
  for (const item of items) {
    const from = item.via === 'balance' ? ORDER_TRANSITIONS.payByBalance.from : ORDER_TRANSITIONS.gatewayPaid.from;
    const moved = await repo.move(trx, item.orderId, from, { status: 'paid', paid_at: now, paid_via: item.via, sla_deadline_at: slaDeadline, updated_at: now });
    if (!moved) throw new Error(`order ${item.orderId} is not payable any more`);
    out.push(moved);
  }
  await postMany(
    trx,
    out.map((o, k) => {
      const item = items[k]!;
      const lines: PostingLine[] =
        item.via === 'balance'
          ? [
              { account: { userId: o.buyer_id }, amount: -o.total },
              { account: { system: 'ordersHeld' }, amount: o.total },
            ]
          : [
              { account: { system: 'gatewayClearing' }, amount: -(o.total + item.surcharge) },
              { account: { system: 'ordersHeld' }, amount: o.total },
              ...(item.surcharge > 0 ? [{ account: { system: 'gatewayFees' as const }, amount: item.surcharge }] : []),
            ];
      return { kind: 'order_payment', refType: 'service_order', refId: o.id, postingKey: `order-paid:${o.id}`, memo: `${item.via} ${item.reference}`, lines };
    }),
  );
  await repo.recordEvents(
    trx,
    out.map((o, k) => ({
      orderId: o.id,
      event: 'order.paid' as const,
      message: `Paid by ${items[k]!.via}; the order must be delivered by ${slaDeadline.toISOString()}`,
      actorRole: items[k]!.actorRole,
      actorId: items[k]!.actorId,
      at: now,
    })),
  );
  // One job a millisecond past the deadline ("after sla_deadline_at"); the sweeper catches a lost one.
  for (const o of out) await enqueue(trx, 'orders.sla-refund', { order_id: o.id }, { runAt: new Date(slaDeadline.getTime() + 1) });
  return out;
}

/**
 * Staff rejected the claimed manual transfer of an order in pending_review: the order waits
 * for a payment again (decision 0012: the spec's table has no exit from pending_review but
 * the operator's confirm; without this an unfounded claim would strand the order).
 */
export async function reopenAfterRejectedClaim(trx: Db, orderId: string, actorId: string, now: Date): Promise<void> {
  const moved = await repo.move(trx, orderId, ORDER_TRANSITIONS.rejectClaim.from, { status: ORDER_TRANSITIONS.rejectClaim.to, updated_at: now });
  if (!moved) return;
  await repo.recordEvents(trx, [
    { orderId, event: 'order.payment_rejected', message: 'The operator did not find the claimed transfer; the order can be paid again', actorRole: 'admin', actorId, at: now },
  ]);
}
