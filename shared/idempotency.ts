/**
 * Idempotency keys (spec section 8, ARCHITECTURE rule 5), stored in Postgres per caller
 * and endpoint. The HTTP side lives in api/middleware/idempotency.ts.
 */
import { clock } from './clock.js';
import { sha256Hex } from './crypto.js';
import type { Knex } from 'knex';
import { deleteInBatches, prepared, type Db, type NativeStatement, type ReadAhead } from './db.js';
import { fail } from './errors.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** The refusals of a keyed request (spec section 8), shared by every feature's routes. */
export const idempotencyErrors = {
  keyInvalid: () =>
    fail.badRequest('IDEMPOTENCY_KEY_INVALID', { en: 'Idempotency-Key must be a UUID v4', id: 'Idempotency-Key harus UUID v4' }),
  /** The same key with another body (422). */
  keyConflict: () =>
    fail.unprocessable('IDEMPOTENCY_KEY_CONFLICT', {
      en: 'This Idempotency-Key was used with a different request body',
      id: 'Idempotency-Key ini sudah dipakai dengan isi permintaan lain',
    }),
  /** The key's first request still runs (409). */
  keyInFlight: () =>
    fail.conflict('IDEMPOTENCY_KEY_IN_FLIGHT', {
      en: 'A request with this Idempotency-Key is still running; retry the same key shortly',
      id: 'Permintaan dengan Idempotency-Key ini masih berjalan; coba lagi sebentar',
    }),
  lookupFailed: () =>
    fail.internal('IDEMPOTENCY_LOOKUP_FAILED', {
      en: 'Could not check the idempotency key; retry with the same key',
      id: 'Idempotency-Key tidak dapat diperiksa; coba lagi dengan kunci yang sama',
    }),
  insertFailed: () =>
    fail.internal('IDEMPOTENCY_INSERT_FAILED', {
      en: 'Could not record the idempotency key; nothing was changed, retry with the same key',
      id: 'Idempotency-Key tidak dapat dicatat; coba lagi dengan kunci yang sama',
    }),
};

export interface StoredResponse {
  status: number;
  body: unknown;
}

export type OpenResult =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'conflict' }
  | { kind: 'in_flight' };

export interface KeyRef {
  scope: string;
  endpoint: string;
  key: string;
}

interface Row {
  request_hash: string;
  state: 'in_flight' | 'completed';
  response_status: number | null;
  response_body: string | null;
  expires_at: Date;
}

/** Deterministic JSON (object keys sorted) so equal bodies hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function requestHash(body: unknown): string {
  return sha256Hex(canonicalJson(body ?? null));
}

function where(ref: KeyRef) {
  return { scope: ref.scope, endpoint: ref.endpoint, key: ref.key };
}

/**
 * The statement that opens the key, sent with the BEGIN of the request's transaction (the
 * middleware's `foldedTransaction`, which the handler then uses for its own work). The key
 * is held by a transaction-level advisory lock: it lasts exactly as long as the request's
 * transaction, so a second request with the same key while the first runs is told
 * `in_flight`, and a request whose process or connection died has provably let go
 * (Postgres rolled its transaction back, work and all). The lock and the row read after
 * it are one call (`idempotency_open`, migration 20261207000200). Nothing is written
 * here: the answer is recorded by `recordAnswerSql`'s statement, sent with the COMMIT of
 * the handler's changes, so either both commit or neither does.
 */
export function openKeySql(ref: KeyRef): NativeStatement {
  return { sql: 'SELECT * FROM idempotency_open($1, $2, $3)', bindings: [ref.scope, ref.endpoint, ref.key] };
}

export type OpenRow = Row & { locked: boolean; state: Row['state'] | null };

/** What `openKeySql`'s row means for the request, in its transaction `trx`. */
export async function openedKey(trx: Knex.Transaction, ref: KeyRef, hash: string, row: OpenRow | undefined): Promise<OpenResult> {
  if (!row?.locked) return { kind: 'in_flight' };
  if (row.state === null) return { kind: 'claimed' };
  // Expired answers and rows left `in_flight` by the earlier design (whose requests are
  // gone: we hold the lock) are forgotten; the request runs again.
  if (row.expires_at.getTime() <= clock.nowMs() || row.state !== 'completed') {
    await trx('idempotency_keys').where(where(ref)).delete();
    return { kind: 'claimed' };
  }
  if (row.request_hash !== hash) return { kind: 'conflict' };
  return { kind: 'replay', response: { status: row.response_status ?? 200, body: storedBody(row.response_body) } };
}

/**
 * A look at the key without taking it, on any connection and with no transaction held:
 * a stored answer (`replay` or `conflict`) or `none` (never stored, expired, or running).
 * Routes whose work must happen before the key's transaction opens (rule 7: an upload
 * waits for the sanitiser) look first, so a replay does not repeat that work; `openKey`
 * still decides under the lock.
 */
export async function peekKey(knex: Knex, ref: KeyRef, hash: string): Promise<OpenResult | { kind: 'none' }> {
  // A named statement (prepared once per connection): every keyed upload looks first.
  const [row] = await prepared<Row>('idempotency_peek', PEEK_BY_KEY, [ref.scope, ref.endpoint, ref.key], knex);
  return peeked(row, hash);
}

const PEEK_BY_KEY = 'SELECT request_hash, state, response_status, response_body, expires_at FROM idempotency_keys WHERE scope = $1 AND endpoint = $2 AND key = $3';

/** What a looked-at key row means for a request with this body's hash (`peekKey`, `KeyGate`). */
function peeked(row: Row | undefined, hash: string): OpenResult | { kind: 'none' } {
  if (!row || row.state !== 'completed' || row.expires_at.getTime() <= clock.nowMs()) return { kind: 'none' };
  if (row.request_hash !== hash) return { kind: 'conflict' };
  return { kind: 'replay', response: { status: row.response_status ?? 200, body: storedBody(row.response_body) } };
}

/**
 * `peekKey` done by the route's prepare step in its own first round trip
 * (`idempotent({ prepareAdmitting })`): the step sends `ahead` with its first statement and
 * calls `admit` with the rows it brought before it checks or writes anything.
 */
export interface KeyGate {
  readonly ahead: ReadAhead;
  /**
   * True: no answer is stored, go on. False: an answer is stored; do nothing more (the
   * middleware sends it once the step has returned and its transaction is over). Throws
   * for a key used with another body (422).
   */
  admit(rows: readonly unknown[] | undefined): boolean;
}

/** A `KeyGate` for this key and body; `outcome()` tells the middleware what came of it. */
export function keyGate(ref: KeyRef, hash: string): KeyGate & { outcome(): 'waiting' | 'admitted' | { replay: StoredResponse } } {
  let outcome: 'waiting' | 'admitted' | { replay: StoredResponse } = 'waiting';
  return {
    ahead: {
      key: `idempotency-peek:${ref.key}`,
      sql: PEEK_BY_KEY,
      bindings: [ref.scope, ref.endpoint, ref.key],
    },
    admit(rows) {
      if (rows === undefined) throw new Error('KeyGate.admit: the key lookup was not sent with the first statement');
      const stored = peeked(rows[0] as Row | undefined, hash);
      if (stored.kind === 'conflict') throw idempotencyErrors.keyConflict();
      if (stored.kind === 'replay') {
        outcome = { replay: stored.response };
        return false;
      }
      outcome = 'admitted';
      return true;
    },
    outcome: () => outcome,
  };
}

/** The statement recording the first 2xx answer for 24 hours, sent with the COMMIT of the handler's transaction. */
export function recordAnswerSql(ref: KeyRef, hash: string, response: { status: number; json: string }): NativeStatement {
  const now = clock.now();
  return {
    sql: RECORD_ANSWER,
    bindings: [ref.scope, ref.endpoint, ref.key, hash, response.status, response.json, now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS)],
  };
}

const RECORD_ANSWER =
  'INSERT INTO idempotency_keys (scope, endpoint, key, request_hash, state, response_status, response_body, locked_at, created_at, expires_at) ' +
  "VALUES ($1, $2, $3, $4, 'completed', $5, $6, $7, $7, $8)";

/**
 * The answer is stored as its exact JSON text (a text column, not jsonb: jsonb would
 * reorder object keys, and a replay must return the same body the first call sent).
 */
function storedBody(value: string | null): unknown {
  return value === null ? null : (JSON.parse(value) as unknown);
}

/** Keys deleted per statement by `purgeExpired`. */
export const PURGE_BATCH = 5_000;

/**
 * Deletes expired keys (hourly, the timers queue), `batch` at a time in statements of their
 * own, so an hour of keys at a high rate (2.3 million at the release bench's 325 flows/s, two
 * keys each) is never one
 * statement holding its locks and WAL until the end (docs/scaling.md). Answers how many went.
 */
export async function purgeExpired(db: Db, batch = PURGE_BATCH): Promise<number> {
  const now = clock.now();
  return deleteInBatches(batch, (limit) =>
    db('idempotency_keys')
      .whereIn(['scope', 'endpoint', 'key'], db('idempotency_keys').select('scope', 'endpoint', 'key').where('expires_at', '<=', now).limit(limit))
      .delete(),
  );
}
