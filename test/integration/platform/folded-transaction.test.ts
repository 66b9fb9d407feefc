/**
 * shared/db.ts `foldedTransaction` (issue 29): BEGIN sent with the first statement, a last
 * statement sent with COMMIT. Whatever fails, nothing of the transaction is committed and
 * the connection goes back to the pool clean (not inside a transaction, aborted or open).
 * One pool of one connection, so every check runs on the connection the fold used.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import fc from 'fast-check';
import pg from 'pg';
import { config } from '../../../shared/config.js';
import { createEscrow } from '../../factories/escrows.js';
import { rejection } from '../../helpers/platform-factories.js';
import { statementsOf } from '../../helpers/statements.js';
import { escrowReadAhead, findById } from '../../../shared/escrows/repo.js';
import { commitTransaction, createDb, db, foldedTransaction, inlineValues, nativeOf, pgErrorCode, pgRefused, prepared, preparedNative, quoteLiteral, readAheadOf, readTogether, shaped, sqlLiteral, takeReadAhead, writeAtCommit } from '../../../shared/db.js';

describe('platform: folded transactions (BEGIN with the first statement, the last with COMMIT)', () => {
  let one: Knex;

  before(() => {
    one = createDb(config.databaseUrl, 1, false);
  });
  after(async () => {
    await one.destroy();
  });
  beforeEach(async () => {
    await one.raw('DROP TABLE IF EXISTS pg_temp.fold_probe');
    await one.raw('CREATE TEMP TABLE fold_probe (id integer PRIMARY KEY)');
  });

  /** The ids committed, read on the pool's one connection, which must be outside any transaction. */
  async function committedIds(): Promise<number[]> {
    const xact = await one.raw<{ rows: { xid: string | null }[] }>('SELECT pg_current_xact_id_if_assigned()::text AS xid');
    expect(xact.rows[0]!.xid, 'the connection is still inside a transaction').to.equal(null);
    const rows = await one.raw<{ rows: { id: number }[] }>('SELECT id FROM fold_probe ORDER BY id');
    return rows.rows.map((r) => r.id);
  }

  it('answers the first statement\'s rows and commits the transaction\'s work with the last statement', async () => {
    const { trx, rows, fold } = await foldedTransaction<{ n: number }>(one, `SELECT 41 + ${sqlLiteral(1)} AS n`);
    expect(rows).to.deep.equal([{ n: 42 }]);
    await trx('fold_probe').insert({ id: 1 });
    fold.beforeCommit = 'INSERT INTO fold_probe (id) VALUES (2)';
    await commitTransaction(trx);
    expect(trx.isCompleted()).to.equal(true);
    expect(await committedIds()).to.deep.equal([1, 2]);
  });

  it('commits plainly when no last statement was handed over, and rolls back on request', async () => {
    const a = await foldedTransaction(one, 'SELECT 1');
    await a.trx('fold_probe').insert({ id: 1 });
    await commitTransaction(a.trx);
    const b = await foldedTransaction(one, 'SELECT 1');
    await b.trx('fold_probe').insert({ id: 2 });
    b.fold.beforeCommit = 'INSERT INTO fold_probe (id) VALUES (3)';
    await b.trx.rollback();
    await b.trx.executionPromise.catch(() => undefined);
    expect(await committedIds()).to.deep.equal([1]);
  });

  it('a first statement that fails leaves no transaction open', async () => {
    const err = await rejection(foldedTransaction(one, 'SELECT * FROM no_such_table'));
    expect(pgErrorCode(err)).to.equal('42P01');
    expect(await committedIds()).to.deep.equal([]);
  });

  it('a last statement that fails commits nothing of the transaction and leaves the connection clean', async () => {
    await one.raw('INSERT INTO fold_probe (id) VALUES (7)');
    const { trx, fold } = await foldedTransaction(one, 'SELECT 1');
    await trx('fold_probe').insert({ id: 1 });
    fold.beforeCommit = 'INSERT INTO fold_probe (id) VALUES (7)'; // a duplicate key
    const err = await rejection(commitTransaction(trx));
    expect(pgErrorCode(err)).to.equal('23505');
    expect(trx.isCompleted()).to.equal(true);
    expect(await committedIds()).to.deep.equal([7]);
  });

  it('a COMMIT that fails (a deferred constraint) commits nothing and leaves the connection clean', async () => {
    await one.raw(`CREATE FUNCTION pg_temp.fold_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id = 13 THEN RAISE EXCEPTION 'refused at commit' USING ERRCODE = 'check_violation'; END IF; RETURN NULL; END $$`);
    await one.raw(`CREATE CONSTRAINT TRIGGER fold_refuse AFTER INSERT ON fold_probe
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pg_temp.fold_refuse()`);
    const { trx, fold } = await foldedTransaction(one, 'SELECT 1');
    await trx('fold_probe').insert({ id: 1 });
    fold.beforeCommit = 'INSERT INTO fold_probe (id) VALUES (13)';
    const err = await rejection(commitTransaction(trx));
    expect(pgErrorCode(err)).to.equal('23514');
    expect(await committedIds()).to.deep.equal([]);
  });

  it('pgRefused: only an ERROR reported by Postgres means nothing was committed; socket errors and FATALs leave the outcome unknown', async () => {
    const refused = await rejection(one.raw('SELECT 1/0'));
    expect(pgRefused(refused)).to.equal(true);
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104 });
    expect(pgRefused(reset)).to.equal(false);
    const fatal = Object.assign(new pg.DatabaseError('terminating connection due to administrator command', 0, 'error'), { severity: 'FATAL', code: '57P01' });
    expect(pgRefused(fatal)).to.equal(false);
    expect(pgRefused(new Error('no code'))).to.equal(false);
  });

  it('a named statement prepared before a column was added fails once, then is prepared anew on that connection', async () => {
    await one.raw('CREATE TEMP TABLE fold_star (id integer)');
    await one.raw('INSERT INTO fold_star VALUES (1)');
    const star = () => prepared<Record<string, unknown>>('fold_star_all', 'SELECT * FROM fold_star', [], one);
    expect(await star()).to.deep.equal([{ id: 1 }]);
    await one.raw('ALTER TABLE fold_star ADD COLUMN extra text');
    expect(pgErrorCode(await rejection(star()))).to.equal('0A000');
    expect(await star()).to.deep.equal([{ id: 1, extra: null }]);
    expect(await star()).to.deep.equal([{ id: 1, extra: null }]);
  });

  it('a named statement on a transaction that already committed is refused (the connection may be another request\'s)', async () => {
    const { trx } = await foldedTransaction(one, 'SELECT 1');
    expect(await prepared('fold_one', 'SELECT 1 AS n', [], trx)).to.deep.equal([{ n: 1 }]);
    await commitTransaction(trx);
    const err = await rejection(prepared('fold_one', 'SELECT 1 AS n', [], trx));
    expect((err as Error).message).to.match(/already committed or rolled back/);
    expect(await committedIds()).to.deep.equal([]);
  });

  it('the frame refuses knex queries once it has committed or rolled back, and has no nested transactions', async () => {
    const a = await foldedTransaction(one, 'SELECT 1');
    expect(a.trx.isTransaction).to.equal(true);
    expect(() => a.trx.transaction()).to.throw(/nested transactions/);
    await commitTransaction(a.trx);
    expect((await rejection(a.trx('fold_probe').insert({ id: 1 })) as Error).message).to.match(/already complete/);
    expect((await rejection(a.trx.raw('SELECT 1')) as Error).message).to.match(/already complete/);
    const b = await foldedTransaction(one, 'SELECT 1');
    await b.trx('fold_probe').insert({ id: 2 });
    await b.trx.rollback();
    expect((await rejection(b.trx('fold_probe').select('id')) as Error).message).to.match(/already complete/);
    // A second commit or rollback of a finished frame changes nothing.
    await b.trx.commit();
    await b.trx.rollback();
    expect(await committedIds()).to.deep.equal([]);
  });

  it('a rollback given an error rejects executionPromise with it; a plain rollback resolves it', async () => {
    const a = await foldedTransaction(one, 'SELECT 1');
    const why = new Error('refused by the handler');
    await a.trx.rollback(why);
    expect(await rejection(a.trx.executionPromise)).to.equal(why);
    const b = await foldedTransaction(one, 'SELECT 1');
    await b.trx.rollback();
    await b.trx.executionPromise;
  });

  it('runs knex builders on its one connection: the callable, raw, first, returning, and a pool builder made to join it with transacting()', async () => {
    const { trx } = await foldedTransaction(one, 'SELECT 1');
    const inserted = await trx('fold_probe').insert({ id: 5 }).returning('id');
    expect(inserted).to.deep.equal([{ id: 5 }]);
    await one('fold_probe').transacting(trx).insert({ id: 6 });
    expect(await trx('fold_probe').where({ id: 6 }).first('id')).to.deep.equal({ id: 6 });
    const raw = await trx.raw<{ rows: { n: number }[] }>('SELECT count(*)::int AS n FROM fold_probe');
    expect(raw.rows[0]!.n).to.equal(2);
    // Still uncommitted: the pool's one connection is the frame's, so it is read there.
    const xact = await trx.raw<{ rows: { xid: string | null }[] }>('SELECT pg_current_xact_id_if_assigned()::text AS xid');
    expect(xact.rows[0]!.xid).to.be.a('string');
    await commitTransaction(trx);
    expect(await committedIds()).to.deep.equal([5, 6]);
  });

  it('offers every method a knex transaction has, but those that manage a pool or a schema (a knex upgrade that adds one fails here)', async () => {
    const knexTrx = await one.transaction();
    const knexMethods = new Set<string>();
    for (const name of Object.keys(knexTrx)) if (typeof (knexTrx as unknown as Record<string, unknown>)[name] === 'function') knexMethods.add(name);
    await knexTrx.rollback();
    expect(knexMethods.size, 'knex transactions expose their builder methods as own functions').to.be.greaterThan(100);
    const { trx } = await foldedTransaction(one, 'SELECT 1');
    const notOffered = ['batchInsert', 'transactionProvider', 'initialize', 'destroy', 'withUserParams', 'disableProcessing', 'enableProcessing'];
    // EventEmitter methods knex copies onto every instance; nothing listens on a transaction.
    const emitter = Object.keys(new (await import('node:events')).EventEmitter()).concat(Object.getOwnPropertyNames((await import('node:events')).EventEmitter.prototype));
    const missing = [...knexMethods].filter((m) => !notOffered.includes(m) && !emitter.includes(m) && typeof (trx as unknown as Record<string, unknown>)[m] !== 'function');
    expect(missing).to.deep.equal([]);
    await trx.rollback();
  });

  it('sends read-aheads with the first statement, in its transaction, and hands each out once', async () => {
    await one.raw('INSERT INTO fold_probe (id) VALUES (1), (2)');
    const { trx, rows } = await foldedTransaction<{ xid: string }>(one, 'SELECT txid_current()::text AS xid', [
      { key: 'probe:2', sql: `SELECT id, txid_current()::text AS xid FROM fold_probe WHERE id = ${sqlLiteral(2)}` },
      { key: 'probe:none', sql: 'SELECT id FROM fold_probe WHERE id = 99' },
    ]);
    const ahead = takeReadAhead<{ id: number; xid: string }>(trx, 'probe:2');
    expect(ahead).to.deep.equal([{ id: 2, xid: rows[0]!.xid }]);
    expect(takeReadAhead(trx, 'probe:2'), 'handed out once').to.equal(undefined);
    expect(takeReadAhead(trx, 'probe:none')).to.deep.equal([]);
    expect(takeReadAhead(trx, 'probe:unknown')).to.equal(undefined);
    expect(takeReadAhead(one, 'probe:2'), 'a pool has none').to.equal(undefined);
    await commitTransaction(trx);
    const again = await foldedTransaction(one, 'SELECT 1', [{ key: 'probe:1', sql: 'SELECT id FROM fold_probe WHERE id = 1' }]);
    await again.trx.rollback();
    expect(takeReadAhead(again.trx, 'probe:1'), 'none once the transaction is over').to.equal(undefined);
  });

  it('a read-ahead that fails fails the opening like its first statement, leaving no transaction open', async () => {
    const err = await rejection(foldedTransaction(one, 'INSERT INTO fold_probe (id) VALUES (3)', [{ key: 'bad', sql: 'SELECT * FROM no_such_table' }]));
    expect(pgErrorCode(err)).to.equal('42P01');
    expect(await committedIds()).to.deep.equal([]);
  });

  it('writeAtCommit: in a fold a held write goes before any later statement (program order) or, when none follows, with COMMIT before the last statement', async () => {
    const { trx, fold } = await foldedTransaction(one, 'SELECT 1');
    await writeAtCommit(trx, { sql: 'INSERT INTO fold_probe (id) VALUES ($1), ($2)', bindings: [1, 2] });
    // A later statement (knex or named) sends the held write first: it sees rows 1 and 2.
    const seen = await trx.raw<{ rows: { n: number }[] }>('SELECT count(*)::int AS n FROM fold_probe');
    expect(seen.rows[0]!.n).to.equal(2);
    await writeAtCommit(trx, { sql: 'INSERT INTO fold_probe (id) VALUES ($1)', bindings: [3] });
    expect(await prepared('fold_count', 'SELECT count(*)::int AS n FROM fold_probe', [], trx)).to.deep.equal([{ n: 3 }]);
    // Nothing follows this one: it is sent with the COMMIT.
    await writeAtCommit(trx, { sql: 'INSERT INTO fold_probe (id) VALUES ($1)', bindings: [4] });
    // The last statement runs after the held write: it sees rows 1 to 4.
    fold.beforeCommit = 'INSERT INTO fold_probe (id) SELECT count(*) + 10 FROM fold_probe';
    await commitTransaction(trx);
    expect(await committedIds()).to.deep.equal([1, 2, 3, 4, 14]);
  });

  it('writeAtCommit: a held write is not sent when handed over; its failure comes from the statement that sends it', async () => {
    await one.raw('INSERT INTO fold_probe (id) VALUES (9)');
    const a = await foldedTransaction(one, 'SELECT 1');
    await writeAtCommit(a.trx, { sql: 'INSERT INTO fold_probe (id) VALUES ($1)', bindings: [9] }); // a duplicate key: not sent yet
    expect(pgErrorCode(await rejection(a.trx('fold_probe').select('id')))).to.equal('23505');
    await a.trx.rollback();
    expect(await committedIds()).to.deep.equal([9]);
  });

  it('writeAtCommit: dropped by a rollback; a write that fails fails the COMMIT and nothing is committed', async () => {
    const a = await foldedTransaction(one, 'SELECT 1');
    await writeAtCommit(a.trx, { sql: 'INSERT INTO fold_probe (id) VALUES ($1)', bindings: [1] });
    await a.trx.rollback();
    const b = await foldedTransaction(one, 'SELECT 1');
    await b.trx('fold_probe').insert({ id: 2 });
    await writeAtCommit(b.trx, { sql: 'INSERT INTO fold_probe (id) VALUES ($1), ($2)', bindings: [3, 3] }); // a duplicate key
    const err = await rejection(commitTransaction(b.trx));
    expect(pgErrorCode(err)).to.equal('23505');
    expect(pgRefused(err)).to.equal(true);
    expect((await rejection(writeAtCommit(b.trx, { sql: 'SELECT 1', bindings: [] })) as Error).message).to.match(/already complete/);
    expect(await committedIds()).to.deep.equal([]);
  });

  it('writeAtCommit: a held write goes as EXECUTE of a statement prepared once per connection, the same one preparedNative uses', async () => {
    const insert = 'INSERT INTO fold_probe (id) VALUES ($1)';
    const preparedHere = async () =>
      (await one.raw<{ rows: { n: number }[] }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%fold_probe (id) VALUES ($1)'`)).rows[0]!.n;
    for (const id of [1, 2]) {
      const { trx } = await foldedTransaction(one, 'SELECT 1');
      await writeAtCommit(trx, { sql: insert, bindings: [id] });
      await commitTransaction(trx);
      expect(await preparedHere()).to.equal(1);
    }
    await preparedNative(one, { sql: insert, bindings: [3] });
    expect(await preparedHere()).to.equal(1);
    expect(await committedIds()).to.deep.equal([1, 2, 3]);
  });

  it('writeAtCommit: a held statement prepared before its result type changed fails its COMMIT once (0A000), then is prepared anew', async () => {
    const insert = { sql: 'INSERT INTO fold_probe (id) VALUES ($1) RETURNING *', bindings: [1] as unknown[] };
    const held = async (id: number) => {
      const { trx } = await foldedTransaction(one, 'SELECT 1');
      await writeAtCommit(trx, { ...insert, bindings: [id] });
      return commitTransaction(trx);
    };
    await held(1);
    await one.raw('ALTER TABLE fold_probe ADD COLUMN extra integer');
    expect(pgErrorCode(await rejection(held(2)))).to.equal('0A000');
    await held(3);
    expect(await committedIds()).to.deep.equal([1, 3]);
  });

  it('writeAtCommit outside a fold runs the write at once (a knex transaction, the pool)', async () => {
    await one.transaction(async (trx) => {
      await writeAtCommit(trx, { sql: 'INSERT INTO fold_probe (id) VALUES ($1)', bindings: [4] });
      expect(await trx('fold_probe').pluck('id')).to.deep.equal([4]);
    });
    await writeAtCommit(one, { sql: 'INSERT INTO fold_probe (id) VALUES ($1)', bindings: [5] });
    expect(await committedIds()).to.deep.equal([4, 5]);
  });

  it('inlineValues writes each value as node-postgres would send it, quoted: text, numbers, dates, JSON, arrays, NULL; the same row as parameters', async () => {
    const at = new Date('2026-11-26T01:02:03.456Z');
    const tricky = `it's $1 a \\ test'); DROP TABLE fold_probe; --`;
    const values = [tricky, 12, at, JSON.stringify({ a: "o'k", b: [1, 2] }), ['x', "y'z"], null, true];
    const sql = 'SELECT $1::text AS s, $2::int AS n, $3::timestamptz AS t, $4::jsonb AS j, $5::text[] AS a, $6::text AS z, $7::boolean AS b';
    const inlined = await one.raw<{ rows: Record<string, unknown>[] }>(inlineValues(sql, values)); // (no `?` in it: knex leaves a raw without bindings alone)
    const bound = await prepared<Record<string, unknown>>('fold_inline_probe', sql, values, one);
    expect(inlined.rows[0]).to.deep.equal(bound[0]);
    expect(inlined.rows[0]).to.deep.include({ s: tricky, n: 12, z: null, b: true });
    expect(inlineValues('SELECT $10, $1', [1, 2, 3, 4, 5, 6, 7, 8, 9, 'ten'])).to.equal("SELECT 'ten', '1'");
    expect(() => inlineValues('SELECT $2', [1])).to.throw(/no value for \$2/);
    expect(await committedIds()).to.deep.equal([]);
  });

  it("nativeOf gives knex raw's $n form for plain values from its own numbering, and leaves knex queries, raws, ?? and escapes to knex", () => {
    const values = ['a', 2, new Date(0), ['x', 'y'], { k: 1 }, null, Buffer.from('b')];
    const text = 'SELECT ?, ?::int, ?, ?::text[], ?::jsonb, ?, ?';
    const knexOf = (sql: string, bindings: unknown[]) => db.raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative();
    const ours = nativeOf(db, text, values);
    expect(ours).to.deep.equal(knexOf(text, values));
    expect(ours.sql).to.equal('SELECT $1, $2::int, $3, $4::text[], $5::jsonb, $6, $7');
    expect(nativeOf(db, text, values).bindings, 'the values as given, the text remembered').to.equal(values);
    // What only knex can do: splice a query or raw in, name an identifier, keep an escaped ?.
    const sub = db('users').where({ id: 'u' }).select('id');
    expect(nativeOf(db, 'SELECT ? IN (?)', [1, sub])).to.deep.equal(knexOf('SELECT ? IN (?)', [1, sub]));
    expect(nativeOf(db, 'SELECT ? + ?', [db.raw('1'), 2]).sql).to.equal('SELECT 1 + $1');
    expect(nativeOf(db, 'SELECT ?? FROM users WHERE id = ?', ['email', 'u']).sql).to.equal('SELECT "email" FROM users WHERE id = $1');
    expect(nativeOf(db, "SELECT '{}'::jsonb \\? ?", ['k']).sql).to.equal(knexOf("SELECT '{}'::jsonb \\? ?", ['k']).sql);
    // And knex's refusals: a missing value, a value too many, undefined.
    expect(() => nativeOf(db, 'SELECT ?, ?', [1])).to.throw(/Expected 1 bindings, saw 2/);
    expect(() => nativeOf(db, 'SELECT ?', [1, 2])).to.throw(/Expected 2 bindings, saw 1/);
    expect(() => nativeOf(db, 'SELECT ?', [undefined])).to.throw(/Undefined binding/);
  });

  it('shaped: the text knex builds once, each call its own values in their places (constants kept); a value that is not one parameter is refused', async () => {
    let builds = 0;
    const read = shaped((k, ids: string[], name: string) => {
      builds++;
      return k('users').whereRaw('id = ANY(?::uuid[])', [ids]).where('full_name', '<>', name).orderBy('id').limit(7).select('id');
    });
    const byKnex = (ids: string[], name: string) => db('users').whereRaw('id = ANY(?::uuid[])', [ids]).where('full_name', '<>', name).orderBy('id').limit(7).select('id').toSQL().toNative();
    const [a, b] = [randomUUID(), randomUUID()];
    expect(read([a, b], 'x')).to.deep.equal(byKnex([a, b], 'x'));
    expect(read([b], "o'k")).to.deep.equal(byKnex([b], "o'k"));
    expect(builds, 'built once').to.equal(1);
    expect((await readTogether(db, [read([a], 'x')]))[0]).to.deep.equal([]);
    // whereIn's text grows with its list; a value placed twice or not at all has no one place.
    expect(() => shaped((k, ids: string[]) => k('users').whereIn('id', ids))([a, b])).to.throw(/exactly one parameter/);
    expect(() => shaped((k, id: string) => k('users').where({ id }).orWhere({ email: id }))(a)).to.throw(/exactly one parameter/);
    expect(() => shaped((k, _id: string) => k('users').select('id'))(a)).to.throw(/exactly one parameter/);
  });

  it('an escrow read ahead is handed to the first plain read only; a locked read discards it, so a later plain read sees the database', async () => {
    const { escrow } = await createEscrow();
    const a = await foldedTransaction(db, 'SELECT 1', escrowReadAhead(escrow.id));
    try {
      await db('escrows').where({ id: escrow.id }).update({ item_name: 'Renamed after the read-ahead' });
      expect((await findById(a.trx, escrow.id))!.item_name, 'the read-ahead, read with BEGIN').to.equal(escrow.item_name);
      expect((await findById(a.trx, escrow.id))!.item_name, 'a second read goes to the database').to.equal('Renamed after the read-ahead');
    } finally {
      await a.trx.rollback();
    }
    const b = await foldedTransaction(db, 'SELECT 1', escrowReadAhead(escrow.id));
    try {
      await db('escrows').where({ id: escrow.id }).update({ item_name: 'Renamed again' });
      expect((await findById(b.trx, escrow.id, { lock: true }))!.item_name).to.equal('Renamed again');
      expect((await findById(b.trx, escrow.id))!.item_name, 'not the read-ahead from before the lock').to.equal('Renamed again');
    } finally {
      await b.trx.rollback();
    }
    expect(escrowReadAhead('not-a-uuid')).to.deep.equal([]);
  });

  const countAbove = { sql: 'SELECT count(*)::int AS n FROM fold_probe WHERE id > $1', bindings: [0] as unknown[] };
  const idsIn = { sql: 'SELECT id FROM fold_probe WHERE id = ANY($1::int[]) ORDER BY id', bindings: [[2, 3, 9]] as unknown[] };

  it('readTogether: in a fold the held writes and every read go in one round trip, the reads after the writes; each read prepared once per connection', async () => {
    const a = await foldedTransaction(one, 'SELECT 1');
    await writeAtCommit(a.trx, { sql: 'INSERT INTO fold_probe (id) VALUES ($1), ($2)', bindings: [1, 2] });
    // The first time on this connection: one PREPARE per read, then the one query.
    const first = await statementsOf(() => readTogether(a.trx, [countAbove, idsIn]));
    expect(first.result).to.deep.equal([[{ n: 2 }], [{ id: 2 }]]);
    expect(first.sent.filter((q) => q.startsWith('PREPARE'))).to.have.length(2);
    await commitTransaction(a.trx);
    const b = await foldedTransaction(one, 'SELECT 1');
    await writeAtCommit(b.trx, { sql: 'INSERT INTO fold_probe (id) VALUES ($1)', bindings: [3] });
    const { sent, result: rows } = await statementsOf(() => readTogether(b.trx, [countAbove, idsIn]));
    expect(rows).to.deep.equal([[{ n: 3 }], [{ id: 2 }, { id: 3 }]]);
    expect(sent, 'one round trip').to.have.length(1);
    expect(sent[0]).to.match(/^EXECUTE k_\w+\('3'\); EXECUTE k_\w+\('0'\); EXECUTE k_\w+\('\{"2","3","9"\}'\)$/);
    // Nothing is held any more: COMMIT goes alone.
    expect((await statementsOf(() => commitTransaction(b.trx))).sent).to.deep.equal(['COMMIT']);
    expect(await committedIds()).to.deep.equal([1, 2, 3]);
  });

  it('readTogether: a read that fails fails the transaction with it (the held writes too); nothing is committed', async () => {
    const a = await foldedTransaction(one, 'SELECT 1');
    await writeAtCommit(a.trx, { sql: 'INSERT INTO fold_probe (id) VALUES ($1)', bindings: [1] });
    const err = await rejection(readTogether(a.trx, [countAbove, { sql: 'SELECT 1 / $1::int AS x', bindings: [0] }]));
    expect(pgErrorCode(err)).to.equal('22012');
    await a.trx.rollback();
    expect(await committedIds()).to.deep.equal([]);
  });

  it('readTogether outside a fold: one query on one connection (the pool, or a knex transaction\'s own), the same rows', async () => {
    await one('fold_probe').insert([{ id: 2 }, { id: 9 }]);
    await readTogether(one, [countAbove, idsIn]); // prepared on the pool's one connection
    const { sent, result: rows } = await statementsOf(() => readTogether(one, [countAbove, idsIn]));
    expect(rows).to.deep.equal([[{ n: 2 }], [{ id: 2 }, { id: 9 }]]);
    expect(sent).to.have.length(1);
    await one.transaction(async (trx) => {
      await trx('fold_probe').insert({ id: 3 });
      expect(await readTogether(trx, [countAbove, idsIn])).to.deep.equal([[{ n: 3 }], [{ id: 2 }, { id: 3 }, { id: 9 }]]);
    });
    expect(await readTogether(one, [])).to.deep.equal([]);
  });

  it('readAheadOf: a knex query as a read-ahead answers the rows the query answers', async () => {
    await one('fold_probe').insert([{ id: 1 }, { id: 5 }]);
    const query = one('fold_probe').whereIn('id', [5, 7]).select('id');
    const ahead = readAheadOf('probe', query);
    const { trx } = await foldedTransaction(one, 'SELECT 1', [ahead]);
    expect(takeReadAhead(trx, 'probe')).to.deep.equal(await trx('fold_probe').whereIn('id', [5, 7]).select('id'));
    await trx.rollback();
  });

  it('sqlLiteral quotes strings (quotes, backslashes), dates and numbers; refuses non-finite numbers', async () => {
    const tricky = `it's a \\ test'); DROP TABLE fold_probe; --`;
    const at = new Date('2026-11-25T08:00:00.123Z');
    const rows = await one.raw<{ rows: { s: string; t: Date; n: number }[] }>(
      `SELECT ${sqlLiteral(tricky)}::text AS s, ${sqlLiteral(at)}::timestamptz AS t, ${sqlLiteral(-12)}::int AS n, ${sqlLiteral(null)} IS NULL AS z`,
    );
    expect(rows.rows[0]).to.deep.include({ s: tricky, n: -12 });
    expect(rows.rows[0]!.t.toISOString()).to.equal(at.toISOString());
    expect(() => sqlLiteral(Number.NaN)).to.throw(/not a finite number/);
    expect(await committedIds()).to.deep.equal([]);
  });

  it('quoteLiteral writes every string exactly as pg escapeLiteral does, and Postgres reads it back unchanged', async () => {
    const text = fc.string({ unit: fc.constantFrom("'", '\\', '"', 'a', 'é', '😀', ' ', '\n', '$', '?', ';') });
    fc.assert(fc.property(fc.oneof(text, fc.string({ unit: 'grapheme' })), (s) => quoteLiteral(s) === pg.escapeLiteral(s)), { numRuns: 2000 });
    // (Without `?`: knex's raw would read it as a binding.)
    const samples = fc.sample(text, { numRuns: 50, seed: 29 }).map((s) => s.replaceAll('?', '!')).concat([`a'b\\c''`, '']);
    const rows = await one.raw<{ rows: { s: string }[] }>(samples.map((s) => `SELECT ${quoteLiteral(s)}::text AS s`).join(' UNION ALL '));
    expect(rows.rows.map((r) => r.s)).to.deep.equal(samples);
  });
});
