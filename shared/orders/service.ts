/**
 * Payment-service orders, "jasabayar" (consumer spec 2, 3 and 4.8; issue 11; decision 0012):
 * a buyer asks the operator to buy something for them. Quote and create (the fee re-quoted
 * from live configuration), pay by balance (instant), by gateway (the payments feature's
 * links and callbacks, the link targets the order) or by a claimed manual transfer; the
 * operator confirms, processes, delivers (credentials sealed with AES-256-GCM) or refunds;
 * the SLA timer refunds an order left undelivered past its deadline (durable, D6).
 * Every mutation joins the request's transaction (idempotency) and is a compare-and-set.
 */
import { clock } from '../clock.js';
import { decryptSecret } from '../crypto.js';
import { db, inTransaction, type Db } from '../db.js';
import type { Actor, StaffActor } from '../actors.js';
import { isUuid } from '../ids.js';
import { logger } from '../logger.js';
import type { LinkView, PaymentRow } from '../payments/repo.js';
import { recordClaim, type ClaimInput, type ClaimResult } from '../payments/manual.js';
import { currentForOrder, parseMethod, prepareOrderLink, recordPrepared, type PreparedLink } from '../payments/links.js';
import { paymentErrors } from '../payments/errors.js';
import { orderErrors } from './errors.js';
import { ITEM_PRICE_CEILING, loadOrderConfig, quote, type OrderConfig, type Quote } from './fees.js';
import { markOrdersPaid } from './paid.js';
import * as repo from './repo.js';
import type { OrderEventRow, OrderRow } from './repo.js';
import { canMove, type OrderStatus } from './states.js';
import { invalidState, transition } from './transition.js';

export type { OrderRow, OrderEventRow } from './repo.js';

export type { Actor } from '../actors.js';
/** Staff on an operator route (the shared StaffActor). */
export type StaffContext = StaffActor;

const notFound = orderErrors.notFound;

// ---- Configuration and quote -------------------------------------------------------------

export async function getConfig(trx: Db = db): Promise<OrderConfig> {
  return loadOrderConfig(trx);
}

function checkPrice(itemPrice: number, c: OrderConfig, options: { min: boolean }): void {
  // A whole number past the maximum (however large) is too large, not malformed.
  if (Number.isInteger(itemPrice) && itemPrice > c.max_item_price_idr) {
    throw orderErrors.priceTooLarge(c.max_item_price_idr);
  }
  if (!Number.isSafeInteger(itemPrice) || itemPrice < 0) throw orderErrors.priceNotWhole();
  if (itemPrice > c.max_item_price_idr || itemPrice > ITEM_PRICE_CEILING) throw orderErrors.priceTooLarge(c.max_item_price_idr);
  if (options.min && itemPrice < c.min_item_price_idr) throw orderErrors.priceTooSmall(c.min_item_price_idr);
}

/** POST /api/jasabayar/quote. */
export async function quoteFor(trx: Db, itemPrice: number): Promise<Quote> {
  const c = await loadOrderConfig(trx);
  checkPrice(itemPrice, c, { min: false });
  return quote(itemPrice, c);
}

// ---- Create ------------------------------------------------------------------------------

export interface CreateInput {
  target_url: string;
  target_label?: string | null;
  item_price: number;
  notes?: string | null;
}

export const MAX_URL = 2048;

/** The normalised purchase URL: http or https only, no embedded credentials, at most 2048 characters. */
export function normaliseTargetUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw orderErrors.urlNotHttp();
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw orderErrors.urlNotHttp();
  if (url.username !== '' || url.password !== '') throw orderErrors.urlWithCredentials();
  if (url.hostname === '') throw orderErrors.urlWithoutHost();
  url.hash = '';
  const href = url.href;
  if (href.length > MAX_URL) throw orderErrors.urlTooLong(MAX_URL);
  return href;
}

/** POST /api/jasabayar: the fee is re-quoted from live configuration; any client fee is ignored. */
export async function create(trxOrDb: Db | undefined, actor: Actor, input: CreateInput): Promise<OrderRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const c = await loadOrderConfig(trx);
    if (!c.enabled) throw orderErrors.featureDisabled();
    const targetUrl = normaliseTargetUrl(input.target_url);
    checkPrice(input.item_price, c, { min: true });
    const q = quote(input.item_price, c);
    const now = clock.now();
    const label = input.target_label?.trim() ? input.target_label.trim() : null;
    const notes = input.notes?.trim() ? input.notes : null;
    const order = await repo.insert(trx, {
      buyer_id: actor.userId,
      target_url: targetUrl,
      target_label: label,
      notes,
      item_price: q.itemPrice,
      service_fee: q.serviceFee,
      total: q.total,
      created_at: now,
      updated_at: now,
    });
    await repo.recordEvents(trx, [{ orderId: order.id, event: 'order.created', message: `Order created; total ${q.total}`, actorRole: 'buyer', actorId: actor.userId, at: now }]);
    return order;
  });
}

// ---- Reads -------------------------------------------------------------------------------

export async function list(actor: Actor, filter: { status?: OrderStatus; page: number; limit: number }) {
  return repo.listOrders(db, { buyerId: actor.userId, ...filter });
}

/** GET /v1/admin/jasabayar: every buyer's orders, for the operator to work on (no credentials). */
export async function listForStaff(filter: { status?: OrderStatus; page: number; limit: number }) {
  return repo.listOrders(db, filter);
}

/** Owner or admin; anyone else 403, an unknown id 404. */
async function loadReadable(trx: Db, actor: Actor, id: string, options: { lock?: boolean } = {}): Promise<OrderRow> {
  const o = isUuid(id) ? await repo.findById(trx, id, options) : undefined;
  if (!o) throw notFound();
  if (o.buyer_id !== actor.userId && actor.role !== 'admin') throw orderErrors.notOwner();
  return o;
}

/** Only the buyer moves their own order; an admin uses the /v1/admin moves. */
async function loadOwned(trx: Db, actor: Actor, id: string): Promise<OrderRow> {
  const o = isUuid(id) ? await repo.findById(trx, id) : undefined;
  if (!o) throw notFound();
  if (o.buyer_id !== actor.userId) throw orderErrors.notOwner();
  // Locked: cancel, pay, claim and the settlements of this order never pass each other.
  return (await repo.findById(trx, id, { lock: true }))!;
}

export interface OrderView {
  order: OrderRow;
  /** Plaintext for the owner only, only after delivery; null otherwise. */
  credentials: string | null;
  events: OrderEventRow[];
}

/**
 * GET /api/jasabayar/:id. The owner gets the delivered credentials decrypted (500
 * DECRYPT_FAILED when the key cannot open them); an admin never gets plaintext. The first
 * read stamps first_viewed_at and appends a viewed event, best effort.
 */
export async function getForReader(actor: Actor, id: string, key?: Buffer): Promise<OrderView> {
  const order = await loadReadable(db, actor, id);
  let credentials: string | null = null;
  const owner = order.buyer_id === actor.userId;
  if (owner && order.status === 'delivered' && order.credentials_sealed !== null) {
    try {
      credentials = key ? decryptSecret(order.credentials_sealed, key) : decryptSecret(order.credentials_sealed);
    } catch {
      logger.error({ order_id: order.id }, 'order credentials could not be decrypted');
      throw orderErrors.decryptFailed();
    }
    if (order.first_viewed_at === null) {
      const stamped = await stampFirstView(order.id, actor.userId);
      if (stamped) order.first_viewed_at = stamped;
    }
  }
  const events = await repo.eventsOf(db, order.id);
  return { order, credentials, events };
}

/** Best effort: a failure is logged and never fails the read. */
async function stampFirstView(orderId: string, userId: string): Promise<Date | null> {
  try {
    return await db.transaction(async (trx) => {
      const now = clock.now();
      const moved = await repo.move(trx, orderId, ['delivered'], { first_viewed_at: now }, (q) => void q.whereNull('first_viewed_at'));
      if (!moved) return null;
      await repo.recordEvents(trx, [{ orderId, event: 'order.credentials_viewed', message: 'The buyer read the delivered credentials for the first time', actorRole: 'buyer', actorId: userId, at: now }]);
      return now;
    });
  } catch (err) {
    logger.warn({ order_id: orderId, err: err instanceof Error ? err.message : String(err) }, 'first view of order credentials not recorded');
    return null;
  }
}

// ---- Buyer moves -----------------------------------------------------------------------

/** POST /api/jasabayar/:id/cancel: only while awaiting_payment; a payment that got there first wins. */
export async function cancel(trxOrDb: Db | undefined, actor: Actor, id: string): Promise<OrderRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const o = await loadOwned(trx, actor, id);
    const now = clock.now();
    const moved = await transition(trx, o, 'cancel', { cancelled_at: now, updated_at: now });
    await repo.recordEvents(trx, [{ orderId: o.id, event: 'order.cancelled', message: 'Cancelled by the buyer', actorRole: 'buyer', actorId: actor.userId, at: now }]);
    return moved;
  });
}

export interface PayInput {
  method?: string;
  provider?: string;
}

export type PayResult = { kind: 'balance'; order: OrderRow } | { kind: 'link'; payment: LinkView };

/**
 * POST /api/jasabayar/:id/pay by balance: settles at once (buyer balance -> orders held;
 * 400 INSUFFICIENT_BALANCE otherwise), in the caller's transaction or its own.
 */
export async function payByBalance(trxOrDb: Db | undefined, actor: Actor, id: string): Promise<OrderRow> {
  return inTransaction(trxOrDb, async (trx) => {
    const o = await loadOwned(trx, actor, id);
    // A new payment (balance or link) only while awaiting_payment: a buyer cannot pay twice.
    if (!canMove('payByBalance', o.status)) throw invalidState(o.status, 'payByBalance');
    const [paid] = await markOrdersPaid(trx, [{ orderId: o.id, via: 'balance', reference: actor.userId, surcharge: 0, actorRole: 'buyer', actorId: actor.userId }], clock.now());
    return paid!;
  });
}

/**
 * POST /api/jasabayar/:id/pay with a gateway method, step 1 (no transaction held by the
 * caller; see `prepareEscrowLink`): the order is checked under its lock, the link's row
 * committed, the gateway called. `recordLink` then stores the gateway's answer.
 */
export async function prepareLink(actor: Actor, id: string, input: PayInput): Promise<PreparedLink> {
  const method = parseMethod(input.method);
  return prepareOrderLink(actor, method, input.provider, async (trx) => {
    const o = await loadOwned(trx, actor, id);
    if (!canMove('payByBalance', o.status)) throw invalidState(o.status, 'payByBalance');
    return { orderId: o.id, amount: o.total, itemName: o.target_label ?? 'Jasa bayar', manualExpiresAt: null };
  });
}

/** Both ways of paying without an Idempotency-Key (factories, scripts): each step committed. */
export async function pay(trxOrDb: Db | undefined, actor: Actor, id: string, input: PayInput): Promise<PayResult> {
  if (input.method === 'balance') return { kind: 'balance', order: await payByBalance(trxOrDb, actor, id) };
  if (trxOrDb?.isTransaction) throw new Error('pay calls the gateway, so it cannot run inside a transaction (ARCHITECTURE rule 7)');
  return { kind: 'link', payment: await recordPrepared(await prepareLink(actor, id, input)) };
}

/**
 * POST /api/jasabayar/:id/claim-payment: the buyer says the manual transfer is made ->
 * pending_review. A claim after the order stopped waiting for payment (cancelled, or paid
 * another way) is recorded late for staff to credit or return; the order stays as it is.
 */
export async function claimPayment(trxOrDb: Db | undefined, actor: Actor, id: string, input: ClaimInput): Promise<ClaimResult> {
  return inTransaction(trxOrDb, async (trx) => {
    const o = await loadOwned(trx, actor, id);
    const open = canMove('claimManual', o.status);
    const result = await recordClaim(trx, { kind: 'order', id: o.id, open, status: o.status }, input);
    const now = clock.now();
    if (open) await transition(trx, o, 'claimManual', { updated_at: now });
    await repo.recordEvents(trx, [
      open
        ? { orderId: o.id, event: 'order.payment_claimed', message: 'The buyer claimed a manual transfer; the operator verifies it', actorRole: 'buyer', actorId: actor.userId, at: now }
        : { orderId: o.id, event: 'order.payment_claimed_late', message: `The buyer claimed a manual transfer after the order became ${o.status}; the operator credits it to the balance or returns it`, actorRole: 'buyer', actorId: actor.userId, at: now },
    ]);
    return result;
  });
}

/** GET /api/jasabayar/:id/payment-status: the payment that paid the order, else the newest link. */
export async function paymentStatus(actor: Actor, id: string): Promise<PaymentRow> {
  const o = await loadReadable(db, actor, id);
  const payment = await currentForOrder(o.id);
  if (!payment) throw paymentErrors.noPayment('order');
  return payment;
}

// The operator's moves and the SLA timer (operator.ts).
export { confirmPayment, startProcessing, deliver, refund, runSlaRefund, sweepSla, type DeliverInput } from './operator.js';
