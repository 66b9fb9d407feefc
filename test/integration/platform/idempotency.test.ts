import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { IDEMPOTENCY_TTL_MS, purgeExpired } from '../../../shared/idempotency.js';
import { countRows, createUser, userBalance } from '../../helpers/platform-factories.js';
import { PROBE_USER_HEADER, probe, probeApi, resetProbe } from '../../helpers/platform-probe-router.js';

const HOUR = 3600_000;

async function keyRows(): Promise<{ endpoint: string; scope: string; state: string }[]> {
  return db('idempotency_keys').select('endpoint', 'scope', 'state').orderBy('endpoint');
}

function within<T>(ms: number, work: Promise<T>): Promise<T | 'timeout'> {
  return Promise.race([work, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms))]);
}

describe('platform: idempotency (spec section 8)', () => {
  beforeEach(() => {
    resetProbe();
    clock.set(new Date('2026-11-22T08:00:00.000Z'));
  });
  afterEach(() => resetProbe());

  const body = { note: 'pay the seller', amount: 150_000, tags: ['a', 'b'] };

  it('a COMMIT that fails (deferred check, connection cut) answers 5xx, never the 2xx of a change that did not happen; the key is free again', async () => {
    // A deferred constraint trigger fails at COMMIT time, after the handler and the answer's
    // record have run: knex's trx.commit() resolves even then (found by npm run chaos).
    await db.raw(`CREATE FUNCTION test_fail_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected failure at commit'; END $$`);
    await db.raw(`CREATE CONSTRAINT TRIGGER test_fail_at_commit AFTER INSERT OR UPDATE ON idempotency_keys
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_fail_at_commit()`);
    const key = randomUUID();
    try {
      const res = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body);
      expect(res.status, JSON.stringify(res.body)).to.be.within(500, 599);
      expect(res.body.success).to.equal(false);
    } finally {
      await db.raw('DROP TRIGGER IF EXISTS test_fail_at_commit ON idempotency_keys');
      await db.raw('DROP FUNCTION IF EXISTS test_fail_at_commit()');
    }
    expect(await keyRows()).to.deep.equal([]);
    // The client's retry with the same key runs the request for real.
    const retry = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    expect(retry.headers['idempotent-replay']).to.equal(undefined);
  });

  it('replays the first 2xx with Idempotent-Replay: true, identical body, and no second side effect', async () => {
    const key = randomUUID();
    const app = probeApi();
    const first = await app.post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    expect(first.headers['idempotent-replay']).to.equal(undefined);
    expect(first.body.data.n).to.equal(1);
    expect(probe.calls.echo).to.equal(1);

    clock.advance(5 * 60_000);
    // A fresh app instance (another API copy) replays it too: the key lives in Postgres.
    const second = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    expect(second.headers['idempotent-replay']).to.equal('true');
    expect(second.body).to.deep.equal(first.body);
    expect(second.text).to.equal(first.text);
    expect(second.type).to.equal('application/json');
    expect(probe.calls.echo).to.equal(1);

    const third = await app.post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    expect(third.headers['idempotent-replay']).to.equal('true');
    expect(third.body).to.deep.equal(first.body);
    expect(probe.calls.echo).to.equal(1);

    const rows = await keyRows();
    expect(rows).to.deep.equal([{ endpoint: 'POST /test/echo', scope: rows[0]!.scope, state: 'completed' }]);
  });

  it('sends the first answer as the exact JSON text it stored (made once), with the JSON content type', async () => {
    const key = randomUUID();
    const first = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    expect(first.headers['content-type']).to.equal('application/json; charset=utf-8');
    const [row] = await db('idempotency_keys').select('response_body', 'response_status').where({ key });
    expect(row.response_status).to.equal(201);
    expect(first.text).to.equal(row.response_body);
    expect(first.headers['content-length']).to.equal(String(Buffer.byteLength(row.response_body as string)));
  });

  it('treats the same body with keys in another order as the same request', async () => {
    const key = randomUUID();
    await probeApi().post('/test/echo').set('Idempotency-Key', key).send({ note: 'x', meta: { a: 1, b: 2 } }).expect(201);
    const res = await probeApi()
      .post('/test/echo')
      .set('Idempotency-Key', key)
      .send({ meta: { b: 2, a: 1 }, note: 'x' })
      .expect(201);
    expect(res.headers['idempotent-replay']).to.equal('true');
    expect(probe.calls.echo).to.equal(1);
  });

  it('accepts an upper-case UUID v4 as the same key', async () => {
    const key = randomUUID();
    await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    const res = await probeApi().post('/test/echo').set('Idempotency-Key', key.toUpperCase()).send(body).expect(201);
    expect(res.headers['idempotent-replay']).to.equal('true');
    expect(probe.calls.echo).to.equal(1);
  });

  it('runs every request when no key is sent', async () => {
    await probeApi().post('/test/echo').send(body).expect(201);
    const res = await probeApi().post('/test/echo').send(body).expect(201);
    expect(res.headers['idempotent-replay']).to.equal(undefined);
    expect(probe.calls.echo).to.equal(2);
    expect(await keyRows()).to.deep.equal([]);
  });

  it('answers the same key with a different body 422 IDEMPOTENCY_KEY_CONFLICT and runs nothing', async () => {
    const key = randomUUID();
    const first = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    const res = await probeApi()
      .post('/test/echo')
      .set('Idempotency-Key', key)
      .send({ ...body, amount: 150_001 })
      .expect(422);
    expect(res.body.success).to.equal(false);
    expect(res.body.error.code).to.equal('IDEMPOTENCY_KEY_CONFLICT');
    expect(res.headers['idempotent-replay']).to.equal(undefined);
    expect(probe.calls.echo).to.equal(1);
    // The stored answer is untouched: the original body still replays.
    const again = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    expect(again.body).to.deep.equal(first.body);
  });

  it('answers a second concurrent request with the same key 409 IDEMPOTENCY_KEY_IN_FLIGHT', async () => {
    const key = randomUUID();
    const appA = probeApi();
    const appB = probeApi();
    const send = (app: typeof appA): Promise<Response> =>
      app.post('/test/slow').set('Idempotency-Key', key).send({ n: 1 }).then((r) => r);

    // Both requests are on the wire at once; the handler holds the first until the gate opens.
    const a = send(appA);
    const b = send(appB);
    expect(await within(5000, probe.slowEntered.promise)).to.not.equal('timeout');
    const firstDone = await within(3000, Promise.race([a, b]));
    probe.slowGate.resolve();
    const [ra, rb] = await Promise.all([a, b]);

    expect(firstDone).to.not.equal('timeout');
    expect((firstDone as Response).status).to.equal(409);
    expect([ra.status, rb.status].sort()).to.deep.equal([201, 409]);
    const loser = ra.status === 409 ? ra : rb;
    const winner = ra.status === 201 ? ra : rb;
    expect(loser.body.success).to.equal(false);
    expect(loser.body.error.code).to.equal('IDEMPOTENCY_KEY_IN_FLIGHT');
    expect(winner.body.data).to.deep.equal({ n: 1 });
    expect(probe.calls.slow).to.equal(1);

    // Once the first finished, a retry with the same key gets its answer.
    const retry = await probeApi().post('/test/slow').set('Idempotency-Key', key).send({ n: 1 }).expect(201);
    expect(retry.headers['idempotent-replay']).to.equal('true');
    expect(retry.body).to.deep.equal(winner.body);
    expect(probe.calls.slow).to.equal(1);
  });

  it('never takes over a key whose first call is still running, however long it runs', async () => {
    const key = randomUUID();
    const send = () => probeApi().post('/test/slow').set('Idempotency-Key', key).send({}).then((r) => r);
    const stuck = send();
    await probe.slowEntered.promise;
    for (const minutes of [1, 3, 10, 60]) {
      clock.advance(minutes * 60_000);
      const early = await send();
      expect(early.status, `after ${minutes} more minutes`).to.equal(409);
      expect(early.body.error.code).to.equal('IDEMPOTENCY_KEY_IN_FLIGHT');
    }
    expect(probe.calls.slow).to.equal(1);
    probe.slowGate.resolve();
    expect((await stuck).status).to.equal(201);
  });

  it("lets a retry run once the first call's transaction is provably gone (its connection died), and the first call changes nothing", async () => {
    const key = randomUUID();
    const send = () => probeApi().post('/test/slow').set('Idempotency-Key', key).send({}).then((r) => r);
    const stuck = send();
    await probe.slowEntered.promise;
    // The process holding the key dies: Postgres ends its connection and rolls it back.
    const holders = await db.raw<{ rows: { pid: number }[] }>(
      // This database only: other databases on the same server (a bench, another checkout) hold their own.
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    expect(holders.rows).to.have.length(1);
    await db.raw('SELECT pg_terminate_backend(?)', [holders.rows[0]!.pid]);
    // pg_terminate_backend only signals: the retry goes once the backend has exited and its locks are gone (a retry
    // sent before that is rightly 409 IN_FLIGHT, which on a loaded machine failed this test).
    for (let i = 0; i < 250; i++) {
      const alive = await db.raw<{ rows: unknown[] }>('SELECT 1 FROM pg_stat_activity WHERE pid = ? UNION ALL SELECT 1 FROM pg_locks WHERE pid = ?', [holders.rows[0]!.pid, holders.rows[0]!.pid]);
      if (alive.rows.length === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }

    const retrying = send();
    for (let i = 0; i < 250 && probe.calls.slow < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(probe.calls.slow).to.equal(2); // the retry's handler runs: the key was let go
    probe.slowGate.resolve();
    const [first, retry] = await Promise.all([stuck, retrying]);
    expect(retry.status).to.equal(201);
    expect(retry.headers['idempotent-replay']).to.equal(undefined);
    expect(retry.body.data).to.deep.equal({ n: 2 });
    expect(first.status).to.equal(500);
    const replay = await send();
    expect(replay.headers['idempotent-replay']).to.equal('true');
    expect(replay.body).to.deep.equal(retry.body);
  });

  it("commits the handler's money move and the stored answer together: when the answer cannot be recorded, the move is rolled back", async () => {
    const user = await createUser();
    const key = randomUUID();
    const move = () => probeApi().post('/test/move').set('Idempotency-Key', key).send({ user_id: user.id, amount: 5_000 });
    await db.raw(`
      CREATE FUNCTION probe_refuse_key() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'probe: storage refused'; END $$;
      CREATE TRIGGER probe_refuse_key BEFORE INSERT ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION probe_refuse_key();
    `);
    try {
      const res = await move().expect(500);
      expect(res.body.error.code).to.equal('IDEMPOTENCY_INSERT_FAILED');
    } finally {
      await db.raw('DROP TRIGGER probe_refuse_key ON idempotency_keys; DROP FUNCTION probe_refuse_key()');
    }
    expect(await userBalance(user.id)).to.equal(0);
    expect(await countRows('journal_entries')).to.equal(0);

    const ok = await move().expect(201);
    const again = await move().expect(201);
    expect(again.headers['idempotent-replay']).to.equal('true');
    expect(again.body).to.deep.equal(ok.body);
    expect(await userBalance(user.id)).to.equal(5_000);
    expect(await countRows('journal_entries')).to.equal(1);
  });

  it("rolls the handler's money move back when it fails: nothing is kept, the key is free", async () => {
    const key = randomUUID();
    // No such user: the posting fails on the foreign key, the request answers 5xx.
    const missing = randomUUID();
    const res = await probeApi().post('/test/move').set('Idempotency-Key', key).send({ user_id: missing, amount: 5_000 });
    expect(res.status).to.be.at.least(400);
    expect(await countRows('journal_entries')).to.equal(0);
    expect(await keyRows()).to.deep.equal([]);
  });

  for (const [outcome, status] of [
    ['throw-4xx', 409],
    ['set-4xx', 422],
    ['rate-limited', 429],
    ['throw-plain', 500],
  ] as const) {
    it(`does not cache a ${status} (${outcome}): a retry with the same key runs again`, async () => {
      const key = randomUUID();
      probe.flakyOutcomes = [outcome];
      const failed = await probeApi().post('/test/flaky').set('Idempotency-Key', key).send({ x: 1 }).expect(status);
      expect(failed.body.success).to.equal(false);
      expect(failed.headers['idempotent-replay']).to.equal(undefined);
      expect(await keyRows()).to.deep.equal([]); // released

      const retry = await probeApi().post('/test/flaky').set('Idempotency-Key', key).send({ x: 1 }).expect(201);
      expect(retry.headers['idempotent-replay']).to.equal(undefined);
      expect(retry.body.data).to.deep.equal({ n: 2 });
      expect(probe.calls.flaky).to.equal(2);

      const replay = await probeApi().post('/test/flaky').set('Idempotency-Key', key).send({ x: 1 }).expect(201);
      expect(replay.headers['idempotent-replay']).to.equal('true');
      expect(replay.body).to.deep.equal(retry.body);
      expect(probe.calls.flaky).to.equal(2);
    });
  }

  it('answers a key that is not a UUID v4 400 IDEMPOTENCY_KEY_INVALID and runs nothing', async () => {
    const notV4 = [
      'not-a-uuid',
      '12345',
      'f47ac10b-58cc-1372-a567-0e02b2c3d479', // version 1
      'f47ac10b-58cc-4372-c567-0e02b2c3d479', // bad variant
      `${randomUUID()}0`,
      randomUUID().replace(/-/g, ''),
    ];
    for (const key of notV4) {
      const res = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(400);
      expect(res.body.success).to.equal(false);
      expect(res.body.error.code).to.equal('IDEMPOTENCY_KEY_INVALID');
    }
    expect(probe.calls.echo).to.equal(0);
    expect(await keyRows()).to.deep.equal([]);
  });

  it('ignores the header on GET', async () => {
    await probeApi().get('/test/echo').set('Idempotency-Key', 'not-a-uuid').expect(200);
    const key = randomUUID();
    await probeApi().get('/test/echo').set('Idempotency-Key', key).expect(200);
    const res = await probeApi().get('/test/echo').set('Idempotency-Key', key).expect(200);
    expect(res.headers['idempotent-replay']).to.equal(undefined);
    expect(res.body.data.n).to.equal(3);
    expect(await keyRows()).to.deep.equal([]);
  });

  it('forgets a key after 24 hours: the request runs again', async () => {
    const key = randomUUID();
    const first = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);

    clock.advance(IDEMPOTENCY_TTL_MS - 1000);
    const stillCached = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    expect(stillCached.headers['idempotent-replay']).to.equal('true');
    expect(stillCached.body).to.deep.equal(first.body);
    expect(probe.calls.echo).to.equal(1);

    clock.advance(1000); // exactly 24 hours after the first answer
    const fresh = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    expect(fresh.headers['idempotent-replay']).to.equal(undefined);
    expect(fresh.body.data.n).to.equal(2);
    expect(fresh.body.data.at).to.equal('2026-11-23T08:00:00.000Z');
    expect(probe.calls.echo).to.equal(2);

    // After expiry even another body may use the key.
    clock.advance(24 * HOUR);
    await probeApi().post('/test/echo').set('Idempotency-Key', key).send({ note: 'other' }).expect(201);
    expect(probe.calls.echo).to.equal(3);
  });

  it('scopes keys per endpoint: the same key on another path runs independently', async () => {
    const key = randomUUID();
    const a = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    const b = await probeApi().post('/test/echo-other').set('Idempotency-Key', key).send(body).expect(201);
    expect(b.headers['idempotent-replay']).to.equal(undefined);
    expect(probe.calls).to.include({ echo: 1, echoOther: 1 });
    // ... even with a different body (no conflict across endpoints).
    const c = await probeApi().post('/test/echo-other').set('Idempotency-Key', randomUUID()).send({ note: 'z' }).expect(201);
    expect(c.body.data.n).to.equal(2);

    const replayA = await probeApi().post('/test/echo').set('Idempotency-Key', key).send(body).expect(201);
    const replayB = await probeApi().post('/test/echo-other').set('Idempotency-Key', key).send(body).expect(201);
    expect(replayA.body).to.deep.equal(a.body);
    expect(replayB.body).to.deep.equal(b.body);
    expect(probe.calls).to.include({ echo: 1, echoOther: 2 });
    expect((await keyRows()).map((r) => r.endpoint)).to.deep.equal([
      'POST /test/echo',
      'POST /test/echo-other',
      'POST /test/echo-other',
    ]);
  });

  it('scopes keys per user: another user with the same key runs independently', async () => {
    const key = randomUUID();
    const alice = randomUUID();
    const bob = randomUUID();
    const a = await probeApi().post('/test/echo').set(PROBE_USER_HEADER, alice).set('Idempotency-Key', key).send(body).expect(201);
    const b = await probeApi().post('/test/echo').set(PROBE_USER_HEADER, bob).set('Idempotency-Key', key).send(body).expect(201);
    expect(b.headers['idempotent-replay']).to.equal(undefined);
    expect(b.body.data.n).to.equal(2);
    const a2 = await probeApi().post('/test/echo').set(PROBE_USER_HEADER, alice).set('Idempotency-Key', key).send(body).expect(201);
    expect(a2.headers['idempotent-replay']).to.equal('true');
    expect(a2.body).to.deep.equal(a.body);
    // Bob's other body with the same key conflicts only with Bob's own request.
    await probeApi()
      .post('/test/echo')
      .set(PROBE_USER_HEADER, bob)
      .set('Idempotency-Key', key)
      .send({ note: 'different' })
      .expect(422);
    expect(probe.calls.echo).to.equal(2);
    const scopes = (await keyRows()).map((r) => r.scope).sort();
    expect(scopes).to.deep.equal([`user:${alice}`, `user:${bob}`].sort());
  });
  it('answers 500 IDEMPOTENCY_LOOKUP_FAILED when the key store cannot be read, and runs nothing', async () => {
    await db.raw('ALTER TABLE idempotency_keys RENAME TO idempotency_keys_away');
    try {
      const res = await probeApi().post('/test/echo').set('Idempotency-Key', randomUUID()).send(body).expect(500);
      expect(res.body.error.code).to.equal('IDEMPOTENCY_LOOKUP_FAILED');
      expect(probe.calls.echo).to.equal(0);
    } finally {
      await db.raw('ALTER TABLE idempotency_keys_away RENAME TO idempotency_keys');
    }
  });

  it('the hourly purge deletes every expired key, a batch per statement, and keeps the live ones', async () => {
    const now = clock.nowMs();
    const row = (i: number, expiresAt: number) => ({
      scope: `user:${randomUUID()}`,
      endpoint: 'POST /test/echo',
      key: randomUUID(),
      request_hash: `h${i}`,
      state: 'completed',
      response_status: 201,
      response_body: '{}',
      locked_at: new Date(now - 2 * IDEMPOTENCY_TTL_MS),
      created_at: new Date(now - 2 * IDEMPOTENCY_TTL_MS),
      expires_at: new Date(expiresAt),
    });
    const expired = Array.from({ length: 7 }, (_, i) => row(i, now - 1000 - i));
    const live = Array.from({ length: 3 }, (_, i) => row(100 + i, now + 60_000));
    await db('idempotency_keys').insert([...expired, ...live, row(200, now)]);
    // Batches of 3: 8 expired keys (the one expiring now included) take three statements.
    expect(await purgeExpired(db, 3)).to.equal(8);
    const left = await db('idempotency_keys').select('request_hash').orderBy('request_hash');
    expect(left.map((r: { request_hash: string }) => r.request_hash)).to.deep.equal(['h100', 'h101', 'h102']);
    expect(await purgeExpired(db, 3)).to.equal(0);
  });
});
