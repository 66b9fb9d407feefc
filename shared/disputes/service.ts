/**
 * Disputes (consumer spec 4.3, decision D10): a party freezes a paid, sent or received
 * escrow; the parties and staff exchange messages; staff rule release, refund or hold.
 * Opening is a compare-and-set on the status the caller saw (409 ESCROW_MOVED when it
 * changed underneath), and the schema allows one unresolved dispute per escrow.
 */
import type { Actor, StaffActor } from '../actors.js';
import { clock } from '../clock.js';
import { db, inTransaction, pgConstraint, pgErrorCode, PG, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { notify } from '../notifications/service.js';
import { recordStaffAction } from '../staff/audit.js';
import * as escrowRepo from '../escrows/repo.js';
import { allows, markDisputed, partyOf, settleRefund, settleRelease } from '../escrows/service.js';
import { disputeErrors } from './errors.js';
import { bindUploads, ourRefs } from '../uploads/service.js';
import * as repo from './repo.js';
import type { DisputeRow, DisputeView, MessageRow } from './repo.js';
import { TRANSITIONS, type Outcome, type ReasonCategory, type TransitionName } from './states.js';

export { OUTCOMES, REASON_CATEGORIES, type Outcome, type ReasonCategory } from './states.js';

/** The outcome as the planned dispute.resolved event names it (spec section 6). */
const EVENT_OUTCOME: Record<Outcome, 'released' | 'refunded' | 'hold'> = { release: 'released', refund: 'refunded', hold: 'hold' };

/**
 * The compare-and-set of a ruling; a dispute no longer open or on hold (resolved, by this
 * ruling's rival too) answers INVALID_STATE naming its outcome.
 */
async function transition(trx: Db, d: DisputeRow, name: TransitionName, changes: Partial<DisputeRow>): Promise<DisputeRow> {
  const t = TRANSITIONS[name];
  const from: readonly string[] = t.from;
  if (!from.includes(d.status)) throw disputeErrors.alreadyResolved(d.status, d.outcome);
  const moved = await repo.move(trx, d.id, t.from, { ...changes, status: t.to, updated_at: changes.updated_at ?? clock.now() });
  if (moved) return moved;
  const now = (await repo.findById(trx, d.id)) ?? d;
  throw disputeErrors.alreadyResolved(now.status, now.outcome);
}

export interface OpenInput {
  reason_category: ReasonCategory;
  description: string;
}

/** POST /v1/escrows/:id/dispute. No idempotency: a second dispute answers 409 NOT_DISPUTABLE. */
export async function openDispute(actor: Actor, escrowId: string, input: OpenInput): Promise<DisputeView> {
  try {
    const id = await db.transaction(async (trx) => {
      const e = isUuid(escrowId) ? await escrowRepo.findById(trx, escrowId) : undefined;
      if (!e) throw disputeErrors.escrowNotFound();
      const party = partyOf(e, actor.userId);
      if (!party) throw disputeErrors.notPartyToEscrow();
      if (!allows('dispute', e.status)) throw disputeErrors.notDisputable(e.status);
      if (await repo.activeForEscrow(trx, e.id)) throw disputeErrors.disputeExists();
      const moved = await markDisputed(trx, e, { actorId: actor.userId, actorRole: party });
      if (!moved) throw disputeErrors.escrowMoved();
      const now = clock.now();
      const dispute = await repo.insert(trx, {
        escrow_id: e.id,
        initiator_id: actor.userId,
        reason_category: input.reason_category,
        description: input.description,
        escrow_status_before: e.status,
        created_at: now,
        updated_at: now,
      });
      await notify(trx, party === 'buyer' ? e.seller_id : e.buyer_id, 'dispute_opened', { escrow_id: e.id, dispute_id: dispute.id });
      for (const staffId of await repo.activeStaffIds(trx)) {
        await notify(trx, staffId, 'dispute_opened', { escrow_id: e.id, dispute_id: dispute.id });
      }
      return dispute.id;
    });
    return (await repo.view(db, id))!;
  } catch (err) {
    if (pgErrorCode(err) === PG.uniqueViolation && pgConstraint(err) === 'disputes_one_active_per_escrow') throw disputeErrors.disputeExists();
    throw err;
  }
}

export interface ListInput {
  status?: string;
  page: number;
  limit: number;
}

/** The caller's disputes (as buyer or seller), newest first; staff see every dispute. */
export async function listDisputes(actor: Actor, input: ListInput) {
  return repo.list(db, { userId: actor.role === 'admin' ? null : actor.userId, ...input });
}

async function loadForParticipant(trx: Db, actor: Actor, id: string): Promise<{ dispute: DisputeView; role: 'buyer' | 'seller' | 'admin' }> {
  const dispute = isUuid(id) ? await repo.view(trx, id) : undefined;
  if (!dispute) throw disputeErrors.notFound();
  const party = partyOf(dispute, actor.userId);
  if (party) return { dispute, role: party };
  if (actor.role === 'admin') return { dispute, role: 'admin' };
  throw disputeErrors.notParty();
}

export async function getDispute(actor: Actor, id: string): Promise<DisputeView> {
  return (await loadForParticipant(db, actor, id)).dispute;
}

export async function listMessages(actor: Actor, id: string): Promise<MessageRow[]> {
  const { dispute } = await loadForParticipant(db, actor, id);
  return repo.messages(db, dispute.id);
}

export interface MessageInput {
  message: string;
  evidence_urls?: string[];
}

/** A message on an unresolved dispute, by a party or staff; the others are notified. */
export async function postMessage(actor: Actor, id: string, input: MessageInput): Promise<MessageRow> {
  return db.transaction(async (trx) => {
    const { dispute, role } = await loadForParticipant(trx, actor, id);
    if (dispute.status === 'resolved') throw disputeErrors.closed();
    // Evidence links to this service's uploads are bound to the dispute (uploader only, once).
    await bindUploads(trx, actor.userId, ourRefs(input.evidence_urls ?? []), { kind: 'dispute', id: dispute.id });
    const message = await repo.insertMessage(trx, {
      dispute_id: dispute.id,
      sender_id: actor.userId,
      sender_role: role,
      message: input.message,
      evidence_urls: JSON.stringify(input.evidence_urls ?? []),
      created_at: clock.now(),
    });
    for (const userId of [dispute.buyer_id, dispute.seller_id]) {
      if (userId !== actor.userId) await notify(trx, userId, 'dispute_message', { escrow_id: dispute.escrow_id, dispute_id: dispute.id });
    }
    return message;
  });
}

export interface RulingInput {
  outcome: Outcome;
  /** An empty note is no note. */
  note?: string | null;
}

/**
 * POST /v1/admin/disputes/:id/resolve: release to the seller (minus the escrow fee), refund
 * to the buyer's balance, or hold (the escrow stays disputed; a later ruling may follow).
 * The ruling is a compare-and-set on the dispute's status before any money moves, so two
 * staff rulings at once cannot both move the money; the staff action is recorded with it.
 */
export async function resolveDispute(trxOrDb: Db | undefined, staff: StaffActor, id: string, input: RulingInput): Promise<DisputeView> {
  const note = input.note || null;
  const disputeId = await inTransaction(trxOrDb, async (trx) => {
    const found = isUuid(id) ? await repo.findById(trx, id) : undefined;
    if (!found) throw disputeErrors.notFound();
    const now = clock.now();
    const resolved = await transition(trx, found, input.outcome, {
      outcome: input.outcome,
      resolution_note: note,
      resolved_by: staff.actorId,
      resolved_at: now,
      updated_at: now,
    });
    const e = await escrowRepo.findById(trx, resolved.escrow_id);
    if (!e) throw new Error(`dispute ${id} names a missing escrow`);
    const by = { actorId: staff.actorId, actorRole: 'admin' as const };
    if (input.outcome === 'release') await settleRelease(trx, e, 'rulingRelease', by);
    else if (input.outcome === 'refund') await settleRefund(trx, e, by);
    await escrowRepo.recordEvent(trx, {
      escrowId: e.id,
      event: 'dispute.resolved',
      actorId: staff.actorId,
      actorRole: 'admin',
      data: { dispute_id: resolved.id, outcome: EVENT_OUTCOME[input.outcome] },
      at: now,
    });
    await recordStaffAction(trx, {
      actorId: staff.actorId,
      action: `dispute.${input.outcome}`,
      targetType: 'dispute',
      targetId: resolved.id,
      note,
      details: { escrow_id: e.id },
      ip: staff.ip,
    });
    for (const userId of [e.buyer_id, e.seller_id]) {
      await notify(trx, userId, 'dispute_resolved', { escrow_id: e.id, dispute_id: resolved.id, outcome: input.outcome });
    }
    return resolved.id;
  });
  return (await repo.view(trxOrDb ?? db, disputeId))!;
}

export type { DisputeRow, DisputeView, MessageRow };
