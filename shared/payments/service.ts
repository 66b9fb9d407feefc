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
import { db, type Db } from '../db.js';
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
import type { Knex } from 'knex';
import { adapterFor, detectProvider, GatewayError, PAYMENT_METHODS, signsStatus, type GatewayStatus, type InboundDelivery, type PaymentMethod } from './gateways/index.js';
import type { ChargeRequest, ChargeResult } from './gateways/types.js';
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
  if (enabled.length === 0) throw AppError.legacy(503, 'NO_GATEWAYS', 'No payment gateway is available right now; try again later');
  const forMethod = enabled.filter((g) => g.supported_methods.includes(method) && (provider === undefined || g.provider === provider));
  if (forMethod.length === 0) {
    throw provider !== undefined
      ? AppError.legacy(400, 'UNSUPPORTED_METHOD', `Provider ${provider} is not available for ${method}`)
      : AppError.legacy(400, 'UNSUPPORTED_METHOD', `No available gateway supports ${method}`);
  }
  const usable = forMethod.filter((g) => g.is_manual || adapterFor(g.provider) !== undefined);
  if (usable.length === 0) throw AppError.legacy(503, 'ADAPTER_NOT_LOADED', `The gateway for ${method} is not configured on this server`);
  usable.sort((a, b) => surchargeOf(amount, a) - surchargeOf(amount, b) || a.sort_order - b.sort_order || a.provider.localeCompare(b.provider));
  return usable[0]!;
}

/**
 * A payment link opened in two steps so that no transaction is open while the gateway is
 * called (ARCHITECTURE rule 7; decision 0009): `prepareEscrowLink` / `prepareOrderLink`
 * check the target under its row lock and commit the payment row at once (so a cancel
 * sees it, and a callback that beats the answer finds its payment), then call the gateway
 * with nothing held; `recordLink` writes what the gateway answered, in the caller's
 * transaction (the Idempotency-Key's). Until then the row's `expires_at` is a short
 * opening deadline: a request that dies between the steps leaves a link that stops
 * blocking a cancel within a minute and is expired by the poller.
 */
export interface PreparedLink {
  payment: PaymentRow;
  /** The gateway's answer (absent for a manual transfer: nothing to call). */
  charge?: { result: ChargeResult; expiresAt: Date };
}

/** How long a reserved link counts as underway before its gateway answer is recorded. */
const OPENING_GRACE_MS = 30_000;

/** POST /api/escrows/:id/pay, step 1 (no transaction may be held by the caller). */
export async function prepareEscrowLink(actor: Actor, escrowId: string, input: PayInput): Promise<PreparedLink> {
  const method = parseMethod(input.method);
  const reserved = await db.transaction(async (trx) => {
    const e = isUuid(escrowId) ? await escrowRepo.findById(trx, escrowId) : undefined;
    if (!e) throw AppError.legacy(404, 'ESCROW_NOT_FOUND', 'Escrow not found');
    if (e.buyer_id !== actor.userId) throw AppError.legacy(403, 'NOT_BUYER', 'Only the buyer can pay this escrow');
    // Locked: a cancel and a payment link never pass each other (decision 0009).
    await escrowRepo.lockRow(trx, e.id);
    const current = (await escrowRepo.findById(trx, e.id))!;
    if (current.status !== 'pending_payment') {
      throw AppError.legacy(409, 'INVALID_STATE', `The escrow is ${current.status}; only a pending_payment escrow can be paid`, { status: current.status });
    }
    if (current.expires_at <= clock.now()) {
      throw AppError.legacy(409, 'INVALID_STATE', 'The escrow passed its payment deadline and is expiring', { status: current.status });
    }
    return reserveLink(trx, actor, { escrowId: current.id, amount: current.amount, itemName: current.item_name, manualExpiresAt: current.expires_at }, method, input.provider);
  });
  return chargeReserved(reserved);
}

/**
 * Payment-service orders, step 1: `reserve` checks and locks the order in the transaction
 * it is given (orders/service.ts owns those rules) and returns the link target.
 */
export async function prepareOrderLink(actor: Actor, method: PaymentMethod, provider: string | undefined, reserve: (trx: Knex.Transaction) => Promise<LinkTarget>): Promise<PreparedLink> {
  const reserved = await db.transaction(async (trx) => reserveLink(trx, actor, await reserve(trx), method, provider));
  return chargeReserved(reserved);
}

/** Step 2: the gateway's answer on the link, in the caller's transaction. */
export async function recordLink(trx: Db, link: PreparedLink): Promise<PaymentRow> {
  if (!link.charge) return link.payment;
  const { result, expiresAt } = link.charge;
  const recorded = await repo.recordCharge(trx, link.payment.id, {
    qr_string: result.qrString,
    qr_url: result.qrUrl,
    va_number: result.vaNumber,
    va_bank: result.vaBank,
    redirect_url: result.paymentUrl,
    deep_link_url: result.deepLinkUrl,
    raw_response: JSON.stringify(result.raw ?? {}),
    expires_at: expiresAt,
    updated_at: clock.now(),
  });
  if (!recorded) throw new Error(`payment ${link.payment.id} vanished before its link was recorded`);
  return recorded;
}

/**
 * A prepared link whose answer was never given (the request failed or a concurrent twin
 * with the same key answered): still pending, it becomes `failed` so it blocks nothing.
 * Money paid on it later is still taken (a paid report wins over failed).
 */
export async function abandonLink(link: PreparedLink): Promise<void> {
  await repo.failUnanswered(db, link.payment.id, clock.now());
}

/**
 * Without an Idempotency-Key (the checkout page, factories): both steps, each committed.
 * It cannot join a caller's transaction: the gateway is called between the steps.
 */
export async function pay(trxOrDb: Db | undefined, actor: Actor, escrowId: string, input: PayInput): Promise<PaymentRow> {
  if (trxOrDb?.isTransaction) throw new Error('pay calls the gateway, so it cannot run inside a transaction (ARCHITECTURE rule 7)');
  return recordPrepared(await prepareEscrowLink(actor, escrowId, input));
}

/** Step 2 without a caller's transaction: the answer recorded at once, the link failed if it cannot be. */
export async function recordPrepared(link: PreparedLink): Promise<PaymentRow> {
  try {
    return await recordLink(db, link);
  } catch (err) {
    await abandonLink(link);
    throw err;
  }
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

interface ReservedLink {
  payment: PaymentRow;
  request?: ChargeRequest;
}

/**
 * Chooses the gateway and stores the payment row inside the caller's transaction, which
 * holds the target's row locked and has checked its state. A manual transfer is complete
 * here; a gateway link gets its charge request, sent after this transaction commits.
 */
async function reserveLink(trx: Db, actor: Actor, target: LinkTarget, method: PaymentMethod, provider: string | undefined): Promise<ReservedLink> {
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
    return { payment: await repo.insertPayment(trx, { ...base, expires_at: target.manualExpiresAt, raw_response: JSON.stringify({ manual: true, config: gateway.config }) }) };
  }
  const buyer = (await users.findById(trx, actor.userId))!;
  const payment = await repo.insertPayment(trx, {
    ...base,
    expires_at: new Date(now.getTime() + config.gateways.httpTimeoutMs + OPENING_GRACE_MS),
    next_poll_at: new Date(now.getTime() + FIRST_POLL_AFTER_MS),
  });
  return {
    payment,
    request: {
      gatewayOrderId,
      amount: total,
      method,
      expiresAt: new Date(now.getTime() + LINK_LIFETIME_MS[method]),
      itemName: target.itemName,
      buyer: { id: buyer.id, email: buyer.email, fullName: buyer.full_name },
    },
  };
}

/** The gateway call, with no transaction open. A refusal fails the reserved row and answers 502. */
async function chargeReserved(reserved: ReservedLink): Promise<PreparedLink> {
  const { payment, request } = reserved;
  if (!request) return { payment };
  const adapter = adapterFor(payment.provider)!;
  try {
    return { payment, charge: { result: await adapter.createCharge(request), expiresAt: request.expiresAt } };
  } catch (err) {
    await repo.failUnanswered(db, payment.id, clock.now());
    if (err instanceof GatewayError) throw AppError.legacy(502, 'GATEWAY_ERROR', `The payment gateway refused the charge: ${err.message}`);
    throw err;
  }
}

export function parseMethod(value: string | undefined): PaymentMethod {
  if (value === undefined || value === '') throw AppError.legacy(400, 'MISSING_METHOD', 'method is required');
  if (!isMethod(value)) throw AppError.legacy(400, 'UNSUPPORTED_METHOD', `method must be one of ${PAYMENT_METHODS.join(', ')}`);
  return value;
}

// ---- Reads ----------------------------------------------------------------------------

/** GET /api/escrows/:id/payment-status: the latest payment record (parties and staff). */
export async function paymentStatus(actor: Actor, escrowId: string): Promise<PaymentRow> {
  const e = isUuid(escrowId) ? await escrowRepo.findById(db, escrowId) : undefined;
  if (!e) throw AppError.legacy(404, 'ESCROW_NOT_FOUND', 'Escrow not found');
  if (!partyOf(e, actor.userId) && actor.role !== 'admin') throw AppError.legacy(403, 'FORBIDDEN', 'You are not a party to this escrow');
  // A paid link wins over a newer unpaid one, so a polling checkout always sees "paid".
  const payment = await repo.currentForEscrow(db, e.id);
  if (!payment) throw AppError.legacy(404, 'NO_PAYMENT', 'No payment has been started for this escrow');
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
  if (!adapter) throw AppError.legacy(400, 'UNKNOWN_PROVIDER', 'The callback does not come from a configured payment gateway');
  if (!adapter.verify(delivery)) throw AppError.legacy(403, 'INVALID_SIGNATURE', 'The callback signature does not verify');
  let parsed;
  try {
    parsed = adapter.parse(delivery);
  } catch {
    throw AppError.legacy(400, 'INVALID_CALLBACK', 'The callback payload is not one this gateway sends');
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

const reportOf = (cb: repo.CallbackRow): GatewayReport => {
  const report: GatewayReport = {
    provider: cb.provider,
    gatewayOrderId: cb.gateway_order_id,
    status: cb.status,
    amount: cb.amount === null ? null : Number(cb.amount),
    source: cb.source,
  };
  // Until the gateway confirms it, an unsigned status settles nothing (prepareDeliveries).
  return needsConfirmation(report) ? { ...report, unconfirmed: true } : report;
};

/**
 * Whether a report's status must be confirmed with the gateway before it is acted on: a
 * callback (a poll's answer already is the gateway's; staff are not a gateway) from a gateway
 * that does not sign the status, claiming anything but pending (which changes nothing).
 */
function needsConfirmation(r: GatewayReport): boolean {
  return r.source === 'callback' && r.status !== 'pending' && !signsStatus(r.provider);
}

/** A stored delivery ready to reconcile, or why it cannot be reconciled yet. */
type Prepared = { cb: repo.CallbackRow; report: GatewayReport } | { cb: repo.CallbackRow; error: string };

/**
 * Turns stored deliveries into reports, asking the gateway's status API about each whose
 * status the gateway does not sign (Midtrans, Xendit). Runs before any transaction opens
 * (ARCHITECTURE rule 7: no outside call while a connection is held). The answer replaces the
 * claimed status and amount, so a callback claiming paid that the gateway calls pending is
 * reconciled as pending. Nothing is asked when the answer cannot matter (the payment is not
 * found, belongs to another gateway or a manual transfer, or is already paid); such a report
 * stays unconfirmed and can settle nothing. A query that fails (error, timeout, unreadable
 * answer, the adapter not loaded here) leaves the delivery unprocessed for a retry.
 */
async function prepareDeliveries(rows: readonly repo.CallbackRow[]): Promise<Prepared[]> {
  const reports = rows.map(reportOf);
  const asking = [...new Set(reports.filter((r) => r.unconfirmed).map((r) => r.gatewayOrderId))];
  const payments = new Map((await repo.findByOrders(db, asking)).map((p) => [p.gateway_order_id, p]));
  const answers = new Map<string, Promise<{ status: GatewayStatus; amount: number | null }>>();
  return Promise.all(
    rows.map(async (cb, k): Promise<Prepared> => {
      const r = reports[k]!;
      const p = payments.get(r.gatewayOrderId);
      if (!r.unconfirmed || !p || p.is_manual || p.provider !== r.provider || p.status === 'paid') return { cb, report: r };
      const adapter = adapterFor(r.provider);
      if (!adapter) return { cb, error: `status not confirmed: the ${r.provider} adapter is not loaded on this server` };
      let answer = answers.get(r.gatewayOrderId);
      if (!answer) answers.set(r.gatewayOrderId, (answer = adapter.queryStatus(r.gatewayOrderId)));
      try {
        const confirmed = await answer;
        return { cb, report: { ...r, status: confirmed.status, amount: confirmed.amount ?? r.amount, unconfirmed: false } };
      } catch (err) {
        return { cb, error: `status not confirmed by ${r.provider}: ${err instanceof Error ? err.message : String(err)}` };
      }
    }),
  );
}

/** How long a delivery whose payment is not found is tried again before `unknown_order` is final (for staff). */
export const UNKNOWN_ORDER_RETRY_MS = 60 * MINUTE;

/**
 * Why a reconciled delivery is not done yet, or undefined when its outcome is final. A
 * callback can arrive before `pay`'s transaction commits its payment row, so `unknown_order`
 * is tried again (with the failure backoff, at once when the gateway delivers it again) until
 * UNKNOWN_ORDER_RETRY_MS after its first arrival. `unconfirmed` (the payment appeared after
 * the status was to be confirmed) is tried again with the query.
 */
function notDoneBecause(cb: repo.CallbackRow, outcome: string, now: Date): string | undefined {
  if (outcome === 'unconfirmed') return 'the status is not yet confirmed with the gateway';
  if (outcome === 'unknown_order' && now.getTime() - new Date(cb.received_at).getTime() < UNKNOWN_ORDER_RETRY_MS) {
    return 'no payment with this gateway order id (yet): tried again';
  }
  return undefined;
}

/**
 * Reconciles prepared deliveries that the caller holds locked, in order, and writes each
 * outcome: final ones mark the delivery processed, the others defer it with a backoff.
 */
async function settleDeliveries(trx: Db, ready: readonly { cb: repo.CallbackRow; report: GatewayReport }[]): Promise<{ id: number; outcome: string }[]> {
  const now = clock.now();
  const outcomes = await reconcileMany(trx, ready.map((p) => p.report));
  const done: { id: number; outcome: string }[] = [];
  const deferred: { id: number; outcome: string; reason: string }[] = [];
  ready.forEach((p, k) => {
    const outcome = outcomes[k]!;
    const reason = notDoneBecause(p.cb, outcome, now);
    if (reason === undefined) done.push({ id: Number(p.cb.id), outcome });
    else deferred.push({ id: Number(p.cb.id), outcome, reason });
  });
  await repo.markCallbacksProcessed(trx, done, now);
  await repo.deferCallbacks(trx, deferred, now, CALLBACK_MAX_BACKOFF_S);
  return ready.map((p, k) => ({ id: Number(p.cb.id), outcome: outcomes[k]! }));
}

/**
 * Reconciles one stored delivery in its own transaction (the poller's reports; a job queued
 * by an older API). Safe to run twice (a processed delivery is skipped; the payment row is
 * locked; postings carry keys). An unsigned status is confirmed with the gateway first,
 * before the transaction opens; if that fails the delivery keeps the error and is retried.
 */
export async function processCallback(callbackId: number): Promise<{ outcome: string }> {
  const seen = await repo.callbackById(db, callbackId);
  if (!seen) return { outcome: 'missing' };
  if (seen.processed_at) return { outcome: seen.outcome ?? 'processed' };
  const [prepared] = await prepareDeliveries([seen]);
  if ('error' in prepared!) {
    await repo.recordCallbackFailure(db, callbackId, prepared.error, clock.now(), CALLBACK_MAX_BACKOFF_S);
    throw new Error(prepared.error);
  }
  const report = prepared!.report;
  return db.transaction(async (trx) =>
    collectNotices(trx, async () => {
      const cb = await repo.callbackForUpdate(trx, callbackId);
      if (!cb) return { outcome: 'missing' };
      if (cb.processed_at) return { outcome: cb.outcome ?? 'processed' };
      const [done] = await settleDeliveries(trx, [{ cb, report }]);
      return { outcome: done!.outcome };
    }),
  );
}

/** Deliveries reconciled per transaction by the gateway-callbacks worker. */
export const CALLBACK_BATCH = 100;
/** Longest wait before a failed delivery is tried again. */
export const CALLBACK_MAX_BACKOFF_S = 600;

export interface DrainResult {
  /** Deliveries reconciled, by id, with what each did (an `unknown_order` or `unconfirmed` one is tried again later). */
  processed: { id: number; outcome: string }[];
  /** Deliveries whose reconciliation failed: left unprocessed, retried after a backoff. */
  failed: { id: number; error: string }[];
}

/**
 * Locks the prepared deliveries still due (SKIP LOCKED: another worker's are left to it),
 * records the ones whose status could not be confirmed as failed, and reconciles the rest.
 */
async function reconcileDeliveries(trx: Db, prepared: readonly Prepared[]): Promise<DrainResult> {
  const now = clock.now();
  const locked = new Set((await repo.dueCallbacksForUpdate(trx, prepared.map((p) => Number(p.cb.id)), now)).map((cb) => Number(cb.id)));
  const mine = prepared.filter((p) => locked.has(Number(p.cb.id)));
  const failed: { id: number; error: string }[] = [];
  const ready: { cb: repo.CallbackRow; report: GatewayReport }[] = [];
  for (const p of mine) {
    if ('error' in p) failed.push({ id: Number(p.cb.id), error: p.error });
    else ready.push(p);
  }
  for (const f of failed) await repo.recordCallbackFailure(trx, f.id, f.error, now, CALLBACK_MAX_BACKOFF_S);
  return { processed: await settleDeliveries(trx, ready), failed };
}

/**
 * The gateway-callbacks worker's loop body: reads up to `limit` due, unprocessed deliveries,
 * confirms the unsigned statuses with their gateways (before any transaction opens), then
 * reconciles them in ONE transaction that locks them (SKIP LOCKED, so several workers share
 * them), in arrival order: one commit, one lock of the hot ledger accounts, one outbox row for
 * all their notices. If anything in the batch fails, the batch rolls back whole and each
 * delivery is tried again alone; one that still fails (or whose status could not be
 * confirmed) is recorded (attempts, last error) and retried after a backoff, and never holds
 * up the others.
 */
export async function drainCallbacks(limit = CALLBACK_BATCH): Promise<DrainResult> {
  const due = await repo.dueCallbacks(db, clock.now(), limit);
  if (due.length === 0) return { processed: [], failed: [] };
  const prepared = await prepareDeliveries(due);
  try {
    return await db.transaction(async (trx) => collectNotices(trx, async () => reconcileDeliveries(trx, prepared)));
  } catch (err) {
    logger.warn({ err }, 'callback batch failed; reconciling its deliveries one by one');
  }
  const result: DrainResult = { processed: [], failed: [] };
  for (const one of prepared) {
    const id = Number(one.cb.id);
    try {
      const alone = await db.transaction(async (trx) => collectNotices(trx, async () => reconcileDeliveries(trx, [one])));
      result.processed.push(...alone.processed);
      result.failed.push(...alone.failed);
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
  /** A callback's unsigned status the gateway has not confirmed: it settles nothing (outcome `unconfirmed`). */
  unconfirmed?: boolean;
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
    // An unsigned status the gateway has not confirmed (the payment appeared since): tried again with the query.
    if (r.unconfirmed) return 'unconfirmed';
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
  if (!payment || payment.provider !== 'sandbox') throw AppError.legacy(404, 'NOT_FOUND', 'No sandbox payment with this gateway_order_id');
  if (payment.buyer_id !== actor.userId && actor.role !== 'admin') throw AppError.legacy(403, 'FORBIDDEN', 'Only the buyer can simulate this payment');
  await db('sandbox_charges').where({ gateway_order_id: gatewayOrderId }).update({ status, updated_at: clock.now() });
  const { sandboxSignature } = await import('./gateways/sandbox.js');
  const rawBody = JSON.stringify({ provider: 'sandbox', gateway_order_id: gatewayOrderId, status, amount: payment.amount });
  return ingestCallback({ headers: { 'x-sandbox-signature': sandboxSignature(rawBody), 'content-type': 'application/json' }, rawBody, json: JSON.parse(rawBody) as unknown });
}

export const sandboxEnabled = (): boolean => config.sandboxMode;
