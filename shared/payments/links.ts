/**
 * Payment links (consumer spec 4.2 pay, payment-status, available-methods; decision 0009):
 * the gateways a buyer can use, and a link opened in two steps (prepare under the target's
 * lock and commit, call the gateway with nothing held, record its answer in the key's
 * transaction), for escrows and payment-service orders alike.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Actor } from '../actors.js';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { randomToken } from '../crypto.js';
import { db, inFoldedTransaction, takeReadAhead, type Db } from '../db.js';
import type { KeyGate } from '../idempotency.js';
import * as escrowRepo from '../escrows/repo.js';
import { partyOf } from '../escrows/transition.js';
import { isUuid } from '../ids.js';
import { paymentErrors } from './errors.js';
import { adapterFor, GatewayError, PAYMENT_METHODS, type PaymentMethod } from './gateways/index.js';
import type { ChargeRequest, ChargeResult } from './gateways/types.js';
import * as repo from './repo.js';
import type { GatewayRow, LinkView, PaymentRow } from './repo.js';
import { surchargeOf } from './surcharge.js';

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
  if (enabled.length === 0) throw paymentErrors.noGateways();
  const forMethod = enabled.filter((g) => g.supported_methods.includes(method) && (provider === undefined || g.provider === provider));
  if (forMethod.length === 0) {
    throw provider !== undefined ? paymentErrors.providerUnavailable(provider, method) : paymentErrors.noGatewayForMethod(method);
  }
  const usable = forMethod.filter((g) => g.is_manual || adapterFor(g.provider) !== undefined);
  if (usable.length === 0) throw paymentErrors.adapterNotLoaded(method);
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
  /** The link as the pay answer shows it, as reserved (the gateway's answer goes on it in step 2). */
  link: LinkView;
  /** The gateway's answer (absent for a manual transfer: nothing to call). */
  charge?: { result: ChargeResult; expiresAt: Date };
}

/** How long a reserved link counts as underway before its gateway answer is recorded. */
const OPENING_GRACE_MS = 30_000;

/**
 * POST /api/escrows/:id/pay, step 1 (no transaction may be held by the caller). One round
 * trip opens the transaction, locks the escrow for its buyer (decision 0009: a cancel and
 * a payment link never pass each other; FOR UPDATE answers the row's latest committed
 * version) and reads the gateways and the payer; the link's row goes with the COMMIT.
 */
export async function prepareEscrowLink(actor: Actor, escrowId: string, input: PayInput): Promise<PreparedLink> {
  return (await prepareEscrowLinkAdmitting(actor, escrowId, input, undefined))!;
}

/**
 * `prepareEscrowLink` for a keyed pay: the key's lookup goes in the same first round trip
 * (`idempotent({ prepareAdmitting })`) and is admitted before any check, so a replay answers
 * the stored link even once the escrow has moved on. Undefined when the stored answer was sent.
 * `payer`: the buyer's users row when the caller already holds it (the route's `auth()` read
 * it this request); the charge request names it instead of reading the row again.
 */
export async function prepareEscrowLinkAdmitting(actor: Actor, escrowId: string, input: PayInput, gate: KeyGate | undefined, payer?: repo.Payer): Promise<PreparedLink | undefined> {
  // The refusals in their order: a bad method (400), then the escrow (404, 403, 409); a
  // keyed request's stored answer (or 422 for its key reused) before all of them. A path
  // that is not a UUID never stored an answer.
  if (!isUuid(escrowId)) {
    parseMethod(input.method);
    throw paymentErrors.escrowNotFound();
  }
  // The payer's row is read again only when the caller does not hold it (auth() loaded it for the route).
  if (payer && payer.id !== actor.userId) throw new Error('prepareEscrowLinkAdmitting: the payer given is not the actor');
  const ahead = [...(gate ? [gate.ahead] : []), repo.enabledGatewaysAhead(), ...(payer ? [] : [repo.payerAhead(actor.userId)])];
  const reserved = await inFoldedTransaction<escrowRepo.PayableEscrow, ReservedLink | undefined>(db, escrowRepo.lockedForBuyerSql(escrowId, actor.userId), ahead, async (trx, [current]) => {
    if (gate && !gate.admit(takeReadAhead(trx, gate.ahead.key))) return undefined;
    const method = parseMethod(input.method);
    if (!current) {
      // Not locked: it does not exist, or the caller is not its buyer (told apart unlocked).
      if (!(await escrowRepo.findById(trx, escrowId))) throw paymentErrors.escrowNotFound();
      throw paymentErrors.notBuyerToPay();
    }
    if (current.status !== 'pending_payment') {
      throw paymentErrors.escrowNotPayable(current.status);
    }
    if (current.expires_at <= clock.now()) {
      throw paymentErrors.escrowPastDeadline(current.status);
    }
    return reserveLink(trx, actor, { escrowId: current.id, amount: current.amount, itemName: current.item_name, manualExpiresAt: current.expires_at }, method, input.provider, payer);
  });
  return reserved && chargeReserved(reserved);
}

/**
 * Payment-service orders, step 1: `reserve` checks and locks the order in the transaction
 * it is given (orders/service.ts owns those rules) and returns the link target.
 */
export async function prepareOrderLink(actor: Actor, method: PaymentMethod, provider: string | undefined, reserve: (trx: Knex.Transaction) => Promise<LinkTarget>): Promise<PreparedLink> {
  const reserved = await db.transaction(async (trx) => reserveLink(trx, actor, await reserve(trx), method, provider));
  return chargeReserved(reserved);
}

/**
 * Step 2: the gateway's answer on the link, in the caller's transaction (held for its
 * COMMIT: `recordChargeAtCommit`). Answers the link as the pay answer shows it. Text is
 * stored as Postgres would store it (a lone UTF-16 surrogate as U+FFFD), so the answer
 * and the row agree.
 */
export async function recordLink(trx: Db, prepared: PreparedLink): Promise<LinkView> {
  if (!prepared.charge) return prepared.link;
  const { result, expiresAt } = prepared.charge;
  const shown = {
    qr_string: wellFormed(result.qrString),
    qr_url: wellFormed(result.qrUrl),
    va_number: wellFormed(result.vaNumber),
    va_bank: wellFormed(result.vaBank),
    redirect_url: wellFormed(result.paymentUrl),
    deep_link_url: wellFormed(result.deepLinkUrl),
    expires_at: expiresAt,
  };
  await repo.recordChargeAtCommit(trx, prepared.link.id, { ...shown, raw_response: JSON.stringify(result.raw ?? {}), updated_at: clock.now() });
  return { ...prepared.link, ...shown };
}

function wellFormed(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : text.toWellFormed();
}

/**
 * A prepared link whose answer was never given (the request failed or a concurrent twin
 * with the same key answered): still pending, it becomes `failed` so it blocks nothing.
 * Money paid on it later is still taken (a paid report wins over failed).
 */
export async function abandonLink(prepared: PreparedLink): Promise<void> {
  if (prepared.link.is_manual) await repo.failUnansweredManual(db, prepared.link.id, clock.now());
  else await repo.failUnanswered(db, prepared.link.id, clock.now());
}

/**
 * Without an Idempotency-Key (the checkout page, factories): both steps, each committed.
 * It cannot join a caller's transaction: the gateway is called between the steps.
 */
export async function pay(trxOrDb: Db | undefined, actor: Actor, escrowId: string, input: PayInput): Promise<LinkView> {
  if (trxOrDb?.isTransaction) throw new Error('pay calls the gateway, so it cannot run inside a transaction (ARCHITECTURE rule 7)');
  return recordPrepared(await prepareEscrowLink(actor, escrowId, input));
}

/** Step 2 without a caller's transaction: the answer recorded at once, the link failed if it cannot be. */
export async function recordPrepared(prepared: PreparedLink): Promise<LinkView> {
  try {
    return await recordLink(db, prepared);
  } catch (err) {
    await abandonLink(prepared);
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
  link: LinkView;
  request?: ChargeRequest;
}

/**
 * Chooses the gateway and stores the payment row inside the caller's transaction, which
 * holds the target's row locked and has checked its state; the row is held for the
 * transaction's COMMIT (`insertPaymentAtCommit`). A manual transfer is complete here; a
 * gateway link gets its charge request, sent after this transaction commits, naming `payer`
 * (read here when the caller did not give it).
 */
async function reserveLink(trx: Db, actor: Actor, target: LinkTarget, method: PaymentMethod, provider: string | undefined, payer?: repo.Payer): Promise<ReservedLink> {
  const gateway = await chooseGateway(trx, method, provider, target.amount);
  const surcharge = surchargeOf(target.amount, gateway);
  const total = target.amount + surcharge;
  const now = clock.now();
  const gatewayOrderId = newGatewayOrderId();
  const base = {
    id: randomUUID(),
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
    return { link: await repo.insertPaymentAtCommit(trx, { ...base, expires_at: target.manualExpiresAt, raw_response: JSON.stringify({ manual: true, config: gateway.config }) }) };
  }
  const buyer = payer ?? (await repo.payerOf(trx, actor.userId))!;
  const link = await repo.insertPaymentAtCommit(trx, {
    ...base,
    expires_at: new Date(now.getTime() + config.gateways.httpTimeoutMs + OPENING_GRACE_MS),
    next_poll_at: new Date(now.getTime() + FIRST_POLL_AFTER_MS),
  });
  return {
    link,
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
  const { link, request } = reserved;
  if (!request) return { link };
  const adapter = adapterFor(link.provider)!;
  try {
    return { link, charge: { result: await adapter.createCharge(request), expiresAt: request.expiresAt } };
  } catch (err) {
    await repo.failUnanswered(db, link.id, clock.now());
    if (err instanceof GatewayError) throw paymentErrors.gatewayRefused(err.message);
    throw err;
  }
}

export function parseMethod(value: string | undefined): PaymentMethod {
  if (value === undefined || value === '') throw paymentErrors.missingMethod();
  if (!isMethod(value)) throw paymentErrors.unsupportedMethod(PAYMENT_METHODS);
  return value;
}

// ---- Reads ----------------------------------------------------------------------------

/** GET /api/escrows/:id/payment-status: the latest payment record (parties and staff). */
export async function paymentStatus(actor: Actor, escrowId: string): Promise<PaymentRow> {
  const e = isUuid(escrowId) ? await escrowRepo.findById(db, escrowId) : undefined;
  if (!e) throw paymentErrors.escrowNotFound();
  if (!partyOf(e, actor.userId) && actor.role !== 'admin') throw paymentErrors.notEscrowParty();
  // A paid link wins over a newer unpaid one, so a polling checkout always sees "paid".
  const payment = await repo.currentForEscrow(db, e.id);
  if (!payment) throw paymentErrors.noPayment('escrow');
  return payment;
}

/** The payment an order's status shows: the one that paid it, else the newest link (orders/service.ts checks the reader). */
export async function currentForOrder(orderId: string): Promise<PaymentRow | undefined> {
  return repo.currentForOrder(db, orderId);
}
