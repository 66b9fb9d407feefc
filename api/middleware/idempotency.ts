import type { Knex } from 'knex';
import { commitTransaction, db, foldedTransaction, holdingConnection, pgErrorCode, pgRefused, STALE_STATEMENT, type CommitFold, type ReadAhead } from '../../shared/db.js';
import {
  idempotencyErrors,
  keyGate,
  openedKey,
  openKeySql,
  peekKey,
  recordAnswerSql,
  requestHash,
  type KeyGate,
  type KeyRef,
  type OpenResult,
  type OpenRow,
} from '../../shared/idempotency.js';
import { AppError, errors } from '../../shared/errors.js';
import type { Ctx, Middleware } from '../context.js';

import { UUID_V4 } from '../../shared/ids.js';


async function rollback(ctx: Ctx, trx: Knex.Transaction): Promise<void> {
  if (trx.isCompleted()) return;
  await trx.rollback().catch((err: unknown) => ctx.state.log.warn({ err }, 'idempotency rollback failed'));
}

/**
 * Opt-in idempotency for a mutation: `router.post(path, auth, validate(S), idempotent(), handler)`.
 * With an Idempotency-Key the request runs in ONE transaction, `ctx.state.trx` (read it
 * with `txOf(ctx)` and pass it to the service): the key is locked for that transaction's
 * life and the first 2xx (status and body) is recorded in it, so the handler's changes
 * and the stored answer commit together or not at all. A 4xx/5xx rolls everything back
 * (a retry runs again); the same key with another body is 422; a key whose first call
 * still runs is 409; a replay answers the stored body with `Idempotent-Replay: true`.
 *
 * Keys are the caller's own: by default the signed-in user's (or the address's);
 * `scope` names another owner, e.g. a workspace and the credential acting in it.
 */
export interface IdempotentOptions {
  scope?: (ctx: Ctx) => string;
  /**
   * Work that must not run with the key's transaction open (rule 7: waiting on a worker or
   * an outside service). It runs first, with no transaction and no connection held, unless
   * the key already has a stored answer. It may return a `discard` step, run when the
   * request then does not commit (refused, failed, or a concurrent twin answered first).
   */
  prepare?: (ctx: Ctx) => Promise<(() => Promise<void>) | undefined>;
  /**
   * As `prepare`, for work whose first transaction can carry the key's lookup (a pay: the
   * escrow's lock): instead of the middleware looking at the key first (one round trip),
   * the step gets a `KeyGate` (none without a key), sends `gate.ahead` with its first
   * statement and calls `gate.admit` with the rows before anything else; when that answers
   * false (the stored answer was sent) it does nothing and returns undefined.
   */
  prepareAdmitting?: (ctx: Ctx, gate: KeyGate | undefined) => Promise<(() => Promise<void>) | undefined>;
  /**
   * Reads the handler's service makes first (the escrow a move starts from, a setting),
   * sent with the key's statement in the same round trip (shared/db.ts `ReadAhead`); the
   * service takes them with `takeReadAhead` instead of asking the database again.
   */
  readAhead?: (ctx: Ctx) => readonly ReadAhead[];
}

/** Answers a stored reply (or refuses a reused key) from the key's stored row. */
function answerStored(ctx: Ctx, opened: OpenResult): boolean {
  switch (opened.kind) {
    case 'conflict':
      throw idempotencyErrors.keyConflict();
    case 'in_flight':
      throw idempotencyErrors.keyInFlight();
    case 'replay':
      ctx.status = opened.response.status;
      ctx.body = opened.response.body;
      ctx.set('Idempotent-Replay', 'true');
      return true;
    case 'claimed':
      return false;
  }
}

/** A body Koa would send as JSON itself (an object or array, not a Buffer or stream): the stored text is sent instead. */
function isJsonObject(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  const proto = Object.getPrototypeOf(body) as unknown;
  return proto === Object.prototype || proto === null || Array.isArray(body);
}

/** Every middleware `idempotent()` made (a test finds the keyed routes by it). */
const IDEMPOTENT_MIDDLEWARE = new WeakSet<object>();

export function isIdempotentMiddleware(fn: unknown): boolean {
  return typeof fn === 'function' && IDEMPOTENT_MIDDLEWARE.has(fn);
}

export function idempotent(options: IdempotentOptions = {}): Middleware {
  if (options.prepare && options.prepareAdmitting) throw new Error('idempotent(): give prepare or prepareAdmitting, not both');
  const middleware: Middleware = async (ctx, next) => {
    const key = ctx.get('Idempotency-Key');
    if (!key || ctx.method === 'GET' || ctx.method === 'HEAD') {
      const discard = options.prepare ? await options.prepare(ctx) : options.prepareAdmitting ? await options.prepareAdmitting(ctx, undefined) : undefined;
      let done = false;
      try {
        await next();
        done = ctx.status >= 200 && ctx.status < 300;
      } finally {
        if (!done && discard) await discard();
      }
      return;
    }
    if (!UUID_V4.test(key)) throw idempotencyErrors.keyInvalid();
    const principal = ctx.state.principal;
    const ref: KeyRef = {
      scope: options.scope ? options.scope(ctx) : principal ? `user:${principal.userId}` : `ip:${ctx.ip}`,
      endpoint: `${ctx.method} ${ctx.path}`,
      key: key.toLowerCase(),
    };
    const hash = requestHash(ctx.request.body);
    let discard: (() => Promise<void>) | undefined;
    if (options.prepare) {
      let stored: Awaited<ReturnType<typeof peekKey>>;
      try {
        stored = await peekKey(db, ref, hash);
      } catch (err) {
        ctx.state.log.error({ err }, 'idempotency lookup failed');
        throw idempotencyErrors.lookupFailed();
      }
      if (stored.kind !== 'none' && answerStored(ctx, stored)) return;
      discard = await options.prepare(ctx);
    } else if (options.prepareAdmitting) {
      const gate = keyGate(ref, hash);
      try {
        discard = await options.prepareAdmitting(ctx, gate);
      } catch (err) {
        // The key's lookup travelled with the step's first statement: a failure before it
        // was admitted (the database unreachable) is the key's lookup failing, as with `peekKey`.
        if (gate.outcome() !== 'waiting' || err instanceof AppError) throw err;
        ctx.state.log.error({ err }, 'idempotency lookup failed');
        throw idempotencyErrors.lookupFailed();
      }
      const outcome = gate.outcome();
      if (outcome === 'waiting') {
        if (discard) await discard();
        throw new Error(`${ref.endpoint}: its prepare step did not admit the Idempotency-Key`);
      }
      if (outcome !== 'admitted') {
        // Sent only now, the step's transaction over: a failure there answered an error, not a replay.
        if (discard) await discard();
        answerStored(ctx, { kind: 'replay', response: outcome.replay });
        return;
      }
    }
    let committed = false;
    try {
      committed = await runKeyed(ctx, ref, hash, next, options.readAhead?.(ctx));
    } finally {
      if (!committed && discard) await discard();
    }
  };
  IDEMPOTENT_MIDDLEWARE.add(middleware);
  return middleware;
}

/**
 * The key's transaction: lock, replay or run the handlers on it, record the answer, commit.
 * True when the handlers' work committed. BEGIN travels with the key's statement and the
 * stored answer with COMMIT (shared/db.ts `foldedTransaction`): the frame costs the
 * handler's statements two round trips, not four.
 */
async function runKeyed(ctx: Ctx, ref: KeyRef, hash: string, next: () => Promise<unknown>, ahead: readonly ReadAhead[] = []): Promise<boolean> {
  let trx: Knex.Transaction;
  let fold: CommitFold;
  let row: OpenRow | undefined;
  try {
    ({ trx, fold, rows: [row] } = await foldedTransaction<OpenRow>(db, openKeySql(ref), ahead));
  } catch (err) {
    ctx.state.log.error({ err }, 'idempotency lookup failed');
    throw idempotencyErrors.lookupFailed();
  }
  try {
    let opened: OpenResult;
    try {
      opened = await openedKey(trx, ref, hash, row);
    } catch (err) {
      ctx.state.log.error({ err }, 'idempotency lookup failed');
      throw idempotencyErrors.lookupFailed();
    }
    if (opened.kind === 'replay') await commitTransaction(trx);
    if (answerStored(ctx, opened)) return false;
    ctx.state.trx = trx;
    // Everything the handler does runs on this one connection (rule 7: never a second).
    await holdingConnection(db, `the Idempotency-Key transaction of ${ref.endpoint}`, next);
    ctx.state.trx = undefined;
    if (ctx.status < 200 || ctx.status >= 300) {
      await rollback(ctx, trx);
      return false;
    }
    // The answer's JSON is made once: stored with the COMMIT, then sent as it is.
    const body: unknown = ctx.body;
    const json = JSON.stringify(body ?? null);
    fold.beforeCommit = recordAnswerSql(ref, hash, { status: ctx.status, json });
    try {
      await commitTransaction(trx);
    } catch (err) {
      // Postgres refused a write sent with the COMMIT (writeAtCommit), the stored answer or
      // the COMMIT itself (an ERROR; nothing runs after COMMIT in that query): the
      // transaction was rolled back, nothing was changed. Anything else (the connection
      // lost, ECONNRESET, a FATAL) leaves the outcome unknown: the error goes on as it is,
      // and a retry with the same key replays the answer if the COMMIT went through.
      if (!pgRefused(err) || pgErrorCode(err) === STALE_STATEMENT) throw err;
      ctx.state.log.error({ err }, 'idempotency answer could not be recorded; the request is rolled back');
      throw idempotencyErrors.insertFailed();
    }
    if (isJsonObject(body)) {
      ctx.type = 'application/json';
      ctx.body = json;
    }
    return true;
  } catch (err) {
    ctx.state.trx = undefined;
    await rollback(ctx, trx);
    // A statement prepared on this connection went stale under a migration: nothing was
    // done and the connection is closed; the same request runs again on a fresh one.
    if (pgErrorCode(err) === STALE_STATEMENT) {
      ctx.state.log.warn({ err }, 'a prepared statement went stale under a migration: 503 RETRY');
      throw errors.retry();
    }
    throw err;
  }
}

/** What the route's `prepare` step stored on `ctx.state.prepared` (the route knows its type). */
export function preparedOf<T>(ctx: Ctx): T {
  if (ctx.state.prepared === undefined) throw new Error('no prepared work on this request: the route needs idempotent({ prepare })');
  return ctx.state.prepared as T;
}

/**
 * The transaction a handler's service must join: the request's idempotency transaction
 * when there is one, otherwise the pool (the service opens its own transaction).
 */
export function txOf(ctx: Ctx): Knex | Knex.Transaction {
  return ctx.state.trx ?? db;
}
