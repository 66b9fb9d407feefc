/**
 * The escrow lifecycle (consumer spec sections 2, 3, 4.2; decisions D3 and D6). Every move
 * is a compare-and-set through `transition()` (transition.ts) from the table in states.ts;
 * money moves only through ledger postings with a per-escrow posting key (settle.ts,
 * paid.ts); side effects (notifications, timers) go to the outbox in the same transaction.
 * Services join the caller's transaction (the idempotent request's) or open one.
 *
 * This file holds the reads and the parties' and staff's moves; creation (create.ts),
 * confirmed payments (paid.ts), settlement (settle.ts) and the timers (timers.ts) live
 * beside it and are re-exported here, so callers import the feature from one place.
 */
import type { Actor, StaffActor } from '../actors.js';
import { clock } from '../clock.js';
import { db, inTransaction, type Db, type ReadAhead } from '../db.js';
import { isUuid } from '../ids.js';
import { noticeJobs } from '../notifications/service.js';
import { outboxItem } from '../outbox.js';
import { recordStaffAction } from '../staff/audit.js';
import { courierBySlug } from '../tracking/couriers.js';
import * as users from '../users/repo.js';
import { counterpartyUsername, type DirectInput } from './create.js';
import { escrowErrors } from './errors.js';
import { ESCROW_FEE_SETTING } from './fees.js';
import * as repo from './repo.js';
import type { EscrowRow } from './repo.js';
import { settleRelease } from './settle.js';
import { TRANSITIONS } from './states.js';
import { loadTimers } from './timers.js';
import { allows, invalidState, loadForParty, partyOf, requireRole, transition, type By } from './transition.js';

export type { EscrowRow } from './repo.js';
export { allows, loadForParty, partyOf, type Actor, type By, type Party } from './transition.js';
export { createDirect, createFromLink, MAX_AMOUNT, MIN_AMOUNT, parseAmount, type DirectInput, type FromLinkInput } from './create.js';
export { markPaid, markPaidMany, type PaymentConfirmation } from './paid.js';
export { markDisputed, settleRefund, settleRelease } from './settle.js';
export { fastForward, loadTimers, runAutoRelease, runExpiry, sweepTimers, type FastForwardTimer } from './timers.js';

const HOUR_MS = 3600_000;

// ---- What a keyed request reads first, sent with its key's statement (idempotent({ readAhead })) ----

/** A party's move of escrow `id` (send, confirm received, cancel) starts from the escrow (extend reads it locked: no read-ahead). */
export function moveReadAhead(id: string): ReadAhead[] {
  return repo.escrowReadAhead(id);
}

/** The release starts from the escrow and the `escrow_fee` setting. */
export function releaseReadAhead(id: string): ReadAhead[] {
  return [...repo.escrowReadAhead(id), ...repo.settingReadAhead(ESCROW_FEE_SETTING)];
}

/** A direct creation starts from the counterparty, by the username it names. */
export function createReadAhead(input: Pick<DirectInput, 'counterparty_username'>): ReadAhead[] {
  return repo.counterpartyReadAhead(counterpartyUsername(input));
}

// ---- Reads ------------------------------------------------------------------------------

export async function getForParty(actor: Actor, id: string): Promise<EscrowRow> {
  return loadForParty(db, id, actor, { staff: true });
}

export async function listForUser(userId: string, filter: Omit<repo.ListFilter, 'userId'>) {
  return repo.listForUser(db, { ...filter, userId });
}

/** Expired: cancelled by the expiry timer, or past its payment deadline before the timer ran. */
export function isExpired(e: EscrowRow, now = clock.now()): boolean {
  return (e.status === 'cancelled' && e.cancel_reason === 'expired') || (e.status === 'pending_payment' && e.expires_at <= now);
}

/** GET /api/escrows/:id/preview (public): 404 NOT_FOUND, 410 EXPIRED. */
export async function preview(id: string): Promise<{ escrow: EscrowRow; seller: users.UserRow }> {
  const e = isUuid(id) ? await repo.findById(db, id) : undefined;
  if (!e) throw escrowErrors.previewNotFound();
  if (isExpired(e)) throw escrowErrors.expired();
  const seller = await users.findById(db, e.seller_id);
  if (!seller) throw escrowErrors.previewNotFound();
  return { escrow: e, seller };
}

// ---- Moves by the parties ---------------------------------------------------------------

export interface SendInput {
  courier?: string;
  tracking_number?: string;
}

/** seller: paid -> sent, with the optional courier + tracking number pair; starts the auto-release timer. */
export async function send(trxOrDb: Db | undefined, actor: Actor, id: string, input: SendInput): Promise<EscrowRow> {
  const hasCourier = input.courier !== undefined && input.courier !== '';
  const hasNumber = input.tracking_number !== undefined && input.tracking_number !== '';
  return inTransaction(trxOrDb, async (trx) => {
    // Who and when first: a stranger learns nothing from the body checks.
    const e = await loadForParty(trx, id, actor);
    requireRole(e, actor, 'seller');
    if (!allows('send', e.status)) throw invalidState(e.status, 'send');
    if (hasCourier !== hasNumber) throw escrowErrors.trackingIncomplete();
    if (hasCourier && !courierBySlug(input.courier!)) throw escrowErrors.unknownCourier(input.courier!);
    const now = clock.now();
    const timer = (await loadTimers(trx))[e.category];
    const autoReleaseAt = new Date(now.getTime() + timer.autoReleaseHours * HOUR_MS);
    const sent = await transition(trx, e, 'send', {
      sent_at: now,
      auto_release_at: autoReleaseAt,
      courier: hasCourier ? input.courier! : null,
      tracking_number: hasNumber ? input.tracking_number!.trim() : null,
      updated_at: now,
    });
    await repo.recordEvent(
      trx,
      {
        escrowId: id,
        event: 'escrow.sent',
        actorId: actor.userId,
        actorRole: 'seller',
        data: { courier: sent.courier, tracking_number: sent.tracking_number, auto_release_at: autoReleaseAt.toISOString() },
        at: now,
      },
      [
        ...noticeJobs(trx, [{ userId: sent.buyer_id, type: 'escrow_sent', refs: { escrow_id: id } }]),
        outboxItem('escrows.auto-release', { escrow_id: id }, { runAt: autoReleaseAt }),
        // The first courier snapshot is fetched now, so the parties' first look finds it cached.
        ...(sent.courier && sent.tracking_number ? [outboxItem('tracking.refresh', { escrow_id: id })] : []),
      ],
    );
    return sent;
  });
}

/** buyer: sent -> received. The auto-release timer keeps running until the buyer releases. */
export async function confirmReceived(trxOrDb: Db | undefined, actor: Actor, id: string): Promise<EscrowRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const e = await loadForParty(trx, id, actor);
    requireRole(e, actor, 'buyer');
    const now = clock.now();
    const received = await transition(trx, e, 'confirmReceived', { received_at: now, updated_at: now });
    await repo.recordEvent(
      trx,
      { escrowId: id, event: 'escrow.received', actorId: actor.userId, actorRole: 'buyer', at: now },
      noticeJobs(trx, [{ userId: received.seller_id, type: 'escrow_received', refs: { escrow_id: id } }]),
    );
    return received;
  });
}

/** buyer: received -> released; the money goes to the seller minus the escrow fee. */
export async function release(trxOrDb: Db | undefined, actor: Actor, id: string): Promise<EscrowRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const e = await loadForParty(trx, id, actor);
    requireRole(e, actor, 'buyer');
    return settleRelease(trx, e, 'release', { actorId: actor.userId, actorRole: 'buyer' });
  });
}

export interface CancelInput {
  reason?: string;
}

/** buyer or seller, before payment: pending_payment -> cancelled. */
export async function cancel(trxOrDb: Db | undefined, actor: Actor, id: string, input: CancelInput = {}): Promise<EscrowRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const e = await loadForParty(trx, id, actor);
    const party = partyOf(e, actor.userId)!;
    return cancelEscrow(trx, e, `${party}_cancelled`, { actorId: actor.userId, actorRole: party }, input.reason ?? null);
  });
}

export interface StaffCancelInput {
  reason?: string;
}

/**
 * Staff cancel (the "admin" cancel of section 3, before payment only): the reason is
 * required, at most 2000 characters; the staff action is recorded in the same transaction
 * (the reason as its note, the staff member's own note in its details).
 */
export async function staffCancel(trxOrDb: Db | undefined, staff: StaffActor, id: string, input: StaffCancelInput): Promise<EscrowRow> {
  const reason = input.reason;
  if (reason === undefined || reason.trim() === '') throw escrowErrors.reasonRequired();
  if (reason.length > 2000) throw escrowErrors.reasonTooLong();
  return inTransaction(trxOrDb, async (trx) => {
    const e = isUuid(id) ? await repo.findById(trx, id) : undefined;
    if (!e) throw escrowErrors.notFound();
    const cancelled = await cancelEscrow(trx, e, 'staff_cancelled', { actorId: staff.actorId, actorRole: 'admin' }, reason);
    await recordStaffAction(trx, {
      actorId: staff.actorId,
      action: 'escrow.cancel',
      targetType: 'escrow',
      targetId: id,
      note: reason,
      details: staff.note ? { note: staff.note } : {},
      ip: staff.ip,
    });
    return cancelled;
  });
}

async function cancelEscrow(trx: Db, e: EscrowRow, reason: string, by: By, note: string | null): Promise<EscrowRow> {
  const now = clock.now();
  // A payment underway wins over a cancel (decision 0009): the escrow row is locked here and
  // by `pay`, so a payment link is either seen now or never created for a cancelled escrow.
  await repo.lockRow(trx, e.id);
  if (e.status === 'pending_payment' && (await repo.livePayment(trx, e.id, now))) throw escrowErrors.paymentInProgress();
  const cancelled = await transition(trx, e, 'cancel', { cancelled_at: now, cancel_reason: reason, updated_at: now });
  const notices = [cancelled.buyer_id, cancelled.seller_id]
    .filter((userId) => userId !== by.actorId)
    .map((userId) => ({ userId, type: 'escrow_cancelled' as const, refs: { escrow_id: e.id } }));
  await repo.recordEvent(trx, { escrowId: e.id, event: 'escrow.cancelled', actorId: by.actorId, actorRole: by.actorRole, data: { reason, note }, at: now }, noticeJobs(trx, notices));
  return cancelled;
}

/** buyer: pushes the auto-release time back by one step, up to the category's maximum. */
export async function extend(trxOrDb: Db | undefined, actor: Actor, id: string): Promise<EscrowRow> {
  return inTransaction(trxOrDb, async (trx) => {
    // Locked: two extends at once must not both read the same deadline.
    const e = await loadForParty(trx, id, actor, { lock: true });
    requireRole(e, actor, 'buyer');
    if (!allows('autoRelease', e.status) || !e.sent_at || !e.auto_release_at) throw escrowErrors.notExtendable(e.status);
    if (e.auto_release_at.getTime() <= clock.nowMs()) throw escrowErrors.releaseDue(e.status);
    const timer = (await loadTimers(trx))[e.category];
    if (timer.extendStepHours === 0) throw escrowErrors.extendDisabled(e.category);
    const maxAt = e.sent_at.getTime() + timer.maxHours * HOUR_MS;
    if (e.auto_release_at.getTime() >= maxAt) throw escrowErrors.extendLimitReached(e.category, timer.maxHours, e.extension_count);
    const next = new Date(Math.min(e.auto_release_at.getTime() + timer.extendStepHours * HOUR_MS, maxAt));
    const now = clock.now();
    // Not a status change: the compare-and-set only makes sure it is still waiting for release.
    const moved = await repo.move(trx, id, TRANSITIONS.autoRelease.from, { auto_release_at: next, extension_count: e.extension_count + 1, updated_at: now });
    if (!moved) throw escrowErrors.movedWhileExtending();
    await repo.recordEvent(
      trx,
      {
        escrowId: id,
        event: 'escrow.extended',
        actorId: actor.userId,
        actorRole: 'buyer',
        data: { auto_release_at: next.toISOString(), extension_count: moved.extension_count },
        at: now,
      },
      [outboxItem('escrows.auto-release', { escrow_id: id }, { runAt: next })],
    );
    return moved;
  });
}
