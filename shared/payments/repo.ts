/** SQL for payment links, gateways and stored callbacks. */
import type { Knex } from 'knex';
import { queuePage, type QueueCursor, type QueuePage, type StaffSearch } from '../staff/queue.js';
import { prepared, takeReadAhead, writeAtCommit, type Db, type ReadAhead } from '../db.js';
import type { GatewayStatus, PaymentMethod } from './gateways/types.js';

import type { PaymentStatus } from './states.js';

export type { PaymentStatus } from './states.js';

export interface PaymentRow {
  id: string;
  /** The escrow the link pays, or null when it pays a payment-service order (exactly one is set). */
  escrow_id: string | null;
  order_id: string | null;
  buyer_id: string;
  provider: string;
  method: PaymentMethod;
  is_manual: boolean;
  gateway_order_id: string;
  escrow_amount: number;
  surcharge: number;
  amount: number;
  status: PaymentStatus;
  qr_string: string | null;
  qr_url: string | null;
  va_number: string | null;
  va_bank: string | null;
  redirect_url: string | null;
  deep_link_url: string | null;
  raw_response: string;
  expires_at: Date | null;
  paid_at: Date | null;
  claimed_at: Date | null;
  claim_reference: string | null;
  flag: string | null;
  decided_by: string | null;
  /** What staff settled (credited or returned): the gateway's reported amount, or a late claim's total. */
  received_amount: number | null;
  next_poll_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface GatewayRow {
  provider: string;
  display_name: string;
  supported_methods: string[];
  is_manual: boolean;
  enabled: boolean;
  in_maintenance: boolean;
  config: unknown;
  fee_percent: string;
  fee_fixed: number;
  sort_order: number;
}

const ENABLED_GATEWAYS = 'SELECT * FROM payment_gateways WHERE enabled AND NOT in_maintenance ORDER BY sort_order, provider';

export async function enabledGateways(trx: Db): Promise<GatewayRow[]> {
  return takeReadAhead<GatewayRow>(trx, 'gateways:enabled') ?? (await trx.raw<{ rows: GatewayRow[] }>(ENABLED_GATEWAYS)).rows;
}

/** `enabledGateways(trx)` ahead of time (a pay's first round trip, shared/db.ts ReadAhead). */
export function enabledGatewaysAhead(): ReadAhead {
  return { key: 'gateways:enabled', sql: ENABLED_GATEWAYS, bindings: [] };
}

/** Who a gateway's charge request names as the payer. */
export type Payer = { id: string; email: string; full_name: string };

/** The payer's row (`payerAhead` sent it ahead in a folded transaction: taken from there). */
export async function payerOf(trx: Db, userId: string): Promise<Payer | undefined> {
  const ahead = takeReadAhead<Payer>(trx, `payer:${userId}`);
  if (ahead) return ahead[0];
  return (await trx('users').select('id', 'email', 'full_name').where({ id: userId }).first()) as Payer | undefined;
}

/** `payerOf(trx, userId)` ahead of time. */
export function payerAhead(userId: string): ReadAhead {
  return { key: `payer:${userId}`, sql: 'SELECT id, email, full_name FROM users WHERE id = $1', bindings: [userId] };
}

export type NewPayment = Partial<Pick<PaymentRow, 'escrow_id' | 'order_id'>> &
  Pick<PaymentRow, 'buyer_id' | 'provider' | 'method' | 'is_manual' | 'gateway_order_id' | 'escrow_amount' | 'surcharge' | 'amount' | 'created_at' | 'updated_at'> &
  Partial<Pick<PaymentRow, 'qr_string' | 'qr_url' | 'va_number' | 'va_bank' | 'redirect_url' | 'deep_link_url' | 'raw_response' | 'expires_at' | 'next_poll_at'>>;

export async function insertPayment(trx: Db, row: NewPayment): Promise<PaymentRow> {
  const [created] = (await trx('payments').insert(row).returning('*')) as PaymentRow[];
  if (!created) throw new Error('payments insert returned no row');
  return created;
}

/** A payment link as the pay answer shows it (`serializeInitiation`): all known when it is made and answered. */
export type LinkView = Pick<
  PaymentRow,
  'id' | 'gateway_order_id' | 'method' | 'provider' | 'redirect_url' | 'qr_url' | 'va_number' | 'va_bank' | 'deep_link_url' | 'expires_at' | 'amount' | 'escrow_amount' | 'surcharge' | 'qr_string' | 'is_manual' | 'order_id'
>;

const INSERT_PAYMENT = `INSERT INTO payments (id, escrow_id, order_id, buyer_id, provider, method, is_manual, gateway_order_id, escrow_amount, surcharge, amount, raw_response, expires_at, next_poll_at, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`;

/**
 * `insertPayment` held for the transaction's COMMIT (`writeAtCommit`), the id chosen by
 * the caller: the link's row commits with the target's lock released, one round trip
 * fewer. It can fail only as a fault (the gateway order id is random): a failure fails the
 * COMMIT and nothing of the transaction is written. Answers the link as the pay answer
 * shows it, from the values given (a test holds it equal to the row read back).
 */
export async function insertPaymentAtCommit(trx: Db, row: NewPayment & { id: string }): Promise<LinkView> {
  // One fixed statement (no query building per pay); a column not given takes its default.
  await writeAtCommit(trx, {
    sql: INSERT_PAYMENT,
    bindings: [
      row.id,
      row.escrow_id ?? null,
      row.order_id ?? null,
      row.buyer_id,
      row.provider,
      row.method,
      row.is_manual,
      row.gateway_order_id,
      row.escrow_amount,
      row.surcharge,
      row.amount,
      row.raw_response ?? '{}',
      row.expires_at ?? null,
      row.next_poll_at ?? null,
      row.created_at,
      row.updated_at,
    ],
  });
  return {
    id: row.id,
    gateway_order_id: row.gateway_order_id,
    method: row.method,
    provider: row.provider,
    redirect_url: row.redirect_url ?? null,
    qr_url: row.qr_url ?? null,
    va_number: row.va_number ?? null,
    va_bank: row.va_bank ?? null,
    deep_link_url: row.deep_link_url ?? null,
    expires_at: row.expires_at ?? null,
    amount: row.amount,
    escrow_amount: row.escrow_amount,
    surcharge: row.surcharge,
    qr_string: row.qr_string ?? null,
    is_manual: row.is_manual,
    order_id: row.order_id ?? null,
  };
}

type ChargePatch = Pick<PaymentRow, 'qr_string' | 'qr_url' | 'va_number' | 'va_bank' | 'redirect_url' | 'deep_link_url' | 'raw_response' | 'expires_at' | 'updated_at'>;

/**
 * The gateway's answer on a reserved link (links.ts `recordLink`), held for the key
 * transaction's COMMIT (`writeAtCommit`, with the stored answer): the caller knows every
 * column the answer shows. A link's row is never deleted; should it be missing all the
 * same, `1 / count(*)` of the updated rows divides by zero and fails the COMMIT (nothing
 * is written, the request answers 5xx).
 */
export async function recordChargeAtCommit(trx: Db, id: string, patch: ChargePatch): Promise<void> {
  await writeAtCommit(trx, {
    sql: `WITH u AS (UPDATE payments SET qr_string = $1, qr_url = $2, va_number = $3, va_bank = $4, redirect_url = $5, deep_link_url = $6,
                                         raw_response = $7, expires_at = $8, updated_at = $9 WHERE id = $10 RETURNING 1)
          SELECT 1 / count(*) FROM u`,
    bindings: [patch.qr_string, patch.qr_url, patch.va_number, patch.va_bank, patch.redirect_url, patch.deep_link_url, patch.raw_response, patch.expires_at, patch.updated_at, id],
  });
}

/** A reserved gateway link whose answer was never recorded: pending -> failed (compare-and-set). */
export async function failUnanswered(trx: Db, id: string, now: Date): Promise<boolean> {
  const n = await trx('payments').where({ id, status: 'pending', is_manual: false, raw_response: '{}' }).update({ status: 'failed', updated_at: now });
  return n > 0;
}

/**
 * A reserved manual link whose answer was never given (its request failed, or a concurrent
 * twin with the same key answered its own link): pending and unclaimed -> failed
 * (compare-and-set), so the buyer is never left two live transfer links for one pay.
 */
export async function failUnansweredManual(trx: Db, id: string, now: Date): Promise<boolean> {
  const n = await trx('payments').where({ id, status: 'pending', is_manual: true }).whereNull('claimed_at').update({ status: 'failed', updated_at: now });
  return n > 0;
}

export async function findById(trx: Db, id: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ id }).first()) as PaymentRow | undefined;
}

export async function findForUpdate(trx: Db, id: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ id }).forUpdate().first()) as PaymentRow | undefined;
}

export async function findByOrder(trx: Db, gatewayOrderId: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ gateway_order_id: gatewayOrderId }).first()) as PaymentRow | undefined;
}

export async function findByOrderForUpdate(trx: Db, gatewayOrderId: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ gateway_order_id: gatewayOrderId }).forUpdate().first()) as PaymentRow | undefined;
}

/** Payment rows by gateway order id, not locked (a look before a transaction opens). */
export async function findByOrders(trx: Db, orders: readonly string[]): Promise<PaymentRow[]> {
  if (orders.length === 0) return [];
  return (await trx('payments').whereIn('gateway_order_id', [...orders])) as PaymentRow[];
}

/** Payment rows by gateway order id, locked in id order. */
export async function findByOrdersForUpdate(trx: Db, orders: readonly string[]): Promise<PaymentRow[]> {
  if (orders.length === 0) return [];
  return (await trx('payments').whereIn('gateway_order_id', [...orders]).orderBy('id').forUpdate()) as PaymentRow[];
}

/**
 * Writes decided payment rows (status, paid_at, flag, next_poll_at, updated_at) in one
 * statement, each a compare-and-set on the status it had when locked. The rows are held
 * locked by the caller, so a row that does not match means a bug: it throws.
 */
export async function applyPaymentChanges(trx: Db, changes: readonly { from: PaymentStatus; row: PaymentRow }[]): Promise<void> {
  if (changes.length === 0) return;
  const result = await trx.raw<{ rowCount: number }>(
    `UPDATE payments p
        SET status = d.status, paid_at = d.paid_at, flag = d.flag, next_poll_at = d.next_poll_at, updated_at = d.updated_at
       FROM unnest(?::uuid[], ?::text[], ?::text[], ?::timestamptz[], ?::text[], ?::timestamptz[], ?::timestamptz[])
            AS d(id, from_status, status, paid_at, flag, next_poll_at, updated_at)
      WHERE p.id = d.id AND p.status = d.from_status`,
    [
      changes.map((c) => c.row.id),
      changes.map((c) => c.from),
      changes.map((c) => c.row.status),
      changes.map((c) => c.row.paid_at),
      changes.map((c) => c.row.flag),
      changes.map((c) => c.row.next_poll_at),
      changes.map((c) => c.row.updated_at),
    ] as unknown as Knex.RawBinding[], // pg sends arrays with nulls as Postgres arrays
  );
  if (result.rowCount !== changes.length) throw new Error(`payments changed under their lock: wrote ${result.rowCount} of ${changes.length}`);
}

/**
 * Newest first; two links made in the same millisecond (a pinned clock, a fast client) are
 * told apart by which can still complete, not by the random order of their uuids.
 */
const NEWEST_LINK = "created_at DESC, (status IN ('pending', 'awaiting_confirmation')) DESC, id DESC";

export async function latestForEscrow(trx: Db, escrowId: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ escrow_id: escrowId }).orderByRaw(NEWEST_LINK).first()) as
    | PaymentRow
    | undefined;
}

/** Compare-and-set on the payment's status. */
/** A compare-and-set of a payment's status (and, if asked, its flag): the row, or undefined when it had moved. */
export async function movePayment(trx: Db, id: string, from: readonly PaymentStatus[], changes: Partial<PaymentRow>, guard: { flag?: string | null } = {}): Promise<PaymentRow | undefined> {
  const q = trx('payments').where({ id }).whereIn('status', from);
  if (guard.flag !== undefined) void (guard.flag === null ? q.whereNull('flag') : q.where({ flag: guard.flag }));
  const [row] = (await q.update(changes).returning('*')) as PaymentRow[];
  return row;
}

/** Who decided a payment (staff confirming a claimed transfer). */
export async function setDecidedBy(trx: Db, id: string, actorId: string): Promise<void> {
  await trx('payments').where({ id }).update({ decided_by: actorId });
}

/** The newest claimed manual transfer of an order, locked. */
export async function claimedForOrderForUpdate(trx: Db, orderId: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ order_id: orderId, status: 'awaiting_confirmation' }).orderBy('created_at', 'desc').forUpdate().first()) as PaymentRow | undefined;
}

/** The sandbox gateway records a simulated outcome on its side (decision D4). */
export async function setSandboxCharge(trx: Db, gatewayOrderId: string, status: string, now: Date): Promise<void> {
  await trx('sandbox_charges').where({ gateway_order_id: gatewayOrderId }).update({ status, updated_at: now });
}

export async function duePolls(trx: Db, now: Date, limit: number): Promise<PaymentRow[]> {
  return (await trx('payments').where({ status: 'pending', is_manual: false }).where('next_poll_at', '<=', now).orderBy('next_poll_at').limit(limit)) as PaymentRow[];
}

export async function setNextPoll(trx: Db, id: string, at: Date): Promise<void> {
  await trx('payments').where({ id, status: 'pending' }).update({ next_poll_at: at });
}

export interface CallbackRow {
  id: number;
  provider: string;
  source: 'callback' | 'poll' | 'staff';
  gateway_order_id: string;
  status: GatewayStatus;
  amount: number | null;
  received_at: Date;
  processed_at: Date | null;
  outcome: string | null;
  /** With tracing on only: the `traceparent` of the request that stored it (shared/tracing.ts). */
  trace_context?: string | null;
}

/**
 * What a repeated delivery does to the stored one (both upserts): counts one more delivery;
 * an `unknown_order` copy is opened again; one still waiting for a retry is due at once.
 */
const ON_DUPLICATE_DELIVERY = `ON CONFLICT (dedupe_key) DO UPDATE SET deliveries = payment_callbacks.deliveries + 1,
       processed_at = CASE WHEN payment_callbacks.outcome = 'unknown_order' THEN NULL ELSE payment_callbacks.processed_at END,
       next_attempt_at = CASE WHEN payment_callbacks.processed_at IS NULL OR payment_callbacks.outcome = 'unknown_order'
                              THEN LEAST(payment_callbacks.next_attempt_at, EXCLUDED.next_attempt_at)
                              ELSE payment_callbacks.next_attempt_at END`;

/** A delivery to store: the columns `upsertCallback(s)` write. */
export type NewCallback = Omit<CallbackRow, 'id' | 'processed_at' | 'outcome'> & { dedupe_key: string; raw_body: string; headers: string };

/** A stored delivery: its row, and whether this store made it (false: a repeat counted on the first copy). */
export interface StoredCallback {
  id: number;
  inserted: boolean;
}

/**
 * Stores a delivery in one statement; a duplicate only counts one more delivery, and makes
 * a copy still waiting for a retry due at once (the gateway's retry). A copy whose payment
 * was not found (outcome `unknown_order`, even one already given up on) is opened again and
 * due at once: the gateway's retry may come after the payment row committed.
 */
export async function upsertCallback(trx: Db, row: NewCallback): Promise<StoredCallback> {
  // With tracing on the row keeps its trace context too (a repeat keeps the first copy's).
  const traced = row.trace_context !== undefined;
  // A named statement (prepared once per connection): every gateway delivery sends it.
  const rows = await prepared<StoredCallback>(
    traced ? 'payment_callback_upsert_traced' : 'payment_callback_upsert',
    `INSERT INTO payment_callbacks (provider, source, gateway_order_id, status, amount, dedupe_key, raw_body, headers, received_at, next_attempt_at${traced ? ', trace_context' : ''})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $9${traced ? ', $10' : ''})
     ${ON_DUPLICATE_DELIVERY}
     RETURNING id, (xmax = 0) AS inserted`,
    [row.provider, row.source, row.gateway_order_id, row.status, row.amount, row.dedupe_key, row.raw_body, row.headers, row.received_at, ...(traced ? [row.trace_context] : [])],
    trx as Knex,
  );
  return { id: Number(rows[0]!.id), inserted: rows[0]!.inserted };
}

/**
 * `upsertCallback` for several deliveries in one statement (the API's group commit of
 * callbacks, callbacks.ts): their dedupe keys must differ (one statement cannot update a row
 * twice); rows are written in dedupe-key order, so two such statements never wait on each
 * other in a cycle. Answers one result per delivery, in the order given.
 */
export async function upsertCallbacks(trx: Db, rows: readonly NewCallback[]): Promise<StoredCallback[]> {
  const col = <K extends keyof NewCallback>(k: K) => rows.map((r) => r[k]);
  const traced = rows.some((r) => r.trace_context !== undefined);
  const stored = await prepared<StoredCallback & { dedupe_key: string }>(
    traced ? 'payment_callbacks_upsert_many_traced' : 'payment_callbacks_upsert_many',
    `INSERT INTO payment_callbacks (provider, source, gateway_order_id, status, amount, dedupe_key, raw_body, headers, received_at, next_attempt_at${traced ? ', trace_context' : ''})
     SELECT d.provider, d.source, d.gateway_order_id, d.status, d.amount, d.dedupe_key, d.raw_body, d.headers::jsonb, d.received_at, d.received_at${traced ? ', d.trace_context' : ''}
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::timestamptz[]${traced ? ', $10::text[]' : ''})
            AS d(provider, source, gateway_order_id, status, amount, dedupe_key, raw_body, headers, received_at${traced ? ', trace_context' : ''})
      ORDER BY d.dedupe_key
     ${ON_DUPLICATE_DELIVERY}
     RETURNING id, (xmax = 0) AS inserted, dedupe_key`,
    [
      col('provider'), col('source'), col('gateway_order_id'), col('status'), col('amount'), col('dedupe_key'), col('raw_body'), col('headers'), col('received_at'),
      ...(traced ? [rows.map((r) => r.trace_context ?? null)] : []),
    ],
    trx as Knex,
  );
  const byKey = new Map(stored.map((r) => [r.dedupe_key, { id: Number(r.id), inserted: r.inserted }]));
  return rows.map((r) => {
    const got = byKey.get(r.dedupe_key);
    if (!got) throw new Error(`payment_callbacks upsert answered no row for ${r.dedupe_key}`);
    return got;
  });
}

const CALLBACK_COLUMNS = ['id', 'provider', 'source', 'gateway_order_id', 'status', 'amount', 'received_at', 'processed_at', 'outcome'] as const;

export async function callbackById(trx: Db, id: number): Promise<CallbackRow | undefined> {
  return (await trx('payment_callbacks').select(...CALLBACK_COLUMNS).where({ id }).first()) as CallbackRow | undefined;
}

export async function callbackForUpdate(trx: Db, id: number): Promise<CallbackRow | undefined> {
  return (await trx('payment_callbacks').select(...CALLBACK_COLUMNS).where({ id }).forUpdate().first()) as CallbackRow | undefined;
}

/**
 * Due, unprocessed deliveries in arrival order, not locked (read before the batch's transaction
 * opens); with `traceContext` (tracing on) each with the trace context it was stored with.
 */
export async function dueCallbacks(trx: Db, now: Date, limit: number, traceContext = false): Promise<CallbackRow[]> {
  return (await trx('payment_callbacks')
    .select(...CALLBACK_COLUMNS, ...(traceContext ? ['trace_context'] : []))
    .whereNull('processed_at')
    .where('next_attempt_at', '<=', now)
    .orderBy([{ column: 'next_attempt_at' }, { column: 'id' }])
    .limit(limit)) as CallbackRow[];
}

/** Of these deliveries, those still due and unprocessed, locked; rows another worker holds are skipped. */
export async function dueCallbacksForUpdate(trx: Db, ids: readonly number[], now: Date): Promise<CallbackRow[]> {
  if (ids.length === 0) return [];
  return (await trx('payment_callbacks')
    .select(...CALLBACK_COLUMNS)
    .whereIn('id', [...ids])
    .whereNull('processed_at')
    .where('next_attempt_at', '<=', now)
    .orderBy([{ column: 'next_attempt_at' }, { column: 'id' }])
    .forUpdate()
    .skipLocked()) as CallbackRow[];
}

export async function markCallbackProcessed(trx: Db, id: number, outcome: string, at: Date): Promise<void> {
  await markCallbacksProcessed(trx, [{ id, outcome }], at);
}

/** Records the outcomes of many deliveries in one statement. */
export async function markCallbacksProcessed(trx: Db, done: { id: number; outcome: string }[], at: Date): Promise<void> {
  if (done.length === 0) return;
  await trx.raw(
    `UPDATE payment_callbacks c SET processed_at = ?, outcome = d.outcome, next_attempt_at = NULL
     FROM unnest(?::bigint[], ?::text[]) AS d(id, outcome)
     WHERE c.id = d.id`,
    [at, done.map((d) => d.id), done.map((d) => d.outcome)],
  );
}

/**
 * A failed attempt: the error kept for staff, the next try after 1 s, 2 s, 4 s ... at most
 * `maxBackoffSeconds` (or sooner if the gateway delivers it again).
 */
export async function recordCallbackFailure(trx: Db, id: number, error: string, now: Date, maxBackoffSeconds: number): Promise<void> {
  await trx.raw(
    `UPDATE payment_callbacks
        SET attempts = attempts + 1, last_error = ?,
            next_attempt_at = ?::timestamptz + make_interval(secs => LEAST(power(2, LEAST(attempts, 20)), ?))
      WHERE id = ? AND processed_at IS NULL`,
    [error.slice(0, 1000), now, maxBackoffSeconds, id],
  );
}

/**
 * Deliveries reconciled to an outcome that is not final (the payment was not found yet, or
 * its status still has to be confirmed with the gateway): the outcome and why are kept, and
 * the next try comes after the same backoff as a failure (or sooner if the gateway delivers
 * it again).
 */
export async function deferCallbacks(trx: Db, deferred: readonly { id: number; outcome: string; reason: string }[], now: Date, maxBackoffSeconds: number): Promise<void> {
  if (deferred.length === 0) return;
  await trx.raw(
    `UPDATE payment_callbacks c
        SET outcome = d.outcome, attempts = c.attempts + 1, last_error = d.reason,
            next_attempt_at = ?::timestamptz + make_interval(secs => LEAST(power(2, LEAST(c.attempts, 20)), ?))
       FROM unnest(?::bigint[], ?::text[], ?::text[]) AS d(id, outcome, reason)
      WHERE c.id = d.id AND c.processed_at IS NULL`,
    [now, maxBackoffSeconds, deferred.map((d) => d.id), deferred.map((d) => d.outcome), deferred.map((d) => d.reason)],
  );
}

/** The payment the escrow's status shows: the one that paid it, else the newest link. */
export async function currentForEscrow(trx: Db, escrowId: string): Promise<PaymentRow | undefined> {
  return (await trx('payments')
    .where({ escrow_id: escrowId })
    .orderByRaw("(status = 'paid' AND flag IS NULL) DESC, created_at DESC, id DESC")
    .first()) as PaymentRow | undefined;
}

/** The newest link of a payment-service order. */
export async function latestForOrder(trx: Db, orderId: string): Promise<PaymentRow | undefined> {
  return (await trx('payments').where({ order_id: orderId }).orderByRaw(NEWEST_LINK).first()) as
    | PaymentRow
    | undefined;
}

/** The payment an order's status shows: the one that paid it, else the newest link. */
export async function currentForOrder(trx: Db, orderId: string): Promise<PaymentRow | undefined> {
  return (await trx('payments')
    .where({ order_id: orderId })
    .orderByRaw("(status = 'paid' AND flag IS NULL) DESC, created_at DESC, id DESC")
    .first()) as PaymentRow | undefined;
}

// ---- Money staff settle by hand (decision 0009: late claims, amount mismatches) ----------

/** SQL: the amount the gateway last reported in a paid callback flagged amount_mismatch for payment `p`. */
const REPORTED_AMOUNT = `(SELECT c.amount FROM payment_callbacks c
   WHERE c.gateway_order_id = p.gateway_order_id AND c.provider = p.provider
     AND c.status = 'paid' AND c.outcome = 'amount_mismatch' AND c.amount IS NOT NULL
   ORDER BY c.id DESC LIMIT 1)`;

/** The amount the gateway reported for a payment flagged amount_mismatch (its latest such report). */
export async function reportedAmount(trx: Db, paymentId: string): Promise<number | null> {
  const row = (await trx('payments as p').where('p.id', paymentId).select(trx.raw(`${REPORTED_AMOUNT} AS amount`)).first()) as { amount: number | null } | undefined;
  return row?.amount ?? null;
}

/** Why a payment waits for staff (the attention list's reasons). */
export const ATTENTION_REASONS = ['amount_mismatch', 'late_claim', 'claimed'] as const;
export type AttentionReason = (typeof ATTENTION_REASONS)[number];

const ATTENTION_SQL: Record<AttentionReason, string> = {
  amount_mismatch: "(p.flag = 'amount_mismatch' AND p.status <> 'paid')",
  late_claim: "(p.status = 'awaiting_confirmation' AND p.flag = 'late_claim')",
  claimed: "(p.status = 'awaiting_confirmation' AND p.flag IS DISTINCT FROM 'late_claim')",
};
/** Matches index payments_attention. */
const NEEDS_ATTENTION = "(p.status = 'awaiting_confirmation' OR (p.flag = 'amount_mismatch' AND p.status <> 'paid'))";

/** A payment as staff see it: its target's status, the buyer, and what a gateway reported. */
export interface StaffPaymentRow extends PaymentRow {
  target_status: string;
  item_name: string;
  buyer_email: string;
  reported_amount: number | null;
}

export interface StaffPaymentFilter {
  /** Only payments waiting for staff (oldest first); otherwise every payment, newest first. */
  attention: boolean;
  reason?: AttentionReason;
  page: number;
  limit: number;
}

/** The console's payment queue's search (issue 46): the payment's, escrow's, order's or buyer's id exactly, or part of the gateway order id, the transfer's claim reference, the buyer's e-mail, username or name, or the item. */
const ATTENTION_SEARCHED = {
  ids: ['p.id', 'p.escrow_id', 'p.order_id', 'p.buyer_id'],
  text: ['p.gateway_order_id', 'p.claim_reference', 'u.email', 'u.username', 'u.full_name', 'e.item_name', 'o.target_label'],
} as const;

/** The payments waiting for staff as the console pages them: oldest first (keyset pages), narrowed as staff ask (`before`: created then or earlier; `reason`: why it waits). */
export async function attentionQueue(trx: Db, page: QueueCursor, by: StaffSearch, reason: AttentionReason | null = null): Promise<QueuePage<StaffPaymentRow>> {
  const q = staffRows(trx, trx('payments as p').whereRaw(reason ? ATTENTION_SQL[reason] : NEEDS_ATTENTION));
  return queuePage<StaffPaymentRow>(q, { sandbox: null, since: 'p.created_at', id: 'p.id' }, page, { by, columns: ATTENTION_SEARCHED });
}

/** The newest payments of one escrow, order or buyer as staff see them (the console's record pages). */
export async function staffPaymentsOf(trx: Db, of: { escrow_id: string } | { order_id: string } | { buyer_id: string }, limit: number): Promise<StaffPaymentRow[]> {
  const base = trx('payments as p');
  if ('escrow_id' in of) void base.where('p.escrow_id', of.escrow_id);
  else if ('order_id' in of) void base.where('p.order_id', of.order_id);
  else void base.where('p.buyer_id', of.buyer_id);
  return (await staffRows(trx, base)
    .orderBy([{ column: 'p.created_at', order: 'desc' }, { column: 'p.id', order: 'desc' }])
    .limit(limit)) as StaffPaymentRow[];
}

/** `base` (payments as p) with what staff see of each: its target's status and item, the buyer, what a gateway reported. */
function staffRows(trx: Db, base: Knex.QueryBuilder): Knex.QueryBuilder {
  return base
    .leftJoin('escrows as e', 'e.id', 'p.escrow_id')
    .leftJoin('service_orders as o', 'o.id', 'p.order_id')
    .join('users as u', 'u.id', 'p.buyer_id')
    .select(
      'p.*',
      trx.raw('coalesce(e.status, o.status) AS target_status'),
      trx.raw("coalesce(e.item_name, o.target_label, 'Jasa bayar') AS item_name"),
      'u.email as buyer_email',
      trx.raw(`${REPORTED_AMOUNT} AS reported_amount`),
    );
}

export async function listForStaff(trx: Db, f: StaffPaymentFilter): Promise<{ rows: StaffPaymentRow[]; total: number }> {
  const base = () => {
    const q = trx('payments as p');
    if (f.reason) void q.whereRaw(ATTENTION_SQL[f.reason]);
    else if (f.attention) void q.whereRaw(NEEDS_ATTENTION);
    return q;
  };
  const [count] = (await base().count<{ n: string }[]>({ n: '*' })) as { n: string }[];
  const order = f.attention || f.reason ? 'asc' : 'desc';
  const rows = (await staffRows(trx, base())
    .orderBy([
      { column: 'p.created_at', order },
      { column: 'p.id', order },
    ])
    .limit(f.limit)
    .offset((f.page - 1) * f.limit)) as StaffPaymentRow[];
  return { rows, total: Number(count?.n ?? 0) };
}
