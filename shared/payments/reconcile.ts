/**
 * The one reconciliation path for every report of a payment's fate: a gateway's callback,
 * a status poll, staff (decisions D5, 0009). Paid moves the escrow through `markPaidMany`
 * (gateway clearing -> escrow held, surcharge -> gateway fees) or the order through
 * `markOrdersPaid`; money that arrives for a target that can no longer take it is credited
 * to the buyer's balance, never lost.
 */
import { clock } from '../clock.js';
import type { Db } from '../db.js';
import * as escrowRepo from '../escrows/repo.js';
import type { EscrowRow } from '../escrows/repo.js';
import { markPaidMany, type PaymentConfirmation } from '../escrows/service.js';
import { postMany, type Posting } from '../ledger/index.js';
import { markOrdersPaid, type OrderPayment } from '../orders/paid.js';
import * as orderRepo from '../orders/repo.js';
import type { OrderRow } from '../orders/repo.js';
import type { GatewayStatus } from './gateways/index.js';
import * as repo from './repo.js';
import type { PaymentRow, PaymentStatus } from './repo.js';
import { allows } from './states.js';

/** What a gateway (a callback, a status poll) or staff says about a payment link. */
export interface GatewayReport {
  provider: string;
  gatewayOrderId: string;
  status: GatewayStatus;
  amount: number | null;
  source: string;
  /** A callback's unsigned status the gateway has not confirmed: it settles nothing (outcome `unconfirmed`). */
  unconfirmed?: boolean;
}

/**
 * The decisions of one transaction about payment links whose rows (and escrows) it holds
 * locked, made in memory in order, then written in a fixed number of statements
 * (`apply`). One reconciliation path for callbacks, polls and staff, whether it settles one
 * report or a batch of a hundred: each report sees the effect of the ones before it.
 */
class Settlements {
  /** Payments as they will be, by id; with the status each had when locked. */
  private readonly changed = new Map<string, { from: PaymentStatus; row: PaymentRow }>();
  private readonly toPay: (PaymentConfirmation & { escrowId: string })[] = [];
  private readonly credits: Posting[] = [];
  private readonly toPayOrders: OrderPayment[] = [];

  constructor(
    private readonly now: Date,
    /** Locked payment rows by gateway order id. */
    private readonly payments: Map<string, PaymentRow>,
    /** Locked escrow rows by id (those a paid report may settle). */
    private readonly escrows: Map<string, EscrowRow>,
    /** Locked payment-service order rows by id (those a paid report may settle). */
    private readonly orders: Map<string, OrderRow> = new Map(),
  ) {}

  private change(payment: PaymentRow, changes: Partial<PaymentRow>): void {
    const from = this.changed.get(payment.id)?.from ?? payment.status;
    Object.assign(payment, changes);
    this.changed.set(payment.id, { from, row: payment });
  }

  /** Returns what the report did (written on the callback as its outcome). */
  report(r: GatewayReport): string {
    const payment = this.payments.get(r.gatewayOrderId);
    if (!payment) return 'unknown_order';
    // Only the gateway that made the link reports on it; a manual transfer is settled by staff only.
    if (payment.is_manual || payment.provider !== r.provider) return 'provider_mismatch';
    if (payment.status === 'paid') return r.status === 'paid' ? 'duplicate_paid' : `ignored_${r.status}_after_paid`;
    // An unsigned status the gateway has not confirmed (the payment appeared since): tried again with the query.
    if (r.unconfirmed) return 'unconfirmed';
    if (r.status === 'pending') return 'still_pending';
    if (r.status === 'expired' || r.status === 'failed') {
      if (!allows(r.status === 'expired' ? 'expire' : 'fail', payment.status)) return `ignored_${r.status}_when_${payment.status}`;
      this.change(payment, { status: r.status, updated_at: this.now, next_poll_at: null });
      return `marked_${r.status}`;
    }
    if (r.amount !== null && r.amount !== payment.amount) {
      this.change(payment, { flag: 'amount_mismatch', updated_at: this.now, next_poll_at: null });
      return 'amount_mismatch';
    }
    return this.settle(payment, r.source);
  }

  /**
   * Marks a payment paid and moves its money: into the escrow when the escrow still waits
   * for it, otherwise (another link paid first, or the escrow was cancelled or expired)
   * onto the buyer's balance, flagged for staff.
   */
  settle(payment: PaymentRow, source: string): string {
    if (!allows('settle', payment.status)) return 'already_settled';
    let payable: boolean;
    let targetStatus: string;
    if (payment.order_id !== null) {
      // A payment-service order (issue 11): awaiting_payment, or pending_review for a claimed manual transfer.
      const order = this.orders.get(payment.order_id);
      if (!order) throw new Error(`order ${payment.order_id} of payment ${payment.id} was not locked`);
      payable = order.status === 'awaiting_payment' || order.status === 'pending_review';
      targetStatus = order.status;
      if (payable) {
        order.status = 'paid';
        this.toPayOrders.push({
          orderId: order.id,
          via: payment.is_manual ? 'manual' : 'gateway',
          reference: payment.id,
          surcharge: payment.surcharge,
          actorRole: source === 'staff' ? 'admin' : 'system',
          actorId: null,
        });
      }
    } else {
      const escrow = this.escrows.get(payment.escrow_id!);
      if (!escrow) throw new Error(`escrow ${payment.escrow_id} of payment ${payment.id} was not locked`);
      payable = escrow.status === 'pending_payment';
      targetStatus = escrow.status;
      if (payable) {
        escrow.status = 'paid';
        this.toPay.push({ escrowId: escrow.id, reference: payment.id, provider: payment.provider, surcharge: payment.surcharge });
      }
    }
    this.change(payment, { status: 'paid', paid_at: this.now, flag: payable ? null : 'credited_to_buyer', next_poll_at: null, updated_at: this.now });
    if (payable) return 'paid';
    this.credits.push({
      kind: 'payment_credit',
      refType: 'payment',
      refId: payment.id,
      postingKey: `payment-credit:${payment.id}`,
      memo: `paid after the ${payment.order_id !== null ? 'order' : 'escrow'} became ${targetStatus} (${source})`,
      lines: [
        { account: { system: 'gatewayClearing' }, amount: -payment.amount },
        { account: { userId: payment.buyer_id }, amount: payment.amount },
      ],
    });
    return 'credited_to_buyer';
  }

  /** Writes the decisions: the payment rows (compare-and-set on the status each was locked with), the escrows, the money. */
  async apply(trx: Db): Promise<void> {
    await repo.applyPaymentChanges(trx, [...this.changed.values()]);
    await markPaidMany(trx, this.toPay);
    await markOrdersPaid(trx, this.toPayOrders, this.now);
    await postMany(trx, this.credits);
  }
}

/**
 * One path for every report of a payment's fate: callback, poll, staff. Locks the reports'
 * payments, then the escrows a paid report may settle (the order of every path that holds
 * both: the worker locks a gateway payment, then its escrow). Returns what each report did.
 */
export async function reconcileMany(trx: Db, reports: readonly GatewayReport[]): Promise<string[]> {
  if (reports.length === 0) return [];
  const payments = new Map((await repo.findByOrdersForUpdate(trx, [...new Set(reports.map((r) => r.gatewayOrderId))])).map((p) => [p.gateway_order_id, p]));
  const escrowIds = new Set<string>();
  const orderIds = new Set<string>();
  for (const r of reports) {
    const p = payments.get(r.gatewayOrderId);
    if (r.status === 'paid' && !r.unconfirmed && p && !p.is_manual && p.provider === r.provider) {
      if (p.order_id !== null) orderIds.add(p.order_id);
      else escrowIds.add(p.escrow_id!);
    }
  }
  const escrows = new Map((await escrowRepo.findByIds(trx, [...escrowIds], { lock: true })).map((e) => [e.id, e]));
  const orders = new Map((await orderRepo.findByIdsForUpdate(trx, [...orderIds])).map((o) => [o.id, o]));
  const settlements = new Settlements(clock.now(), payments, escrows, orders);
  const outcomes = reports.map((r) => settlements.report(r));
  await settlements.apply(trx);
  return outcomes;
}

/** Staff confirmation of a claimed manual transfer: the same settlement as a gateway's paid report. */
export async function settlePaid(trx: Db, payment: PaymentRow, source: string): Promise<string> {
  const escrow = payment.escrow_id !== null ? await escrowRepo.findById(trx, payment.escrow_id) : undefined;
  const order = payment.order_id !== null ? await orderRepo.findById(trx, payment.order_id) : undefined;
  const settlements = new Settlements(
    clock.now(),
    new Map([[payment.gateway_order_id, payment]]),
    new Map(escrow ? [[escrow.id, escrow]] : []),
    new Map(order ? [[order.id, order]] : []),
  );
  const outcome = settlements.settle(payment, source);
  await settlements.apply(trx);
  return outcome;
}
