/**
 * Payments (consumer spec 4.2 pay / payment-status / claim-payment / available-methods,
 * section 6 inbound callbacks; decisions D4, D5, 0009). A buyer opens a payment link on a
 * gateway; the gateway's verified callbacks are stored raw and reconciled by the
 * gateway-callbacks worker through one path (`reconcile`), which the status poller and
 * staff confirmations use too. Paid moves the escrow through `markPaid` (gateway clearing ->
 * escrow held, surcharge -> gateway fees); money that arrives for an escrow that can no
 * longer take it is credited to the buyer's balance, never lost.
 */
import { clock } from '../clock.js';
import { config } from '../config.js';
import { randomToken } from '../crypto.js';
import { db, inTransaction, type Db } from '../db.js';
import { AppError } from '../errors.js';
import { isUuid } from '../ids.js';
import { postMany, type Posting } from '../ledger/index.js';
import { logger } from '../logger.js';
import { collectNotices } from '../notifications/service.js';
import * as escrowRepo from '../escrows/repo.js';
import type { EscrowRow } from '../escrows/repo.js';
import { markPaidMany, partyOf, type Actor, type PaymentConfirmation } from '../escrows/service.js';
import * as users from '../users/repo.js';
import { markOrdersPaid, type OrderPayment } from '../orders/paid.js';
import * as orderRepo from '../orders/repo.js';
import type { OrderRow } from '../orders/repo.js';
import { adapterFor, detectProvider, GatewayError, PAYMENT_METHODS, type GatewayStatus, type InboundDelivery, type PaymentMethod } from './gateways/index.js';
import * as repo from './repo.js';
import type { GatewayRow, PaymentRow, PaymentStatus } from './repo.js';
import { surchargeOf } from './surcharge.js';

export type { PaymentRow, GatewayRow } from './repo.js';

const MINUTE = 60_000;
/** How long a payment link stays payable, per method (QRIS about 15 minutes: spec 4.2). */
export const LINK_LIFETIME_MS: Record<PaymentMethod, number> = {
  qris: 15 * MINUTE,
  gopay: 15 * MINUTE,
  shopeepay: 15 * MINUTE,
  crypto: 60 * MINUTE,
  bank_transfer: 24 * 60 * MINUTE,
};
/** The poller asks the gateway about a pending link this long after it was made, then backs off. */
export const FIRST_POLL_AFTER_MS = 2 * MINUTE;
export const POLL_BACKOFF_MS = 5 * MINUTE;
/** A link the gateway still calls pending this long after it expired is expired here. */
export const EXPIRE_GRACE_MS = 30 * MINUTE;

// ---- Gateways -------------------------------------------------------------------------

/** Gateways a buyer can use now: enabled, not in maintenance, adapter loaded (or manual). */
export async function availableGateways(trx: Db = db): Promise<GatewayRow[]> {
  return (await repo.enabledGateways(trx)).filter((g) => g.is_manual || adapterFor(g.provider) !== undefined);
}

// ---- Pay ------------------------------------------------------------------------------

export interface PayInput {
  method?: string;
  provider?: string;
}

function isMethod(value: string): value is PaymentMethod {
  return (PAYMENT_METHODS as readonly string[]).includes(value);
}

function newGatewayOrderId(): string {
  return `ESC-${clock.nowMs().toString(36).toUpperCase()}-${randomToken(9).replace(/[^A-Za-z0-9]/g, 'X')}`;
}

/** Picks the gateway: the named provider, or the cheapest available for the method. */
async function chooseGateway(trx: Db, method: PaymentMethod, provider: string | undefined, amount: number): Promise<GatewayRow> {
  const enabled = await repo.enabledGateways(trx);
  if (enabled.length === 0) throw new AppError(503, 'NO_GATEWAYS', 'No payment gateway is available right now; try again later');
  const forMethod = enabled.filter((g) => g.supported_methods.includes(method) && (provider === undefined || g.provider === provider));
  if (forMethod.length === 0) {
    throw provider !== undefined
      ? new AppError(400, 'UNSUPPORTED_METHOD', `Provider ${provider} is not available for ${method}`)
      : new AppError(400, 'UNSUPPORTED_METHOD', `No available gateway supports ${method}`);
  }
  const usable = forMethod.filter((g) => g.is_manual || adapterFor(g.provider) !== undefined);
  if (usable.length === 0) throw new AppError(503, 'ADAPTER_NOT_LOADED', `The gateway for ${method} is not configured on this server`);
  usable.sort((a, b) => surchargeOf(amount, a) - surchargeOf(amount, b) || a.sort_order - b.sort_order || a.provider.localeCompare(b.provider));
  return usable[0]!;
}

/** POST /api/escrows/:id/pay: a new payment link for the buyer (a fresh idempotency key gets a new one). */
export async function pay(trxOrDb: Db | undefined, actor: Actor, escrowId: string, input: PayInput): Promise<PaymentRow> {
  if (input.method === undefined || input.method === '') throw new AppError(400, 'MISSING_METHOD', 'method is required');
  const method = input.method;
  if (!isMethod(method)) throw new AppError(400, 'UNSUPPORTED_METHOD', `method must be one of ${PAYMENT_METHODS.join(', ')}`);
  return inTransaction(trxOrDb, async (trx) => {
    const e = isUuid(escrowId) ? await escrowRepo.findById(trx, escrowId) : undefined;
    if (!e) throw new AppError(404, 'ESCROW_NOT_FOUND', 'Escrow not found');
    if (e.buyer_id !== actor.userId) throw new AppError(403, 'NOT_BUYER', 'Only the buyer can pay this escrow');
    // Locked: a cancel and a payment link never pass each other (decision 0009).
    await escrowRepo.lockRow(trx, e.id);
    const current = (await escrowRepo.findById(trx, e.id))!;
    if (current.status !== 'pending_payment') {
      throw new AppError(409, 'INVALID_STATE', `The escrow is ${current.status}; only a pending_payment escrow can be paid`, { status: current.status });
    }
    if (current.expires_at <= clock.now()) {
      throw new AppError(409, 'INVALID_STATE', 'The escrow passed its payment deadline and is expiring', { status: current.status });
    }
    return openLink(trx, actor, { escrowId: current.id, amount: current.amount, itemName: current.item_name, manualExpiresAt: current.expires_at }, method, input.provider);
  });
}

/** What a payment link pays: an escrow or a payment-service order (exactly one). */
export interface LinkTarget {
  escrowId?: string;
  orderId?: string;
  /** The amount the target takes (escrow amount, order total); the surcharge comes on top. */
  amount: number;
  itemName: string;
  /** How long a manual transfer stays payable. */
  manualExpiresAt: Date | null;
}

/**
 * Chooses the gateway and opens the link (a gateway call, or a manual record) inside the
 * caller's transaction, which holds the target's row locked and has checked its state.
 */
export async function openLink(trx: Db, actor: Actor, target: LinkTarget, method: PaymentMethod, provider: string | undefined): Promise<PaymentRow> {
  const gateway = await chooseGateway(trx, method, provider, target.amount);
  const surcharge = surchargeOf(target.amount, gateway);
  const total = target.amount + surcharge;
  const now = clock.now();
  const gatewayOrderId = newGatewayOrderId();
  const base = {
    escrow_id: target.escrowId ?? null,
    order_id: target.orderId ?? null,
    buyer_id: actor.userId,
    provider: gateway.provider,
    method,
    is_manual: gateway.is_manual,
    gateway_order_id: gatewayOrderId,
    escrow_amount: target.amount,
    surcharge,
    amount: total,
    created_at: now,
    updated_at: now,
  };
  if (gateway.is_manual) {
    // A manual transfer: the buyer transfers to the configured account and claims it.
    return repo.insertPayment(trx, { ...base, expires_at: target.manualExpiresAt, raw_response: JSON.stringify({ manual: true, config: gateway.config }) });
  }
  const adapter = adapterFor(gateway.provider)!;
  const expiresAt = new Date(now.getTime() + LINK_LIFETIME_MS[method]);
  const buyer = (await users.findById(trx, actor.userId))!;
  let charge;
  try {
    charge = await adapter.createCharge({
      gatewayOrderId,
      amount: total,
      method,
      expiresAt,
      itemName: target.itemName,
      buyer: { id: buyer.id, email: buyer.email, fullName: buyer.full_name },
    });
  } catch (err) {
    if (err instanceof GatewayError) throw new AppError(502, 'GATEWAY_ERROR', `The payment gateway refused the charge: ${err.message}`);
    throw err;
  }
  return repo.insertPayment(trx, {
    ...base,
    qr_string: charge.qrString,
    qr_url: charge.qrUrl,
    va_number: charge.vaNumber,
    va_bank: charge.vaBank,
    redirect_url: charge.paymentUrl,
    deep_link_url: charge.deepLinkUrl,
    raw_response: JSON.stringify(charge.raw ?? {}),
    expires_at: expiresAt,
    next_poll_at: new Date(now.getTime() + FIRST_POLL_AFTER_MS),
  });
}

export function parseMethod(value: string | undefined): PaymentMethod {
  if (value === undefined || value === '') throw new AppError(400, 'MISSING_METHOD', 'method is required');
  if (!isMethod(value)) throw new AppError(400, 'UNSUPPORTED_METHOD', `method must be one of ${PAYMENT_METHODS.join(', ')}`);
  return value;
}

// ---- Reads ----------------------------------------------------------------------------

/** GET /api/escrows/:id/payment-status: the latest payment record (parties and staff). */
export async function paymentStatus(actor: Actor, escrowId: string): Promise<PaymentRow> {
  const e = isUuid(escrowId) ? await escrowRepo.findById(db, escrowId) : undefined;
  if (!e) throw new AppError(404, 'ESCROW_NOT_FOUND', 'Escrow not found');
  if (!partyOf(e, actor.userId) && actor.role !== 'admin') throw new AppError(403, 'FORBIDDEN', 'You are not a party to this escrow');
  // A paid link wins over a newer unpaid one, so a polling checkout always sees "paid".
  const payment = await repo.currentForEscrow(db, e.id);
  if (!payment) throw new AppError(404, 'NO_PAYMENT', 'No payment has been started for this escrow');
  return payment;
}

// ---- Manual transfers -------------------------------------------------------------------
// The buyer's claim and the staff moves (confirm, reject, credit, mark returned) are in
// manual.ts; they settle through `settlePaid` below.

// ---- Inbound callbacks -------------------------------------------------------------------

export interface IngestResult {
  provider: string;
  duplicate: boolean;
}

/** Headers kept with a stored delivery (no credentials). */
const KEPT_HEADERS = ['content-type', 'user-agent', 'x-callback-event'];

/**
 * POST /api/webhooks/inbound (and /ipn, /payment, /universal): detect the provider, verify
 * the signature on the raw body (403, nothing stored, when it fails), store the delivery
 * (one statement: the stored row is the gateway-callbacks worker's inbox) and answer at
 * once. A duplicate delivery is acknowledged; if its first copy waits for a retry after a
 * failure, the retry is due at once.
 */
export async function ingestCallback(delivery: InboundDelivery, source: 'callback' | 'poll' = 'callback'): Promise<IngestResult> {
  const adapter = detectProvider(delivery);
  if (!adapter) throw new AppError(400, 'UNKNOWN_PROVIDER', 'The callback does not come from a configured payment gateway');
  if (!adapter.verify(delivery)) throw new AppError(403, 'INVALID_SIGNATURE', 'The callback signature does not verify');
  let parsed;
  try {
    parsed = adapter.parse(delivery);
  } catch {
    throw new AppError(400, 'INVALID_CALLBACK', 'The callback payload is not one this gateway sends');
  }
  const headers = Object.fromEntries(KEPT_HEADERS.filter((h) => delivery.headers[h] !== undefined).map((h) => [h, delivery.headers[h]]));
  const stored = await storeCallback(db, {
    provider: adapter.name,
    source,
    gatewayOrderId: parsed.gatewayOrderId,
    status: parsed.status,
    amount: parsed.amount,
    dedupeKey: `${adapter.name}:${parsed.eventId ?? `${parsed.gatewayOrderId}:${parsed.status}:${parsed.amount ?? ''}`}`,
    rawBody: delivery.rawBody,
    headers,
  });
  return { provider: adapter.name, duplicate: !stored.inserted };
}

interface CallbackRecord {
  provider: string;
  source: 'callback' | 'poll' | 'staff';
  gatewayOrderId: string;
  status: GatewayStatus;
  amount: number | null;
  dedupeKey: string;
  rawBody: string;
  headers: Record<string, string | undefined>;
}

async function storeCallback(trxOrDb: Db, c: CallbackRecord): Promise<{ id: number; inserted: boolean }> {
  const row = await repo.upsertCallback(trxOrDb, {
    provider: c.provider,
    source: c.source,
    gateway_order_id: c.gatewayOrderId,
    status: c.status,
    amount: c.amount,
    dedupe_key: c.dedupeKey,
    raw_body: c.rawBody,
    headers: JSON.stringify(c.headers),
    received_at: clock.now(),
  });
  return { id: Number(row.id), inserted: row.inserted };
}

const reportOf = (cb: repo.CallbackRow): GatewayReport => ({
  provider: cb.provider,
  gatewayOrderId: cb.gateway_order_id,
  status: cb.status,
  amount: cb.amount === null ? null : Number(cb.amount),
  source: cb.source,
});

/**
 * Reconciles one stored delivery in its own transaction. Safe to run twice (a processed
 * delivery is skipped; the payment row is locked; postings carry keys).
 */
export async function processCallback(callbackId: number): Promise<{ outcome: string }> {
  return db.transaction(async (trx) =>
    collectNotices(trx, async () => {
      const cb = await repo.callbackForUpdate(trx, callbackId);
      if (!cb) return { outcome: 'missing' };
      if (cb.processed_at) return { outcome: cb.outcome ?? 'processed' };
      const [outcome] = await reconcileMany(trx, [reportOf(cb)]);
      await repo.markCallbackProcessed(trx, cb.id, outcome!, clock.now());
      return { outcome: outcome! };
    }),
  );
}

/** Deliveries reconciled per transaction by the gateway-callbacks worker. */
export const CALLBACK_BATCH = 100;
/** Longest wait before a failed delivery is tried again. */
export const CALLBACK_MAX_BACKOFF_S = 600;

export interface DrainResult {
  /** Deliveries reconciled, by id, with what each did. */
  processed: { id: number; outcome: string }[];
  /** Deliveries whose reconciliation failed: left unprocessed, retried after a backoff. */
  failed: { id: number; error: string }[];
}

/**
 * The gateway-callbacks worker's loop body: takes up to `limit` due, unprocessed deliveries
 * (SKIP LOCKED, so several workers share them) and reconciles them in ONE transaction, in
 * arrival order: one commit, one lock of the hot ledger accounts, one outbox row for all
 * their notices. If anything in the batch fails, the batch rolls back whole and each
 * delivery is tried again alone; one that still fails is recorded (attempts, last error)
 * and retried after a backoff, and never holds up the others.
 */
export async function drainCallbacks(limit = CALLBACK_BATCH): Promise<DrainResult> {
  try {
    const processed = await db.transaction(async (trx) =>
      collectNotices(trx, async () => {
        const due = await repo.dueCallbacksForUpdate(trx, clock.now(), limit);
        const outcomes = await reconcileMany(trx, due.map(reportOf));
        const done = due.map((cb, k) => ({ id: Number(cb.id), outcome: outcomes[k]! }));
        await repo.markCallbacksProcessed(trx, done, clock.now());
        return done;
      }),
    );
    return { processed, failed: [] };
  } catch (err) {
    logger.warn({ err }, 'callback batch failed; reconciling its deliveries one by one');
  }
  const result: DrainResult = { processed: [], failed: [] };
  for (const id of await repo.dueCallbackIds(db, clock.now(), limit)) {
    try {
      result.processed.push({ id, ...(await processCallback(id)) });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      await repo.recordCallbackFailure(db, id, error, clock.now(), CALLBACK_MAX_BACKOFF_S);
      logger.error({ callback_id: id, err }, 'callback reconciliation failed; it will be retried');
      result.failed.push({ id, error });
    }
  }
  return result;
}

/** What a gateway (a callback, a status poll) or staff says about a payment link. */
export interface GatewayReport {
  provider: string;
  gatewayOrderId: string;
  status: GatewayStatus;
  amount: number | null;
  source: string;
}

const SETTLEABLE: readonly PaymentStatus[] = ['pending', 'expired', 'failed', 'awaiting_confirmation'];

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
    if (r.status === 'pending') return 'still_pending';
    if (r.status === 'expired' || r.status === 'failed') {
      if (payment.status !== 'pending') return `ignored_${r.status}_when_${payment.status}`;
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
    if (!SETTLEABLE.includes(payment.status)) return 'already_settled';
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
async function reconcileMany(trx: Db, reports: readonly GatewayReport[]): Promise<string[]> {
  if (reports.length === 0) return [];
  const payments = new Map((await repo.findByOrdersForUpdate(trx, [...new Set(reports.map((r) => r.gatewayOrderId))])).map((p) => [p.gateway_order_id, p]));
  const escrowIds = new Set<string>();
  const orderIds = new Set<string>();
  for (const r of reports) {
    const p = payments.get(r.gatewayOrderId);
    if (r.status === 'paid' && p && !p.is_manual && p.provider === r.provider) {
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

// ---- The status poller (a lost callback never loses a payment) ---------------------------

/** Asks the gateways about links still pending past their expected time; reconciles what they say. */
export async function pollPending(batch = 100): Promise<{ asked: number; settled: number }> {
  const now = clock.now();
  const due = await repo.duePolls(db, now, batch);
  let settled = 0;
  for (const p of due) {
    const adapter = adapterFor(p.provider);
    if (!adapter) {
      // Not loaded on this server: put it off like a failed query, so it does not hold the batch.
      await repo.setNextPoll(db, p.id, new Date(now.getTime() + POLL_BACKOFF_MS));
      continue;
    }
    let answer: { status: GatewayStatus; amount: number | null };
    try {
      answer = await adapter.queryStatus(p.gateway_order_id);
    } catch {
      await repo.setNextPoll(db, p.id, new Date(now.getTime() + POLL_BACKOFF_MS));
      continue;
    }
    let status = answer.status;
    // Still pending well past its expiry: the link is over here (a late paid report still pays).
    if (status === 'pending' && p.expires_at && p.expires_at.getTime() + EXPIRE_GRACE_MS <= now.getTime()) status = 'expired';
    if (status === 'pending') {
      await repo.setNextPoll(db, p.id, new Date(now.getTime() + POLL_BACKOFF_MS));
      continue;
    }
    const stored = await storeCallback(db, {
      provider: p.provider,
      source: 'poll',
      gatewayOrderId: p.gateway_order_id,
      status,
      amount: answer.amount,
      dedupeKey: `poll:${p.gateway_order_id}:${status}`,
      rawBody: JSON.stringify(answer),
      headers: {},
    });
    const { outcome } = await processCallback(stored.id);
    if (outcome === 'paid' || outcome === 'credited_to_buyer') settled += 1;
  }
  return { asked: due.length, settled };
}

// ---- Sandbox (decision D4) ---------------------------------------------------------------

/**
 * POST /api/sandbox/payments/:gateway_order_id/simulate: the sandbox gateway records the
 * outcome on its side and sends the signed callback through the same pipeline.
 */
export async function simulateSandbox(actor: Actor, gatewayOrderId: string, status: 'paid' | 'expired' | 'failed'): Promise<IngestResult> {
  const payment = await repo.findByOrder(db, gatewayOrderId);
  if (!payment || payment.provider !== 'sandbox') throw new AppError(404, 'NOT_FOUND', 'No sandbox payment with this gateway_order_id');
  if (payment.buyer_id !== actor.userId && actor.role !== 'admin') throw new AppError(403, 'FORBIDDEN', 'Only the buyer can simulate this payment');
  await db('sandbox_charges').where({ gateway_order_id: gatewayOrderId }).update({ status, updated_at: clock.now() });
  const { sandboxSignature } = await import('./gateways/sandbox.js');
  const rawBody = JSON.stringify({ provider: 'sandbox', gateway_order_id: gatewayOrderId, status, amount: payment.amount });
  return ingestCallback({ headers: { 'x-sandbox-signature': sandboxSignature(rawBody), 'content-type': 'application/json' }, rawBody, json: JSON.parse(rawBody) as unknown });
}

export const sandboxEnabled = (): boolean => config.sandboxMode;
