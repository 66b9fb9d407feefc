/**
 * Inbound gateway callbacks (consumer spec section 6; decision 0015): verified deliveries are
 * stored raw (the stored row is the gateway-callbacks worker's inbox), unsigned statuses are
 * confirmed with the gateway before any transaction opens, and the inbox is drained in
 * batches through the one reconciliation path (reconcile.ts).
 */
import { clock } from '../clock.js';
import { db, type Db } from '../db.js';
import { GroupCommit } from '../group-commit.js';
import { logger } from '../logger.js';
import { collectNotices } from '../notifications/service.js';
import { currentTraceparent, traced, tracingOn } from '../tracing.js';
import { paymentErrors } from './errors.js';
import { adapterFor, detectProvider, signsStatus, type GatewayStatus, type InboundDelivery } from './gateways/index.js';
import { reconcileMany, type GatewayReport } from './reconcile.js';
import * as repo from './repo.js';

const MINUTE = 60_000;

export interface IngestResult {
  provider: string;
  duplicate: boolean;
}

/** Headers kept with a stored delivery (no credentials). */
const KEPT_HEADERS = ['content-type', 'user-agent', 'x-callback-event'];

/**
 * POST /api/webhooks/inbound (and /ipn, /payment, /universal): detect the provider, verify
 * the signature on the raw body (403, nothing stored, when it fails), store the delivery
 * (the stored row is the gateway-callbacks worker's inbox; deliveries arriving together
 * share one statement and COMMIT: `storing`) and answer once it has committed. A
 * duplicate delivery is acknowledged; if its first copy waits for a retry after a failure,
 * the retry is due at once.
 */
export async function ingestCallback(delivery: InboundDelivery, source: 'callback' | 'poll' = 'callback'): Promise<IngestResult> {
  const adapter = detectProvider(delivery);
  if (!adapter) throw paymentErrors.unknownProvider();
  if (!adapter.verify(delivery)) throw paymentErrors.invalidSignature();
  let parsed;
  try {
    parsed = adapter.parse(delivery);
  } catch {
    throw paymentErrors.invalidCallback();
  }
  const headers = Object.fromEntries(KEPT_HEADERS.filter((h) => delivery.headers[h] !== undefined).map((h) => [h, delivery.headers[h]]));
  const stored = await storing.submit(newCallback({
    provider: adapter.name,
    source,
    gatewayOrderId: parsed.gatewayOrderId,
    status: parsed.status,
    amount: parsed.amount,
    dedupeKey: `${adapter.name}:${parsed.eventId ?? `${parsed.gatewayOrderId}:${parsed.status}:${parsed.amount ?? ''}`}`,
    rawBody: delivery.rawBody,
    headers,
  }));
  return { provider: adapter.name, duplicate: !stored.inserted };
}

export interface CallbackRecord {
  provider: string;
  source: 'callback' | 'poll' | 'staff';
  gatewayOrderId: string;
  status: GatewayStatus;
  amount: number | null;
  dedupeKey: string;
  rawBody: string;
  headers: Record<string, string | undefined>;
}

/** The row of a delivery; with tracing on it keeps the storing request's trace context, which its reconciliation continues. */
const newCallback = (c: CallbackRecord): repo.NewCallback => ({
  provider: c.provider,
  source: c.source,
  gateway_order_id: c.gatewayOrderId,
  status: c.status,
  amount: c.amount,
  dedupe_key: c.dedupeKey,
  raw_body: c.rawBody,
  headers: JSON.stringify(c.headers),
  received_at: clock.now(),
  ...(tracingOn() ? { trace_context: currentTraceparent() } : undefined),
});

/** Stores one delivery in the caller's transaction (or at once on the pool). */
export async function storeCallback(trxOrDb: Db, c: CallbackRecord): Promise<repo.StoredCallback> {
  return repo.upsertCallback(trxOrDb, newCallback(c));
}

/** Deliveries stored per statement at most (the API's group commit). */
export const CALLBACK_STORE_BATCH = 100;

/**
 * One delivery alone (the usual case below a few hundred a second) by the single-row
 * statement; several by the array statement, whose arrays cost more to build and parse.
 */
async function storeRows(rows: readonly repo.NewCallback[]): Promise<repo.StoredCallback[]> {
  return rows.length === 1 ? [await repo.upsertCallback(db, rows[0]!)] : repo.upsertCallbacks(db, rows);
}

/**
 * The deliveries this process receives, stored by group commit (shared/group-commit.ts):
 * one arriving while a slot is free is stored at once; those that arrive while both are
 * busy share the next statement and COMMIT (two copies of one delivery are never written
 * at once). Each caller answers only after its own row has committed.
 */
const storing = new GroupCommit<repo.NewCallback, repo.StoredCallback>(storeRows, {
  max: CALLBACK_STORE_BATCH,
  // Two statements at once: a copy of a delivery the worker holds locked (it is reconciling
  // it) waits for the worker's COMMIT without holding up every delivery behind it.
  concurrency: 2,
  key: (row) => row.dedupe_key,
});

/** Deliveries received by this process waiting for the statement that stores them (the one being written not counted). */
export const callbackStoresWaiting = (): number => storing.waiting;

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
  const due = await repo.dueCallbacks(db, clock.now(), limit, tracingOn());
  if (due.length === 0) return { processed: [], failed: [] };
  // With tracing on, the batch continues the trace of its first delivery and links the others'.
  return traced('gateway-callbacks reconcile', () => drainDue(due), {
    kind: 'consumer',
    parent: due[0]!.trace_context,
    links: due.slice(1).map((cb) => cb.trace_context),
    attributes: { 'messaging.batch.message_count': due.length },
  });
}

/** `drainCallbacks` for the deliveries it read. */
async function drainDue(due: readonly repo.CallbackRow[]): Promise<DrainResult> {
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

