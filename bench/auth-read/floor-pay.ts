/**
 * The floor of "pay + sandbox callback + reconcile, per payment" (issue 29 "Floors"): what
 * `POST /api/escrows/:id/pay` (keyed) and the sandbox gateway's signed callback on
 * `POST /api/webhooks/inbound` cost without our framework, the reconciliation included.
 * A floor module (floor-routes.ts); floor-server.ts authenticates the pay (credentials and
 * per-user limit, as for `/v1/auth/me`). Nothing of the service is imported: the SQL, the
 * sandbox gateway's answer, the surcharge, the serialiser, the posting, the event and the
 * notice payload are copied from shared/payments/{links,callbacks,reconcile,repo,serialize,
 * surcharge}.ts, shared/payments/gateways/sandbox.ts, shared/escrows/paid.ts,
 * shared/ledger/{post,accounts}.ts, shared/notifications/service.ts, shared/outbox.ts,
 * shared/idempotency.ts and api/middleware/idempotency.ts on purpose.
 *
 * Pay (keyed), the service's three steps kept (rule 7: the gateway is an outside system,
 * called with no transaction open, after the link's row is committed):
 * 1. one statement (autocommit): the key's stored answer (the service's peek), the escrow
 *    locked FOR UPDATE, the gateway chosen (cheapest surcharge, sort_order, provider), and the
 *    payment row inserted only when the key has no stored answer, the caller is the buyer,
 *    the locked escrow is pending_payment and before its deadline;
 * 2. the sandbox gateway's charge: its `sandbox_charges` row, on a pool of 2 connections of its
 *    own (as gateways/sandbox.ts keeps), autocommit;
 * 3. the key's transaction: BEGIN sent with `idempotency_open` (the advisory lock and the key's row,
 *    the service's own SQL function); one CTE recording the gateway's answer on the payment
 *    and the completed key row with the 201 answer, sent with COMMIT (`commitWith`, as the API
 *    holds both for its COMMIT since f6403f4). A failure after step 1 fails the
 *    link (`failUnanswered`'s compare-and-set), as the service's discard step does.
 *
 * Callback + reconciliation, batched (group commit): the callbacks that arrive while a
 * batch runs wait for the next one (up to 100, the service's reconciliation batch); one
 * batch runs at a time, in ONE transaction, and each callback answers 200 once its batch
 * committed (the service stores each callback in one statement and a worker reconciles
 * stored callbacks in batches; the floor takes the hot ledger accounts' locks and pays
 * the commit once per batch, as the worker does). Since this stop the batch is set-based,
 * as the worker's is (before, 3 statements per callback: store, lock, settle): the
 * batch's deliveries stored in one upsert (the service's, on dedupe_key; the batch's BEGIN
 * travels with it; no two with one dedupe key in a batch); their payments locked in id
 * order, then their escrows in id order (the worker's order); for the paid reports on
 * pending sandbox payments of pending_payment escrows with the right amount, one
 * statement over arrays: the payments and the escrows moved by compare-and-set, the
 * ledger accounts ensured, the `escrow_payment` entries (posting key
 * `escrow-paid:<escrow>`) and their lines (the existing accounts locked FOR UPDATE in id
 * order first, as post.ts does; the database's trigger moves the balances, as for the
 * service), the `payment.completed` events, the callbacks marked processed (`paid`); then
 * the batch's notices in one `notifications.create-batch` outbox row sent with its COMMIT
 * (as the worker writes one row per batch), and the 200s. A failure
 * fails the whole batch (each of its callbacks answers 500; the gateway sends again). The signed sandbox status needs
 * no confirmation with the gateway, so nothing forces the split for this gateway; the answer
 * comes after the reconciliation committed, a stronger promise than the service's.
 *
 * Not reproduced (the bench never sends them; none is lost): any report other than a paid one
 * matching a pending sandbox link of a pending_payment escrow (unknown order, amount mismatch,
 * expired/failed, already settled by another link, money credited to the buyer) is stored
 * unprocessed and due, so the service's worker, which runs beside the floor in the bench,
 * reconciles it; a duplicate of a paid report is marked `duplicate_paid`. Gateways other than
 * sandbox (pay answers 501, callbacks without the sandbox signature 400), manual transfers,
 * payment-service orders, joi's error details, the session CSRF check, the second Postgres
 * read of the buyer (the floor server holds the caller's row already).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import pg from 'pg';
import { beginWith, canonicalJson, commitWith, fail, type FloorCaller, IDEMPOTENCY_TTL_MS, parseJson, rawBody, replayStored, sha256Hex, UUID, UUID_V4 } from './floor-common.js';
import type { FloorModule, FloorStores } from './floor-routes.js';

const MINUTE = 60_000;
/** shared/payments/links.ts LINK_LIFETIME_MS, FIRST_POLL_AFTER_MS, OPENING_GRACE_MS. */
const LIFETIME_MS: Record<string, number> = { qris: 15 * MINUTE, gopay: 15 * MINUTE, shopeepay: 15 * MINUTE, crypto: 60 * MINUTE, bank_transfer: 24 * 60 * MINUTE };
const FIRST_POLL_AFTER_MS = 2 * MINUTE;
const OPENING_GRACE_MS = 30_000;
/** shared/payments/callbacks.ts KEPT_HEADERS. */
const KEPT_HEADERS = ['content-type', 'user-agent', 'x-callback-event'];

interface PaymentRecord {
  id: string;
  escrow_id: string;
  gateway_order_id: string;
  method: string;
  provider: string;
  is_manual: boolean;
  amount: number;
  escrow_amount: number;
  surcharge: number;
  created_at: Date;
}

/** Step 1: the key's stored answer, the escrow locked, the gateway, and the link's row (see the header). */
const RESERVE = {
  name: 'floor_pay_reserve',
  text: `WITH k AS (SELECT request_hash, response_status, response_body FROM idempotency_keys
                    WHERE scope = $1 AND endpoint = $2 AND key = $3::uuid AND state = 'completed' AND expires_at > $8::timestamptz),
          e AS (SELECT id, buyer_id, status, expires_at, amount FROM escrows WHERE id = $4::uuid AND NOT EXISTS (SELECT 1 FROM k) FOR UPDATE),
          g AS (SELECT gw.provider, gw.is_manual, (ceil(e.amount * gw.fee_percent / 100) + gw.fee_fixed)::bigint AS surcharge
                  FROM payment_gateways gw, e
                 WHERE gw.enabled AND NOT gw.in_maintenance AND $6::text = ANY(gw.supported_methods)
                   AND ($7::text IS NULL OR gw.provider = $7::text) AND (gw.is_manual OR gw.provider = 'sandbox')
                 ORDER BY 3, gw.sort_order, gw.provider LIMIT 1),
          p AS (INSERT INTO payments (amount, buyer_id, created_at, escrow_amount, escrow_id, expires_at, gateway_order_id, is_manual, method, next_poll_at, order_id, provider, surcharge, updated_at)
                SELECT e.amount + g.surcharge, $5::uuid, $8::timestamptz, e.amount, e.id, $10::timestamptz, $9, false, $6, $11::timestamptz, NULL, g.provider, g.surcharge, $8::timestamptz
                  FROM e, g
                 WHERE e.buyer_id = $5::uuid AND e.status = 'pending_payment' AND e.expires_at > $8::timestamptz AND g.provider = 'sandbox' AND NOT g.is_manual
                RETURNING id, escrow_id, gateway_order_id, method, provider, is_manual, amount, escrow_amount, surcharge, created_at)
     SELECT k.request_hash, k.response_status, k.response_body, e.id AS escrow_id, e.buyer_id, e.status, e.expires_at,
            g.provider, g.is_manual, row_to_json(p) AS payment
       FROM (SELECT 1) one LEFT JOIN k ON true LEFT JOIN e ON true LEFT JOIN g ON true LEFT JOIN p ON true`,
};
/** Step 2: gateways/sandbox.ts createCharge's row. */
const CHARGE = {
  name: 'floor_pay_sandbox_charge',
  text: 'INSERT INTO sandbox_charges (amount, created_at, gateway_order_id, method, updated_at) VALUES ($1, $2, $3, $4, $2)',
};
/** Step 3: the key (idempotency_open: the advisory lock, then the key's row). */
const OPEN_KEY = { name: 'floor_pay_open_key', text: 'SELECT * FROM idempotency_open($1, $2, $3)' };
const FORGET_KEY = { name: 'floor_pay_forget_key', text: 'DELETE FROM idempotency_keys WHERE scope = $1 AND endpoint = $2 AND key = $3' };
/** Step 3: the gateway's answer on the link (recordChargeAtCommit) and the completed key with the answer (recordAnswer). */
const RECORD = {
  name: 'floor_pay_record',
  text: `WITH u AS (UPDATE payments SET qr_string = $1, qr_url = NULL, va_number = $2, va_bank = $3, redirect_url = NULL, deep_link_url = NULL,
                           raw_response = $4, expires_at = $5::timestamptz, updated_at = $6::timestamptz
                    WHERE id = $7::uuid RETURNING id),
     k AS (INSERT INTO idempotency_keys (scope, endpoint, key, request_hash, state, response_status, response_body, locked_at, created_at, expires_at)
     SELECT $8, $9, $10::uuid, $11, 'completed', 201, $12, $6::timestamptz, $6::timestamptz, $13::timestamptz FROM u RETURNING key)
     SELECT 1 / count(*) FROM k`,
};
/** links.ts abandonLink -> repo.failUnanswered. */
const FAIL_UNANSWERED = {
  name: 'floor_pay_fail_unanswered',
  text: `UPDATE payments SET status = 'failed', updated_at = $2 WHERE id = $1 AND status = 'pending' AND is_manual = false AND raw_response = '{}'`,
};

/** repo.upsertCallback's statement, for the batch's deliveries at once (their dedupe keys distinct: see takeBatch). */
const STORE_CALLBACKS = {
  text: `INSERT INTO payment_callbacks (provider, source, gateway_order_id, status, amount, dedupe_key, raw_body, headers, received_at, next_attempt_at)
     SELECT 'sandbox', 'callback', x.o, x.s, x.a, x.d, x.r, x.h::jsonb, x.t, x.t
       FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::timestamptz[]) WITH ORDINALITY AS x(o, s, a, d, r, h, t, n)
      ORDER BY x.n
     ON CONFLICT (dedupe_key) DO UPDATE SET deliveries = payment_callbacks.deliveries + 1,
       processed_at = CASE WHEN payment_callbacks.outcome = 'unknown_order' THEN NULL ELSE payment_callbacks.processed_at END,
       next_attempt_at = CASE WHEN payment_callbacks.processed_at IS NULL OR payment_callbacks.outcome = 'unknown_order'
                              THEN LEAST(payment_callbacks.next_attempt_at, EXCLUDED.next_attempt_at)
                              ELSE payment_callbacks.next_attempt_at END
     RETURNING id, dedupe_key, processed_at, (xmax = 0) AS inserted`,
};
/** The batch's payments locked in id order, then (next statement) their escrows in id order: the worker's lock order. */
const LOCK_PAYMENTS = {
  name: 'floor_callback_lock_payments',
  text: `SELECT id, gateway_order_id, escrow_id, provider, is_manual, status, amount, surcharge FROM payments WHERE gateway_order_id = ANY($1::text[]) ORDER BY id FOR UPDATE`,
};
const LOCK_ESCROWS = {
  name: 'floor_callback_lock_escrows',
  text: `SELECT id, status, amount, buyer_id, seller_id FROM escrows WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
};
/** A report that settles nothing new (a duplicate of a paid one): processed with its outcome. */
const MARK_PROCESSED = {
  name: 'floor_callback_processed',
  text: 'UPDATE payment_callbacks SET processed_at = $1, outcome = $2, next_attempt_at = NULL WHERE id = $3',
};
/**
 * The settlement (reconcile.ts Settlements.settle + apply, paid.ts markPaidMany,
 * ledger postMany, callbacks markCallbacksProcessed) of the batch's payments, whose rows
 * and escrows this transaction holds locked, in one statement over arrays (the worker's
 * batch, set-based): payments and escrows moved by compare-and-set, the accounts ensured
 * and the existing ones locked FOR UPDATE in id order (`acc`, read by the lines' INSERT)
 * before the lines' foreign-key checks and the balance trigger run, as post.ts locks them
 * before it inserts the lines; one `escrow_payment` entry per escrow (posting key
 * `escrow-paid:<escrow>`) with its lines, its `payment.completed` event, the callbacks
 * processed `paid`.
 */
const SETTLE = {
  name: 'floor_callback_settle_batch',
  text: `WITH pu AS (UPDATE payments SET status = 'paid', paid_at = $1, flag = NULL, next_poll_at = NULL, updated_at = $1
                     WHERE id = ANY($2::uuid[]) AND status = 'pending' RETURNING id),
          eu AS (UPDATE escrows SET status = 'paid', paid_at = $1, updated_at = $1
                  WHERE id = ANY($3::uuid[]) AND status = 'pending_payment' RETURNING id),
          na AS (INSERT INTO ledger_accounts (allow_negative, code, created_at, kind, user_id)
                 SELECT a.neg, a.code, $1, a.kind, NULL FROM unnest($4::text[], $5::text[], $6::bool[]) AS a(code, kind, neg)
                 ORDER BY a.code ON CONFLICT (code) DO NOTHING RETURNING id, code),
          acc AS (SELECT id, code FROM na
                  UNION ALL SELECT id, code FROM (SELECT id, code FROM ledger_accounts WHERE code = ANY($4::text[]) ORDER BY id FOR UPDATE) locked),
          je AS (INSERT INTO journal_entries (kind, ref_type, ref_id, posting_key, memo, created_at)
                 SELECT 'escrow_payment', 'escrow', e.id::text, 'escrow-paid:' || e.id::text, NULL, $1
                   FROM unnest($3::uuid[]) WITH ORDINALITY AS e(id, n) WHERE e.id IN (SELECT id FROM eu) ORDER BY e.n RETURNING id, ref_id),
          jl AS (INSERT INTO journal_lines (entry_id, account_id, amount)
                 SELECT je.id, acc.id, l.amount FROM unnest($7::text[], $8::text[], $9::bigint[]) WITH ORDINALITY AS l(escrow, code, amount, n)
                   JOIN je ON je.ref_id = l.escrow JOIN acc ON acc.code = l.code ORDER BY l.n RETURNING id),
          ev AS (INSERT INTO escrow_events (actor_id, actor_role, created_at, data, escrow_id, event)
                 SELECT NULL, 'system', $1, d.data::jsonb, d.escrow, 'payment.completed'
                   FROM unnest($3::uuid[], $10::text[]) WITH ORDINALITY AS d(escrow, data, n) WHERE d.escrow IN (SELECT id FROM eu) ORDER BY d.n RETURNING id),
          cb AS (UPDATE payment_callbacks SET processed_at = $1, outcome = 'paid', next_attempt_at = NULL WHERE id = ANY($11::bigint[]) RETURNING id)
     SELECT (SELECT count(*) FROM pu)::int AS payments, (SELECT count(*) FROM eu)::int AS escrows, (SELECT count(*) FROM jl)::int AS lines,
            (SELECT count(*) FROM ev)::int AS events, (SELECT count(*) FROM cb)::int AS callbacks`,
};
/**
 * The batch's notices (buyer's payment_success, seller's escrow_paid per settled payment, in
 * settlement order) in ONE `notifications.create-batch` outbox row, sent with the batch's
 * COMMIT: the worker collects a batch's notices into one row the same way (collectNotices).
 */
const NOTICES = {
  name: 'floor_callback_notices',
  text: `INSERT INTO outbox (available_at, created_at, job, payload, queue) VALUES ($1, $1, 'notifications.create-batch', $2::jsonb, 'notifications')`,
};


/** links.ts newGatewayOrderId (the clock in base 36, 9 random bytes). */
const newGatewayOrderId = (nowMs: number) => `ESC-${nowMs.toString(36).toUpperCase()}-${randomBytes(9).toString('base64url').replace(/[^A-Za-z0-9]/g, 'X')}`;

/** gateways/sandbox.ts createCharge's answer. */
function sandboxAnswer(orderId: string, method: string, amount: number) {
  return {
    qrString: method === 'qris' ? `00020101021226SANDBOX${orderId}5204000053033605802ID5405${amount}6304` : null,
    vaNumber: method === 'bank_transfer' ? `8808${orderId.replace(/[^0-9]/g, '').padEnd(12, '0').slice(0, 12)}` : null,
    vaBank: method === 'bank_transfer' ? 'SANDBOX' : null,
    raw: JSON.stringify({ sandbox: true, gateway_order_id: orderId }),
  };
}

const METHODS = new Set(['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto']);

/** The most deliveries one batch settles (reconcile.ts's batch, 100). */
const BATCH_MAX = 100;

/** callbacks.ts's dedupe key of a sandbox delivery. */
const dedupeKey = (r: Report): string => `sandbox:${r.orderId}:${r.status}:${r.amount ?? ''}`;

/** One in-app notice of a `notifications.create-batch` row. */
interface Notice {
  user_id: string;
  type: string;
  escrow_id: string;
  dispute_id: null;
  outcome: null;
}

/** A sandbox delivery, checked, waiting for its batch. */
interface Report {
  orderId: string;
  status: 'paid' | 'expired' | 'failed';
  amount: number | null;
  raw: string;
  headers: Record<string, unknown>;
  receivedAt: Date;
}

export const payFloor: FloorModule = (stores: FloorStores) => {
  const { pool } = stores;
  const secret = process.env.SANDBOX_GATEWAY_SECRET || 'sandbox-gateway-local-secret';
  const sandboxMode = process.env.SANDBOX_MODE === undefined ? process.env.NODE_ENV !== 'production' : ['1', 'true', 'yes', 'on'].includes(process.env.SANDBOX_MODE.toLowerCase());
  const httpTimeoutMs = Number(process.env.GATEWAY_HTTP_TIMEOUT_MS ?? '8000');
  // The sandbox gateway stands for an outside system with connections of its own (gateways/sandbox.ts: 2).
  const gatewayPool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2, application_name: 'bench-floor-sandbox' });

  async function pay(ctx: Koa.Context, caller: FloorCaller | null, params: readonly string[]): Promise<void> {
    const escrowId = params[0]!;
    const rawKey = ctx.get('Idempotency-Key');
    if (!rawKey) return fail(ctx, 501, 'NOT_REPRODUCED', 'The floor reproduces the keyed pay only');
    if (!UUID_V4.test(rawKey)) return fail(ctx, 400, 'IDEMPOTENCY_KEY_INVALID', 'Idempotency-Key must be a UUID v4');
    const body = parseJson(await rawBody(ctx));
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail(ctx, 400, 'INVALID_BODY', 'Request body is invalid');
    const { method, provider } = body as { method?: unknown; provider?: unknown };
    if ((method !== undefined && typeof method !== 'string') || (provider !== undefined && typeof provider !== 'string')) return fail(ctx, 400, 'INVALID_BODY', 'Request body is invalid');
    if (!method) return fail(ctx, 400, 'MISSING_METHOD', 'A payment method is required');
    if (!METHODS.has(method)) return fail(ctx, 400, 'UNSUPPORTED_METHOD', 'Unsupported payment method');
    if (!sandboxMode) return fail(ctx, 501, 'NOT_REPRODUCED', 'The floor pays through the sandbox gateway only');
    const user = caller!;
    const key = { scope: `user:${user.id}`, endpoint: `POST ${ctx.path}`, key: rawKey.toLowerCase() };
    const hash = sha256Hex(canonicalJson(body));
    const now = new Date();
    const orderId = newGatewayOrderId(now.getTime());
    const reserved = (
      await pool.query<{
        request_hash: string | null;
        response_status: number | null;
        response_body: string | null;
        escrow_id: string | null;
        buyer_id: string | null;
        status: string | null;
        expires_at: Date | null;
        provider: string | null;
        is_manual: boolean | null;
        payment: (Omit<PaymentRecord, 'created_at'> & { created_at: string }) | null;
      }>({
        ...RESERVE,
        values: [
          key.scope,
          key.endpoint,
          key.key,
          UUID.test(escrowId) ? escrowId : '00000000-0000-0000-0000-000000000000',
          user.id,
          method,
          provider ?? null,
          now,
          orderId,
          new Date(now.getTime() + httpTimeoutMs + OPENING_GRACE_MS),
          new Date(now.getTime() + FIRST_POLL_AFTER_MS),
        ],
      })
    ).rows[0]!;
    if (reserved.request_hash !== null) {
      if (reserved.request_hash !== hash) return fail(ctx, 422, 'IDEMPOTENCY_KEY_CONFLICT', 'This Idempotency-Key was used with a different request body');
      return replayStored(ctx, reserved.response_status, reserved.response_body);
    }
    if (!reserved.escrow_id) return fail(ctx, 404, 'ESCROW_NOT_FOUND', 'Escrow not found');
    if (reserved.buyer_id !== user.id) return fail(ctx, 403, 'NOT_BUYER', 'Only the buyer can pay this escrow');
    if (reserved.status !== 'pending_payment') return fail(ctx, 409, 'INVALID_STATE', `The escrow is ${reserved.status}; only a pending_payment escrow can be paid`);
    if (reserved.expires_at!.getTime() <= now.getTime()) return fail(ctx, 409, 'INVALID_STATE', 'The escrow is past its payment deadline');
    if (!reserved.provider) return fail(ctx, 400, 'UNSUPPORTED_METHOD', 'No gateway offers this method');
    if (!reserved.payment) return fail(ctx, 501, 'NOT_REPRODUCED', `The floor pays through the sandbox gateway only (chose ${reserved.provider})`);
    const p = { ...reserved.payment, created_at: now };

    let recorded = false;
    try {
      // Step 2: the gateway, nothing held.
      await gatewayPool.query({ ...CHARGE, values: [p.amount, new Date(), orderId, method] });
      const charge = sandboxAnswer(orderId, method, p.amount);
      const expiresAt = new Date(now.getTime() + LIFETIME_MS[method]!);
      const at = new Date();
      const answer = JSON.stringify({
        success: true,
        data: {
          payment_link_id: p.id,
          gateway_order_id: p.gateway_order_id,
          method: p.method,
          provider: p.provider,
          payment_url: null,
          qr_code_url: null,
          va_number: charge.vaNumber,
          va_bank: charge.vaBank,
          deep_link_url: null,
          expires_at: expiresAt.toISOString(),
          amount: p.amount,
          escrow_amount: p.escrow_amount,
          surcharge: p.surcharge,
          qr_string: charge.qrString,
          is_manual: p.is_manual,
          order_id: null,
        },
      });
      // Step 3: the key's transaction.
      const client = await pool.connect();
      let open = false;
      try {
        open = true;
        // BEGIN travels with the key's statement (pipelined, values bound), as the API sends it.
        const k = (
          await beginWith<{ locked: boolean; request_hash: string | null; state: string | null; response_status: number | null; response_body: string | null; expires_at: Date | null }>(client, {
            ...OPEN_KEY,
            values: [key.scope, key.endpoint, key.key],
          })
        )[0]!;
        if (!k.locked) {
          await client.query('ROLLBACK');
          open = false;
          return fail(ctx, 409, 'IDEMPOTENCY_KEY_IN_FLIGHT', 'A request with this Idempotency-Key is still running; retry the same key shortly');
        }
        if (k.state !== null) {
          if (k.state === 'completed' && k.expires_at!.getTime() > Date.now()) {
            await client.query('COMMIT');
            open = false;
            if (k.request_hash !== hash) return fail(ctx, 422, 'IDEMPOTENCY_KEY_CONFLICT', 'This Idempotency-Key was used with a different request body');
            return replayStored(ctx, k.response_status, k.response_body);
          }
          await client.query({ ...FORGET_KEY, values: [key.scope, key.endpoint, key.key] });
        }
        // Sent with COMMIT, as the API holds its update and stored answer for it; a vanished
        // payment row divides by zero and fails the COMMIT (the API's recordChargeAtCommit).
        await commitWith(client, {
          ...RECORD,
          values: [charge.qrString, charge.vaNumber, charge.vaBank, charge.raw, expiresAt, at, p.id, key.scope, key.endpoint, key.key, hash, answer, new Date(at.getTime() + IDEMPOTENCY_TTL_MS)],
        });
        open = false;
        recorded = true;
      } finally {
        if (open) await client.query('ROLLBACK').catch(() => undefined);
        client.release();
      }
      ctx.status = 201;
      ctx.type = 'application/json';
      ctx.body = answer;
    } finally {
      if (!recorded) await pool.query({ ...FAIL_UNANSWERED, values: [p.id, new Date()] });
    }
  }

  async function callback(ctx: Koa.Context): Promise<void> {
    const raw = await rawBody(ctx);
    const json = parseJson(raw);
    if (raw === undefined || json === undefined) return fail(ctx, 400, 'CALLBACK_NOT_JSON', 'The callback body must be JSON');
    const given = String(ctx.get('X-Sandbox-Signature')).toLowerCase();
    if (!given) return fail(ctx, 501, 'NOT_REPRODUCED', 'The floor takes sandbox callbacks only');
    const expected = createHmac('sha256', secret).update(raw, 'utf8').digest('hex');
    if (!/^[0-9a-f]{64}$/.test(given) || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) return fail(ctx, 403, 'INVALID_SIGNATURE', 'The callback signature does not verify');
    const b = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
    const status = b.status;
    if (b.provider !== 'sandbox' || typeof b.gateway_order_id !== 'string' || (status !== 'paid' && status !== 'expired' && status !== 'failed')) {
      return fail(ctx, 400, 'INVALID_CALLBACK', 'The callback payload is not one this gateway sends');
    }
    if (b.amount !== undefined && b.amount !== null && !(Number.isSafeInteger(b.amount) && (b.amount as number) >= 0)) {
      return fail(ctx, 400, 'INVALID_CALLBACK', 'The callback payload is not one this gateway sends');
    }
    const report: Report = {
      orderId: b.gateway_order_id,
      status,
      amount: typeof b.amount === 'number' ? b.amount : null,
      raw,
      headers: Object.fromEntries(KEPT_HEADERS.filter((h) => ctx.headers[h] !== undefined).map((h) => [h, ctx.headers[h]])),
      receivedAt: new Date(),
    };
    const inserted = await inBatch(report);
    ctx.status = 200;
    ctx.body = { success: true, data: { received: true, provider: 'sandbox', duplicate: !inserted } };
  }

  // ---- Group commit: the callbacks that arrive while a batch runs settle together in the next one ----

  let waiting: { report: Report; resolve(inserted: boolean): void; reject(err: unknown): void }[] = [];
  let running = false;

  /** Settles `report` in the next batch; answers whether its delivery was new, once the batch committed. */
  function inBatch(report: Report): Promise<boolean> {
    return new Promise((resolve, reject) => {
      waiting.push({ report, resolve, reject });
      if (!running) void runBatches();
    });
  }

  async function runBatches(): Promise<void> {
    running = true;
    try {
      while (waiting.length > 0) {
        const batch = takeBatch();
        try {
          const inserted = await settleBatch(batch.map((w) => w.report));
          batch.forEach((w, i) => w.resolve(inserted[i]!));
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      running = false;
    }
  }

  /**
   * Up to BATCH_MAX waiting deliveries, in arrival order, no two with the same dedupe key
   * (one upsert cannot touch a row twice): a repeat waits for the next batch, as it would
   * arrive after the first in the service.
   */
  function takeBatch(): typeof waiting {
    const batch: typeof waiting = [];
    const rest: typeof waiting = [];
    const keys = new Set<string>();
    for (const w of waiting) {
      const key = dedupeKey(w.report);
      if (batch.length < BATCH_MAX && !keys.has(key)) {
        batch.push(w);
        keys.add(key);
      } else rest.push(w);
    }
    waiting = rest;
    return batch;
  }

  /**
   * One transaction for the batch, set-based as the worker's: the deliveries stored in one
   * statement (BEGIN with it), the payments then the escrows locked, the eligible ones
   * settled in one statement, the notices in one outbox row with the COMMIT.
   */
  async function settleBatch(reports: readonly Report[]): Promise<boolean[]> {
    const client = await pool.connect();
    let open = false;
    try {
      open = true;
      const stored = await beginWith<{ id: string; dedupe_key: string; processed_at: Date | null; inserted: boolean }>(client, {
        ...STORE_CALLBACKS,
        values: [
          reports.map((r) => r.orderId),
          reports.map((r) => r.status),
          reports.map((r) => r.amount),
          reports.map(dedupeKey),
          reports.map((r) => r.raw),
          reports.map((r) => JSON.stringify(r.headers)),
          reports.map((r) => r.receivedAt),
        ],
      });
      const byKey = new Map(stored.map((row) => [row.dedupe_key, row]));
      const rows = reports.map((r) => byKey.get(dedupeKey(r))!);
      const due = reports.map((r, i) => ({ r, id: rows[i]!.id })).filter((_, i) => rows[i]!.processed_at === null);
      const notices = due.length > 0 ? await reconcile(client, due) : [];
      if (notices.length > 0) await commitWith(client, { ...NOTICES, values: [new Date(), JSON.stringify({ notices })] });
      else await client.query('COMMIT');
      open = false;
      return rows.map((row) => row.inserted);
    } finally {
      if (open) await client.query('ROLLBACK').catch(() => undefined);
      client.release();
    }
  }

  /** The stored, unprocessed deliveries reconciled in the batch's transaction (reconcile.ts for paid sandbox reports); their notices. */
  async function reconcile(client: pg.PoolClient, due: readonly { r: Report; id: string }[]): Promise<Notice[]> {
    type Pay = { id: string; gateway_order_id: string; escrow_id: string | null; provider: string; is_manual: boolean; status: string; amount: number; surcharge: number };
    type Esc = { id: string; status: string; amount: number; buyer_id: string; seller_id: string };
    const pays = (await client.query<Pay>({ ...LOCK_PAYMENTS, values: [due.map((d) => d.r.orderId)] })).rows;
    const byOrder = new Map(pays.map((p) => [p.gateway_order_id, p]));
    const escrowIds = [...new Set(pays.filter((p) => p.escrow_id !== null && p.status === 'pending' && !p.is_manual && p.provider === 'sandbox').map((p) => p.escrow_id!))];
    const escrows = escrowIds.length > 0 ? (await client.query<Esc>({ ...LOCK_ESCROWS, values: [escrowIds] })).rows : [];
    const escrowOf = new Map(escrows.map((e) => [e.id, e]));
    const now = new Date();
    const settled: { cb: string; p: Pay; e: Esc }[] = [];
    const taken = new Set<string>();
    for (const { r, id } of due) {
      const p = byOrder.get(r.orderId);
      if (!p || r.status !== 'paid' || p.is_manual || p.provider !== 'sandbox') continue;
      if (p.status === 'paid') {
        await client.query({ ...MARK_PROCESSED, values: [now, 'duplicate_paid', id] });
        continue;
      }
      const e = p.escrow_id !== null ? escrowOf.get(p.escrow_id) : undefined;
      // A second report or link for what this batch settles stays for the service's worker (see the header).
      if (p.status !== 'pending' || !e || e.status !== 'pending_payment' || (r.amount !== null && r.amount !== p.amount) || taken.has(p.id) || taken.has(e.id)) continue;
      taken.add(p.id);
      taken.add(e.id);
      settled.push({ cb: id, p, e });
    }
    if (settled.length === 0) return [];
    const accounts = new Map<string, [string, boolean]>([['gateway:clearing', ['gateway_clearing', true]]]);
    const lines: [string, string, number][] = [];
    for (const { p, e } of settled) {
      accounts.set(`escrow:${e.id}`, ['escrow', false]);
      if (p.surcharge > 0) accounts.set('platform:gateway_fees', ['platform_fee', false]);
      lines.push([e.id, 'gateway:clearing', -(e.amount + p.surcharge)], [e.id, `escrow:${e.id}`, e.amount]);
      if (p.surcharge > 0) lines.push([e.id, 'platform:gateway_fees', p.surcharge]);
    }
    const codes = [...accounts.keys()];
    const done = (
      await client.query<{ payments: number; escrows: number; lines: number; events: number; callbacks: number }>({
        ...SETTLE,
        values: [
          now,
          settled.map((s) => s.p.id),
          settled.map((s) => s.e.id),
          codes,
          codes.map((c) => accounts.get(c)![0]),
          codes.map((c) => accounts.get(c)![1]),
          lines.map((l) => l[0]),
          lines.map((l) => l[1]),
          lines.map((l) => l[2]),
          settled.map((s) => JSON.stringify({ reference: s.p.id, provider: 'sandbox', amount: s.e.amount, surcharge: s.p.surcharge })),
          settled.map((s) => s.cb),
        ],
      })
    ).rows[0]!;
    const n = settled.length;
    if (done.payments !== n || done.escrows !== n || done.lines !== lines.length || done.events !== n || done.callbacks !== n) {
      throw new Error(`floor: a batch settling ${n} payments wrote ${JSON.stringify(done)}`);
    }
    const notice = (userId: string, type: string, escrowId: string): Notice => ({ user_id: userId, type, escrow_id: escrowId, dispute_id: null, outcome: null });
    return settled.flatMap((s) => [notice(s.e.buyer_id, 'payment_success', s.e.id), notice(s.e.seller_id, 'escrow_paid', s.e.id)]);
  }

  return [
    { method: 'POST', path: /^\/api\/escrows\/([^/]+)\/pay$/, auth: true, handle: pay },
    { method: 'POST', path: /^\/api\/webhooks\/(?:inbound|ipn|payment|universal)$/, auth: false, handle: (ctx) => callback(ctx) },
  ];
};
