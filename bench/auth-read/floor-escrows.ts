/**
 * The escrow routes of the floor server (issue 29 "Floors"): what `GET /api/escrows/:id`,
 * `GET /api/escrows` and `POST /api/escrows` cost without our framework. floor-server.ts
 * authenticates the caller and checks the per-user limit exactly as for `/v1/auth/me`,
 * then calls these handlers, which do the route's durable work by hand with node-postgres
 * named (server-side prepared) statements. Nothing of the service is imported: the SQL,
 * the serialiser, the notice payload and the idempotency hashing below are copied from
 * shared/escrows/{repo,serialize,create}.ts, shared/notifications/service.ts,
 * shared/outbox.ts, shared/idempotency.ts and api/middleware/idempotency.ts on purpose,
 * so the floor writes the same rows and answers the same JSON.
 *
 * - GET /api/escrows/:id: one named statement `SELECT * FROM escrows WHERE id = $1` on the
 *   pool (as repo.findById outside a transaction), the party check (403 FORBIDDEN for a
 *   stranger, staff allowed), the escrow serialised.
 * - GET /api/escrows?page&limit&role&status: the list's one statement (page and total
 *   together, repo.listForUser's SQL) on the pool, the page serialised.
 * - POST /api/escrows (direct creation): with an Idempotency-Key, one transaction on one
 *   pooled connection, two round trips, as the API's: BEGIN sent with the key opened as the
 *   API opens it (`idempotency_open`: the advisory lock, the stored row) and the
 *   counterparty by username (pipelined, values bound); then the escrow, its
 *   `escrow.created` event, the two outbox rows (`notifications.create`, `escrows.expire`
 *   due at expires_at) and the completed key row with the answer, in one CTE sent with the
 *   COMMIT (`commitWith`: the named statement pipelined with COMMIT, as the
 *   API sends a held write; synchronous_commit as configured, i.e. on). Ids and timestamps
 *   are made here, so the answer is known before the write. Without a key: 501 (the bench
 *   always sends one).
 *
 * Not reproduced (the bench never asks): joi's error details (a bad body is a bare
 * 400 INVALID_BODY), the session CSRF check on POST, tracking in the serialiser (no bench
 * escrow has a courier; such an escrow answers 500 here).
 */
import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type pg from 'pg';
import { beginWith, canonicalJson, commitWith, type EscrowRecord, fail, type FloorCaller, IDEMPOTENCY_TTL_MS, parseJson, rawBody, replayStored, serializeEscrow, sha256Hex, UUID, UUID_V4 } from './floor-common.js';

// ---- The reads ---------------------------------------------------------------------------

const BY_ID = { name: 'floor_escrow_by_id', text: 'SELECT * FROM escrows WHERE id = $1' };

/** repo.listForUser's statement (copied on purpose): each side walks its (party, created_at) index; page and total in one. */
type Side = 'buyer_id' | 'seller_id';
function listSql(sides: readonly Side[]): string {
  const where = (c: Side) => `${c} = $1 AND ($2::text IS NULL OR status = $2::text)`;
  const page = (c: Side) => `(SELECT * FROM escrows WHERE ${where(c)} ORDER BY created_at DESC, id DESC LIMIT $3)`;
  const count = (c: Side) => `(SELECT count(*) FROM escrows WHERE ${where(c)})`;
  return `WITH page AS (SELECT * FROM (${sides.map(page).join(' UNION ALL ')}) mine ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5)
    SELECT page.*, t.total FROM (SELECT ${sides.map(count).join(' + ')} AS total) t LEFT JOIN page ON true
    ORDER BY page.created_at DESC, page.id DESC`;
}
const LIST = {
  both: { name: 'floor_escrows_list_both', text: listSql(['buyer_id', 'seller_id']) },
  buyer: { name: 'floor_escrows_list_buyer', text: listSql(['buyer_id']) },
  seller: { name: 'floor_escrows_list_seller', text: listSql(['seller_id']) },
};
const STATUSES = new Set(['pending_payment', 'paid', 'sent', 'received', 'released', 'disputed', 'refunded', 'cancelled']);

/** A whole number in [min, max] from the query, its default when absent; undefined when malformed. */
function intParam(raw: unknown, fallback: number, min: number, max: number): number | undefined {
  if (raw === undefined) return fallback;
  const n = typeof raw === 'string' && /^[0-9]{1,6}$/.test(raw) ? Number(raw) : NaN;
  return n >= min && n <= max ? n : undefined;
}

// ---- The creation ------------------------------------------------------------------------

const ENDPOINT = 'POST /api/escrows';
const HOUR_MS = 3600_000;
/** shared/escrows/states.ts PAYMENT_WINDOW_HOURS. */
const PAYMENT_WINDOW_MS = 24 * HOUR_MS;
const CATEGORIES = new Set(['goods', 'service', 'digital']);

/**
 * A keyed creation's first statement (sent with BEGIN): the key opened as the API opens it
 * (the migration's `idempotency_open`: the advisory lock, then the stored row read after
 * it), and the counterparty (repo.userByUsername).
 */
const OPEN_AND_PARTY = {
  text: `SELECT o.locked, o.request_hash, o.state, o.response_status, o.response_body, o.expires_at, u.id, u.status, u.role
           FROM idempotency_open($1::text, $2::text, $3::uuid) o LEFT JOIN users u ON u.username = $4::text`,
};

/**
 * A keyed creation's last statement, sent with the COMMIT (as the API sends its creation
 * with its stored answer): the escrow, its event, the notice and the expiry timer in
 * VALUES order, and the completed key row. The key was found without a stored row (or
 * its expired row deleted) under its lock.
 */
const CREATE_KEYED = {
  name: 'floor_create_keyed',
  text: `WITH e AS (INSERT INTO escrows (id, buyer_id, seller_id, created_by, source, item_name, description, amount, category, expires_at, created_at, updated_at)
                VALUES ($4::uuid, $5::uuid, $6::uuid, $7::uuid, 'direct', $8::text, $9::text, $10::bigint, $11::text, $12::timestamptz, $13::timestamptz, $13::timestamptz)
                RETURNING id, created_at),
          ev AS (INSERT INTO escrow_events (escrow_id, event, actor_id, actor_role, data, created_at)
                 SELECT e.id, 'escrow.created', $7::uuid, $14::text, '{"source":"direct"}'::jsonb, e.created_at FROM e),
          ob AS (INSERT INTO outbox (queue, job, payload, available_at, created_at)
                 SELECT v.queue, v.job, v.payload, v.available_at, $13::timestamptz
                   FROM e, (VALUES (1, 'notifications', 'notifications.create', $15::jsonb, $13::timestamptz),
                                   (2, 'timers', 'escrows.expire', $16::jsonb, $12::timestamptz)) v(n, queue, job, payload, available_at)
                  ORDER BY v.n)
     INSERT INTO idempotency_keys (scope, endpoint, key, request_hash, state, response_status, response_body, locked_at, created_at, expires_at)
     SELECT $1::text, $2::text, $3::uuid, $17::text, 'completed', 201, $18::text, $13::timestamptz, $13::timestamptz, $19::timestamptz FROM e`,
};

const FORGET_KEY = { name: 'floor_create_forget_key', text: 'DELETE FROM idempotency_keys WHERE scope = $1 AND endpoint = $2 AND key = $3' };

interface StoredKey {
  request_hash: string;
  state: string;
  response_status: number | null;
  response_body: string | null;
  expires_at: Date;
}

interface DirectInput {
  role: 'buyer' | 'seller';
  username: string;
  item: string;
  description: string;
  amount: number;
  category: string;
}

/** The checks of the schema (shared/escrows/schemas.ts createDirect) and of createDirect, by hand; undefined when any fails. */
function directInput(body: unknown): DirectInput | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  if (b.role !== 'buyer' && b.role !== 'seller') return undefined;
  if (typeof b.counterparty_username !== 'string' || typeof b.item_name !== 'string') return undefined;
  const username = b.counterparty_username.trim().toLowerCase();
  const item = b.item_name.trim();
  const description = b.description ?? '';
  const category = b.category ?? 'goods';
  const amount = typeof b.amount === 'string' && /^[0-9]{1,12}$/.test(b.amount) ? Number(b.amount) : b.amount;
  if (username.length < 1 || username.length > 64 || item.length < 1 || item.length > 200) return undefined;
  if (typeof description !== 'string' || description.length > 2000 || typeof category !== 'string' || !CATEGORIES.has(category)) return undefined;
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 10_000 || amount > 500_000_000) return undefined;
  return { role: b.role, username, item, description, amount, category };
}

export function escrowFloor(pool: pg.Pool, publicBaseUrl: string) {
  async function get(ctx: Koa.Context, caller: FloorCaller, id: string): Promise<void> {
    const e = UUID.test(id) ? (await pool.query<EscrowRecord>({ ...BY_ID, values: [id] })).rows[0] : undefined;
    if (!e) return fail(ctx, 404, 'ESCROW_NOT_FOUND', 'Escrow not found');
    if (e.buyer_id !== caller.id && e.seller_id !== caller.id && caller.role !== 'admin') return fail(ctx, 403, 'FORBIDDEN', 'You are not a party to this escrow');
    ctx.status = 200;
    ctx.body = { success: true, data: serializeEscrow(e, publicBaseUrl) };
  }

  async function list(ctx: Koa.Context, caller: FloorCaller): Promise<void> {
    const q = ctx.query;
    const page = intParam(q.page, 1, 1, 10_000);
    const limit = intParam(q.limit, 20, 1, 50);
    const role = q.role === undefined ? 'both' : q.role === 'buyer' || q.role === 'seller' ? q.role : undefined;
    const status = q.status === undefined ? null : typeof q.status === 'string' && STATUSES.has(q.status) ? q.status : undefined;
    if (page === undefined || limit === undefined || role === undefined || status === undefined) return fail(ctx, 400, 'INVALID_QUERY', 'Query parameters are invalid');
    const values = [caller.id, status, page * limit, limit, (page - 1) * limit];
    const found = (await pool.query<EscrowRecord & { total: number }>({ ...LIST[role], values })).rows;
    const total = found[0]?.total ?? 0;
    const data = found.filter((r) => r.id !== null).map((r) => serializeEscrow(r, publicBaseUrl));
    ctx.status = 200;
    ctx.body = { success: true, data, pagination: { page, limit, total, total_pages: Math.ceil(total / limit) } };
  }

  async function create(ctx: Koa.Context, caller: FloorCaller): Promise<void> {
    const rawKey = ctx.get('Idempotency-Key');
    if (!rawKey) return fail(ctx, 501, 'NOT_REPRODUCED', 'The floor reproduces the keyed creation only');
    if (!UUID_V4.test(rawKey)) return fail(ctx, 400, 'IDEMPOTENCY_KEY_INVALID', 'Idempotency-Key must be a UUID v4');
    const body = parseJson(await rawBody(ctx));
    const input = directInput(body);
    if (!input) return fail(ctx, 400, 'INVALID_BODY', 'Request body is invalid');
    const key = { scope: `user:${caller.id}`, endpoint: ENDPOINT, key: rawKey.toLowerCase() };

    const now = new Date();
    const id = randomUUID();
    const expiresAt = new Date(now.getTime() + PAYMENT_WINDOW_MS);
    const client = await pool.connect();
    let open = false;
    try {
      type Found = { locked: boolean; id: string | null; status: string | null; role: string | null } & Partial<StoredKey>;
      // BEGIN with the first statement, one round trip (as the API folds its BEGIN).
      open = true;
      const found = (await beginWith<Found>(client, { text: OPEN_AND_PARTY.text, values: [key.scope, key.endpoint, key.key, input.username] }))[0]!;
      if (!found.locked) return await refuse(409, 'IDEMPOTENCY_KEY_IN_FLIGHT', 'A request with this Idempotency-Key is still running; retry the same key shortly');
      if (found.state && (found.expires_at!.getTime() <= Date.now() || found.state !== 'completed')) {
        // openKey: an expired answer (or a row of the earlier in-flight design) is forgotten; the request runs again.
        await client.query({ ...FORGET_KEY, values: [key.scope, key.endpoint, key.key] });
      } else if (found.state) {
        if (found.request_hash !== sha256Hex(canonicalJson(body ?? null))) return await refuse(422, 'IDEMPOTENCY_KEY_CONFLICT', 'This Idempotency-Key was used with a different request body');
        await client.query('COMMIT');
        open = false;
        replayStored(ctx, found.response_status ?? null, found.response_body ?? null);
        return;
      }
      if (!found.id || found.status !== 'active' || found.role !== 'user') return await refuse(404, 'USER_NOT_FOUND', `No active user named ${input.username}`);
      if (found.id === caller.id) return await refuse(422, 'SELLER_IS_BUYER', 'The buyer and the seller must be different accounts');
      const [buyerId, sellerId] = input.role === 'buyer' ? [caller.id, found.id] : [found.id, caller.id];
      const escrow: EscrowRecord = {
        id,
        buyer_id: buyerId,
        seller_id: sellerId,
        created_by: caller.id,
        source: 'direct',
        item_name: input.item,
        description: input.description,
        amount: input.amount,
        category: input.category,
        status: 'pending_payment',
        partner_ref: null,
        partner_sig_version: null,
        courier: null,
        tracking_number: null,
        expires_at: expiresAt,
        auto_release_at: null,
        extension_count: 0,
        fee_amount: null,
        cancel_reason: null,
        paid_at: null,
        sent_at: null,
        received_at: null,
        released_at: null,
        disputed_at: null,
        refunded_at: null,
        cancelled_at: null,
        created_at: now,
        updated_at: now,
      };
      const answer = JSON.stringify({ success: true, data: serializeEscrow(escrow, publicBaseUrl) });
      // notifications/service.ts noticeJob and escrows/create.ts created(): the counterparty's notice, the expiry timer.
      const notice = { user_id: input.role === 'buyer' ? sellerId : buyerId, type: 'escrow_invited', escrow_id: id, dispute_id: null, outcome: null };
      const hash = sha256Hex(canonicalJson(body ?? null));
      const values = [
        key.scope,
        key.endpoint,
        key.key,
        id,
        buyerId,
        sellerId,
        caller.id,
        input.item,
        input.description,
        input.amount,
        input.category,
        expiresAt,
        now,
        input.role,
        JSON.stringify(notice),
        JSON.stringify({ escrow_id: id }),
        hash,
        answer,
        new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      ];
      await commitWith(client, { ...CREATE_KEYED, values });
      open = false;
      ctx.status = 201;
      ctx.type = 'application/json';
      ctx.body = answer;
    } finally {
      if (open) await client.query('ROLLBACK').catch(() => undefined);
      client.release();
    }

    async function refuse(status: number, code: string, message: string): Promise<void> {
      if (open) await client.query('ROLLBACK');
      open = false;
      fail(ctx, status, code, message);
    }
  }

  return { get, list, create };
}
