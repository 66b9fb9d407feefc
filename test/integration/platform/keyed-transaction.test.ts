/**
 * shared/db.ts keyed transactions (decision 0025): a knex transaction at READ COMMITTED on a
 * connection of the pipelined pool, BEGIN, the key's statement and the read-aheads in one
 * flight, held writes and the stored answer in the flight of COMMIT. Whatever fails, nothing
 * of the transaction is committed and the connection goes back clean (or is closed). One
 * database handle whose pools have one connection each, so every check after a transaction
 * runs on the connection it used.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import pg from 'pg';
import { config } from '../../../shared/config.js';
import { createEscrow } from '../../factories/escrows.js';
import { rejection } from '../../helpers/platform-factories.js';
import { statementsOf } from '../../helpers/statements.js';
import { api } from '../../helpers/app.js';
import { createRouter } from '../../../api/context.js';
import { idempotent } from '../../../api/middleware/idempotency.js';
import { escrowReadAhead, findById } from '../../../shared/escrows/repo.js';
import {
  commitTransaction,
  createDb,
  databaseSettingsProblems,
  db,
  foldedTransaction,
  MAX_NAMED_STATEMENTS,
  namedStatementCount,
  nativeOf,
  pgErrorCode,
  pgRefused,
  prepared,
  preparedNative,
  readAheadOf,
  readTogether,
  shaped,
  takeReadAhead,
  writeAtCommit,
  type NativeStatement,
} from '../../../shared/db.js';

const sql = (text: string, ...bindings: unknown[]): NativeStatement => ({ sql: text, bindings });
const ONE = sql('SELECT 1');

/** The database URL with a session setting given at connect time (libpq's `options`). */
function urlWith(setting: string): string {
  const url = new URL(config.databaseUrl);
  url.searchParams.set('options', `-c ${setting}`);
  return url.toString();
}

describe('platform: keyed transactions (one flight to open, one to commit; public APIs only)', () => {
  let one: Knex;
  const table = `keyed_probe_${randomUUID().slice(0, 8)}`;

  before(async () => {
    one = createDb(config.databaseUrl, 1, false);
    await db.raw(`CREATE TABLE ${table} (id integer PRIMARY KEY)`);
  });
  after(async () => {
    await one.destroy();
    await db.raw(`DROP TABLE IF EXISTS ${table}`);
  });
  beforeEach(async () => {
    await db.raw(`TRUNCATE ${table}`);
  });

  const insert = (...ids: number[]) => sql(`INSERT INTO ${table} (id) VALUES ${ids.map((_, i) => `($${i + 1})`).join(', ')}`, ...ids);

  /** The ids committed, after checking that the pipelined pool's one connection is outside any transaction. */
  async function committedIds(): Promise<number[]> {
    // A connection left inside a transaction would still see that transaction's start as now().
    const { rows: [mark] } = await db.raw<{ rows: { at: Date }[] }>('SELECT clock_timestamp() AS at');
    const [state] = await prepared<{ clean: boolean }>('keyed_probe_clean', 'SELECT now() >= $1::timestamptz AS clean', [mark!.at], one);
    expect(state?.clean, 'the connection is still inside a transaction').to.equal(true);
    const rows = await db.raw<{ rows: { id: number }[] }>(`SELECT id FROM ${table} ORDER BY id`);
    return rows.rows.map((r) => r.id);
  }

  it("answers the first statement's rows and commits the transaction's work with the last statement", async () => {
    const { trx, rows, fold } = await foldedTransaction<{ n: number }>(one, sql('SELECT 41 + $1::int AS n', 1));
    expect(rows).to.deep.equal([{ n: 42 }]);
    await trx(table).insert({ id: 1 });
    fold.beforeCommit = insert(2);
    await commitTransaction(trx);
    expect(trx.isCompleted()).to.equal(true);
    expect(await committedIds()).to.deep.equal([1, 2]);
  });

  it('states READ COMMITTED on its BEGIN, whatever the server default', async () => {
    const serializable = createDb(urlWith('default_transaction_isolation=serializable'), 1, false);
    try {
      // The server's default for this session: serializable (the pipelined pool leaves it as given).
      expect(await prepared('keyed_default_isolation', "SELECT current_setting('default_transaction_isolation') AS i", [], serializable)).to.deep.equal([{ i: 'serializable' }]);
      const { trx, rows } = await foldedTransaction<{ i: string }>(serializable, sql("SELECT current_setting('transaction_isolation') AS i"));
      expect(rows).to.deep.equal([{ i: 'read committed' }]);
      await commitTransaction(trx);
      // knex's own transactions too: its connections default to READ COMMITTED.
      const plain = await serializable.transaction(async (t) => (await t.raw<{ rows: { i: string }[] }>("SELECT current_setting('transaction_isolation') AS i")).rows[0]!.i);
      expect(plain).to.equal('read committed');
    } finally {
      await serializable.destroy();
    }
  });

  it('sends BEGIN, the first statement and the read-aheads in one flight, and the held writes, the last statement and COMMIT in one more', async () => {
    const { flights } = await statementsOf(async () => {
      const { trx, fold } = await foldedTransaction(one, sql('SELECT $1::int AS n', 1), [{ key: 'a', ...sql('SELECT 2 AS n') }, { key: 'b', ...sql('SELECT 3 AS n') }]);
      await writeAtCommit(trx, insert(1));
      await writeAtCommit(trx, insert(2));
      fold.beforeCommit = insert(3);
      await commitTransaction(trx);
    });
    expect(flights.map((f) => f.length)).to.deep.equal([4, 4]);
    expect(flights[0]![0]).to.match(/^BEGIN TRANSACTION ISOLATION LEVEL READ COMMITTED/i);
    expect(flights[1]![3]).to.match(/^COMMIT/);
    expect(await committedIds()).to.deep.equal([1, 2, 3]);
  });

  it('commits plainly when no last statement was handed over, and rolls back on request (the last statement and held writes dropped)', async () => {
    const a = await foldedTransaction(one, ONE);
    await a.trx(table).insert({ id: 1 });
    await commitTransaction(a.trx);
    const b = await foldedTransaction(one, ONE);
    await b.trx(table).insert({ id: 2 });
    await writeAtCommit(b.trx, insert(4));
    b.fold.beforeCommit = insert(3);
    await b.trx.rollback();
    await b.trx.executionPromise.catch(() => undefined);
    expect(await committedIds()).to.deep.equal([1]);
  });

  it('a first statement or read-ahead that fails leaves no transaction open and the connection back in the pool', async () => {
    expect(pgErrorCode(await rejection(foldedTransaction(one, sql('SELECT * FROM no_such_table'))))).to.equal('42P01');
    expect(pgErrorCode(await rejection(foldedTransaction(one, ONE, [{ key: 'x', ...sql('SELECT 1/0') }])))).to.equal('22012');
    expect(await committedIds()).to.deep.equal([]);
  });

  it('a last statement that fails commits nothing of the transaction and leaves the connection clean', async () => {
    await db.raw(`INSERT INTO ${table} (id) VALUES (7)`);
    const { trx, fold } = await foldedTransaction(one, ONE);
    await trx(table).insert({ id: 1 });
    fold.beforeCommit = insert(7); // a duplicate key
    const err = await rejection(commitTransaction(trx));
    expect(pgErrorCode(err)).to.equal('23505');
    expect(pgRefused(err)).to.equal(true);
    expect(trx.isCompleted()).to.equal(true);
    expect(await committedIds()).to.deep.equal([7]);
  });

  it('a COMMIT that fails (a deferred constraint) commits nothing and leaves the connection clean', async () => {
    const fn = `keyed_refuse_${randomUUID().slice(0, 8)}`;
    await db.raw(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id = 13 THEN RAISE EXCEPTION 'refused at commit' USING ERRCODE = 'check_violation'; END IF; RETURN NULL; END $$`);
    await db.raw(`CREATE CONSTRAINT TRIGGER ${fn} AFTER INSERT ON ${table} DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    try {
      const { trx, fold } = await foldedTransaction(one, ONE);
      await trx(table).insert({ id: 1 });
      fold.beforeCommit = insert(13);
      expect(pgErrorCode(await rejection(commitTransaction(trx)))).to.equal('23514');
      expect(await committedIds()).to.deep.equal([]);
    } finally {
      await db.raw(`DROP TRIGGER ${fn} ON ${table}`);
      await db.raw(`DROP FUNCTION ${fn}()`);
    }
  });

  it('pgRefused: only an ERROR reported by Postgres means nothing was committed; socket errors and FATALs leave the outcome unknown', async () => {
    expect(pgRefused(await rejection(one.raw('SELECT 1/0')))).to.equal(true);
    expect(pgRefused(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104 }))).to.equal(false);
    const fatal = Object.assign(new pg.DatabaseError('terminating connection due to administrator command', 0, 'error'), { severity: 'FATAL', code: '57P01' });
    expect(pgRefused(fatal)).to.equal(false);
    expect(pgRefused(new Error('no code'))).to.equal(false);
  });

  it('a named statement made stale by a migration (0A000) is never an error on the pool: its connection is closed and the statement runs on a fresh one', async () => {
    const star = `keyed_star_${randomUUID().slice(0, 8)}`;
    await db.raw(`CREATE TABLE ${star} (id integer)`);
    try {
      await db.raw(`INSERT INTO ${star} VALUES (1)`);
      const all = () => prepared<Record<string, unknown>>(`${star}_all`, `SELECT * FROM ${star}`, [], one);
      expect(await all()).to.deep.equal([{ id: 1 }]);
      const [before] = await prepared<{ pid: number }>('keyed_probe_pid', 'SELECT pg_backend_pid() AS pid', [], one);
      await db.raw(`ALTER TABLE ${star} ADD COLUMN extra text`);
      expect(await all()).to.deep.equal([{ id: 1, extra: null }]);
      const [after] = await prepared<{ pid: number }>('keyed_probe_pid', 'SELECT pg_backend_pid() AS pid', [], one);
      expect(after!.pid, 'the stale connection was closed').to.not.equal(before!.pid);
    } finally {
      await db.raw(`DROP TABLE ${star}`);
    }
  });

  it('a statement made stale inside a keyed transaction fails it (nothing committed) and closes its connection; the next one runs', async () => {
    const star = `keyed_star_${randomUUID().slice(0, 8)}`;
    await db.raw(`CREATE TABLE ${star} (id integer)`);
    try {
      const read = () => sql(`SELECT * FROM ${star}`);
      const a = await foldedTransaction(one, ONE);
      await preparedNative(a.trx, read());
      await commitTransaction(a.trx);
      await db.raw(`ALTER TABLE ${star} ADD COLUMN extra text`);
      const b = await foldedTransaction(one, ONE);
      await writeAtCommit(b.trx, insert(5));
      expect(pgErrorCode(await rejection(preparedNative(b.trx, read())))).to.equal('0A000');
      await b.trx.rollback().catch(() => undefined);
      await b.trx.executionPromise.catch(() => undefined);
      const c = await foldedTransaction(one, ONE);
      expect(await preparedNative(c.trx, read())).to.deep.equal([]);
      await commitTransaction(c.trx);
      expect(await committedIds()).to.deep.equal([]);
    } finally {
      await db.raw(`DROP TABLE ${star}`);
    }
  });

  it('a key statement made stale by a migration is opened again on a fresh connection (nothing had run)', async () => {
    const star = `keyed_star_${randomUUID().slice(0, 8)}`;
    await db.raw(`CREATE TABLE ${star} (id integer)`);
    try {
      const first = sql(`SELECT * FROM ${star}`);
      const a = await foldedTransaction(one, first);
      await commitTransaction(a.trx);
      await db.raw(`ALTER TABLE ${star} ADD COLUMN extra text`);
      // The pool's one connection holds the stale statement: the opening fails there, then runs on a new one.
      const b = await foldedTransaction(one, first);
      expect(b.rows).to.deep.equal([]);
      await commitTransaction(b.trx);
    } finally {
      await db.raw(`DROP TABLE ${star}`);
    }
  });

  it('a keyed request whose statement goes stale mid-way answers 503 RETRY with Retry-After, never 500, and commits nothing', async () => {
    const router = createRouter();
    router.post('/test/keyed/stale', idempotent(), () => {
      throw Object.assign(new pg.DatabaseError('cached plan must not change result type', 0, 'error'), { severity: 'ERROR', code: '0A000' });
    });
    const key = randomUUID();
    const res = await api({ extraRouters: [router] }).post('/test/keyed/stale').set('Idempotency-Key', key).send({});
    expect(res.status, JSON.stringify(res.body)).to.equal(503);
    expect(res.body.error.code).to.equal('RETRY');
    expect(res.headers['retry-after']).to.equal('1');
    expect(await db('idempotency_keys').where({ key }).first()).to.equal(undefined);
  });

  it('is a knex transaction: the builder runs on its connection; once it is over, knex queries and named statements are refused', async () => {
    const a = await foldedTransaction(one, ONE);
    expect(a.trx.isTransaction).to.equal(true);
    await a.trx(table).insert([{ id: 1 }, { id: 2 }]);
    expect(await a.trx(table).where({ id: 2 }).first()).to.deep.equal({ id: 2 });
    expect(await a.trx(table).insert({ id: 3 }).returning('id')).to.deep.equal([{ id: 3 }]);
    expect((await a.trx.raw<{ rows: { n: number }[] }>('SELECT ?::int AS n', [5])).rows).to.deep.equal([{ n: 5 }]);
    expect(await prepared('keyed_one', 'SELECT 1 AS n', [], a.trx)).to.deep.equal([{ n: 1 }]);
    await commitTransaction(a.trx);
    expect((await rejection(a.trx(table).insert({ id: 9 })) as Error).message).to.match(/already complete|committed or rolled back/);
    expect((await rejection(prepared('keyed_one', 'SELECT 1 AS n', [], a.trx)) as Error).message).to.match(/already complete/);
    expect((await rejection(writeAtCommit(a.trx, insert(9))) as Error).message).to.match(/already complete/);
    expect(await committedIds()).to.deep.equal([1, 2, 3]);
  });

  it('a rollback given an error rejects executionPromise with it; a plain rollback resolves it', async () => {
    const a = await foldedTransaction(one, ONE);
    const reason = new Error('refused by the handler');
    await a.trx.rollback(reason).catch(() => undefined);
    expect(await rejection(a.trx.executionPromise)).to.equal(reason);
    const b = await foldedTransaction(one, ONE);
    await b.trx.rollback();
    await b.trx.executionPromise;
  });

  it('sends read-aheads with the first statement, in its transaction, and hands each out once', async () => {
    const { trx } = await foldedTransaction(one, sql(`INSERT INTO ${table} (id) VALUES ($1)`, 11), [{ key: 'seen', ...sql(`SELECT id FROM ${table} WHERE id = $1`, 11) }]);
    expect(takeReadAhead(trx, 'seen')).to.deep.equal([{ id: 11 }]);
    expect(takeReadAhead(trx, 'seen')).to.equal(undefined);
    expect(takeReadAhead(trx, 'never')).to.equal(undefined);
    await commitTransaction(trx);
    expect(takeReadAhead(db, 'seen')).to.equal(undefined);
  });

  it('an escrow read ahead is handed to the first plain read only; a locked read discards it', async () => {
    const { escrow } = await createEscrow();
    const { trx } = await foldedTransaction(one, ONE, escrowReadAhead(escrow.id));
    const seen = await findById(trx, escrow.id);
    expect(seen?.id).to.equal(escrow.id);
    await db('escrows').where({ id: escrow.id }).update({ item_name: 'changed outside' });
    expect((await findById(trx, escrow.id))?.item_name, 'a second read goes to the database').to.equal('changed outside');
    await commitTransaction(trx);
    expect(escrowReadAhead('not-a-uuid')).to.deep.equal([]);
  });

  it('writeAtCommit: a held write goes in the flight of the next statement, before it (program order), or with COMMIT', async () => {
    const { trx } = await foldedTransaction(one, ONE);
    await writeAtCommit(trx, insert(1, 2));
    expect(await trx(table).orderBy('id').pluck('id'), 'the read sees the write held before it').to.deep.equal([1, 2]);
    await writeAtCommit(trx, insert(3));
    await commitTransaction(trx);
    expect(await committedIds()).to.deep.equal([1, 2, 3]);
  });

  it("writeAtCommit: a held write's failure comes from the statement it went with; nothing is committed", async () => {
    await db.raw(`INSERT INTO ${table} (id) VALUES (9)`);
    const a = await foldedTransaction(one, ONE);
    await writeAtCommit(a.trx, insert(9)); // a duplicate key: not sent yet
    expect(pgErrorCode(await rejection(a.trx.raw('SELECT 1')))).to.equal('23505');
    await a.trx.rollback().catch(() => undefined);
    const b = await foldedTransaction(one, ONE);
    await b.trx(table).insert({ id: 1 });
    await writeAtCommit(b.trx, insert(3, 3)); // a duplicate key
    const err = await rejection(commitTransaction(b.trx));
    expect(pgErrorCode(err), 'COMMIT after a failed write never reads as a success').to.equal('23505');
    expect(await committedIds()).to.deep.equal([9]);
  });

  it('writeAtCommit outside a keyed transaction runs the write at once (a knex transaction, the pool)', async () => {
    await db.transaction(async (trx) => {
      await writeAtCommit(trx, insert(4));
      expect(await trx(table).pluck('id')).to.deep.equal([4]);
    });
    await writeAtCommit(one, insert(5));
    expect(await committedIds()).to.deep.equal([4, 5]);
  });

  it('readTogether: in a keyed transaction the held writes and every read go in one flight, the reads after the writes', async () => {
    const a = await foldedTransaction(one, ONE);
    await writeAtCommit(a.trx, insert(1, 2));
    const { flights, result } = await statementsOf(() =>
      readTogether(a.trx, [sql(`SELECT id FROM ${table} WHERE id = $1`, 1), sql(`SELECT count(*)::int AS n FROM ${table}`), sql('SELECT $1::text AS t', "it's")]),
    );
    expect(result).to.deep.equal([[{ id: 1 }], [{ n: 2 }], [{ t: "it's" }]]);
    expect(flights.map((f) => f.length)).to.deep.equal([4]);
    await commitTransaction(a.trx);
    expect(await committedIds()).to.deep.equal([1, 2]);
  });

  it('readTogether: a read that fails fails the call and the transaction (the held writes too)', async () => {
    const a = await foldedTransaction(one, ONE);
    await writeAtCommit(a.trx, insert(1));
    expect(pgErrorCode(await rejection(readTogether(a.trx, [sql('SELECT 1'), sql('SELECT 1/0')])))).to.equal('22012');
    await a.trx.rollback().catch(() => undefined);
    expect(await committedIds()).to.deep.equal([]);
  });

  it("readTogether outside a keyed transaction: one flight on the pool, or in order on a knex transaction's connection; the same rows", async () => {
    await db.raw(`INSERT INTO ${table} (id) VALUES (1), (2)`);
    const reads = [sql(`SELECT id FROM ${table} WHERE id = ANY($1::int[]) ORDER BY id`, [1, 2]), sql('SELECT $1::text AS t, $2::timestamptz AS at', 'a\\b', new Date('2026-01-02T03:04:05Z'))];
    const expected = [[{ id: 1 }, { id: 2 }], [{ t: 'a\\b', at: new Date('2026-01-02T03:04:05Z') }]];
    const { flights, result } = await statementsOf(() => readTogether(one, reads));
    expect(result).to.deep.equal(expected);
    expect(flights.map((f) => f.length)).to.deep.equal([2]);
    expect(await db.transaction((trx) => readTogether(trx, reads))).to.deep.equal(expected);
  });

  it('readAheadOf: a knex query as a read-ahead, its values bound, answers the rows the query answers', async () => {
    await db.raw(`INSERT INTO ${table} (id) VALUES (3), (4)`);
    const query = db(table).where('id', '>', 3).select('id');
    const ahead = readAheadOf('q', query);
    expect(ahead.sql).to.match(/> \$1/);
    expect(ahead.bindings).to.deep.equal([3]);
    const { trx } = await foldedTransaction(one, ONE, [ahead]);
    expect(takeReadAhead(trx, 'q')).to.deep.equal(await query);
    await commitTransaction(trx);
  });

  it("nativeOf gives knex raw's $n form for plain values from its own numbering, and leaves knex queries, raws, ?? and escapes to knex", () => {
    const texts = [
      ['SELECT ? AS a, ?::int AS b', ['x', 1]],
      ['SELECT ?? FROM users WHERE id = ?', ['id', 'u']],
      ['SELECT \\? AS q, ? AS a', ['x']],
    ] as const;
    for (const [text, values] of texts) expect(nativeOf(db, text, values)).to.deep.equal(db.raw(text, values as unknown as Knex.RawBinding[]).toSQL().toNative());
    const inner = db('users').select('id').where({ id: 'u' });
    expect(nativeOf(db, 'SELECT * FROM (?) AS t WHERE x = ?', [inner, 2])).to.deep.equal(db.raw('SELECT * FROM (?) AS t WHERE x = ?', [inner, 2]).toSQL().toNative());
  });

  it('shaped: the text knex builds once, each call its own values in their places (constants kept); a value that is not one parameter is refused', () => {
    const build = shaped((k, ids: string[], name: string) => k('users').whereRaw('id = ANY(?::uuid[])', [ids]).where('full_name', '<>', name).orderBy('id').limit(7).select('id'));
    const byKnex = (ids: string[], name: string) => db('users').whereRaw('id = ANY(?::uuid[])', [ids]).where('full_name', '<>', name).orderBy('id').limit(7).select('id').toSQL().toNative();
    const ids = [randomUUID(), randomUUID()];
    expect(build(ids, 'a')).to.deep.equal(byKnex(ids, 'a'));
    expect(build([], "o'neil")).to.deep.equal(byKnex([], "o'neil"));
    const listed = shaped((k, list: string[]) => k('users').whereIn('id', list).select('id'));
    expect(() => listed([randomUUID()])).to.throw(/exactly one parameter/);
  });

  it('values are always bound: text with quotes, backslashes and NUL-free unicode round-trips through every path unchanged', async () => {
    const nasty = "it's a \\ back'slash'; DROP TABLE users; -- 😀 \u00a0";
    const { trx, rows } = await foldedTransaction<{ t: string }>(one, sql('SELECT $1::text AS t', nasty), [{ key: 'k', ...sql('SELECT $1::text AS t', nasty) }]);
    expect(rows).to.deep.equal([{ t: nasty }]);
    expect(takeReadAhead(trx, 'k')).to.deep.equal([{ t: nasty }]);
    expect(await readTogether(trx, [sql('SELECT $1::text AS t', nasty)])).to.deep.equal([[{ t: nasty }]]);
    await commitTransaction(trx);
    expect(await prepared('keyed_echo', 'SELECT $1::text AS t', [nasty], one)).to.deep.equal([{ t: nasty }]);
  });

  it('statement names are bounded per process, so prepared statements per connection are too (in a process of its own)', () => {
    expect(namedStatementCount()).to.be.at.most(MAX_NAMED_STATEMENTS);
    // Many distinct texts: past the bound they still run (unnamed), and the count stays put.
    const script = `
      import { db, preparedNative, namedStatementCount, MAX_NAMED_STATEMENTS } from ${JSON.stringify(new URL('../../../shared/db.ts', import.meta.url).pathname)};
      for (let i = 0; i < MAX_NAMED_STATEMENTS + 5; i += 1) await preparedNative(db, { sql: 'SELECT $1::int + ' + i + ' AS n', bindings: [1] });
      const [row] = await preparedNative(db, { sql: 'SELECT $1::int + 100000 AS n', bindings: [1] });
      console.log(JSON.stringify({ count: namedStatementCount(), bound: MAX_NAMED_STATEMENTS, n: row.n }));
      await db.destroy();`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env: process.env });
    expect(run.status, run.stderr).to.equal(0);
    expect(JSON.parse(run.stdout.trim().split('\n').pop()!)).to.deep.equal({ count: MAX_NAMED_STATEMENTS, bound: MAX_NAMED_STATEMENTS, n: 100001 });
  });

  it('databaseSettingsProblems: none here; names client_encoding and standard_conforming_strings when they differ', async () => {
    expect(await databaseSettingsProblems(db)).to.deep.equal([]);
    // node-postgres asks for UTF8 when it connects; a session could still change it.
    const latin = createDb(config.databaseUrl, 1, false);
    await latin.raw("SET client_encoding TO 'LATIN1'");
    const nonStandard = createDb(urlWith('standard_conforming_strings=off'), 1, false);
    try {
      expect((await databaseSettingsProblems(latin)).join('; ')).to.match(/client_encoding is LATIN1, expected UTF8/);
      expect((await databaseSettingsProblems(nonStandard)).join('; ')).to.match(/standard_conforming_strings is off, expected on/);
    } finally {
      await latin.destroy();
      await nonStandard.destroy();
    }
  });
});
