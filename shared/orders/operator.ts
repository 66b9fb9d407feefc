/**
 * The operator's moves on payment-service orders (/v1/admin/jasabayar; consumer spec 4.8,
 * decisions D10, 0012) and the SLA timer (D6). Every move is a compare-and-set through
 * `transition()` and joins the request's transaction (idempotency).
 */
import type { StaffActor } from '../actors.js';
import { clock } from '../clock.js';
import { encryptSecret } from '../crypto.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { post } from '../ledger/index.js';
import { claimedForOrder, confirmClaim } from '../payments/manual.js';
import { recordStaffAction } from '../staff/audit.js';
import { orderErrors } from './errors.js';
import * as repo from './repo.js';
import type { OrderRow } from './repo.js';
import { canMove, ORDER_TRANSITIONS, type OrderTransitionName } from './states.js';
import { invalidState, transition } from './transition.js';

type StaffContext = StaffActor;

// ---- Operator moves (/v1/admin) ------------------------------------------------------------

async function loadForStaff(trx: Db, id: string): Promise<OrderRow> {
  const o = isUuid(id) ? await repo.findById(trx, id, { lock: true }) : undefined;
  if (!o) throw orderErrors.notFound();
  return o;
}

async function staffMove(
  trx: Db,
  staff: StaffContext,
  o: OrderRow,
  move: OrderTransitionName,
  changes: Partial<OrderRow>,
  event: { name: repo.NewEvent['event']; message: string },
  extra?: Parameters<typeof repo.move>[4],
): Promise<OrderRow> {
  const now = clock.now();
  const moved = await transition(trx, o, move, { ...changes, updated_at: now }, extra);
  await repo.recordEvents(trx, [{ orderId: o.id, event: event.name, message: event.message, actorRole: 'admin', actorId: staff.actorId, at: now }]);
  await recordStaffAction(trx, { actorId: staff.actorId, action: `order.${move}`, targetType: 'service_order', targetId: o.id, note: staff.note ?? null, ip: staff.ip });
  return moved;
}

/** POST /v1/admin/jasabayar/:id/confirm-payment: the claimed manual transfer arrived. */
export async function confirmPayment(trxOrDb: Db | undefined, staff: StaffContext, id: string): Promise<OrderRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const o = await loadForStaff(trx, id);
    if (!canMove('confirmManual', o.status)) throw invalidState(o.status, 'confirmManual');
    const claimed = await claimedForOrder(trx, o.id);
    if (!claimed) throw orderErrors.noClaimToConfirm(o.status);
    const { outcome } = await confirmClaim(trx, staff, claimed);
    if (outcome !== 'paid') throw new Error(`confirming order ${o.id}: settlement answered ${outcome}`);
    await recordStaffAction(trx, { actorId: staff.actorId, action: 'order.confirmManual', targetType: 'service_order', targetId: o.id, note: staff.note ?? null, details: { payment_id: claimed.id }, ip: staff.ip });
    return (await repo.findById(trx, o.id))!;
  });
}

/** POST /v1/admin/jasabayar/:id/start (alias .../process): the operator starts buying. */
export async function startProcessing(trxOrDb: Db | undefined, staff: StaffContext, id: string): Promise<OrderRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const o = await loadForStaff(trx, id);
    return staffMove(trx, staff, o, 'startProcessing', {}, { name: 'order.processing', message: 'The operator is buying the item' });
  });
}

export interface DeliverInput {
  credentials?: string | null;
  delivery_note?: string | null;
}

/**
 * POST /v1/admin/jasabayar/:id/deliver: credentials sealed at rest, the money final
 * (orders held -> platform revenue). A delivery at the SLA deadline itself is in time;
 * after it the order is the SLA timer's (409 SLA_EXPIRED).
 */
export async function deliver(trxOrDb: Db | undefined, staff: StaffContext, id: string, input: DeliverInput): Promise<OrderRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const o = await loadForStaff(trx, id);
    const now = clock.now();
    if (canMove('deliver', o.status) && o.sla_deadline_at !== null && o.sla_deadline_at < now) throw orderErrors.slaExpired(o.sla_deadline_at);
    const credentials = input.credentials ? input.credentials : null;
    const moved = await staffMove(
      trx,
      staff,
      o,
      'deliver',
      { delivered_at: now, delivery_note: input.delivery_note ? input.delivery_note : null, credentials_sealed: credentials === null ? null : encryptSecret(credentials) },
      { name: 'order.delivered', message: credentials === null ? 'Delivered' : 'Delivered with credentials' },
      (q) => void q.where((w) => void w.whereNull('sla_deadline_at').orWhere('sla_deadline_at', '>=', now)),
    );
    await post(trx, {
      kind: 'order_delivered',
      refType: 'service_order',
      refId: o.id,
      postingKey: `order-final:${o.id}`,
      lines: [
        { account: { system: 'ordersHeld' }, amount: -o.total },
        { account: { system: 'ordersRevenue' }, amount: o.total },
      ],
    });
    return moved;
  });
}

async function refundMoney(trx: Db, o: OrderRow): Promise<void> {
  await post(trx, {
    kind: 'order_refund',
    refType: 'service_order',
    refId: o.id,
    postingKey: `order-final:${o.id}`,
    lines: [
      { account: { system: 'ordersHeld' }, amount: -o.total },
      { account: { userId: o.buyer_id }, amount: o.total },
    ],
  });
}

/** POST /v1/admin/jasabayar/:id/refund: full refund to the buyer's balance. */
export async function refund(trxOrDb: Db | undefined, staff: StaffContext, id: string, input: { reason?: string | null }): Promise<OrderRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const o = await loadForStaff(trx, id);
    const now = clock.now();
    const reason = input.reason ? input.reason : 'refunded by the operator';
    const moved = await staffMove(trx, staff, o, 'refund', { refunded_at: now, refund_reason: reason, auto_refunded: false }, { name: 'order.refunded', message: `Refunded in full: ${reason}` });
    await refundMoney(trx, o);
    return moved;
  });
}

// ---- SLA timer (D6) ------------------------------------------------------------------------

/** The SLA job: refunds the order if it is still paid or processing after its deadline; otherwise nothing. */
export async function runSlaRefund(orderId: string): Promise<{ refunded: boolean }> {
  if (!isUuid(orderId)) return { refunded: false };
  return db.transaction(async (trx) => {
    const o = await repo.findById(trx, orderId, { lock: true });
    const now = clock.now();
    if (!o || !canMove('slaRefund', o.status) || o.sla_deadline_at === null || !(o.sla_deadline_at < now)) return { refunded: false };
    const moved = await repo.move(trx, o.id, ORDER_TRANSITIONS.slaRefund.from, { status: 'refunded', refunded_at: now, refund_reason: 'sla_expired', auto_refunded: true, updated_at: now }, (q) =>
      void q.where('sla_deadline_at', '<', now),
    );
    if (!moved) return { refunded: false };
    await repo.recordEvents(trx, [{ orderId: o.id, event: 'order.refunded', message: 'Not delivered within the SLA; refunded in full automatically', actorRole: 'system', actorId: null, at: now }]);
    await refundMoney(trx, o);
    return { refunded: true };
  });
}

/** The sweeper: refunds every overdue order whose timer job was lost. Each order in its own transaction. */
export async function sweepSla(batch = 200): Promise<{ refunded: number }> {
  let refunded = 0;
  for (const id of await repo.dueSlaRefunds(db, clock.now(), batch)) if ((await runSlaRefund(id)).refunded) refunded += 1;
  return { refunded };
}
