import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
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

/**
 * The `statement_timeout` (ms, 0: none) given to each new connection of the process-wide
 * pool (`db`); see `limitStatements`.
 */
let processStatementTimeoutMs = 0;

/**
 * From now on every new connection of `db` runs with `statement_timeout` = `ms` (0: none).
 * The API entry (api/server.ts) calls it before it takes any connection, with
 * API_STATEMENT_TIMEOUT_MS (issue 42, review R3: no tenant request holds a Postgres backend
 * longer); workers, migrations, the CLI and the bench seeds never do, so their long
 * statements run. A connection already open keeps the timeout it was made with.
 */
export function limitStatements(ms: number): void {
  processStatementTimeoutMs = ms;
}

/** What knex's pool hands `afterCreate`: the new node-postgres client. */
type NewConnection = pg.Client;

/**
 * `statementTimeoutMs`: the `statement_timeout` of each new connection (undefined: the
 * process's, see `limitStatements`; 0: none). Set with a bound `set_config` in knex's
 * documented `pool.afterCreate`, before the connection is handed out.
 */
export function createDb(url = config.databaseUrl, poolMax = config.databasePoolMax, guard = config.databasePoolGuard, statementTimeoutMs?: number): Knex {
  const knex = knexFactory({
    client: 'pg',
    connection: { connectionString: url, application_name: 'escrow' },
    pool: {
      min: 0,
      max: poolMax,
      afterCreate(conn: NewConnection, done: (err: Error | null, conn: NewConnection) => void) {
        const ms = statementTimeoutMs ?? processStatementTimeoutMs;
        if (ms <= 0) {
          done(null, conn);
          return;
        }
        conn.query('SELECT set_config($1, $2, false)', ['statement_timeout', String(ms)]).then(
          () => done(null, conn),
          (err: Error) => done(err, conn),
        );
      },
    },
    acquireConnectionTimeout: 10_000,
  });
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
//
// The frame is built here, not by knex.transaction(): knex makes a whole knex instance per
// transaction (a closure for each of its 123 builder methods, property definitions, an
// event emitter and eight listeners), about 170 µs of CPU on this machine against 30 µs for
// the transaction itself: the largest single cost of a keyed request after its round trips
// (bench/escrows/README.md). Here every builder method lives once on a shared prototype and
// a transaction is one small object: a callable (`trx('table')`), a client that always
// hands out the transaction's connection and refuses queries once it is over (as knex's
// transaction client does), commit and rollback. It offers what the services use of a
// knex transaction (the builder, raw, isCompleted, commit, rollback, executionPromise); a
// nested transaction (a savepoint) is refused.

/** What a folded transaction carries: set `beforeCommit` to send that statement with COMMIT. */
export interface CommitFold {
  beforeCommit?: string;
}

/**
 * A read sent with a folded transaction's first statement, in the same round trip and the
 * same transaction, right after it (a keyed route's escrow, a setting, a counterparty: what
 * its service reads first anyway). Its rows wait under `key` until the service asks for
 * them with `takeReadAhead`, once: a second read of the same row in that transaction goes
 * to the database. `sql` is a complete statement with literals quoted by `sqlLiteral`; a
 * read-ahead nobody takes costs nothing but its row.
 */
export interface ReadAhead {
  key: string;
  sql: string;
}

const requireCjs = createRequire(import.meta.url);
/** knex 3's builder methods, which a knex instance forwards to a new query builder (lib/query/method-constants.js). */
const BUILDER_METHODS = requireCjs('knex/lib/query/method-constants.js') as readonly string[];
/** node-postgres's own conversion of a parameter to its text (pg 8, lib/utils.js): Dates, arrays, objects as JSON, Buffers. */
const { prepareValue: pgPrepareValue } = requireCjs('pg/lib/utils.js') as { prepareValue: (this: void, value: unknown) => unknown };

/** The parts of a knex client (knex 3, lib/client.js) a frame's client uses or overrides. */
interface KnexClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
  query(connection: PgConnection, obj: unknown): Promise<unknown>;
  stream(connection: PgConnection, obj: unknown, stream: unknown, options: unknown): Promise<unknown>;
  queryBuilder(): Record<string, (...args: unknown[]) => unknown>;
  raw(...args: unknown[]): unknown;
  ref(...args: unknown[]): unknown;
}

/** One transaction's state, held by its client and its callable. */
interface Frame {
  /** The client that acquired the connection (the pool's); it gets the connection back. */
  pool: KnexClient;
  connection: PgConnection;
  fold: CommitFold;
  completed: boolean;
  /** Read-ahead rows not taken yet, by key. */
  ahead: Map<string, unknown[]> | undefined;
  /** Writes handed to `writeAtCommit` not sent yet, in order (see `flushAtCommit`). */
  atCommit: string[];
  /** The named statements the held writes execute (marked stale when the COMMIT fails with 0A000). */
  atCommitNames: string[];
  resolve(value?: unknown): void;
  reject(err: unknown): void;
}

const FRAME = Symbol('folded transaction frame');
type FrameClient = KnexClient & { [FRAME]: Frame };
type Transactor = ((table?: string, options?: unknown) => unknown) & { client: FrameClient; [FRAME]: Frame };

function completedError(): Error {
  return new Error('Transaction query already complete: the transaction has already committed or rolled back');
}

/** A frame's knex statements before the last: refused on another connection; see `readyFrame`. */
function frameChecked<T>(client: FrameClient, connection: PgConnection, run: () => Promise<T>): Promise<T> {
  if (connection !== client[FRAME].connection) return Promise.reject(new Error('Invalid connection for transaction query.'));
  return readyFrame(client[FRAME]).then(run);
}

/** Before any statement of a frame: refused once the transaction is over; the writes held for COMMIT go first. */
async function readyFrame(frame: Frame): Promise<void> {
  if (frame.completed) throw completedError();
  if (frame.atCommit.length === 0) return;
  await flushAtCommit(frame);
  if (frame.completed) throw completedError();
}

/**
 * Writes held for COMMIT (`writeAtCommit`) are sent before any later statement of the
 * transaction, so its statements always run in the order the code issued them: a write is
 * held only while nothing follows it (as in a move that ends with its event).
 */
async function flushAtCommit(frame: Frame): Promise<void> {
  while (frame.atCommit.length > 0) {
    const text = frame.atCommit.join('; ');
    frame.atCommit = [];
    await frame.connection.query(text).catch((err: unknown) => {
      markStale(frame.connection, err, frame.atCommitNames);
      throw err;
    });
  }
}

/** The frame of a folded transaction, or undefined for a pool or a knex transaction. */
function frameOf(knex: Db): Frame | undefined {
  return (knex as unknown as Partial<Transactor>)[FRAME];
}

/**
 * Before a named statement on `knex`: refused once its transaction is over (a finished
 * transaction's client still hands out its connection, which may be another request's
 * now; knex's own queries refuse then too); in a frame, the writes held for COMMIT go first.
 */
async function beforeStatement(knex: Db): Promise<void> {
  const frame = frameOf(knex);
  if (frame) return readyFrame(frame);
  if (knex.isTransaction && (knex as Knex.Transaction).isCompleted()) {
    throw new Error('query on a transaction that has already committed or rolled back');
  }
}

/** Per pool (knex instance): the prototypes every frame of that pool shares. */
const framePrototypes = new WeakMap<object, { client: object; transactor: object }>();

function prototypesOf(pool: KnexClient): { client: object; transactor: object } {
  const known = framePrototypes.get(pool);
  if (known) return known;
  // The client: the pool's own client underneath (config, compilers, its event listeners,
  // which forward to the knex instance as knex's transaction client does), with the
  // connection fixed to the frame's.
  const client = Object.create(pool) as FrameClient & { transacting: boolean };
  client.transacting = true;
  client.acquireConnection = function (this: FrameClient) {
    return Promise.resolve(this[FRAME].connection);
  };
  client.releaseConnection = () => Promise.resolve();
  client.query = function (this: FrameClient, connection, obj) {
    return frameChecked(this, connection, () => pool.query.call(this, connection, obj));
  };
  client.stream = function (this: FrameClient, connection, obj, stream, options) {
    return frameChecked(this, connection, () => pool.stream.call(this, connection, obj, stream, options));
  };
  // The callable's methods: each builder method starts a builder on the frame's client.
  const transactor: Record<string | symbol, unknown> = Object.create(Function.prototype) as Record<string, unknown>;
  for (const method of BUILDER_METHODS) {
    transactor[method] = function (this: Transactor, ...args: unknown[]) {
      const builder = this.client.queryBuilder();
      return builder[method]!.apply(builder, args);
    };
  }
  Object.assign(transactor, {
    isTransaction: true,
    userParams: Object.freeze({}),
    queryBuilder(this: Transactor) {
      return this.client.queryBuilder();
    },
    raw(this: Transactor, ...args: unknown[]) {
      return this.client.raw(...args);
    },
    ref(this: Transactor, ...args: unknown[]) {
      return this.client.ref(...args);
    },
    transaction() {
      throw new Error('a folded transaction does not open nested transactions (savepoints)');
    },
    savepoint() {
      throw new Error('a folded transaction does not open nested transactions (savepoints)');
    },
    isCompleted(this: Transactor) {
      return this[FRAME].completed;
    },
    commit(this: Transactor, value?: unknown) {
      return finishFrame(this[FRAME], 'commit', value);
    },
    rollback(this: Transactor, error?: unknown) {
      return finishFrame(this[FRAME], 'rollback', error);
    },
  });
  const prototypes = { client, transactor };
  framePrototypes.set(pool, prototypes);
  return prototypes;
}

/**
 * Ends a frame: COMMIT (with the fold's last statement) or ROLLBACK, then the connection
 * goes back to the pool and `executionPromise` settles: resolved on a commit (and on a
 * rollback without an error, as knex's doNotRejectOnRollback), rejected with the failure,
 * or with the error a rollback was given. A frame already over is left alone.
 */
async function finishFrame(frame: Frame, how: 'commit' | 'rollback', value?: unknown): Promise<void> {
  if (frame.completed) return;
  frame.completed = true;
  const { connection, pool } = frame;
  let failure: { err: unknown } | undefined;
  try {
    if (how === 'commit') {
      const last = frame.fold.beforeCommit;
      const parts = last === undefined ? frame.atCommit : [...frame.atCommit, last];
      await connection.query(parts.length === 0 ? 'COMMIT' : `${parts.join('; ')}; COMMIT`);
    } else {
      await connection.query('ROLLBACK');
    }
  } catch (err) {
    failure = { err };
    markStale(frame.connection, err, frame.atCommitNames);
    // The last statement failed (the transaction is aborted, COMMIT was skipped) or COMMIT
    // did (the transaction is over): either way nothing was committed; a ROLLBACK leaves
    // the session outside any transaction (or fails on a lost connection, which knex's pool
    // then discards, as its 'error' listener marked it).
    if (how === 'commit') await connection.query('ROLLBACK').catch(() => undefined);
  } finally {
    await pool.releaseConnection(connection);
  }
  if (failure) {
    frame.reject(failure.err);
    if (how === 'rollback') throw failure.err;
  } else if (how === 'rollback' && value !== undefined) frame.reject(value);
  else frame.resolve(how === 'commit' ? value : undefined);
}

/**
 * A transaction on one pooled connection whose BEGIN is sent together with `first` (a
 * complete statement, literals quoted with `sqlLiteral`) and the reads in `ahead`,
 * answering the transaction, the rows `first` returned and its fold (see above). Commit
 * with `commitTransaction`.
 */
export async function foldedTransaction<R>(
  knex: Knex,
  first: string,
  ahead: readonly ReadAhead[] = [],
): Promise<{ trx: Knex.Transaction; rows: R[]; fold: CommitFold }> {
  const pool = knex.client as unknown as KnexClient;
  const prototypes = prototypesOf(pool);
  const connection = await pool.acquireConnection();
  let rows: R[];
  let aheadRows: Map<string, unknown[]> | undefined;
  try {
    const text = ahead.length === 0 ? `BEGIN; ${first}` : `BEGIN; ${first}; ${ahead.map((a) => a.sql).join('; ')}`;
    const results = (await connection.query(text)) as unknown as { rows: unknown[] }[];
    rows = (results[1]?.rows ?? []) as R[];
    if (ahead.length > 0) aheadRows = new Map(ahead.map((a, i) => [a.key, results[2 + i]?.rows ?? []]));
  } catch (err) {
    await connection.query('ROLLBACK').catch(() => undefined);
    await pool.releaseConnection(connection);
    throw err;
  }
  const fold: CommitFold = {};
  let resolve!: (value?: unknown) => void;
  let reject!: (err: unknown) => void;
  const executionPromise = new Promise<unknown>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Its outcome reaches whoever awaits it (commitTransaction); nobody else must.
  executionPromise.catch(() => undefined);
  const frame: Frame = { pool, connection, fold, completed: false, ahead: aheadRows, atCommit: [], atCommitNames: [], resolve, reject };
  const client = Object.create(prototypes.client) as FrameClient;
  client[FRAME] = frame;
  const trx = function (table?: string, options?: unknown) {
    const builder = client.queryBuilder();
    return table ? builder.table!(table, options) : builder;
  } as Transactor;
  Object.setPrototypeOf(trx, prototypes.transactor);
  trx.client = client;
  trx[FRAME] = frame;
  (trx as unknown as { executionPromise: Promise<unknown> }).executionPromise = executionPromise;
  return { trx: trx as unknown as Knex.Transaction, rows, fold };
}

/**
 * `work` in a folded transaction of its own (`foldedTransaction`: BEGIN goes with `first`
 * and the reads in `ahead`), committed when it returns (with the writes it held for
 * COMMIT, in the same round trip), rolled back when it throws.
 */
export async function inFoldedTransaction<R, T>(
  knex: Knex,
  first: string,
  ahead: readonly ReadAhead[],
  work: (trx: Knex.Transaction, rows: R[]) => Promise<T>,
): Promise<T> {
  const { trx, rows } = await foldedTransaction<R>(knex, first, ahead);
  let out: T;
  try {
    out = await work(trx, rows);
  } catch (err) {
    if (!trx.isCompleted()) await trx.rollback().catch(() => undefined);
    throw err;
  }
  await commitTransaction(trx);
  return out;
}

/**
 * A write whose outcome the request does not need (an escrow's event and its outbox jobs),
 * run in `trx`. In a folded transaction it is held and sent before the transaction's next
 * statement, so statements always run in the order the code issued them: in the same round
 * trip as `readTogether`'s reads or the COMMIT (before the stored answer), in one of its own
 * before any other statement. A move that ends with its writes and then its answer's reads
 * spends no round trip on them. Anywhere else it
 * runs now, as a named statement. Either way it commits with the transaction's other work
 * or not at all; a failure at COMMIT fails the COMMIT (the request answers 5xx, nothing
 * committed). `native` is knex's `$n` form (`toSQL().toNative()`): held, it is sent as
 * `EXECUTE` of the statement prepared on the connection (`preparedOn`) with its values as
 * literals.
 */
export async function writeAtCommit(trx: Db, native: NativeStatement): Promise<void> {
  const frame = frameOf(trx);
  if (!frame) {
    await preparedNative(trx as Knex, native);
    return;
  }
  if (frame.completed) throw completedError();
  const name = statementName(native.sql);
  await preparedOn(frame.connection, () => frame.completed, name, native.sql);
  if (frame.completed) throw completedError();
  frame.atCommit.push(executeOf(name, native.bindings));
  frame.atCommitNames.push(name);
}

/**
 * `name` prepared on the frame's connection (`PREPARE`, one round trip the first time on
 * each connection; a prepared statement outlives a rollback), shared with `prepared`: the
 * same name is the same statement whichever sends it. A held write then goes as `EXECUTE`
 * with its values as literals: Postgres neither parses nor plans it again, as it would a
 * statement sent as text (measured: the creation's CTE as text cost more in the database
 * than the round trip it saved).
 */
async function preparedOn(connection: PgConnection, over: () => boolean, name: string, text: string): Promise<void> {
  const conn = connection as PgConnection & NamedStatementCache;
  const parsed = conn.connection?.parsedStatements;
  if (!parsed) throw new Error('preparedOn: the connection keeps no record of its prepared statements (pg changed?)');
  // (Each statement only while the transaction still owns the connection: work not awaited
  // by the handler must not reach a connection already back in the pool.)
  if (conn[STALE]?.has(name)) {
    if (over()) throw completedError();
    await deallocateStale(conn, name);
  }
  if (parsed[name] === text) return;
  if (over()) throw completedError();
  await connection.query(`PREPARE ${name} AS ${text}`);
  parsed[name] = text;
}

/** After a failure of statements prepared on `connection` (`names`): 0A000 (a migration changed a prepared statement's result type) prepares them anew next time. */
function markStale(connection: PgConnection, err: unknown, names: readonly string[]): void {
  if (pgErrorCode(err) !== '0A000') return;
  const conn = connection as PgConnection & NamedStatementCache;
  for (const name of names) (conn[STALE] ??= new Set()).add(name);
}

/** A statement in knex's `$n` form with its values (a builder's `toSQL().toNative()`, `nativeOf`). */
export interface NativeStatement {
  sql: string;
  bindings: readonly unknown[];
}

/**
 * Several reads answered in one round trip, each one's rows in the order given (a deal's
 * answer: its events, decisions, approval slots, documents and payouts). Each read is a
 * statement prepared on the connection (`preparedOn`: a `PREPARE` round trip the first
 * time on each connection) sent as `EXECUTE` with its values as literals, all in one
 * query: Postgres neither parses nor plans them again, and outside a transaction they
 * share one snapshot (one implicit transaction). In a folded transaction the writes held
 * for COMMIT (`writeAtCommit`) go first in that same round trip, so the reads see them and
 * statements still run in the order the code issued them. Only for statements whose text
 * has a few shapes (see `preparedRaw`): a list of ids as one array value (`= ANY(?)`), not
 * `IN (?, ?, …)`.
 */
export async function readTogether(trx: Db, reads: readonly NativeStatement[]): Promise<unknown[][]> {
  if (reads.length === 0) return [];
  const frame = frameOf(trx);
  if (frame) {
    if (frame.completed) throw completedError();
    return executeTogether(frame.connection, () => frame.completed, reads, frame);
  }
  return withConnection(trx as Knex, async (connection) => {
    await beforeStatement(trx);
    return executeTogether(connection, () => trx.isTransaction === true && (trx as Knex.Transaction).isCompleted(), reads);
  });
}

async function executeTogether(connection: PgConnection, over: () => boolean, reads: readonly NativeStatement[], frame?: Frame): Promise<unknown[][]> {
  const names: string[] = [];
  for (const read of reads) {
    const name = statementName(read.sql);
    await preparedOn(connection, over, name, read.sql);
    names.push(name);
  }
  if (over()) throw completedError();
  const held = frame?.atCommit ?? [];
  if (frame) frame.atCommit = [];
  const executes = reads.map((read, i) => executeOf(names[i]!, read.bindings));
  let results: unknown;
  try {
    results = await connection.query<unknown>([...held, ...executes].join('; '));
  } catch (err) {
    markStale(connection, err, [...(frame?.atCommitNames ?? []), ...names]);
    throw err;
  }
  // Several statements in one query: pg answers one result per statement (a lone one, not in an array).
  const all = (Array.isArray(results) ? results : [results]) as { rows: unknown[] }[];
  return all.slice(held.length).map((r) => r.rows);
}

/** `EXECUTE` of statement `name` prepared on the connection, its values as literals (`literalOf`). */
function executeOf(name: string, bindings: readonly unknown[]): string {
  return bindings.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${bindings.map((v, i) => literalOf(v, i + 1)).join(', ')})`;
}

/** `$n` placeholders replaced by their values as literals, each as node-postgres would send it as a parameter (prepareValue). */
export function inlineValues(sql: string, values: readonly unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_, i: string) => {
    const index = Number(i) - 1;
    if (index < 0 || index >= values.length) throw new Error(`inlineValues: no value for $${i}`);
    return literalOf(values[index], index + 1);
  });
}

/** Parameter `$n`'s value as a literal, as node-postgres would send it (prepareValue). */
function literalOf(raw: unknown, n: number): string {
  const value = pgPrepareValue(raw);
  if (value === null || value === undefined) return 'NULL';
  if (typeof value !== 'string') throw new Error(`inlineValues: $${n} is not text (${typeof value})`);
  return quoteLiteral(value);
}

/** A stand-in for a `shaped` statement's value (an empty array for a list: knex's whereIn then places none). */
class Slot {}

/**
 * A knex query whose text never changes, only its values (a deal answer's reads): knex
 * builds it once, with a stand-in where each value goes, and every call puts its values in
 * their places, instead of building the same text again on every request. `build` gets
 * the pool's knex (the text is the same on any transaction) and the stand-ins: it may only
 * place them, never look at them. Refused at the first call (an Error) when a value is not
 * exactly one parameter of the text: a list must be one array value (`= ANY(?::uuid[])`),
 * never `whereIn`, whose text grows with the list.
 */
export function shaped<A extends unknown[]>(build: (knex: Knex, ...values: A) => { toSQL(): { toNative(): NativeStatement } }): (...values: A) => NativeStatement {
  let template: { sql: string; bindings: readonly unknown[]; valueAt: readonly number[] } | undefined;
  return (...values: A): NativeStatement => {
    template ??= templateOf(build, values);
    const { valueAt } = template;
    return { sql: template.sql, bindings: template.bindings.map((b, i) => (valueAt[i]! >= 0 ? values[valueAt[i]!] : b)) };
  };
}

function templateOf<A extends unknown[]>(build: (knex: Knex, ...values: A) => { toSQL(): { toNative(): NativeStatement } }, values: A) {
  const stands = values.map((v) => (Array.isArray(v) ? [] : new Slot()));
  const native = build(db, ...(stands as unknown as A)).toSQL().toNative();
  // For each parameter, the value it takes (-1: a constant of the text, kept).
  const valueAt = native.bindings.map((b) => stands.indexOf(b as Slot));
  const placed = valueAt.filter((v) => v >= 0);
  if (placed.length !== values.length || new Set(placed).size !== values.length) {
    throw new Error(`shaped: each of the ${values.length} values must be exactly one parameter of the text (a list as one array value, = ANY(?), never whereIn): ${native.sql}`);
  }
  return { ...native, valueAt };
}

/** A knex query as a `ReadAhead` under `key`: its text with the values as literals (`inlineValues`), so the read and its read-ahead are one query. */
export function readAheadOf(key: string, query: { toSQL(): { toNative(): NativeStatement } }): ReadAhead {
  const native = query.toSQL().toNative();
  return { key, sql: inlineValues(native.sql, native.bindings) };
}

/**
 * The rows a read-ahead of `trx` (see `ReadAhead`) brought for `key`, handed out once; undefined when
 * `trx` is not a folded transaction, has none under `key`, or is over.
 */
export function takeReadAhead<R>(trx: Db, key: string): R[] | undefined {
  const frame = frameOf(trx);
  if (!frame?.ahead || frame.completed) return undefined;
  const rows = frame.ahead.get(key);
  if (rows === undefined) return undefined;
  frame.ahead.delete(key);
  return rows as R[];
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

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

/**
 * True for a failure of the database itself rather than of our code: an error Postgres sent
 * (any severity: a statement refused, a timeout, a cancelled or terminated backend), no
 * connection from the pool in time (knex's KnexTimeoutError), or the connection lost.
 */
export function isDatabaseFailure(err: unknown): boolean {
  if (err instanceof pg.DatabaseError || err instanceof knexFactory.KnexTimeoutError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return (typeof code === 'string' && CONNECTION_CODES.has(code)) || /^Connection terminated/.test(err.message);
}

/**
 * `text` as a quoted SQL string literal, exactly as pg's `escapeLiteral` writes it (quotes
 * doubled; with a backslash, backslashes doubled too and the ` E'…'` form), without its
 * character-by-character concatenation: on a keyed request's 1 KB stored answer that loop
 * made about 15% of all the bytes the API allocated (a heap sampling profile of the
 * creation, bench/escrows README). A property test holds it equal to `escapeLiteral`.
 */
export function quoteLiteral(text: string): string {
  const quoted = text.includes("'") ? text.replaceAll("'", "''") : text;
  return text.includes('\\') ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/** A value as an SQL literal for the simple-protocol statements of a fold (strings quoted by `quoteLiteral`). */
export function sqlLiteral(value: string | number | Date | null): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`sqlLiteral: ${value} is not a finite number`);
    return String(value);
  }
  return quoteLiteral(value instanceof Date ? value.toISOString() : value);
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
  // Unguarded (production): no AsyncLocalStorage.run, whose promise hooks would then follow
  // every promise of the process.
  if (!guarded.has(knex.client as object)) return work();
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

/** The pools' clients that `guardPool` wrapped. */
const guarded = new WeakSet<object>();

function guardPool(knex: Knex): void {
  const client = knex.client as unknown as GuardedClient;
  guarded.add(client);
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
  invalidParameterValue: '22023',
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
    await beforeStatement(knex);
    const conn = connection as PgConnection & NamedStatementCache;
    if (conn[STALE]?.has(name)) {
      // Prepared before a migration changed its result's columns (see below): prepared anew.
      await deallocateStale(conn, name);
      await beforeStatement(knex);
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

/**
 * A stale statement deallocated, then forgotten by pg (so the next call prepares it
 * anew). Only once Postgres confirms it is gone (or never existed, 26000): a DEALLOCATE
 * refused in an aborted transaction leaves it prepared on the server, and forgetting it
 * then would make every later PREPARE of that name fail (42P05) on this connection; it
 * stays stale and the error goes to the caller.
 */
async function deallocateStale(conn: PgConnection & NamedStatementCache, name: string): Promise<void> {
  try {
    await conn.query(`DEALLOCATE ${name}`);
  } catch (err) {
    if (pgErrorCode(err) !== '26000') throw err;
  }
  conn[STALE]?.delete(name);
  delete conn.connection?.parsedStatements[name];
  delete conn.connection?.submittedNamedStatements?.[name];
}

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
  return preparedNative<R>(knex, nativeOf(knex, sql, bindings));
}

/**
 * SQL with `?` bindings in knex's `$n` form (what `preparedNative` and `writeAtCommit` take).
 * The money paths call it with a few fixed texts on every request: each text's `$n` form
 * is made once and remembered (`positionedText`), the values kept as they are, which is
 * what knex's raw gives for plain values. Knex itself does it when a value is a knex query,
 * raw or callback (spliced into the text), the text has `??` (an identifier) or a
 * backslash (an escaped `?`), or the values do not match the text (knex's error).
 */
export function nativeOf(knex: Db, sql: string, bindings: readonly unknown[]): NativeStatement {
  const text = positionedText(sql);
  if (text === undefined || text.count !== bindings.length || !bindings.every(isPlainValue)) {
    return (knex as Knex).raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative();
  }
  return { sql: text.sql, bindings };
}

/** A value knex's raw passes through as one parameter: not undefined (knex refuses it), not a knex query, raw or callback. */
function isPlainValue(value: unknown): boolean {
  if (value === undefined || typeof value === 'function') return false;
  return !(typeof value === 'object' && value !== null && ('toSQL' in value || 'isRawInstance' in value));
}

/** `sql`'s `?`s numbered `$1`…`$n` (postgres positionBindings), with their count; undefined for a text knex must read itself. */
const positioned = new Map<string, { sql: string; count: number } | undefined>();
function positionedText(sql: string): { sql: string; count: number } | undefined {
  if (positioned.has(sql)) return positioned.get(sql);
  let text: { sql: string; count: number } | undefined;
  if (!sql.includes('??') && !sql.includes('\\')) {
    let count = 0;
    const numbered = sql.replace(/\?/g, () => `$${++count}`);
    text = { sql: numbered, count };
  }
  if (positioned.size < 10_000) positioned.set(sql, text);
  return text;
}

/** `preparedRaw` for a statement knex already turned into `$n` text (a builder's `toSQL().toNative()`). */
export async function preparedNative<R>(knex: Knex, native: { sql: string; bindings: readonly unknown[] }): Promise<R[]> {
  return prepared<R>(statementName(native.sql), native.sql, [...native.bindings], knex);
}

/** A statement's name from its text (`preparedNative`, `writeAtCommit`), remembered: texts come in a few shapes. */
const statementNames = new Map<string, string>();
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `k_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    if (statementNames.size < 10_000) statementNames.set(sql, name);
  }
  return name;
}

/** Runs `work` on one pooled connection, given back to the pool afterwards. */
async function withConnection<T>(knex: Knex, work: (connection: PgConnection) => Promise<T>): Promise<T> {
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
 * for this transaction only). Money and state never go through here. Values are inlined
 * as literals (`inlineValues`); the statement is ours.
 */
export async function bookkeepingWrite(sql: string, values: (string | Date)[], knex: Knex = db): Promise<void> {
  const text = inlineValues(sql, values);
  await withConnection(knex, async (connection) => {
    try {
      await connection.query(`BEGIN; SET LOCAL synchronous_commit TO off; ${text}; COMMIT`);
    } catch (err) {
      await connection.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  });
}
