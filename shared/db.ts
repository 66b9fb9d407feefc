import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import net from 'node:net';
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
 * Every transaction this service opens runs at READ COMMITTED, stated on its BEGIN rather
 * than left to the server's default (decision 0025): the money paths are written for it
 * (compare-and-set updates, row locks, `ledger_post_many`'s own locks), and a server set to
 * another default must not change what they mean.
 */
export const ISOLATION_LEVEL = 'read committed' as const;

/**
 * The `statement_timeout` (ms, 0: none) given to each new connection of the process-wide
 * pools (`db`); see `limitStatements`.
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

/** Per knex instance (`createDb`): its pipelined pool and what it was made with. */
interface Direct {
  url: string;
  poolMax: number;
  statementTimeoutMs: number | undefined;
  pool: pg.Pool | undefined;
}
const directs = new WeakMap<object, Direct>();

/**
 * A knex instance (the builder, `knex.transaction()`, its own pool of `poolMax`
 * connections) and beside it, made on first use, a node-postgres `pg.Pool` of as many
 * connections in pipeline mode (`pipeline: true`, pg 8.23): the keyed transactions, named
 * statements and reads sent together run there (see "One data path" below). `destroy()`
 * ends both.
 *
 * `statementTimeoutMs`: the `statement_timeout` of each new connection (undefined: the
 * process's, see `limitStatements`; 0: none): a bound `set_config` in knex's documented
 * `pool.afterCreate`, pg's `statement_timeout` connection option for the pipelined pool.
 */
export function createDb(url = config.databaseUrl, poolMax = config.databasePoolMax, guard = config.databasePoolGuard, statementTimeoutMs?: number): Knex {
  const knex = knexFactory({
    client: 'pg',
    connection: { connectionString: url, application_name: 'escrow' },
    pool: {
      min: 0,
      max: poolMax,
      afterCreate(conn: NewConnection, done: (err: Error | null, conn: NewConnection) => void) {
        // Every transaction of this connection (`db.transaction(fn)` included) at READ
        // COMMITTED, whatever the server's default (decision 0025).
        const ms = statementTimeoutMs ?? processStatementTimeoutMs;
        const settings = ms > 0
          ? conn.query('SELECT set_config($1, $2, false), set_config($3, $4, false)', ['default_transaction_isolation', ISOLATION_LEVEL, 'statement_timeout', String(ms)])
          : conn.query('SELECT set_config($1, $2, false)', ['default_transaction_isolation', ISOLATION_LEVEL]);
        settings.then(
          () => done(null, conn),
          (err: Error) => done(err, conn),
        );
      },
    },
    acquireConnectionTimeout: 10_000,
  });
  const direct: Direct = { url, poolMax, statementTimeoutMs, pool: undefined };
  directs.set(knex, direct);
  // knex.destroy() ends the pipelined pool too (every entry point calls it on shutdown).
  const destroyKnex = knex.destroy.bind(knex);
  const destroy = async (): Promise<void> => {
    const pool = direct.pool;
    direct.pool = undefined;
    await Promise.all([pool?.end(), destroyKnex()]);
  };
  Object.defineProperty(knex, 'destroy', { value: destroy, configurable: true, writable: true });
  if (guard) guardPool(knex);
  return knex;
}

/**
 * The pipelined pool's sockets: every write made in one turn of the event loop goes out in
 * one system call (Node's documented `cork()`/`uncork()`), so a flight of pipelined
 * statements (BEGIN, the key's statement, the read-aheads) leaves as one packet rather than
 * one per statement, for this process and for Postgres. Handed to node-postgres through its
 * documented `stream` option.
 */
class FlightSocket extends net.Socket {
  private corked = false;

  override write(chunk: Uint8Array | string, encodingOrCallback?: BufferEncoding | ((err?: Error | null) => void), callback?: (err?: Error | null) => void): boolean {
    if (!this.corked) {
      this.corked = true;
      this.cork();
      process.nextTick(() => {
        this.corked = false;
        this.uncork();
      });
    }
    return typeof encodingOrCallback === 'function' ? super.write(chunk, encodingOrCallback) : super.write(chunk, encodingOrCallback ?? 'utf8', callback);
  }
}

/** The pipelined pool of `knex` (made on first use). */
function directPool(knex: Knex): pg.Pool {
  const direct = directs.get(knex);
  if (!direct) throw new Error('db: this knex instance was not made by createDb');
  if (direct.pool) return direct.pool;
  const ms = direct.statementTimeoutMs ?? processStatementTimeoutMs;
  const pool = new pg.Pool({
    connectionString: direct.url,
    application_name: 'escrow',
    max: direct.poolMax,
    connectionTimeoutMillis: 10_000,
    ...(ms > 0 ? { statement_timeout: ms } : {}),
    pipeline: true,
    stream: () => new FlightSocket(),
  });
  // An idle connection that dies (a restarted or terminated backend) is dropped by the
  // pool; without a listener the 'error' event would end the process.
  pool.on('error', () => undefined);
  direct.pool = pool;
  return pool;
}

/**
 * A connection of `knex`'s pipelined pool, checked by the pool guard first (rule 7: code
 * that holds a connection of this database never waits for another).
 */
async function acquireDirect(knex: Knex): Promise<pg.PoolClient> {
  checkGuard(knex);
  const client = await directPool(knex).connect();
  // A connection that fails while checked out (a terminated backend) emits 'error': pg-pool
  // listens only while it is idle, and an unheard 'error' would end the process. The
  // failure reaches its statements as their error; the pool closes the connection on release.
  if (!client.listeners('error').includes(ignoreClientError)) client.on('error', ignoreClientError);
  return client;
}

function ignoreClientError(): void {}

/** Back to the pool; a connection that failed with a connection error or a stale statement (0A000) is closed instead. */
function releaseDirect(client: pg.PoolClient, failure?: unknown): void {
  client.release(failure !== undefined && spoilsConnection(failure) ? (failure instanceof Error ? failure : new Error('the connection failed')) : undefined);
}

/**
 * True when the connection must not be used again: its prepared statements are stale (0A000:
 * a migration changed a result type; node-postgres offers no way to forget one statement, so
 * the connection goes and its statements with it) or the connection itself failed.
 */
function spoilsConnection(err: unknown): boolean {
  if (pgErrorCode(err) === STALE_STATEMENT) return true;
  return isDatabaseFailure(err) && !(err instanceof pg.DatabaseError && err.severity === 'ERROR');
}

/** Postgres: "cached plan must not change result type". */
export const STALE_STATEMENT = '0A000';

// ---------------------------------------------------------------------------------------
// Statements. Every statement the service sends is text from code with `$n` placeholders
// and its values as bound parameters (never values written into the text: decision 0025,
// checked by test/unit/platform/public-apis.test.ts). The few that run on every request go
// as named statements, which Postgres parses and plans once per connection.

/** A statement in `$n` form with its values (a builder's `toSQL().toNative()`, `nativeOf`). */
export interface NativeStatement {
  sql: string;
  bindings: readonly unknown[];
}

/**
 * At most this many statement names per process, so at most this many prepared statements
 * per connection (node-postgres keeps every one it prepared until the connection closes).
 * Statements past the bound run unnamed: correct, parsed on each call.
 */
export const MAX_NAMED_STATEMENTS = 400;

/** Name → text of every named statement given out (`prepared` names and `statementName`'s). */
const namedTexts = new Map<string, string>();
/** Text → name, for `statementName`. */
const statementNames = new Map<string, string>();

/** The name `text` runs under: `name` when the bound allows, undefined past it (then unnamed). */
function claimName(name: string, text: string): string | undefined {
  const known = namedTexts.get(name);
  if (known !== undefined) {
    if (known !== text) throw new Error(`db: statement name ${name} is already used for another text`);
    return name;
  }
  if (namedTexts.size >= MAX_NAMED_STATEMENTS) return undefined;
  namedTexts.set(name, text);
  return name;
}

/** A statement's name from its text (`preparedNative`, `writeAtCommit`, read-aheads), or undefined past the bound. */
function statementName(sql: string): string | undefined {
  const known = statementNames.get(sql);
  if (known !== undefined) return known;
  const name = claimName(`k_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`, sql);
  if (name !== undefined) statementNames.set(sql, name);
  return name;
}

/** How many statement names this process has given out (a test holds it under the bound). */
export function namedStatementCount(): number {
  return namedTexts.size;
}

/** node-postgres's query config for a statement: named (bound parameters, prepared once per connection) while the bound allows. */
function queryOf(statement: NativeStatement, name = statementName(statement.sql)): pg.QueryConfig {
  const values = statement.bindings as unknown[];
  return name === undefined ? { text: statement.sql, values } : { name, text: statement.sql, values };
}

/**
 * SQL with `?` bindings in knex's `$n` form. The money paths call it with a few fixed texts
 * on every request: each text's `$n` form is made once and remembered (`positionedText`),
 * the values kept as they are, which is what knex's raw gives for plain values. Knex itself
 * does it when a value is a knex query, raw or callback (spliced into the text), the text has
 * `??` (an identifier) or a backslash (an escaped `?`), or the values do not match the text.
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

/** `sql`'s `?`s numbered `$1`…`$n` (as knex's raw numbers them for Postgres), with their count; undefined for a text knex must read itself. */
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

/**
 * A `$n` statement on a knex transaction that is not a keyed one (`db.transaction(fn)`):
 * knex's raw with `?` placeholders, the values bound, unnamed (a prepared statement on
 * knex's pool would outlive a migration that changes its result type).
 */
async function rawOn<R>(trx: Knex.Transaction, statement: NativeStatement): Promise<R[]> {
  const order: number[] = [];
  const sql = statement.sql.replace(/\?/g, '\\?').replace(/\$(\d+)/g, (_, i: string) => {
    order.push(Number(i) - 1);
    return '?';
  });
  const result = await trx.raw<{ rows: R[] }>(sql, order.map((i) => statement.bindings[i]) as Knex.RawBinding[]);
  return result.rows;
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

// ---------------------------------------------------------------------------------------
// Keyed transactions: one way to open, read, write and commit (decision 0025, which
// supersedes 0021/0022). A keyed money request runs in a `knex.transaction()` that knex
// opens on a connection of the pipelined pool (knex's documented `connection` option),
// stating its isolation level. node-postgres's pipeline mode sends each statement without
// waiting for the one before, so:
//  - BEGIN, the key's statement and the route's first reads (`ReadAhead`s) go in one flight;
//  - writes whose outcome the request does not need (`writeAtCommit`: an event, its jobs,
//    the stored answer) wait and go in the flight of the next statement, or of COMMIT;
//  - reads that do not depend on one another (`readTogether`) go in one flight.
// Every statement is text from code with bound parameters. Postgres answers pipelined
// statements in order, each on its own: when one fails, the transaction is aborted and
// the rest fail with it, and the caller gets the first failure (a COMMIT after a failed
// write reports that write's error, never a success). Reads sent together are separate
// statements under READ COMMITTED: each sees what was committed when it started, as any
// two reads of a transaction do; a read that must agree with another locks its rows.

/**
 * A read sent with a keyed transaction's first statement, in the same flight and the same
 * transaction, right after it (a keyed route's escrow, a setting, a counterparty: what its
 * service reads first anyway). Its rows wait under `key` until the service asks for them
 * with `takeReadAhead`, once: a second read of the same row goes to the database. A
 * read-ahead is a statement with bound values (`readAheadOf` makes one from a knex query);
 * one nobody takes costs nothing but its row.
 */
export interface ReadAhead extends NativeStatement {
  key: string;
}

/** What a keyed transaction carries: set `beforeCommit` to send that statement with COMMIT (the stored answer). */
export interface CommitFold {
  beforeCommit?: NativeStatement;
}

/** One keyed transaction's connection and what waits to go on it. */
interface Frame {
  client: pg.PoolClient;
  first: NativeStatement;
  ahead: readonly ReadAhead[];
  /** The answers of `first` and the read-aheads, set when they went with BEGIN. */
  opening: Promise<pg.QueryResult>[] | undefined;
  fold: CommitFold;
  /** Writes handed to `writeAtCommit`, not sent yet, in order. */
  held: NativeStatement[];
  /** Read-ahead rows not taken yet, by key. */
  aheadRows: Map<string, unknown[]> | undefined;
  /** A failure after which the connection is closed, not pooled again. */
  spoiled: unknown;
  /** True once COMMIT or ROLLBACK went. */
  over: boolean;
}

/** The frame of each keyed transaction, by its knex transaction. */
const frames = new WeakMap<object, Frame>();

function frameOf(knex: Db): Frame | undefined {
  return frames.get(knex);
}

function completedError(): Error {
  return new Error('Transaction query already complete: the transaction has already committed or rolled back');
}

function noteFailure(frame: Frame, err: unknown): void {
  if (frame.spoiled === undefined && spoilsConnection(err)) frame.spoiled = err;
}

type QueryCallback = (err: Error | null, result?: pg.QueryResult) => void;

/**
 * Sends `config` on the frame's connection. The first statement knex sends is its BEGIN: the
 * key's statement and the read-aheads follow it at once, in the same flight. Any later
 * statement goes after the writes held for it, in the same flight (COMMIT: and after the
 * fold's last statement; ROLLBACK drops them), and answers the first failure among them.
 */
function sendOnFrame(frame: Frame, config: pg.QueryConfig, callback: QueryCallback): void {
  const { client } = frame;
  if (frame.opening === undefined) {
    client.query(config, callback);
    frame.opening = [frame.first, ...frame.ahead].map((statement) => client.query(queryOf(statement)));
    for (const answer of frame.opening) answer.catch((err: unknown) => noteFailure(frame, err));
    return;
  }
  const ending = /^\s*(COMMIT|ROLLBACK)\b/i.exec(config.text)?.[1]?.toUpperCase();
  let writes = frame.held;
  frame.held = [];
  if (ending === 'ROLLBACK') writes = [];
  else if (ending === 'COMMIT' && frame.fold.beforeCommit) writes = [...writes, frame.fold.beforeCommit];
  if (ending) frame.over = true;
  const sent = writes.map((statement) => client.query(queryOf(statement)));
  client.query(config, (err: Error | null, result?: pg.QueryResult) => {
    if (err) noteFailure(frame, err);
    if (sent.length === 0) {
      callback(err, result);
      return;
    }
    void Promise.allSettled(sent).then((outcomes) => {
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) noteFailure(frame, failed.reason);
      callback(failed ? (failed.reason as Error) : err, result);
    });
  });
}

/** `statement` on the frame's connection, in program order (after the held writes). */
function queryOnFrame<R>(frame: Frame, statement: pg.QueryConfig): Promise<R[]> {
  if (frame.over) return Promise.reject(completedError());
  return new Promise<R[]>((resolve, reject) => {
    sendOnFrame(frame, statement, (err, result) => (err ? reject(err) : resolve((result?.rows ?? []) as R[])));
  });
}

/**
 * A keyed transaction: a connection of the pipelined pool, knex's transaction on it at
 * READ COMMITTED, and `first` (the key's statement) and the reads in `ahead` sent in the
 * flight of its BEGIN. Answers the transaction (a knex transaction: the builder, raw,
 * commit, rollback, executionPromise), the rows `first` returned and its fold. Commit with
 * `commitTransaction`; the connection goes back to the pool when the transaction ends
 * (closed instead after a connection failure or a stale statement).
 */
export async function foldedTransaction<R>(
  knex: Knex,
  first: NativeStatement,
  ahead: readonly ReadAhead[] = [],
): Promise<{ trx: Knex.Transaction; rows: R[]; fold: CommitFold }> {
  try {
    return await openFrame<R>(knex, first, ahead);
  } catch (err) {
    // Nothing ran but the opening: a statement made stale by a migration (its connection
    // now closed) is opened again on a fresh connection.
    if (pgErrorCode(err) !== STALE_STATEMENT) throw err;
    return openFrame<R>(knex, first, ahead);
  }
}

async function openFrame<R>(knex: Knex, first: NativeStatement, ahead: readonly ReadAhead[]): Promise<{ trx: Knex.Transaction; rows: R[]; fold: CommitFold }> {
  const client = await acquireDirect(knex);
  const frame: Frame = { client, first, ahead, opening: undefined, fold: {}, held: [], aheadRows: undefined, spoiled: undefined, over: false };
  const connection = {
    query: (config: pg.QueryConfig, callback: QueryCallback) => sendOnFrame(frame, config, callback),
  };
  let trx: Knex.Transaction;
  try {
    trx = await knex.transaction({ connection, isolationLevel: ISOLATION_LEVEL });
  } catch (err) {
    noteFailure(frame, err);
    await Promise.allSettled(frame.opening ?? []);
    // BEGIN failed: the statements after it failed too (or never ran); the session is
    // outside any transaction unless BEGIN itself went through, which a ROLLBACK ends.
    await client.query('ROLLBACK').catch(() => undefined);
    releaseDirect(client, frame.spoiled);
    throw err;
  }
  frames.set(trx, frame);
  // The connection goes back once the transaction is over, whatever ended it.
  const release = (): void => releaseDirect(client, frame.spoiled);
  trx.executionPromise.then(release, release);
  const answers = await Promise.allSettled(frame.opening!);
  const failed = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected');
  if (failed) {
    await trx.rollback().catch(() => undefined);
    await trx.executionPromise.catch(() => undefined);
    throw failed.reason;
  }
  const results = answers as PromiseFulfilledResult<pg.QueryResult>[];
  if (ahead.length > 0) frame.aheadRows = new Map(ahead.map((a, i) => [a.key, results[1 + i]!.value.rows]));
  return { trx, rows: results[0]!.value.rows as R[], fold: frame.fold };
}

/**
 * `work` in a keyed transaction of its own (`foldedTransaction`: BEGIN goes with `first`
 * and the reads in `ahead`), committed when it returns (with the writes it held for
 * COMMIT, in the same flight), rolled back when it throws.
 */
export async function inFoldedTransaction<R, T>(
  knex: Knex,
  first: NativeStatement,
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
 * run in `trx`. In a keyed transaction it is held and sent in the flight of the
 * transaction's next statement, before it (so statements run in the order the code issued
 * them): with `readTogether`'s reads, or with COMMIT before the stored answer. Anywhere
 * else it runs now. Either way it commits with the transaction's other work or not at all;
 * a failure fails the statement it went with (at COMMIT: nothing is committed, and
 * `commitTransaction` throws the write's error).
 */
export async function writeAtCommit(trx: Db, native: NativeStatement): Promise<void> {
  const frame = frameOf(trx);
  if (frame) {
    if (frame.over) throw completedError();
    frame.held.push(native);
    return;
  }
  await preparedNative(trx as Knex, native);
}

/**
 * Several reads answered in one flight, each one's rows in the order given (a deal's
 * answer: its events, decisions, approval slots, documents and payouts), each a named
 * statement. In a keyed transaction the writes held for COMMIT go first in that flight, so
 * the reads see them. Each read is its own statement (under READ COMMITTED each sees what
 * was committed when it started); a failure fails the whole call.
 */
export async function readTogether(trx: Db, reads: readonly NativeStatement[]): Promise<unknown[][]> {
  if (reads.length === 0) return [];
  const frame = frameOf(trx);
  if (frame) return Promise.all(reads.map((read) => queryOnFrame<unknown>(frame, queryOf(read))));
  if (trx.isTransaction) {
    const rows: unknown[][] = [];
    for (const read of reads) rows.push(await rawOn(trx as Knex.Transaction, read));
    return rows;
  }
  return onDirect(trx as Knex, (client) => Promise.all(reads.map(async (read) => (await client.query(queryOf(read))).rows as unknown[])));
}

/** A knex query as a `ReadAhead` under `key`: its `$n` text and values, as knex builds them. */
export function readAheadOf(key: string, query: { toSQL(): { toNative(): NativeStatement } }): ReadAhead {
  const native = query.toSQL().toNative();
  return { key, sql: native.sql, bindings: native.bindings };
}

/**
 * The rows a read-ahead of `trx` (see `ReadAhead`) brought for `key`, handed out once;
 * undefined when `trx` is not a keyed transaction, has none under `key`, or is over.
 */
export function takeReadAhead<R>(trx: Db, key: string): R[] | undefined {
  const frame = frameOf(trx);
  if (!frame?.aheadRows || frame.over) return undefined;
  const rows = frame.aheadRows.get(key);
  if (rows === undefined) return undefined;
  frame.aheadRows.delete(key);
  return rows as R[];
}

/**
 * A named statement (prepared once per connection, values bound), for the queries that run
 * on every request (bench/: knex's query building and an unnamed parse per call cost more
 * than the query itself). On the pool: a connection of the pipelined pool; a statement
 * made stale by a migration (0A000: "cached plan must not change result type") closes that
 * connection and runs once more on another, so a migration never answers 500. In a keyed
 * transaction: on its connection, after its held writes (a stale statement fails the
 * transaction, whose connection is then closed: the keyed middleware answers 503 RETRY).
 * In another knex transaction: through knex, unnamed.
 */
export async function prepared<R>(name: string, text: string, values: unknown[], knex: Db = db): Promise<R[]> {
  const statement: NativeStatement = { sql: text, bindings: values };
  return runStatement<R>(knex, statement, queryOf(statement, claimName(name, text)));
}

/** A statement where `knex` runs it (see `prepared`): a keyed transaction's connection, another knex transaction, or the pipelined pool. */
async function runStatement<R>(knex: Db, statement: NativeStatement, config: pg.QueryConfig): Promise<R[]> {
  const frame = frameOf(knex);
  if (frame) return queryOnFrame<R>(frame, config);
  if (knex.isTransaction) {
    if ((knex as Knex.Transaction).isCompleted()) throw new Error('query on a transaction that has already committed or rolled back');
    return rawOn<R>(knex as Knex.Transaction, statement);
  }
  return onDirect(knex as Knex, async (client) => (await client.query(config)).rows as R[]);
}

/**
 * `work` on one connection of the pipelined pool, given back afterwards. A failure from a
 * stale prepared statement (0A000) closes the connection and runs `work` once more on a
 * fresh one (it only reads, or writes in one statement that failed whole).
 */
async function onDirect<T>(knex: Knex, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const client = await acquireDirect(knex);
    try {
      const out = await work(client);
      releaseDirect(client);
      return out;
    } catch (err) {
      releaseDirect(client, err);
      if (attempt >= 2 || pgErrorCode(err) !== STALE_STATEMENT) throw err;
    }
  }
}

/** `prepared` for a statement built with knex (`?` bindings), named from its text: the few large statements every money request sends. */
export async function preparedRaw<R>(knex: Db, sql: string, bindings: readonly unknown[]): Promise<R[]> {
  return preparedNative<R>(knex, nativeOf(knex, sql, bindings));
}

/** `preparedRaw` for a statement already in `$n` form (a builder's `toSQL().toNative()`). */
export async function preparedNative<R>(knex: Db, native: NativeStatement): Promise<R[]> {
  return runStatement<R>(knex, native, queryOf(native));
}

/**
 * A bookkeeping write that need not survive a crash (when a key or session was last
 * used): one flight, committed without waiting for the disk (synchronous_commit off for
 * this transaction only). Money and state never go through here. `sql` has `$n`
 * placeholders; its values are bound.
 */
export async function bookkeepingWrite(sql: string, values: (string | Date)[], knex: Knex = db): Promise<void> {
  await onDirect(knex, async (client) => {
    const begin = client.query(`BEGIN ISOLATION LEVEL ${ISOLATION_LEVEL.toUpperCase()}`);
    const local = client.query({ name: 'bookkeeping_async_commit', text: 'SELECT set_config($1, $2, true)', values: ['synchronous_commit', 'off'] });
    const write = client.query(queryOf({ sql, bindings: values }));
    const commit = client.query('COMMIT');
    const outcomes = await Promise.allSettled([begin, local, write, commit]);
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw failed.reason;
    }
  });
}

/**
 * Refuses to run against a database whose session settings differ from what the code
 * assumes (decision 0025): text in UTF8 (`client_encoding`) and standard string literals
 * (`standard_conforming_strings` on). Answers the differences, empty when all is well; the
 * API and the workers stop at start when any is found.
 */
export async function databaseSettingsProblems(knex: Knex = db): Promise<string[]> {
  type Settings = { encoding: string; standard: string };
  const text = "SELECT current_setting('client_encoding') AS encoding, current_setting('standard_conforming_strings') AS standard";
  // Both pools: knex's and the pipelined one.
  const viaKnex = (await knex.raw<{ rows: Settings[] }>(text)).rows[0];
  const [viaPipeline] = await prepared<Settings>('db_settings_check', text, [], knex);
  const problems = new Set<string>();
  for (const row of [viaKnex, viaPipeline]) {
    if (row?.encoding.toUpperCase() !== 'UTF8') problems.add(`client_encoding is ${row?.encoding ?? 'unknown'}, expected UTF8`);
    if (row?.standard !== 'on') problems.add(`standard_conforming_strings is ${row?.standard ?? 'unknown'}, expected on`);
  }
  return [...problems];
}

/**
 * At the start of the API and the workers: exits with 78 (a configuration error, as for a
 * bad environment) when the database's session settings are not what the code assumes
 * (`databaseSettingsProblems`). A database that cannot be reached yet is not a refusal: the
 * process starts, and its requests fail until the database answers.
 */
export async function refuseUnsuitableDatabase(warn: (err: unknown) => void, knex: Knex = db): Promise<void> {
  let problems: string[];
  try {
    problems = await databaseSettingsProblems(knex);
  } catch (err) {
    warn(err);
    return;
  }
  if (problems.length === 0) return;
  console.error(`Unsuitable database: ${problems.join('; ')}`);
  process.exit(78);
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
/** node-postgres's own words for a connection that failed, ended or never came (pg-pool's connect timeout). */
const CONNECTION_MESSAGES = /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect)/;

/**
 * True for a failure of the database itself rather than of our code: an error Postgres sent
 * (any severity: a statement refused, a timeout, a cancelled or terminated backend), no
 * connection from a pool in time (knex's KnexTimeoutError, pg-pool's timeout), or the
 * connection lost.
 */
export function isDatabaseFailure(err: unknown): boolean {
  if (err instanceof pg.DatabaseError || err instanceof knexFactory.KnexTimeoutError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return (typeof code === 'string' && CONNECTION_CODES.has(code)) || CONNECTION_MESSAGES.test(err.message);
}

// ---------------------------------------------------------------------------------------
// The pool guard (ARCHITECTURE rule 7). Code that holds a pooled connection, a keyed
// request's transaction or any `db.transaction(fn)`, must never wait for a second
// connection of the same database: enough such requests at once (one account, under its
// rate limit) each hold one connection and wait for another, and the pools deadlock.
// In development and test every acquisition (knex's pool and the pipelined one) checks
// whether the code asking already holds a connection of that database, and throws if it
// does, naming what holds it.

interface Holding {
  /** The knex client of the database (one per `createDb`). */
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
 * Runs `work` marked as holding one connection of `knex`'s database (the idempotency
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

/** The knex clients that `guardPool` wrapped. */
const guarded = new WeakSet<object>();

/** Throws `SecondConnectionError` when the code asking holds a connection of `knex`'s database. */
function checkGuard(knex: Knex): void {
  const client = knex.client as object;
  if (!guarded.has(client)) return;
  const held = holding.getStore();
  if (held && !held.released && held.client === client) throw new SecondConnectionError(held.what);
}

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

/** The process-wide database (knex and its pipelined pool). */
export const db: Knex = createDb();

/** Postgres error codes we act on. */
export const PG = {
  uniqueViolation: '23505',
  checkViolation: '23514',
  invalidParameterValue: '22023',
  foreignKeyViolation: '23503',
  serializationFailure: '40001',
  deadlock: '40P01',
  staleStatement: STALE_STATEMENT,
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
 * A purge in short statements: `deleteBatch(batch)` deletes at most `batch` rows and answers
 * how many; it runs again until a batch comes back short. Answers the rows deleted in all.
 * No statement holds a whole backlog's locks and WAL until its end (the outbox, idempotency
 * keys, webhook deliveries, exports).
 */
export async function deleteInBatches(batch: number, deleteBatch: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await deleteBatch(batch);
    total += n;
    if (n < batch) return total;
  }
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

/** Runs `fn` in the caller's transaction when given one, otherwise in a new transaction at READ COMMITTED. */
export async function inTransaction<T>(trx: Db | undefined, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if (trx && trx.isTransaction) return fn(trx as Knex.Transaction);
  return (trx ?? db).transaction(fn, { isolationLevel: ISOLATION_LEVEL });
}
