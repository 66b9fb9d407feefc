/**
 * The floor of "confirm received + release (ledger posting, fee)" (issue 29 "Floors"): what
 * the buyer's keyed `POST /api/escrows/:id/confirm-received` (sent -> received, no money)
 * and keyed `POST /api/escrows/:id/release` (received -> released: the escrow's held money
 * to the seller minus the escrow fee, the fee to the platform) cost without our framework.
 * A floor module (floor-routes.ts); floor-server.ts authenticates both (credentials and
 * per-user limit, as for `/v1/auth/me`). Nothing of the service is imported: the SQL, the
 * fee rule, the serialiser, the posting, the events and the notice payloads are copied from
 * shared/escrows/{service,settle,fees,transition,repo,serialize}.ts, shared/ledger/{post,
 * accounts}.ts, shared/notifications/service.ts, shared/outbox.ts, shared/idempotency.ts and
 * api/middleware/idempotency.ts on purpose, so the floor writes the same rows and answers the
 * same JSON.
 *
 * Each request is ONE transaction on one pooled connection (synchronous_commit as
 * configured, i.e. on), three round trips:
 * 1. BEGIN sent with one statement (`beginWith`: pipelined, values bound, as the
 *    API sends its BEGIN): `idempotency_open` (the key's transaction-level advisory lock and, read
 *    after it, the key's stored row: the service's own SQL function, as openKey calls it),
 *    the escrow row (loadForParty) and, for a release, the `escrow_fee` setting
 *    (loadEscrowFeeRule);
 * 2. when the key has no stored answer and the caller is the buyer, one CTE: the
 *    compare-and-set of the transition (`UPDATE escrows ... WHERE id AND status IN (from)
 *    RETURNING *`, the service's), and only when it moved: for a release the posting
 *    (missing escrow/system accounts created in code order ON CONFLICT DO NOTHING, the
 *    `escrow_release` entry with posting key `escrow-release:<id>`, its lines in the
 *    service's order; the database's lines trigger locks the users row and then the accounts
 *    in id order, applies the balances, and its CHECK constraints refuse a negative balance,
 *    as for the service), the event, the notices' outbox rows in the service's order, and the
 *    completed key row with the 200 answer. The answer is serialised here from the row read
 *    in step 1 with the move's changes; if the row RETURNED differs from that (someone
 *    changed another column in between), the stored answer is rewritten with the returned
 *    row (one more statement) before the commit, so the key always stores what was answered;
 * 3. COMMIT (or ROLLBACK on any refusal).
 *
 * Refusals as the service's: 404 ESCROW_NOT_FOUND, 403 FORBIDDEN (a stranger), 403 NOT_BUYER
 * (the seller), 409 INVALID_STATE (the status found; a lost compare-and-set re-reads it),
 * 409 IDEMPOTENCY_KEY_IN_FLIGHT, 422 IDEMPOTENCY_KEY_CONFLICT, 400 IDEMPOTENCY_KEY_INVALID,
 * 400 INVALID_BODY (a body other than `{}`); a replay answers the stored body with
 * `Idempotent-Replay: true`; an expired stored answer is forgotten and the request runs again.
 *
 * Not reproduced (the bench never meets them): requests without an Idempotency-Key (400 here;
 * the service runs them in a transaction of its own), joi's error details and the messages'
 * Indonesian text, the session CSRF check, escrows with tracking (500 here), staff callers;
 * a release whose posting key was already used (the service's ledger_post_many would answer
 * a duplicate and go on; here the unique constraint fails the request: after the escrow's
 * compare-and-set that cannot happen unless the ledger was written by hand); the service's
 * explicit balance check before the lines (here the CHECK constraints refuse the same
 * posting, with a 500 instead of 409 INSUFFICIENT_BALANCE: the escrow account always holds
 * the amount it releases).
 */
import type Koa from 'koa';
import type pg from 'pg';
import { beginWith, canonicalJson, type EscrowRecord, fail, type FloorCaller, IDEMPOTENCY_TTL_MS, parseJson, rawBody, replayStored, serializeEscrow, sha256Hex, UUID, UUID_V4 } from './floor-common.js';
import type { FloorModule, FloorRoute } from './floor-routes.js';

// ---- The fee (shared/escrows/fees.ts, copied on purpose) ----------------------------------

interface FeeRule {
  percentBp: number;
  minIdr: number;
  maxIdr: number | null;
}
const FALLBACK_FEE: FeeRule = { percentBp: 100, minIdr: 2000, maxIdr: null };
const isCount = (v: unknown, max = Number.MAX_SAFE_INTEGER): v is number => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= max;

function feeRule(value: unknown): FeeRule {
  if (typeof value !== 'object' || value === null) return FALLBACK_FEE;
  const v = value as Record<string, unknown>;
  if (!isCount(v.percent_bp, 10_000) || !isCount(v.min_idr)) return FALLBACK_FEE;
  if (v.max_idr !== undefined && v.max_idr !== null && (!isCount(v.max_idr) || v.max_idr < v.min_idr)) return FALLBACK_FEE;
  return { percentBp: v.percent_bp, minIdr: v.min_idr, maxIdr: v.max_idr ?? null };
}

function escrowFee(amount: number, rule: FeeRule): number {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new Error('floor: the escrow amount is not whole rupiah');
  let fee = Math.floor((amount * rule.percentBp) / 10_000);
  fee = Math.max(fee, rule.minIdr);
  if (rule.maxIdr !== null) fee = Math.min(fee, rule.maxIdr);
  return Math.min(fee, amount);
}

// ---- The statements ------------------------------------------------------------------------

/** Step 2: the key's lock and stored row (idempotency_open), the escrow, and (for a release) the fee setting. */
function openSql(withFee: boolean): string {
  return `SELECT o.locked, o.request_hash AS k_hash, o.state AS k_state, o.response_status AS k_status, o.response_body AS k_body,
                 o.expires_at AS k_expires, e.*${withFee ? `, (SELECT value FROM settings WHERE key = 'escrow_fee') AS fee_setting` : ''}
            FROM idempotency_open($1, $2, $3) o LEFT JOIN escrows e ON o.locked AND e.id = $4::uuid`;
}
const OPEN_CONFIRM = { name: 'floor_release_open_confirm', text: openSql(false) };
const OPEN_RELEASE = { name: 'floor_release_open_release', text: openSql(true) };
const FORGET_KEY = { name: 'floor_release_forget_key', text: 'DELETE FROM idempotency_keys WHERE scope = $1 AND endpoint = $2 AND key = $3' };
const REREAD = { name: 'floor_release_reread', text: 'SELECT status FROM escrows WHERE id = $1' };
const FIX_ANSWER = { name: 'floor_release_fix_answer', text: 'UPDATE idempotency_keys SET response_body = $4 WHERE scope = $1 AND endpoint = $2 AND key = $3' };

/** The completed key row (recordAnswer), written only when the escrow moved. */
const KEY_ROW = `ik AS (INSERT INTO idempotency_keys (scope, endpoint, key, request_hash, state, response_status, response_body, locked_at, created_at, expires_at)
                 SELECT $5::text, $6::text, $7::uuid, $8::text, 'completed', 200, $9::text, $3::timestamptz, $3::timestamptz, $10::timestamptz FROM u)`;

/**
 * confirmReceived: the compare-and-set sent -> received, the `escrow.received` event and the
 * seller's `escrow_received` notice (repo.recordEvent with noticeJobs), the key row.
 * $1 escrow, $2 buyer (actor), $3 now, $4 (unused: keeps the key's parameters at $5..$10).
 */
const CONFIRM = {
  name: 'floor_release_confirm',
  text: `WITH u AS (UPDATE escrows SET received_at = $3::timestamptz, updated_at = $3::timestamptz, status = 'received'
                  WHERE id = $1::uuid AND status IN ('sent') AND $4::int IS NULL RETURNING *),
          ev AS (INSERT INTO escrow_events (escrow_id, event, actor_id, actor_role, data, created_at)
                 SELECT u.id, 'escrow.received', $2::uuid, 'buyer', '{}'::jsonb, $3::timestamptz FROM u),
          ob AS (INSERT INTO outbox (queue, job, payload, available_at, created_at)
                 SELECT 'notifications', 'notifications.create',
                        jsonb_build_object('user_id', u.seller_id, 'type', 'escrow_received', 'escrow_id', u.id, 'dispute_id', NULL, 'outcome', NULL),
                        $3::timestamptz, $3::timestamptz FROM u),
          ${KEY_ROW}
     SELECT u.* FROM u`,
};

/**
 * settleRelease: the compare-and-set received -> released with the fee; the posting (escrow
 * held -> seller (amount - fee), platform fees (fee); lines with a zero amount left out, as
 * the service leaves them out); the `escrow.released` event; the buyer's and the seller's
 * notices in that order; the key row. $1 escrow, $2 buyer (actor), $3 now, $4 fee, $11 the
 * lines' account codes, $12 kinds, $13 amounts (in the service's order), $14 the amount read,
 * $15 whether a line goes to the seller's balance.
 *
 * The posting takes ledger_post_many's locks in its order, after the escrow's row (the
 * UPDATE): the seller's users row FOR NO KEY UPDATE, then the missing accounts created, then
 * the accounts FOR UPDATE in id order, and only then the entry and its lines (whose foreign
 * keys take KEY SHARE locks on accounts this transaction already holds; without the
 * accounts locked first, two releases each holding KEY SHARE on platform:fees would wait on
 * each other in the lines trigger's FOR UPDATE: a deadlock). Each step is forced after the
 * one before by an InitPlan (`(SELECT count(*) FROM <previous>) >= 0`): a CTE that is
 * referenced runs when first read, and a one-time filter reads it before its own scan.
 */
const RELEASE = {
  name: 'floor_release_release',
  text: `WITH u AS (UPDATE escrows SET released_at = $3::timestamptz, fee_amount = $4::bigint, updated_at = $3::timestamptz, status = 'released'
                  WHERE id = $1::uuid AND status IN ('received') AND amount = $14::bigint RETURNING *),
          lu AS (SELECT us.id FROM users us WHERE us.id = (SELECT seller_id FROM u) AND $15::boolean ORDER BY us.id FOR NO KEY UPDATE OF us),
          na AS (INSERT INTO ledger_accounts (code, kind, user_id, allow_negative, created_at)
                 SELECT l.code, l.kind, NULL, false, $3::timestamptz FROM unnest($11::text[], $12::text[]) AS l(code, kind)
                  WHERE l.kind <> 'user' AND EXISTS (SELECT 1 FROM u) AND (SELECT count(*) FROM lu) >= 0 ORDER BY l.code
                 ON CONFLICT (code) DO NOTHING RETURNING id, code),
          la AS (SELECT a.id, a.code FROM ledger_accounts a WHERE a.code = ANY($11::text[]) AND (SELECT count(*) FROM na) >= 0 ORDER BY a.id FOR UPDATE OF a),
          acc AS (SELECT id, code FROM na UNION ALL SELECT id, code FROM la),
          je AS (INSERT INTO journal_entries (kind, ref_type, ref_id, posting_key, memo, created_at)
                 SELECT 'escrow_release', 'escrow', u.id::text, 'escrow-release:' || u.id::text, NULL, $3::timestamptz FROM u
                  WHERE (SELECT count(*) FROM la) >= 0 RETURNING id),
          jl AS (INSERT INTO journal_lines (entry_id, account_id, amount)
                 SELECT je.id, acc.id, l.amount FROM je, unnest($11::text[], $13::bigint[]) WITH ORDINALITY AS l(code, amount, n)
                   JOIN acc ON acc.code = l.code ORDER BY l.n RETURNING id),
          ev AS (INSERT INTO escrow_events (escrow_id, event, actor_id, actor_role, data, created_at)
                 SELECT u.id, 'escrow.released', $2::uuid, 'buyer',
                        jsonb_build_object('escrow_amount', u.amount, 'platform_fee', u.fee_amount, 'seller_amount', u.amount - u.fee_amount, 'by', 'release'),
                        $3::timestamptz FROM u),
          ob AS (INSERT INTO outbox (queue, job, payload, available_at, created_at)
                 SELECT 'notifications', 'notifications.create', v.payload, $3::timestamptz, $3::timestamptz
                   FROM u, LATERAL (VALUES
                     (1, jsonb_build_object('user_id', u.buyer_id, 'type', 'escrow_completed_buyer', 'escrow_id', u.id, 'dispute_id', NULL, 'outcome', NULL)),
                     (2, jsonb_build_object('user_id', u.seller_id, 'type', 'escrow_completed_seller', 'escrow_id', u.id, 'dispute_id', NULL, 'outcome', NULL))) v(n, payload)
                  ORDER BY v.n),
          ${KEY_ROW}
     SELECT u.*, (SELECT count(*) FROM jl)::int AS lines_written FROM u`,
};

interface Opened extends EscrowRecord {
  locked: boolean;
  k_hash: string | null;
  k_state: string | null;
  k_status: number | null;
  k_body: string | null;
  k_expires: Date | null;
  fee_setting?: unknown;
}

/** The request body: `{}` (or nothing, which koa-body reads as `{}`), as S.empty accepts; undefined otherwise. */
async function emptyBody(ctx: Koa.Context): Promise<Record<string, never> | undefined> {
  const body = parseJson(await rawBody(ctx), true);
  return typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0 ? {} : undefined;
}

type Move = 'confirm-received' | 'release';
/** shared/escrows/states.ts: where each move may start. */
const FROM: Record<Move, string> = { 'confirm-received': 'sent', release: 'received' };

export const releaseFloor: FloorModule = ({ pool, publicBaseUrl }) => {
  async function move(ctx: Koa.Context, caller: FloorCaller, id: string, which: Move): Promise<void> {
    const rawKey = ctx.get('Idempotency-Key');
    if (!rawKey) return fail(ctx, 400, 'IDEMPOTENCY_KEY_REQUIRED', 'floor: only keyed requests are reproduced');
    if (!UUID_V4.test(rawKey)) return fail(ctx, 400, 'IDEMPOTENCY_KEY_INVALID', 'Idempotency-Key must be a UUID v4');
    const body = await emptyBody(ctx);
    if (!body) return fail(ctx, 400, 'INVALID_BODY', 'Request body is invalid');
    if (!UUID.test(id)) return fail(ctx, 404, 'ESCROW_NOT_FOUND', 'Escrow not found');
    const scope = `user:${caller.id}`;
    const endpoint = `POST ${ctx.path}`;
    const key = rawKey.toLowerCase();
    const hash = sha256Hex(canonicalJson(body));

    const client: pg.PoolClient = await pool.connect();
    let open = false;
    const refuse = async (status: number, code: string, message: string): Promise<void> => {
      if (open) await client.query('ROLLBACK');
      open = false;
      fail(ctx, status, code, message);
    };
    try {
      open = true;
      const opened = (await beginWith<Opened>(client, { text: (which === 'release' ? OPEN_RELEASE : OPEN_CONFIRM).text, values: [scope, endpoint, key, id] }))[0]!;
      if (!opened.locked) return await refuse(409, 'IDEMPOTENCY_KEY_IN_FLIGHT', 'A request with this Idempotency-Key is still running; retry the same key shortly');
      if (opened.k_state !== null) {
        if (opened.k_expires!.getTime() <= Date.now() || opened.k_state !== 'completed') {
          // openKey: an expired answer (or a row of the earlier in-flight design) is forgotten; the request runs again.
          await client.query({ ...FORGET_KEY, values: [scope, endpoint, key] });
        } else if (opened.k_hash !== hash) {
          return await refuse(422, 'IDEMPOTENCY_KEY_CONFLICT', 'This Idempotency-Key was used with a different request body');
        } else {
          await client.query('COMMIT');
          open = false;
          replayStored(ctx, opened.k_status, opened.k_body);
          return;
        }
      }
      const e = opened.id ? opened : undefined;
      if (!e) return await refuse(404, 'ESCROW_NOT_FOUND', 'Escrow not found');
      if (e.buyer_id !== caller.id) {
        return e.seller_id === caller.id ? await refuse(403, 'NOT_BUYER', 'Only the buyer can do this') : await refuse(403, 'FORBIDDEN', 'You are not a party to this escrow');
      }
      const invalid = (status: string) => refuse(409, 'INVALID_STATE', `The escrow is ${status}; this needs ${FROM[which]}`);
      if (e.status !== FROM[which]) return await invalid(e.status);

      const now = new Date();
      const keyTail = [scope, endpoint, key, hash];
      const expires = new Date(now.getTime() + IDEMPOTENCY_TTL_MS);
      let predicted: EscrowRecord;
      let moved: (EscrowRecord & { lines_written?: number }) | undefined;
      if (which === 'confirm-received') {
        predicted = { ...strip(e), status: 'received', received_at: now, updated_at: now };
        const answer = JSON.stringify({ success: true, data: serializeEscrow(predicted, publicBaseUrl) });
        moved = (await client.query<EscrowRecord>({ ...CONFIRM, values: [id, caller.id, now, null, ...keyTail, answer, expires] })).rows[0];
      } else {
        const fee = escrowFee(e.amount, feeRule(opened.fee_setting));
        predicted = { ...strip(e), status: 'released', released_at: now, fee_amount: fee, updated_at: now };
        const answer = JSON.stringify({ success: true, data: serializeEscrow(predicted, publicBaseUrl) });
        // settle.ts: escrow held -> seller (amount - fee) and platform fees (fee); zero lines left out.
        const lines: [string, string, number][] = [[`escrow:${id}`, 'escrow', -e.amount]];
        if (e.amount - fee > 0) lines.push([`user:${e.seller_id}`, 'user', e.amount - fee]);
        if (fee > 0) lines.push(['platform:fees', 'platform_fee', fee]);
        const values = [id, caller.id, now, fee, ...keyTail, answer, expires, lines.map((l) => l[0]), lines.map((l) => l[1]), lines.map((l) => l[2]), e.amount, lines.some((l) => l[1] === 'user')];
        moved = (await client.query<EscrowRecord & { lines_written: number }>({ ...RELEASE, values })).rows[0];
        if (moved && moved.lines_written !== lines.length) throw new Error(`floor: the release of ${id} wrote ${moved.lines_written} ledger lines, expected ${lines.length} (a missing account?)`);
      }
      if (!moved) {
        // transition(): a lost compare-and-set answers INVALID_STATE naming the status found now.
        const now2 = (await client.query<{ status: string }>({ ...REREAD, values: [id] })).rows[0];
        return await invalid(now2?.status ?? e.status);
      }
      const { lines_written: _n, ...row } = moved;
      let answer = JSON.stringify({ success: true, data: serializeEscrow(predicted, publicBaseUrl) });
      const actual = JSON.stringify({ success: true, data: serializeEscrow(row, publicBaseUrl) });
      if (actual !== answer) {
        answer = actual;
        await client.query({ ...FIX_ANSWER, values: [scope, endpoint, key, answer] });
      }
      await client.query('COMMIT');
      open = false;
      ctx.status = 200;
      ctx.type = 'application/json';
      ctx.body = answer;
    } finally {
      if (open) await client.query('ROLLBACK').catch(() => undefined);
      client.release();
    }
  }

  const routes: FloorRoute[] = (['confirm-received', 'release'] as const).map((which) => ({
    method: 'POST',
    path: new RegExp(`^/api/escrows/([^/]+)/${which}$`),
    auth: true,
    handle: async (ctx, caller, params) => {
      if (!caller) return fail(ctx, 401, 'UNAUTHORIZED', 'Sign in or send a personal API key');
      await move(ctx, caller, params[0]!, which);
    },
  }));
  return routes;
};

/** The escrow's own columns of the opening row. */
function strip(o: Opened): EscrowRecord {
  const { locked: _l, k_hash: _h, k_state: _s, k_status: _st, k_body: _b, k_expires: _x, fee_setting: _f, ...e } = o;
  return e;
}
