/**
 * Confirmed payments (called by the payments feature): pending_payment -> paid, gateway
 * clearing -> escrow held, the parties notified. Joins the caller's transaction.
 */
import { clock } from '../clock.js';
import { inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { postMany } from '../ledger/index.js';
import { assertRupiah } from '../money.js';
import { notifyAll } from '../notifications/service.js';
import { escrowErrors } from './errors.js';
import * as repo from './repo.js';
import type { EscrowRow } from './repo.js';
import { TRANSITIONS } from './states.js';
import { allows, invalidState } from './transition.js';

export interface PaymentConfirmation {
  /** What confirmed it (a payment record id, a gateway order id); recorded on the event. */
  reference: string;
  provider?: string;
  /** The gateway surcharge the buyer paid on top of the escrow amount (to the gateway-fee account). */
  surcharge?: number;
}

/**
 * The one entry point for confirmed payments: pending_payment -> paid, gateway clearing ->
 * escrow held, the seller notified. Joins the caller's transaction. A second confirmation
 * of the same escrow answers INVALID_STATE and posts nothing (the posting key also holds).
 */
export async function markPaid(trxOrDb: Db | undefined, escrowId: string, confirmation: PaymentConfirmation): Promise<EscrowRow> {
  return (await markPaidMany(trxOrDb, [{ escrowId, ...confirmation }]))[0]!;
}

/** Every escrow exists and may be paid; the same escrow twice fails as it would one after the other. */
function checkPayable(ids: readonly string[], found: Map<string, EscrowRow>): void {
  const seen = new Set<string>();
  for (const id of ids) {
    const e = found.get(id);
    if (!e) throw escrowErrors.notFound();
    // Paid twice in one call: the second finds it paid, as it would one after the other.
    if (seen.has(id)) throw invalidState('paid', 'pay');
    seen.add(id);
    if (!allows('pay', e.status)) throw invalidState(e.status, 'pay');
  }
}

/**
 * `markPaid` for several escrows at once (the gateway-callbacks worker's batches), in a
 * fixed number of statements: all move or none (INVALID_STATE names the first that cannot).
 */
export async function markPaidMany(trxOrDb: Db | undefined, items: readonly (PaymentConfirmation & { escrowId: string })[]): Promise<EscrowRow[]> {
  if (items.length === 0) return [];
  const surcharges = items.map((item) => {
    const surcharge = assertRupiah(item.surcharge ?? 0, 'surcharge');
    if (surcharge < 0) throw new RangeError('surcharge cannot be negative');
    return surcharge;
  });
  return inTransaction(trxOrDb, async (trx) => {
    if (!items.every((item) => isUuid(item.escrowId))) throw escrowErrors.notFound();
    const ids = items.map((item) => item.escrowId);
    const found = new Map((await repo.findByIds(trx, ids)).map((e) => [e.id, e]));
    checkPayable(ids, found);
    const now = clock.now();
    // The batch form of transition('pay'): one compare-and-set for every escrow.
    const moved = new Map((await repo.moveMany(trx, ids, TRANSITIONS.pay.from, { status: TRANSITIONS.pay.to, paid_at: now, updated_at: now })).map((e) => [e.id, e]));
    for (const id of ids) {
      if (!moved.has(id)) throw invalidState((await repo.findById(trx, id))?.status ?? found.get(id)!.status, 'pay');
    }
    const paid = ids.map((id) => moved.get(id)!);
    await postMany(
      trx,
      paid.map((e, k) => ({
        kind: 'escrow_payment',
        refType: 'escrow',
        refId: e.id,
        postingKey: `escrow-paid:${e.id}`,
        lines: [
          { account: { system: 'gatewayClearing' }, amount: -(e.amount + surcharges[k]!) },
          { account: { escrowId: e.id }, amount: e.amount },
          ...(surcharges[k]! > 0 ? [{ account: { system: 'gatewayFees' } as const, amount: surcharges[k]! }] : []),
        ],
      })),
    );
    await repo.recordEvents(
      trx,
      paid.map((e, k) => ({
        escrowId: e.id,
        event: 'payment.completed',
        actorId: null,
        actorRole: 'system',
        data: { reference: items[k]!.reference, provider: items[k]!.provider ?? null, amount: e.amount, surcharge: surcharges[k]! },
        at: now,
      })),
    );
    await notifyAll(
      trx,
      paid.flatMap((e) => [
        { userId: e.buyer_id, type: 'payment_success' as const, refs: { escrow_id: e.id } },
        { userId: e.seller_id, type: 'escrow_paid' as const, refs: { escrow_id: e.id } },
      ]),
    );
    return paid;
  });
}
