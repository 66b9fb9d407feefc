/**
 * The escrow lifecycle (consumer spec sections 2, 3, 4.2; decisions D3 and D6). Every move
 * is a compare-and-set from the transition table in states.ts; money moves only through
 * ledger postings with a per-escrow posting key; side effects (notifications, timers) go
 * to the outbox in the same transaction. Services join the caller's transaction (the
 * idempotent request's) or open one.
 */
import { clock } from '../clock.js';
import { db, inTransaction, pgConstraint, pgErrorCode, PG, type Db } from '../db.js';
import { AppError } from '../errors.js';
import { isUuid } from '../ids.js';
import { assertRupiah } from '../money.js';
import { post, postMany, type PostingLine } from '../ledger/index.js';
import { enqueue } from '../outbox.js';
import { notify } from '../notifications/service.js';
import * as users from '../users/repo.js';
import { courierBySlug } from '../tracking/couriers.js';
import { escrowFee, loadEscrowFeeRule } from './fees.js';
import { checkLinkContent, checkLinkShape, paramsFromLink, sellerSecret, signatureMatches, type LinkParams } from './links.js';
import * as repo from './repo.js';
import type { EscrowRow } from './repo.js';
import {
  DEFAULT_TIMERS,
  PAYMENT_WINDOW_HOURS,
  TRANSITIONS,
  CATEGORIES,
  type Category,
  type CategoryTimer,
  type EscrowStatus,
  type TransitionName,
} from './states.js';

export type { EscrowRow } from './repo.js';

export const MIN_AMOUNT = 10_000;
export const MAX_AMOUNT = 500_000_000;
const HOUR_MS = 3600_000;

/** Who is acting: a signed-in user (or admin), or the system (timers). */
export interface Actor {
  userId: string;
  role: 'user' | 'admin';
}

export type Party = 'buyer' | 'seller';

export function partyOf(e: Pick<EscrowRow, 'buyer_id' | 'seller_id'>, userId: string): Party | null {
  if (e.buyer_id === userId) return 'buyer';
  if (e.seller_id === userId) return 'seller';
  return null;
}

const notFound = () => AppError.legacy(404, 'ESCROW_NOT_FOUND', 'Escrow not found');
const forbidden = () => AppError.legacy(403, 'FORBIDDEN', 'You are not a party to this escrow');

function invalidState(status: EscrowStatus, name: TransitionName): AppError {
  const from = TRANSITIONS[name].from;
  return AppError.legacy(409, 'INVALID_STATE', `The escrow is ${status}; this needs ${from.join(' or ')}`, { status });
}

/** Reads the escrow for one of its parties (or staff when `staff` is true); else 404 / 403. */
export async function loadForParty(trx: Db, id: string, actor: Actor, options: { staff?: boolean; lock?: boolean } = {}): Promise<EscrowRow> {
  if (!isUuid(id)) throw notFound();
  const q = trx('escrows').where({ id }).first();
  if (options.lock) void q.forUpdate();
  const e = (await q) as EscrowRow | undefined;
  if (!e) throw notFound();
  if (!partyOf(e, actor.userId) && !(options.staff && actor.role === 'admin')) throw forbidden();
  return e;
}

/** The compare-and-set of a named transition; a lost race answers INVALID_STATE naming the state it found. */
async function transition(
  trx: Db,
  e: EscrowRow,
  name: TransitionName,
  changes: Partial<EscrowRow>,
  extra?: Parameters<typeof repo.move>[4],
): Promise<EscrowRow> {
  const t = TRANSITIONS[name];
  if (!(t.from as readonly EscrowStatus[]).includes(e.status)) throw invalidState(e.status, name);
  const moved = await repo.move(trx, e.id, t.from, { ...changes, status: t.to, updated_at: changes.updated_at ?? clock.now() }, extra);
  if (moved) return moved;
  const now = await repo.findById(trx, e.id);
  throw invalidState(now?.status ?? e.status, name);
}

function requireRole(e: EscrowRow, actor: Actor, role: Party): void {
  const party = partyOf(e, actor.userId);
  if (party === role) return;
  if (party === null) throw forbidden();
  throw role === 'buyer'
    ? AppError.legacy(403, 'NOT_BUYER', 'Only the buyer can do this')
    : AppError.legacy(403, 'NOT_SELLER', 'Only the seller can do this');
}

// ---- Creation ---------------------------------------------------------------------------

export function parseAmount(value: unknown): number {
  const n = typeof value === 'string' && /^[0-9]{1,12}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < MIN_AMOUNT || n > MAX_AMOUNT) {
    throw AppError.legacy(400, 'INVALID_AMOUNT', `amount must be a whole number of rupiah from ${MIN_AMOUNT} to ${MAX_AMOUNT}`);
  }
  return n;
}

export interface FromLinkInput {
  link?: string;
  amount: unknown;
  seller?: string;
  item?: string;
  category?: string;
  desc?: string;
  expires?: string | number;
  ref?: string;
  v?: string | number;
  sig?: string;
  buyer?: string;
}

function flattenedParams(input: FromLinkInput): LinkParams {
  const params: LinkParams = {};
  for (const name of ['seller', 'item', 'category', 'desc', 'expires', 'ref', 'v', 'sig', 'buyer'] as const) {
    const value = input[name];
    if (value !== undefined && value !== null) params[name] = String(value);
  }
  return params;
}

function paymentDeadline(now: Date): Date {
  return new Date(now.getTime() + PAYMENT_WINDOW_HOURS * HOUR_MS);
}

async function activeUser(trx: Db, id: string) {
  const u = await users.findById(trx, id);
  return u && u.status === 'active' && u.role === 'user' ? u : undefined;
}

/** POST /api/escrows/from-link: the caller is the buyer; the link is the seller's signed offer. */
export async function createFromLink(trxOrDb: Db | undefined, buyerId: string, input: FromLinkInput): Promise<EscrowRow> {
  const params = input.link !== undefined ? paramsFromLink(input.link) : flattenedParams(input);
  const now = clock.now();
  const shape = checkLinkShape(params, now);
  const amount = parseAmount(input.amount);
  return inTransaction(trxOrDb, async (trx) => {
    const seller = await activeUser(trx, shape.sellerId);
    if (!seller) throw AppError.legacy(422, 'SELLER_NOT_FOUND', 'The seller of this link has no active account');
    const secret = await sellerSecret(trx, seller.id);
    if (!secret || !signatureMatches(secret, params)) {
      throw AppError.legacy(422, 'SIG_MISMATCH', 'The link signature does not match; ask the seller for a new link');
    }
    if (seller.id === buyerId) throw AppError.legacy(422, 'SELLER_IS_BUYER', 'You cannot buy from your own link');
    const content = checkLinkContent(params, buyerId);
    let e: EscrowRow;
    try {
      e = await repo.insert(trx, {
        buyer_id: buyerId,
        seller_id: seller.id,
        created_by: buyerId,
        source: 'link',
        item_name: content.item,
        description: content.description,
        amount,
        category: content.category,
        partner_ref: shape.ref,
        partner_sig_version: shape.version,
        expires_at: paymentDeadline(now),
        created_at: now,
        updated_at: now,
      });
    } catch (err) {
      if (pgErrorCode(err) === PG.uniqueViolation && pgConstraint(err) === 'escrows_seller_ref_unique') {
        throw AppError.legacy(409, 'DUPLICATE_REF', `This seller already has an escrow for ref ${shape.ref}`);
      }
      throw err;
    }
    await created(trx, e, buyerId, 'buyer', 'escrow_joined');
    return e;
  });
}

export interface DirectInput {
  /** The caller's side of the deal. */
  role: Party;
  counterparty_username: string;
  item_name: string;
  description?: string;
  amount: unknown;
  category?: string;
}

/** POST /api/escrows: a buyer or a seller opens an escrow with a counterparty named by username. */
export async function createDirect(trxOrDb: Db | undefined, actor: Actor, input: DirectInput): Promise<EscrowRow> {
  const amount = parseAmount(input.amount);
  const category = input.category ?? 'goods';
  if (!(CATEGORIES as readonly string[]).includes(category)) {
    throw AppError.legacy(422, 'INVALID_CATEGORY', 'category must be goods, service or digital');
  }
  const item = input.item_name.trim();
  if (item.length === 0 || item.length > 200) throw AppError.legacy(422, 'INVALID_ITEM', 'item_name must be 1 to 200 characters');
  return inTransaction(trxOrDb, async (trx) => {
    const username = input.counterparty_username.trim().toLowerCase();
    const other = (await trx('users').where({ username }).first()) as users.UserRow | undefined;
    if (!other || other.status !== 'active' || other.role !== 'user') {
      throw AppError.legacy(404, 'USER_NOT_FOUND', `No active user named ${username}`);
    }
    if (other.id === actor.userId) throw AppError.legacy(422, 'SELLER_IS_BUYER', 'The buyer and the seller must be different accounts');
    const now = clock.now();
    const [buyerId, sellerId] = input.role === 'buyer' ? [actor.userId, other.id] : [other.id, actor.userId];
    const e = await repo.insert(trx, {
      buyer_id: buyerId,
      seller_id: sellerId,
      created_by: actor.userId,
      source: 'direct',
      item_name: item,
      description: input.description ?? '',
      amount,
      category: category as Category,
      expires_at: paymentDeadline(now),
      created_at: now,
      updated_at: now,
    });
    await created(trx, e, actor.userId, input.role, 'escrow_invited');
    return e;
  });
}

/** What every new escrow gets: its event, the counterparty's notice, and its expiry timer. */
async function created(trx: Db, e: EscrowRow, actorId: string, actorRole: Party, notice: 'escrow_joined' | 'escrow_invited'): Promise<void> {
  await repo.recordEvent(trx, { escrowId: e.id, event: 'escrow.created', actorId, actorRole, data: { source: e.source }, at: e.created_at });
  await notify(trx, actorRole === 'buyer' ? e.seller_id : e.buyer_id, notice, { escrow_id: e.id });
  await enqueue(trx, 'escrows.expire', { escrow_id: e.id }, { runAt: e.expires_at });
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
  if (!e) throw AppError.legacy(404, 'NOT_FOUND', 'Escrow not found');
  if (isExpired(e)) throw AppError.legacy(410, 'EXPIRED', 'This escrow expired before it was paid');
  const seller = await users.findById(db, e.seller_id);
  if (!seller) throw AppError.legacy(404, 'NOT_FOUND', 'Escrow not found');
  return { escrow: e, seller };
}

// ---- Payment (called by the payments feature once a payment is confirmed) -------------

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
    if (!items.every((item) => isUuid(item.escrowId))) throw notFound();
    const ids = items.map((item) => item.escrowId);
    const found = new Map((await repo.findByIds(trx, ids)).map((e) => [e.id, e]));
    const from = TRANSITIONS.pay.from as readonly EscrowStatus[];
    const seen = new Set<string>();
    for (const id of ids) {
      const e = found.get(id);
      if (!e) throw notFound();
      // Paid twice in one call: the second finds it paid, as it would one after the other.
      if (seen.has(id)) throw invalidState('paid', 'pay');
      seen.add(id);
      if (!from.includes(e.status)) throw invalidState(e.status, 'pay');
    }
    const now = clock.now();
    const moved = new Map((await repo.moveMany(trx, ids, from, { status: TRANSITIONS.pay.to, paid_at: now, updated_at: now })).map((e) => [e.id, e]));
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
    for (const e of paid) {
      await notify(trx, e.buyer_id, 'payment_success', { escrow_id: e.id });
      await notify(trx, e.seller_id, 'escrow_paid', { escrow_id: e.id });
    }
    return paid;
  });
}

// ---- Moves by the parties ---------------------------------------------------------------

export interface SendInput {
  courier?: string;
  tracking_number?: string;
}

/** Timers per category: the defaults of section 3, overridable by the `escrow_timers` setting. */
export async function loadTimers(trx: Db): Promise<Record<Category, CategoryTimer>> {
  const row = (await trx('settings').select('value').where({ key: 'escrow_timers' }).first()) as { value: unknown } | undefined;
  const timers = { ...DEFAULT_TIMERS };
  const value = row?.value;
  if (typeof value !== 'object' || value === null) return timers;
  for (const category of CATEGORIES) {
    const o = (value as Record<string, unknown>)[category] as Record<string, unknown> | undefined;
    if (!o || typeof o !== 'object') continue;
    const hours = (v: unknown, fallback: number) => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : fallback);
    const autoReleaseHours = Math.max(1, hours(o.auto_release_hours, timers[category].autoReleaseHours));
    const maxHours = Math.max(autoReleaseHours, hours(o.max_hours, timers[category].maxHours));
    timers[category] = { autoReleaseHours, maxHours, extendStepHours: hours(o.extend_step_hours, timers[category].extendStepHours) };
  }
  return timers;
}

/** seller: paid -> sent, with the optional courier + tracking number pair; starts the auto-release timer. */
export async function send(trxOrDb: Db | undefined, actor: Actor, id: string, input: SendInput): Promise<EscrowRow> {
  const hasCourier = input.courier !== undefined && input.courier !== '';
  const hasNumber = input.tracking_number !== undefined && input.tracking_number !== '';
  return inTransaction(trxOrDb, async (trx) => {
    // Who and when first: a stranger learns nothing from the body checks.
    const e = await loadForParty(trx, id, actor);
    requireRole(e, actor, 'seller');
    if (!(TRANSITIONS.send.from as readonly EscrowStatus[]).includes(e.status)) throw invalidState(e.status, 'send');
    if (hasCourier !== hasNumber) {
      throw AppError.legacy(400, 'TRACKING_INCOMPLETE', 'courier and tracking_number must be sent together (or both left out)');
    }
    if (hasCourier && !courierBySlug(input.courier!)) throw AppError.legacy(400, 'INVALID_COURIER', `unknown courier ${input.courier}`);
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
    await repo.recordEvent(trx, {
      escrowId: id,
      event: 'escrow.sent',
      actorId: actor.userId,
      actorRole: 'seller',
      data: { courier: sent.courier, tracking_number: sent.tracking_number, auto_release_at: autoReleaseAt.toISOString() },
      at: now,
    });
    await notify(trx, sent.buyer_id, 'escrow_sent', { escrow_id: id });
    await enqueue(trx, 'escrows.auto-release', { escrow_id: id }, { runAt: autoReleaseAt });
    // The first courier snapshot is fetched now, so the parties' first look finds it cached.
    if (sent.courier && sent.tracking_number) await enqueue(trx, 'tracking.refresh', { escrow_id: id });
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
    await repo.recordEvent(trx, { escrowId: id, event: 'escrow.received', actorId: actor.userId, actorRole: 'buyer', at: now });
    await notify(trx, received.seller_id, 'escrow_received', { escrow_id: id });
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

interface By {
  actorId: string | null;
  actorRole: 'buyer' | 'seller' | 'admin' | 'system';
}

/**
 * The release posting, shared by the buyer's release, the auto-release timer and a staff
 * ruling: escrow held -> seller balance (amount - fee) and platform fees (fee).
 */
export async function settleRelease(
  trx: Db,
  e: EscrowRow,
  name: 'release' | 'autoRelease' | 'rulingRelease',
  by: By,
  extra?: Parameters<typeof repo.move>[4],
): Promise<EscrowRow> {
  const now = clock.now();
  const fee = escrowFee(e.amount, await loadEscrowFeeRule(trx));
  const released = await transition(trx, e, name, { released_at: now, fee_amount: fee, updated_at: now }, extra);
  const sellerAmount = released.amount - fee;
  const lines: PostingLine[] = [{ account: { escrowId: released.id }, amount: -released.amount }];
  if (sellerAmount > 0) lines.push({ account: { userId: released.seller_id }, amount: sellerAmount });
  if (fee > 0) lines.push({ account: { system: 'platformFees' }, amount: fee });
  await post(trx, { kind: 'escrow_release', refType: 'escrow', refId: released.id, postingKey: `escrow-release:${released.id}`, lines });
  await repo.recordEvent(trx, {
    escrowId: released.id,
    event: 'escrow.released',
    actorId: by.actorId,
    actorRole: by.actorRole,
    data: { escrow_amount: released.amount, platform_fee: fee, seller_amount: sellerAmount, by: name },
    at: now,
  });
  await notify(trx, released.buyer_id, 'escrow_completed_buyer', { escrow_id: released.id });
  await notify(trx, released.seller_id, 'escrow_completed_seller', { escrow_id: released.id });
  return released;
}

/** A staff refund ruling: disputed -> refunded, escrow held -> the buyer's balance. */
export async function settleRefund(trx: Db, e: EscrowRow, by: By): Promise<EscrowRow> {
  const now = clock.now();
  const refunded = await transition(trx, e, 'rulingRefund', { refunded_at: now, updated_at: now });
  await post(trx, {
    kind: 'escrow_refund',
    refType: 'escrow',
    refId: refunded.id,
    postingKey: `escrow-refund:${refunded.id}`,
    lines: [
      { account: { escrowId: refunded.id }, amount: -refunded.amount },
      { account: { userId: refunded.buyer_id }, amount: refunded.amount },
    ],
  });
  await repo.recordEvent(trx, { escrowId: refunded.id, event: 'escrow.refunded', actorId: by.actorId, actorRole: by.actorRole, data: { amount: refunded.amount }, at: now });
  await notify(trx, refunded.buyer_id, 'escrow_refunded', { escrow_id: refunded.id });
  await notify(trx, refunded.seller_id, 'escrow_refunded', { escrow_id: refunded.id });
  return refunded;
}

/** A party's dispute: paid/sent/received -> disputed, only if the status is still the one seen. */
export async function markDisputed(trx: Db, e: EscrowRow, by: By): Promise<EscrowRow | undefined> {
  const now = clock.now();
  const moved = await repo.move(trx, e.id, [e.status], { status: 'disputed', disputed_at: now, updated_at: now });
  if (moved) await repo.recordEvent(trx, { escrowId: e.id, event: 'escrow.disputed', actorId: by.actorId, actorRole: by.actorRole, at: now });
  return moved;
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

/** Staff cancel (admin escrow action): the reason is required, at most 2000 characters. */
export async function staffCancel(trxOrDb: Db | undefined, staffId: string, id: string, reason: string | undefined): Promise<EscrowRow> {
  if (reason === undefined || reason.trim() === '') throw AppError.legacy(400, 'MISSING_FIELDS', 'reason is required');
  if (reason.length > 2000) throw AppError.legacy(400, 'REASON_TOO_LONG', 'reason may be at most 2000 characters');
  return inTransaction(trxOrDb, async (trx) => {
    const e = isUuid(id) ? await repo.findById(trx, id) : undefined;
    if (!e) throw notFound();
    return cancelEscrow(trx, e, 'staff_cancelled', { actorId: staffId, actorRole: 'admin' }, reason);
  });
}

async function cancelEscrow(trx: Db, e: EscrowRow, reason: string, by: By, note: string | null): Promise<EscrowRow> {
  const now = clock.now();
  // A payment underway wins over a cancel (decision 0009): the escrow row is locked here and
  // by `pay`, so a payment link is either seen now or never created for a cancelled escrow.
  await repo.lockRow(trx, e.id);
  if (e.status === 'pending_payment' && (await repo.livePayment(trx, e.id, now))) {
    throw AppError.legacy(409, 'PAYMENT_IN_PROGRESS', 'A payment for this escrow is underway; it can be cancelled once that payment expires or fails');
  }
  const cancelled = await transition(trx, e, 'cancel', { cancelled_at: now, cancel_reason: reason, updated_at: now });
  await repo.recordEvent(trx, { escrowId: e.id, event: 'escrow.cancelled', actorId: by.actorId, actorRole: by.actorRole, data: { reason, note }, at: now });
  for (const userId of [cancelled.buyer_id, cancelled.seller_id]) {
    if (userId !== by.actorId) await notify(trx, userId, 'escrow_cancelled', { escrow_id: e.id });
  }
  return cancelled;
}

/** buyer: pushes the auto-release time back by one step, up to the category's maximum. */
export async function extend(trxOrDb: Db | undefined, actor: Actor, id: string): Promise<EscrowRow> {
  return inTransaction(trxOrDb, async (trx) => {
    // Locked: two extends at once must not both read the same deadline.
    const e = await loadForParty(trx, id, actor, { lock: true });
    requireRole(e, actor, 'buyer');
    if (!(TRANSITIONS.autoRelease.from as readonly EscrowStatus[]).includes(e.status) || !e.sent_at || !e.auto_release_at) {
      throw AppError.legacy(409, 'INVALID_STATE', `The escrow is ${e.status}; only a sent or received escrow can be extended`, { status: e.status });
    }
    if (e.auto_release_at.getTime() <= clock.nowMs()) {
      throw AppError.legacy(409, 'INVALID_STATE', 'The release time has already passed; the escrow is being released', { status: e.status });
    }
    const timer = (await loadTimers(trx))[e.category];
    if (timer.extendStepHours === 0) throw AppError.legacy(409, 'EXTEND_DISABLED', `Escrows of category ${e.category} cannot be extended`);
    const maxAt = e.sent_at.getTime() + timer.maxHours * HOUR_MS;
    if (e.auto_release_at.getTime() >= maxAt) {
      throw AppError.legacy(409, 'EXTEND_LIMIT_REACHED', `The release time is already at the ${e.category} maximum of ${timer.maxHours} hours after shipping`, {
        extension_count: e.extension_count,
      });
    }
    const next = new Date(Math.min(e.auto_release_at.getTime() + timer.extendStepHours * HOUR_MS, maxAt));
    const now = clock.now();
    const moved = await repo.move(trx, id, TRANSITIONS.autoRelease.from, { auto_release_at: next, extension_count: e.extension_count + 1, updated_at: now });
    if (!moved) throw AppError.legacy(409, 'INVALID_STATE', 'The escrow moved while it was being extended');
    await repo.recordEvent(trx, {
      escrowId: id,
      event: 'escrow.extended',
      actorId: actor.userId,
      actorRole: 'buyer',
      data: { auto_release_at: next.toISOString(), extension_count: moved.extension_count },
      at: now,
    });
    await enqueue(trx, 'escrows.auto-release', { escrow_id: id }, { runAt: next });
    return moved;
  });
}

// ---- Timers (D6): a delayed job per due time, and a sweeper for lost jobs ---------------

/** The expiry timer: an unpaid escrow past its deadline is cancelled. Does nothing otherwise. */
export async function runExpiry(escrowId: string, options: { requeue?: boolean } = {}): Promise<{ expired: boolean }> {
  return db.transaction(async (trx) => {
    const e = await repo.findById(trx, escrowId);
    const now = clock.now();
    if (!e || e.status !== 'pending_payment' || e.expires_at > now) return { expired: false };
    await repo.lockRow(trx, escrowId);
    // A payment underway postpones the expiry until it has run its course (decision 0009).
    const live = await repo.livePayment(trx, escrowId, now);
    if (live) {
      // The timer job re-arms itself; the sweeper (every minute) does not add another each time.
      if (options.requeue !== false) await enqueue(trx, 'escrows.expire', { escrow_id: escrowId }, { runAt: live.until });
      return { expired: false };
    }
    const moved = await repo.move(trx, escrowId, ['pending_payment'], { status: 'cancelled', cancelled_at: now, cancel_reason: 'expired', updated_at: now }, (q) =>
      void q.where('expires_at', '<=', now),
    );
    if (!moved) return { expired: false };
    await repo.recordEvent(trx, { escrowId, event: 'escrow.cancelled', actorId: null, actorRole: 'system', data: { reason: 'expired' }, at: now });
    await notify(trx, moved.buyer_id, 'escrow_expired', { escrow_id: escrowId });
    await notify(trx, moved.seller_id, 'escrow_expired', { escrow_id: escrowId });
    return { expired: true };
  });
}

/** The auto-release timer: a sent (or received) escrow past its release time is released. */
export async function runAutoRelease(escrowId: string): Promise<{ released: boolean }> {
  return db.transaction(async (trx) => {
    const e = await repo.findById(trx, escrowId);
    const now = clock.now();
    const due = e && (TRANSITIONS.autoRelease.from as readonly EscrowStatus[]).includes(e.status) && e.auto_release_at && e.auto_release_at <= now;
    if (!e || !due) return { released: false };
    try {
      await settleRelease(trx, e, 'autoRelease', { actorId: null, actorRole: 'system' }, (q) => void q.where('auto_release_at', '<=', now));
    } catch (err) {
      // Someone else moved it between the read and the compare-and-set (a release, a dispute, an extension).
      if (err instanceof AppError && err.code === 'INVALID_STATE') return { released: false };
      throw err;
    }
    return { released: true };
  });
}

/** The sweeper: fires every due timer whose delayed job was lost. Each escrow in its own transaction. */
export async function sweepTimers(batch = 200): Promise<{ released: number; expired: number }> {
  const now = clock.now();
  let released = 0;
  let expired = 0;
  for (const id of await repo.dueAutoReleases(db, now, batch)) if ((await runAutoRelease(id)).released) released += 1;
  for (const id of await repo.dueExpiries(db, now, batch)) if ((await runExpiry(id, { requeue: false })).expired) expired += 1;
  return { released, expired };
}

export type FastForwardTimer = 'auto_release' | 'expiry';

/**
 * Sandbox only: brings the escrow's due time to now and queues the real timer job, so a
 * partner sees the real path fire (the escrow moves when the worker runs the job).
 */
export async function fastForward(actor: Actor, id: string, timer: FastForwardTimer): Promise<{ escrow_id: string; timer: FastForwardTimer; due_at: Date }> {
  return db.transaction(async (trx) => {
    const e = await loadForParty(trx, id, actor, { staff: true, lock: true });
    const now = clock.now();
    if (timer === 'auto_release') {
      if (!(TRANSITIONS.autoRelease.from as readonly EscrowStatus[]).includes(e.status)) throw invalidState(e.status, 'autoRelease');
      await repo.move(trx, id, TRANSITIONS.autoRelease.from, { auto_release_at: now, updated_at: now });
      await enqueue(trx, 'escrows.auto-release', { escrow_id: id }, { runAt: now });
    } else {
      if (e.status !== 'pending_payment') throw invalidState(e.status, 'expire');
      await repo.move(trx, id, ['pending_payment'], { expires_at: now, updated_at: now });
      await enqueue(trx, 'escrows.expire', { escrow_id: id }, { runAt: now });
    }
    return { escrow_id: id, timer, due_at: now };
  });
}
