import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { config } from './config.js';

// BIGINT (int8) columns hold whole rupiah; return them as numbers, refusing any value
// beyond the safe-integer range instead of silently losing precision.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${value} is outside the safe integer range`);
  return n;
});
// NUMERIC stays a string (exact decimals are formatted by serialisers only).

export type Db = Knex | Knex.Transaction;

export function createDb(url = config.databaseUrl, poolMax = config.databasePoolMax, guard = config.databasePoolGuard): Knex {
  const knex = knexFactory({
    client: 'pg',
    connection: { connectionString: url, application_name: 'escrow' },
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
  });
  foldTransactions(knex);
  if (guard) guardPool(knex);
  return knex;
}

// ---------------------------------------------------------------------------------------
// Folded transactions (issue 29). A keyed request's transaction opens with one statement
// (the key's lock and stored row) and closes with one (the stored answer); sent alone, BEGIN
// and COMMIT are two more round trips of four to seven. `foldedTransaction` sends BEGIN
// with the first statement and lets the caller hand over a last statement that is sent with
// COMMIT, each as one simple-protocol query (text with literals quoted by `sqlLiteral`, as
// `bookkeepingWrite` does). When either part fails the transaction is rolled back on the
// spot, so the connection goes back to the pool clean; a failed COMMIT rejects the
// transaction as knex's own does (commitTransaction throws). An ERROR reported by Postgres
// (`pgRefused`) means nothing was committed; anything else (a lost connection, a FATAL that
// ended the session) leaves the outcome unknown.

/** What a folded transaction carries: set `beforeCommit` to send that statement with COMMIT. */
export interface CommitFold {
  beforeCommit?: string;
}

interface Fold extends CommitFold {
  first: string;
  rows?: unknown[];
}

/** The parts of knex's Transaction (knex 3, lib/execution/transaction.js) a fold replaces. */
interface KnexTransactionInternals {
  begin(conn: PgConnection): Promise<unknown>;
  commit(conn: PgConnection, value?: unknown): Promise<unknown>;
  _completed: boolean;
  _resolver(value?: unknown): void;
  _rejecter(err: unknown): void;
}

interface FoldingClient {
  transaction(container: unknown, config: unknown, outerTx: unknown): unknown;
}

const FOLD = '__fold';

function foldTransactions(knex: Knex): void {
  const client = knex.client as unknown as FoldingClient;
  const transaction = client.transaction.bind(client);
  client.transaction = (container, trxConfig, outerTx) => {
    const created = transaction(container, trxConfig, outerTx);
    const fold = (trxConfig as Record<string, Fold | undefined> | undefined)?.[FOLD];
    // knex calls begin() and commit() later (the container runs after a connection is
    // acquired), so replacing them on the new instance is in time.
    if (fold && !outerTx) {
      const trx = created as KnexTransactionInternals;
      const commit = trx.commit.bind(trx);
      trx.begin = async (conn) => {
        try {
          const results = (await conn.query(`BEGIN; ${fold.first}`)) as unknown as { rows: unknown[] }[];
          fold.rows = results[1]?.rows ?? [];
          return results;
        } catch (err) {
          await conn.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      };
      trx.commit = (conn, value) => {
        const last = fold.beforeCommit;
        if (last === undefined) return commit(conn, value);
        // As knex's commit: completed at once; the outcome reaches executionPromise.
        trx._completed = true;
        return conn.query(`${last}; COMMIT`).then(
          () => trx._resolver(value),
          async (err: unknown) => {
            // The last statement failed (the transaction is aborted, COMMIT was skipped) or
            // COMMIT did (the transaction is over): either way nothing was committed.
            await conn.query('ROLLBACK').catch(() => undefined);
            trx._rejecter(err);
          },
        );
      };
    }
    return created;
  };
}

/**
 * A transaction on one pooled connection whose BEGIN is sent together with `first` (a
 * complete statement, literals quoted with `sqlLiteral`), answering the transaction, the
 * rows `first` returned and its fold (see above). Commit with `commitTransaction`.
 */
export async function foldedTransaction<R>(knex: Knex, first: string): Promise<{ trx: Knex.Transaction; rows: R[]; fold: CommitFold }> {
  const fold: Fold = { first };
  const trx = await knex.transaction(undefined, { [FOLD]: fold } as Knex.TransactionConfig);
  return { trx, rows: (fold.rows ?? []) as R[], fold };
}

/**
 * True when Postgres itself refused a statement with severity ERROR: the session survives
 * and the transaction is rolled back (for the fold's last statement or its COMMIT: nothing
 * was committed). Socket errors (ECONNRESET, EPIPE, timeouts) and FATAL/PANIC errors are not
 * refusals: a COMMIT may have gone through before them.
 */
export function pgRefused(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.severity === 'ERROR';
}

/** A value as an SQL literal for the simple-protocol statements of a fold (strings quoted by pg's escapeLiteral). */
export function sqlLiteral(value: string | number | Date | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`sqlLiteral: ${value} is not a finite number`);
    return String(value);
  }
  return pg.escapeLiteral(value instanceof Date ? value.toISOString() : value);
}

// ---------------------------------------------------------------------------------------
// The pool guard (ARCHITECTURE rule 7). Code that holds a pooled connection, a keyed
// request's transaction or any `db.transaction(fn)`, must never wait for a second
// connection of the same pool: enough such requests at once (one account, under its rate
// limit) each hold one connection and wait for another, and the whole pool deadlocks.
// In development and test every acquisition checks whether the code asking already holds
// a connection of that pool, and throws if it does, naming what holds it.

interface Holding {
  /** The pool's client (one per knex instance). */
  client: object;
  what: string;
  /** Set when the connection has gone back; later work started from that code may acquire. */
  released: boolean;
}

const holding = new AsyncLocalStorage<Holding>();

export class SecondConnectionError extends Error {
  constructor(what: string) {
    super(
      `pool guard: code holding a pooled connection (${what}) asked the same pool for a second one. ` +
        'Pass the transaction down (txOf(ctx) / trx) or do this work before the transaction opens or after it commits (ARCHITECTURE rule 7).',
    );
    this.name = 'SecondConnectionError';
  }
}

/**
 * Runs `work` marked as holding one connection of `knex`'s pool (the idempotency
 * middleware wraps a keyed request's handlers in it). A no-op without the guard.
 */
export async function holdingConnection<T>(knex: Knex, what: string, work: () => Promise<T>): Promise<T> {
  const state: Holding = { client: knex.client as object, what, released: false };
  try {
    return await holding.run(state, work);
  } finally {
    state.released = true;
  }
}

interface GuardedClient {
  acquireConnection(): Promise<unknown>;
  transaction(container: unknown, config: unknown, outerTx: unknown): unknown;
}

function guardPool(knex: Knex): void {
  const client = knex.client as unknown as GuardedClient;
  const acquire = client.acquireConnection.bind(client);
  client.acquireConnection = () => {
    const held = holding.getStore();
    if (held && !held.released && held.client === client) return Promise.reject(new SecondConnectionError(held.what));
    return acquire();
  };
  // Every `db.transaction(fn)`: `fn` runs marked as holding the transaction's connection.
  const transaction = client.transaction.bind(client);
  client.transaction = (container, trxConfig, outerTx) => {
    if (typeof container !== 'function') return transaction(container, trxConfig, outerTx);
    const fn = container as (trx: unknown) => unknown;
    return transaction(
      (trx: unknown) => {
        const state: Holding = { client, what: 'a transaction', released: false };
        const result = holding.run(state, () => fn(trx));
        if (result instanceof Promise) {
          return result.finally(() => {
            state.released = true;
          });
        }
        state.released = true;
        return result;
      },
      trxConfig,
      outerTx,
    );
  };
}

/** The process-wide connection pool. */
export const db: Knex = createDb();

/** Postgres error codes we act on. */
export const PG = {
  uniqueViolation: '23505',
  checkViolation: '23514',
  foreignKeyViolation: '23503',
  serializationFailure: '40001',
  deadlock: '40P01',
} as const;

export function pgErrorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}

export function pgConstraint(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'constraint' in err && typeof err.constraint === 'string') {
    return err.constraint;
  }
  return undefined;
}

/**
 * Commits a transaction opened without a handler (`await db.transaction()`). knex's
 * `trx.commit()` resolves even when the COMMIT itself fails (a deferred constraint, a
 * connection cut mid-commit); only `executionPromise` rejects. Awaiting both means a
 * caller never answers 2xx for a change that was not committed (found by npm run chaos:
 * a release answered 200 while the terminated connection rolled it back).
 */
export async function commitTransaction(trx: Knex.Transaction): Promise<void> {
  await trx.commit();
  await trx.executionPromise;
}

/** Runs `fn` in the caller's transaction when given one, otherwise in a new transaction. */
export async function inTransaction<T>(trx: Db | undefined, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if (trx && trx.isTransaction) return fn(trx as Knex.Transaction);
  return (trx ?? db).transaction(fn);
}

interface PgConnection {
  query<R>(config: { name: string; text: string; values: unknown[] } | string): Promise<{ rows: R[] }>;
}

interface PoolClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<void>;
}

/**
 * A named (server-side prepared) statement on a pooled connection, for the few queries
 * that run on every request (bench/: knex's query building and an unnamed parse per call
 * cost more than the query itself). Each connection prepares the statement once.
 */
export async function prepared<R>(name: string, text: string, values: unknown[], knex: Knex = db): Promise<R[]> {
  return withConnection(knex, async (connection) => {
    const conn = connection as PgConnection & NamedStatementCache;
    if (conn[STALE]?.delete(name)) {
      // Prepared before a migration changed its result's columns (see below): prepared anew.
      await connection.query(`DEALLOCATE ${name}`).catch(() => undefined);
      delete conn.connection?.parsedStatements[name];
      delete conn.connection?.submittedNamedStatements?.[name];
    }
    try {
      return (await connection.query<R>({ name, text, values })).rows;
    } catch (err) {
      // `SELECT *` / `RETURNING *` prepared on this connection before a migration added a
      // column fails with 0A000 "cached plan must not change result type". The statement
      // (and, in a transaction, the transaction) fails this once; the next call on this
      // connection deallocates it and prepares it again.
      if (pgErrorCode(err) === '0A000') (conn[STALE] ??= new Set()).add(name);
      throw err;
    }
  });
}

const STALE = Symbol('stale named statements');

/** What `prepared` touches on a pg client: pg's own record of the names it prepared (pg 8, lib/connection.js), and the names to prepare anew. */
interface NamedStatementCache {
  connection?: { parsedStatements: Record<string, string>; submittedNamedStatements?: Record<string, string> };
  [STALE]?: Set<string>;
}

/**
 * A statement built with knex (`?` bindings) run as a named statement, its name taken from
 * its text: for the few large statements every money request sends (a creation's CTE, an
 * event with its jobs), which Postgres would otherwise parse and plan on every call. Only
 * for statements whose text has a few shapes (the names are bounded by them: each
 * connection keeps one prepared statement per shape).
 */
export async function preparedRaw<R>(knex: Knex, sql: string, bindings: readonly unknown[]): Promise<R[]> {
  return preparedNative<R>(knex, knex.raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative());
}

/** `preparedRaw` for a statement knex already turned into `$n` text (a builder's `toSQL().toNative()`). */
export async function preparedNative<R>(knex: Knex, native: { sql: string; bindings: readonly unknown[] }): Promise<R[]> {
  const name = `k_${createHash('sha1').update(native.sql).digest('hex').slice(0, 24)}`;
  return prepared<R>(name, native.sql, [...native.bindings], knex);
}

/** Runs `work` on one pooled connection, given back to the pool afterwards. */
async function withConnection<T>(knex: Knex, work: (connection: PgConnection) => Promise<T>): Promise<T> {
  // A finished transaction's client still hands out its connection (knex 3); knex's own
  // queries refuse to run then, and so do these: the connection may be another request's now.
  if (knex.isTransaction && (knex as Knex.Transaction).isCompleted()) throw new Error('query on a transaction that has already committed or rolled back');
  const client = knex.client as unknown as PoolClient;
  const connection = await client.acquireConnection();
  try {
    return await work(connection);
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * A bookkeeping write that need not survive a crash (when a key or session was last
 * used): one round trip, committed without waiting for the disk (synchronous_commit off
 * for this transaction only). Money and state never go through here. Values are quoted
 * with pg's escapeLiteral; the statement is ours.
 */
export async function bookkeepingWrite(sql: string, values: (string | Date)[], knex: Knex = db): Promise<void> {
  const text = sql.replace(/\$(\d+)/g, (_, i: string) => {
    const value = values[Number(i) - 1];
    if (value === undefined) throw new Error(`bookkeepingWrite: no value for $${i}`);
    return pg.escapeLiteral(value instanceof Date ? value.toISOString() : value);
  });
  await withConnection(knex, async (connection) => {
    try {
      await connection.query(`BEGIN; SET LOCAL synchronous_commit TO off; ${text}; COMMIT`);
    } catch (err) {
      await connection.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}
