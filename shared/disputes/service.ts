/**
 * Disputes (consumer spec 4.3, decision D10): a party freezes a paid, sent or received
 * escrow; the parties and staff exchange messages; staff rule release, refund or hold.
 * Opening is a compare-and-set on the status the caller saw (409 ESCROW_MOVED when it
 * changed underneath), and the schema allows one unresolved dispute per escrow.
 */
import { clock } from '../clock.js';
import { db, inTransaction, pgConstraint, pgErrorCode, PG, type Db } from '../db.js';
import { AppError } from '../errors.js';
import { isUuid } from '../ids.js';
import { notify } from '../notifications/service.js';
import { recordStaffAction } from '../staff/audit.js';
import * as escrowRepo from '../escrows/repo.js';
import { markDisputed, partyOf, settleRefund, settleRelease, type Actor } from '../escrows/service.js';
import { TRANSITIONS, type EscrowStatus } from '../escrows/states.js';
import { bindUploads, ourRefs } from '../uploads/service.js';
import * as repo from './repo.js';
import type { DisputeRow, DisputeView, MessageRow } from './repo.js';

export const REASON_CATEGORIES = ['item_not_received', 'item_not_as_described', 'seller_unresponsive', 'other'] as const;
export type ReasonCategory = (typeof REASON_CATEGORIES)[number];
export const OUTCOMES = ['release', 'refund', 'hold'] as const;
export type Outcome = (typeof OUTCOMES)[number];
/** The outcome as the planned dispute.resolved event names it (spec section 6). */
const EVENT_OUTCOME: Record<Outcome, 'released' | 'refunded' | 'hold'> = { release: 'released', refund: 'refunded', hold: 'hold' };

const notFound = () => AppError.legacy(404, 'NOT_FOUND', 'Dispute not found');
const forbidden = () => AppError.legacy(403, 'FORBIDDEN', 'You are not a party to this dispute');

export interface OpenInput {
  reason_category: ReasonCategory;
  description: string;
}

/** POST /v1/escrows/:id/dispute. No idempotency: a second dispute answers 409 NOT_DISPUTABLE. */
export async function openDispute(actor: Actor, escrowId: string, input: OpenInput): Promise<DisputeView> {
  const disputable = TRANSITIONS.dispute.from as readonly EscrowStatus[];
  try {
    const id = await db.transaction(async (trx) => {
      const e = isUuid(escrowId) ? await escrowRepo.findById(trx, escrowId) : undefined;
      if (!e) throw AppError.legacy(404, 'NOT_FOUND', 'Escrow not found');
      const party = partyOf(e, actor.userId);
      if (!party) throw AppError.legacy(403, 'FORBIDDEN', 'Only the buyer or the seller can open a dispute');
      if (!disputable.includes(e.status)) {
        throw AppError.legacy(409, 'NOT_DISPUTABLE', `The escrow is ${e.status}; only paid, sent or received escrows can be disputed`, { status: e.status });
      }
      if (await repo.activeForEscrow(trx, e.id)) throw AppError.legacy(409, 'DISPUTE_EXISTS', 'This escrow already has an open dispute');
      const moved = await markDisputed(trx, e, { actorId: actor.userId, actorRole: party });
      if (!moved) throw AppError.legacy(409, 'ESCROW_MOVED', 'The escrow changed while the dispute was being opened; reload it and try again');
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
    if (pgErrorCode(err) === PG.uniqueViolation && pgConstraint(err) === 'disputes_one_active_per_escrow') {
      throw AppError.legacy(409, 'DISPUTE_EXISTS', 'This escrow already has an open dispute');
    }
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
  if (!dispute) throw notFound();
  const party = partyOf(dispute, actor.userId);
  if (party) return { dispute, role: party };
  if (actor.role === 'admin') return { dispute, role: 'admin' };
  throw forbidden();
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
    if (dispute.status === 'resolved') throw AppError.legacy(409, 'DISPUTE_CLOSED', 'This dispute is resolved; it takes no more messages');
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
  note?: string | null;
}

export interface StaffContext {
  actorId: string;
  ip: string;
}

/**
 * POST /v1/admin/disputes/:id/resolve: release to the seller (minus the escrow fee), refund
 * to the buyer's balance, or hold (the escrow stays disputed; a later ruling may follow).
 * The dispute row is locked, so two staff rulings at once cannot both move the money.
 */
export async function resolveDispute(trxOrDb: Db | undefined, staff: StaffContext, id: string, input: RulingInput): Promise<DisputeView> {
  const disputeId = await inTransaction(trxOrDb, async (trx) => {
    const locked = isUuid(id) ? await repo.findForUpdate(trx, id) : undefined;
    if (!locked) throw notFound();
    if (locked.status === 'resolved') {
      throw AppError.legacy(409, 'INVALID_STATE', `The dispute is already resolved (${locked.outcome})`, { status: locked.status, outcome: locked.outcome });
    }
    const e = await escrowRepo.findById(trx, locked.escrow_id);
    if (!e) throw new Error(`dispute ${id} names a missing escrow`);
    const by = { actorId: staff.actorId, actorRole: 'admin' as const };
    if (input.outcome === 'release') await settleRelease(trx, e, 'rulingRelease', by);
    else if (input.outcome === 'refund') await settleRefund(trx, e, by);
    const now = clock.now();
    const resolved = await repo.rule(trx, locked.id, {
      status: input.outcome === 'hold' ? 'on_hold' : 'resolved',
      outcome: input.outcome,
      resolution_note: input.note ?? null,
      resolved_by: staff.actorId,
      resolved_at: now,
      updated_at: now,
    });
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
      note: input.note ?? null,
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
