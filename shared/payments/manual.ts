/**
 * Money staff settle by hand (decisions D10, 0009, 0012): manual transfers (the buyer's claim,
 * staff confirm or reject), claims that arrive after the escrow or order closed ("late
 * claims"), and gateway payments whose reported amount differed from the link ("amount
 * mismatch"). Late or mismatched money is never refused and never stranded: staff credit it
 * to the buyer's balance or mark it returned outside the service, exactly once (a
 * compare-and-set on the payment under its row lock, and a posting key).
 *
 * One claim (`recordClaim`) and one confirmation (`confirmClaim`) serve escrows and
 * payment-service orders; each caller locks its target row first and says whether the
 * target still takes the payment (orders/service.ts and orders/operator.ts call them).
 * Every status move is a compare-and-set through `transition()` (states.ts).
 * Every function joins the caller's transaction (a keyed request's `txOf(ctx)`) and asks
 * the pool for nothing else (ARCHITECTURE rule 7).
 */
import { clock } from '../clock.js';
import { inTransaction, type Db } from '../db.js';
import type { Actor, StaffActor } from '../actors.js';
import * as escrowRepo from '../escrows/repo.js';
import { isExpired, partyOf } from '../escrows/service.js';
import { isUuid } from '../ids.js';
import { post, type Posting } from '../ledger/index.js';
import { reopenAfterRejectedClaim } from '../orders/paid.js';
import * as orderRepo from '../orders/repo.js';
import { recordStaffAction } from '../staff/audit.js';
import { paymentErrors } from './errors.js';
import { settlePaid } from './reconcile.js';
import * as repo from './repo.js';
import type { PaymentRow } from './repo.js';
import { allows } from './states.js';
import { invalidState, transition } from './transition.js';

export interface ClaimInput {
  reference?: string;
}

/** Staff on an operator route (the shared StaffActor). */
export type StaffContext = StaffActor;

/** The flag of a manual transfer claimed after its escrow or order stopped taking it. */
export const LATE_CLAIM = 'late_claim';

// ---- The buyer's claim -------------------------------------------------------------------

/** What a claim found about the escrow or order it pays (read with the target's row locked). */
export interface ClaimTarget {
  kind: 'escrow' | 'order';
  /** The escrow's or the order's id: the claim is on its latest payment. */
  id: string;
  /** Whether the target still takes this payment; if not, the claim is recorded late. */
  open: boolean;
  /** The target's status as the buyer reads it (an escrow past its deadline: `expired`). */
  status: string;
}

export interface ClaimResult {
  payment: PaymentRow;
  /** Recorded as a late claim (flag `late_claim`): staff credit or return it, the target stays as it is. */
  late: boolean;
  /** What happens next, for the buyer. */
  nextStep: string;
}

function nextStepOf(target: ClaimTarget): string {
  if (target.open) return `Staff will verify your transfer; once they confirm it the ${target.kind} is paid.`;
  const what = target.status === 'cancelled' || target.status === 'expired' ? target.status : `already ${target.status}`;
  return `The ${target.kind} was ${what}, so this transfer cannot pay it; staff will verify it and credit it to your balance or return it to you.`;
}

/**
 * Records the buyer's claim of a manual transfer: `pending` -> `awaiting_confirmation`. When
 * the target no longer takes the payment (cancelled, expired, paid another way) the claim is
 * still recorded, flagged `late_claim`, so the money is never stranded: staff see it and
 * credit it to the buyer's balance or return it. The caller holds the target's row locked.
 */
export async function recordClaim(trx: Db, target: ClaimTarget, input: ClaimInput): Promise<ClaimResult> {
  const payment = target.kind === 'escrow' ? await repo.latestForEscrow(trx, target.id) : await repo.latestForOrder(trx, target.id);
  if (!payment) throw paymentErrors.noPayment(target.kind);
  if (!payment.is_manual) throw paymentErrors.notManual();
  const now = clock.now();
  const claimed = await transition(trx, payment, 'claim', {
    claimed_at: now,
    claim_reference: input.reference ? input.reference : null,
    ...(target.open ? {} : { flag: LATE_CLAIM }),
    updated_at: now,
  });
  return { payment: claimed, late: !target.open, nextStep: nextStepOf(target) };
}

/** POST /api/escrows/:id/claim-payment: the buyer says the manual transfer is made. */
export async function claimPayment(trxOrDb: Db | undefined, actor: Actor, escrowId: string, input: ClaimInput): Promise<ClaimResult> {
  return inTransaction(trxOrDb, async (trx) => {
    const e = isUuid(escrowId) ? await escrowRepo.findById(trx, escrowId) : undefined;
    if (!e) throw paymentErrors.escrowNotFound();
    if (e.buyer_id !== actor.userId) throw partyOf(e, actor.userId) ? paymentErrors.notBuyerToClaim() : paymentErrors.notEscrowParty();
    // Locked like pay and cancel: a claim and a cancel never pass each other.
    await escrowRepo.lockRow(trx, e.id);
    const current = (await escrowRepo.findById(trx, e.id))!;
    const expired = isExpired(current);
    return recordClaim(trx, { kind: 'escrow', id: e.id, open: current.status === 'pending_payment' && !expired, status: expired ? 'expired' : current.status }, input);
  });
}

// ---- Staff: confirm or reject a claim ------------------------------------------------------

/**
 * Locks the payment row. A manual transfer's escrow or order row is locked first (the order
 * of claim, cancel and confirm); a gateway payment is locked alone (the callback worker locks
 * a gateway payment, then its escrow: taking the escrow first here could close a cycle).
 */
async function lockWithTarget(trx: Db, paymentId: string): Promise<PaymentRow> {
  const seen = isUuid(paymentId) ? await repo.findById(trx, paymentId) : undefined;
  if (!seen) throw paymentErrors.notFound();
  if (!seen.is_manual) return (await repo.findForUpdate(trx, seen.id))!;
  if (seen.escrow_id !== null) await escrowRepo.lockRow(trx, seen.escrow_id);
  else await orderRepo.findById(trx, seen.order_id!, { lock: true });
  return (await repo.findForUpdate(trx, seen.id))!;
}

/**
 * POST /v1/admin/payments/:id/confirm: a claimed manual transfer arrived. The escrow or
 * order is paid through the same settlement as a gateway's paid report; a late claim
 * credits the buyer's balance instead (the closed escrow or order is never reopened).
 */
export async function staffConfirm(trxOrDb: Db | undefined, staff: StaffContext, paymentId: string): Promise<PaymentRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const payment = await lockWithTarget(trx, paymentId);
    if (!allows('confirm', payment.status)) throw invalidState(payment.status, 'confirm');
    if (payment.flag === LATE_CLAIM) return settleByStaff(trx, staff, payment, 'credit', 'payment.confirm');
    const { payment: confirmed, outcome } = await confirmClaim(trx, staff, payment);
    await recordStaffAction(trx, { actorId: staff.actorId, action: 'payment.confirm', targetType: 'payment', targetId: payment.id, note: staff.note ?? null, details: { outcome }, ip: staff.ip });
    return confirmed;
  });
}

/**
 * The one confirmation of a claimed manual transfer, for escrows and payment-service orders:
 * settled like a gateway's paid report, decided by staff. The caller holds the target's row
 * and the payment's row locked and records its own staff action.
 */
export async function confirmClaim(trx: Db, staff: StaffActor, payment: PaymentRow): Promise<{ payment: PaymentRow; outcome: string }> {
  if (!allows('confirm', payment.status)) throw invalidState(payment.status, 'confirm');
  const outcome = await settlePaid(trx, payment, 'staff');
  await repo.setDecidedBy(trx, payment.id, staff.actorId);
  return { payment: (await repo.findById(trx, payment.id))!, outcome };
}

/** The newest claimed manual transfer of an order (locked; the caller holds the order's row), or undefined. */
export async function claimedForOrder(trx: Db, orderId: string): Promise<PaymentRow | undefined> {
  return repo.claimedForOrderForUpdate(trx, orderId);
}

/** POST /v1/admin/payments/:id/reject: the claimed transfer did not arrive; the escrow stays unpaid. */
export async function staffReject(trxOrDb: Db | undefined, staff: StaffContext, paymentId: string): Promise<PaymentRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const payment = await lockWithTarget(trx, paymentId);
    const now = clock.now();
    const rejected = await transition(trx, payment, 'reject', { decided_by: staff.actorId, updated_at: now });
    // A payment-service order waiting on this claim can be paid again (as an escrow stays payable).
    if (rejected.order_id !== null) await reopenAfterRejectedClaim(trx, rejected.order_id, staff.actorId, now);
    await recordStaffAction(trx, { actorId: staff.actorId, action: 'payment.reject', targetType: 'payment', targetId: payment.id, note: staff.note ?? null, ip: staff.ip });
    return rejected;
  });
}

// ---- Staff: credit or return late and mismatched money -------------------------------------

/** Why a payment waits for staff, or null when it does not. */
export function attentionOf(p: Pick<PaymentRow, 'status' | 'flag'>): repo.AttentionReason | null {
  if (p.flag === 'amount_mismatch' && p.status !== 'paid') return 'amount_mismatch';
  if (p.status === 'awaiting_confirmation') return p.flag === LATE_CLAIM ? 'late_claim' : 'claimed';
  return null;
}

type Settlement = 'credit' | 'return';

/**
 * Settles money that cannot pay its target. Qualifies: a gateway payment flagged
 * `amount_mismatch` and not paid (pending, expired or failed), whose amount is the one the
 * gateway reported; a manual transfer claimed late (`awaiting_confirmation`, flag
 * `late_claim`), whose amount is the claimed total. The payment becomes `paid` (the money
 * arrived) with flag `credited_to_buyer` or `returned_outside` and `received_amount`; one
 * posting moves the money out of gateway clearing. The caller holds the payment row locked.
 */
async function settleByStaff(trx: Db, staff: StaffContext, payment: PaymentRow, how: Settlement, action: string): Promise<PaymentRow> {
  const reason = attentionOf(payment);
  if (reason !== 'amount_mismatch' && reason !== 'late_claim') {
    throw paymentErrors.notSettleable(payment.status, payment.flag, how);
  }
  const amount = reason === 'amount_mismatch' ? await repo.reportedAmount(trx, payment.id) : payment.amount;
  if (amount === null || !Number.isSafeInteger(amount) || amount <= 0) throw new Error(`payment ${payment.id} is flagged amount_mismatch without a reported amount`);
  const now = clock.now();
  // Compare-and-set on the status and the flag together: staff settle a payment only in the state they looked at.
  const settled = await transition(
    trx,
    payment,
    'staffSettle',
    { paid_at: now, flag: how === 'credit' ? 'credited_to_buyer' : 'returned_outside', received_amount: amount, decided_by: staff.actorId, next_poll_at: null, updated_at: now },
    { flag: payment.flag },
  );
  const target = payment.escrow_id !== null ? `escrow ${payment.escrow_id}` : `order ${payment.order_id}`;
  const posting: Posting =
    how === 'credit'
      ? {
          kind: 'payment_credit',
          refType: 'payment',
          refId: payment.id,
          // The key of the automatic credit too: a payment is credited once, whoever does it.
          postingKey: `payment-credit:${payment.id}`,
          memo: `${reason} for ${target}, credited by staff`,
          lines: [
            { account: { system: 'gatewayClearing' }, amount: -amount },
            { account: { userId: payment.buyer_id }, amount },
          ],
        }
      : {
          kind: 'payment_returned',
          refType: 'payment',
          refId: payment.id,
          postingKey: `payment-return:${payment.id}`,
          memo: `${reason} for ${target}, returned to the payer outside the service`,
          lines: [
            { account: { system: 'gatewayClearing' }, amount: -amount },
            { account: { system: 'returnedOutside' }, amount },
          ],
        };
  const posted = await post(trx, posting);
  if (posted.duplicate) throw new Error(`payment ${payment.id}: posting ${posting.postingKey} was already made`);
  await recordStaffAction(trx, {
    actorId: staff.actorId,
    action,
    targetType: 'payment',
    targetId: payment.id,
    note: staff.note ?? null,
    details: { outcome: settled.flag, reason, amount, link_amount: payment.amount },
    ip: staff.ip,
  });
  return settled;
}

/** POST /v1/admin/payments/:id/credit: late or mismatched money goes to the buyer's balance. */
export async function staffCredit(trxOrDb: Db | undefined, staff: StaffContext, paymentId: string): Promise<PaymentRow> {
  return inTransaction(trxOrDb, async (trx) => settleByStaff(trx, staff, await lockWithTarget(trx, paymentId), 'credit', 'payment.credit'));
}

/** POST /v1/admin/payments/:id/mark-returned: staff returned late or mismatched money to the payer outside the service. */
export async function staffMarkReturned(trxOrDb: Db | undefined, staff: StaffContext, paymentId: string): Promise<PaymentRow> {
  return inTransaction(trxOrDb, async (trx) => settleByStaff(trx, staff, await lockWithTarget(trx, paymentId), 'return', 'payment.mark_returned'));
}

// ---- Staff: the list ----------------------------------------------------------------------

/** GET /v1/admin/payments: every payment (newest first), or those waiting for staff (oldest first). */
export async function listForStaff(trx: Db, filter: repo.StaffPaymentFilter): Promise<{ rows: repo.StaffPaymentRow[]; total: number }> {
  return repo.listForStaff(trx, filter);
}
