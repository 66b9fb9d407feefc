/**
 * Staff moves on withdrawals (decisions D10, 0008): approve (queues the payout job), mark
 * paid (a payout made by hand), reject (the amount back to the balance, a used voucher
 * restored). Each records the staff action in the same transaction. `settlePaid` is the
 * one paid path, shared with the payout worker (payout.ts).
 */
import type { StaffActor } from '../actors.js';
import { clock } from '../clock.js';
import { inTransaction, type Db } from '../db.js';
import { post, type PostingLine } from '../ledger/index.js';
import { notify } from '../notifications/service.js';
import { enqueue } from '../outbox.js';
import { recordStaffAction } from '../staff/audit.js';
import { withdrawalErrors } from './errors.js';
import * as repo from './repo.js';
import type { WithdrawalRow } from './repo.js';
import { allows, invalidState, load, transition } from './transition.js';

/** Staff on a withdrawal move: the shared StaffActor, `ip` optional (scripts and tests move withdrawals without a request). */
export type WithdrawalStaff = Omit<StaffActor, 'ip'> & { ip?: string };

const noteOf = (note: string | null | undefined) => (note && note.trim() !== '' ? note : null);

/**
 * Staff: pending -> approved, and the payout job queued through the outbox. A withdrawal
 * the risk checks held for review needs a note saying why it may go (400 MISSING_FIELDS).
 */
export async function approve(trxOrDb: Db | undefined, staff: WithdrawalStaff, id: string, input: { note?: string | null } = {}): Promise<WithdrawalRow> {
  const note = noteOf(input.note);
  return inTransaction(trxOrDb, async (trx) => {
    const w = await load(trx, id);
    if (!allows('approve', w.status)) throw invalidState(w.status, 'approve');
    if (w.risk_action === 'review' && note === null) throw withdrawalErrors.reviewNeedsNote(w.risk_action, w.risk_flags);
    const now = clock.now();
    const approved = await transition(trx, w, 'approve', {
      approved_by: staff.actorId,
      approved_at: now,
      processed_by: staff.actorId,
      processed_at: now,
      admin_note: note ?? w.admin_note,
      updated_at: now,
    });
    await enqueue(trx, 'payouts.send', { withdrawal_id: approved.id });
    await recordStaffAction(trx, { actorId: staff.actorId, action: 'withdrawal.approve', targetType: 'withdrawal', targetId: id, note, details: { risk_action: w.risk_action }, ip: staff.ip });
    return approved;
  });
}

export interface PaidBy {
  /** The staff member, or null for the payout worker. */
  actorId: string | null;
  reference: string | null;
  note: string | null;
}

/**
 * -> paid, and the payout posting: payouts in flight -amount, payouts sent +net, platform
 * fees +fee. The one path for staff (markPaid: approved, or processing whose claim ran
 * out) and the payout worker holding the claim (payoutSent: processing).
 */
export async function settlePaid(trx: Db, w: WithdrawalRow, by: PaidBy): Promise<WithdrawalRow> {
  const now = clock.now();
  const changes: Partial<WithdrawalRow> = {
    paid_at: now,
    processed_by: by.actorId,
    processed_at: now,
    payout_reference: by.reference ?? w.payout_reference,
    payout_lease_until: null,
    admin_note: by.note ?? w.admin_note,
    updated_at: now,
  };
  const paid =
    by.actorId === null
      ? await transition(trx, w, 'payoutSent', changes)
      : await transition(trx, w, 'markPaid', changes, {
          // One statement decides staff against the worker: approved (not yet claimed), or a
          // claim that ran out (no worker is sending it). A live claim answers 409.
          where: (q) => void q.where((c) => void c.where('status', 'approved').orWhere('payout_lease_until', '<=', now)),
          refused: (found) => (found.status === 'processing' ? withdrawalErrors.beingSent(found.status) : null),
        });
  const lines: PostingLine[] = [
    { account: { system: 'payoutsInFlight' }, amount: -paid.amount },
    { account: { system: 'payoutsSent' }, amount: paid.net_amount },
  ];
  if (paid.fee_amount > 0) lines.push({ account: { system: 'platformFees' }, amount: paid.fee_amount });
  await post(trx, { kind: 'withdrawal_payout', refType: 'withdrawal', refId: paid.id, postingKey: `withdrawal-paid:${paid.id}`, lines });
  await notify(trx, paid.user_id, 'withdrawal_paid', { withdrawal_id: paid.id });
  return paid;
}

/**
 * Staff: the payout was made (by hand, or confirmed with the provider). Not while the
 * payout worker is sending it (processing with a live claim: 409 INVALID_STATE); staff
 * and the worker race on one compare-and-set, so exactly one of them pays and posts.
 */
export async function markPaid(
  trxOrDb: Db | undefined,
  staff: WithdrawalStaff,
  id: string,
  input: { note?: string | null; reference?: string | null } = {},
): Promise<WithdrawalRow> {
  const note = noteOf(input.note);
  const reference = noteOf(input.reference);
  return inTransaction(trxOrDb, async (trx) => {
    const w = await load(trx, id);
    if (w.status === 'processing' && w.payout_lease_until !== null && w.payout_lease_until > clock.now()) throw withdrawalErrors.beingSent(w.status);
    const paid = await settlePaid(trx, w, { actorId: staff.actorId, reference, note });
    await recordStaffAction(trx, { actorId: staff.actorId, action: 'withdrawal.mark_paid', targetType: 'withdrawal', targetId: id, note, details: reference ? { reference } : {}, ip: staff.ip });
    return paid;
  });
}

/**
 * Staff: pending | approved -> rejected with a note (required: 400 MISSING_FIELDS). The
 * amount goes back to the balance and a used voucher is restored. Once the payout worker
 * has claimed it (processing) or it is paid, it cannot be rejected.
 */
export async function reject(trxOrDb: Db | undefined, staff: WithdrawalStaff, id: string, input: { note?: string | null } = {}): Promise<WithdrawalRow> {
  const note = noteOf(input.note);
  if (note === null) throw withdrawalErrors.rejectNeedsNote();
  return inTransaction(trxOrDb, async (trx) => {
    const w = await load(trx, id);
    const now = clock.now();
    const rejected = await transition(trx, w, 'reject', { rejected_at: now, processed_by: staff.actorId, processed_at: now, admin_note: note, updated_at: now });
    await post(trx, {
      kind: 'withdrawal_refund',
      refType: 'withdrawal',
      refId: rejected.id,
      postingKey: `withdrawal-refund:${rejected.id}`,
      lines: [
        { account: { system: 'payoutsInFlight' }, amount: -rejected.amount },
        { account: { userId: rejected.user_id }, amount: rejected.amount },
      ],
    });
    if (rejected.voucher_redemption_id) await repo.restoreVoucher(trx, rejected.voucher_redemption_id, rejected.id);
    await notify(trx, rejected.user_id, 'withdrawal_rejected', { withdrawal_id: rejected.id });
    await recordStaffAction(trx, { actorId: staff.actorId, action: 'withdrawal.reject', targetType: 'withdrawal', targetId: id, note, ip: staff.ip });
    return rejected;
  });
}
