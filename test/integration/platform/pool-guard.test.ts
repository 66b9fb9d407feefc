/**
 * The pool guard (ARCHITECTURE rule 7, issue 23): code that holds a pooled connection, a
 * keyed request's transaction or any `db.transaction(fn)`, and asks the same pool for a
 * second connection fails loudly in development and test, instead of deadlocking the pool
 * under a burst in production.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { config } from '../../../shared/config.js';
import { createDb, db, holdingConnection, SecondConnectionError } from '../../../shared/db.js';
import { createRouter } from '../../../api/context.js';
import { idempotent, txOf } from '../../../api/middleware/idempotency.js';
import { api } from '../../helpers/app.js';
import { rejection } from '../../helpers/platform-factories.js';

const guardRouter = createRouter();
// A keyed handler that reads through the pool instead of the request's transaction.
guardRouter.post('/test/pool-guard/wrong', idempotent(), async (ctx) => {
  await db.raw('SELECT 1');
  ctx.body = { success: true };
});
// The same work done right: through txOf(ctx).
guardRouter.post('/test/pool-guard/right', idempotent(), async (ctx) => {
  const { rows } = await txOf(ctx).raw<{ rows: { one: number }[] }>('SELECT 1 AS one');
  ctx.body = { success: true, data: { one: rows[0]!.one } };
});

// Work that must not run inside the key's transaction (an upload waits for its worker).
const prepared = { runs: 0, discarded: 0, sawTransaction: false };
guardRouter.post(
  '/test/pool-guard/prepare',
  idempotent({
    prepare: async (ctx) => {
      prepared.runs += 1;
      prepared.sawTransaction = ctx.state.trx !== undefined;
      await db.raw('SELECT 1'); // no connection is held yet: the pool may be used
      return () => {
        prepared.discarded += 1;
        return Promise.resolve();
      };
    },
  }),
  async (ctx) => {
    const body = ctx.request.body as { fail?: boolean };
    if (body.fail) {
      ctx.status = 409;
      ctx.body = { success: false, error: { code: 'INVALID_STATE', message: 'refused' } };
      return;
    }
    await txOf(ctx).raw('SELECT 1');
    ctx.status = 201;
    ctx.body = { success: true, data: { runs: prepared.runs } };
  },
);

describe('platform: the pool guard (a connection holder never asks for a second one)', () => {
  it('is on outside production', () => {
    expect(config.nodeEnv).to.equal('test');
    expect(config.databasePoolGuard).to.equal(true);
  });

  it('inside db.transaction(fn), a query on the pool throws SecondConnectionError naming the rule; the transaction itself works', async () => {
    const err = await rejection(
      db.transaction(async (trx) => {
        await trx.raw('SELECT 1');
        await db.raw('SELECT 1');
      }),
    );
    expect(err).to.be.instanceOf(SecondConnectionError);
    expect((err as Error).message).to.match(/a transaction.*second one.*rule 7/s);
    // Nested transactions (savepoints) use the same connection: allowed.
    const n = await db.transaction(async (trx) => trx.transaction(async (inner) => (await inner.raw<{ rows: { n: number }[] }>('SELECT 2 AS n')).rows[0]!.n));
    expect(n).to.equal(2);
    // A second transaction opened from inside the first needs a second connection: refused.
    expect(await rejection(db.transaction(async () => db.transaction(async (t) => t.raw('SELECT 1'))))).to.be.instanceOf(SecondConnectionError);
  });

  it('holdingConnection marks only its own work: after it returns, and outside it, the pool answers', async () => {
    const err = await rejection(
      holdingConnection(db, 'a probe', async () => {
        await db.raw('SELECT 1');
      }),
    );
    expect(err).to.be.instanceOf(SecondConnectionError);
    expect((err as Error).message).to.include('a probe');
    // Work started inside but run after the holder let go is not holding anything.
    let later: Promise<unknown> = Promise.resolve();
    await holdingConnection(db, 'a probe', () => {
      later = new Promise((resolve) => setImmediate(resolve)).then(async () => {
        await db.raw('SELECT 1');
      });
      return Promise.resolve();
    });
    await later;
    await db.raw('SELECT 1');
  });

  it('guards each pool on its own: a second knex pool may be used, and a pool built without the guard never throws', async () => {
    const other = createDb(config.databaseUrl, 1, true);
    const unguarded = createDb(config.databaseUrl, 2, false);
    try {
      await db.transaction(async () => {
        await other.raw('SELECT 1');
      });
      await unguarded.transaction(async () => {
        await unguarded.raw('SELECT 1');
      });
      // holdingConnection on an unguarded pool just runs the work (no AsyncLocalStorage).
      const one = await holdingConnection(unguarded, 'a probe', async () => (await unguarded.raw<{ rows: { one: number }[] }>('SELECT 1 AS one')).rows[0]!.one);
      expect(one).to.equal(1);
    } finally {
      await other.destroy();
      await unguarded.destroy();
    }
  });

  it('a keyed request whose handler uses the pool answers 500 (the test sees it); through txOf(ctx) it answers 200', async () => {
    const client = api({ extraRouters: [guardRouter] });
    const wrong = await client.post('/test/pool-guard/wrong').set('Idempotency-Key', randomUUID()).send({});
    expect(wrong.status).to.equal(500);
    expect(wrong.body.error.code).to.equal('INTERNAL_ERROR');
    // Without a key the handler holds nothing, so the same code is not refused.
    expect((await client.post('/test/pool-guard/wrong').send({})).status).to.equal(200);
    const right = await client.post('/test/pool-guard/right').set('Idempotency-Key', randomUUID()).send({});
    expect(right.status).to.equal(200);
    expect(right.body.data.one).to.equal(1);
  });

  it('idempotent({ prepare }) runs its step before the key\'s transaction, never again for a stored answer, and discards it when nothing commits', async () => {
    Object.assign(prepared, { runs: 0, discarded: 0, sawTransaction: false });
    const client = api({ extraRouters: [guardRouter] });
    const key = randomUUID();
    const first = await client.post('/test/pool-guard/prepare').set('Idempotency-Key', key).send({ n: 1 });
    expect(first.status).to.equal(201);
    expect(prepared).to.deep.equal({ runs: 1, discarded: 0, sawTransaction: false });
    const replay = await client.post('/test/pool-guard/prepare').set('Idempotency-Key', key).send({ n: 1 });
    expect(replay.status).to.equal(201);
    expect(replay.headers['idempotent-replay']).to.equal('true');
    expect(replay.body).to.deep.equal(first.body);
    expect(prepared.runs, 'a replay does not prepare again').to.equal(1);
    const conflict = await client.post('/test/pool-guard/prepare').set('Idempotency-Key', key).send({ n: 2 });
    expect(conflict.status).to.equal(422);
    expect(prepared.runs).to.equal(1);
    const refused = await client.post('/test/pool-guard/prepare').set('Idempotency-Key', randomUUID()).send({ fail: true });
    expect(refused.status).to.equal(409);
    expect(prepared).to.include({ runs: 2, discarded: 1 });
    // Without a key: prepared, and discarded when refused.
    expect((await client.post('/test/pool-guard/prepare').send({ fail: true })).status).to.equal(409);
    expect((await client.post('/test/pool-guard/prepare').send({})).status).to.equal(201);
    expect(prepared).to.include({ runs: 4, discarded: 2 });
  });
});
