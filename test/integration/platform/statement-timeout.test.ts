/**
 * The API's statement timeout (issue 42, review R3; decision 0020 "Issue 42: one tenant's
 * counterparties"): every connection the API process makes runs with `statement_timeout`
 * (API_STATEMENT_TIMEOUT_MS, default 10 s), so no tenant request holds a Postgres backend
 * for longer; a statement cut off answers 500 INTERNAL_ERROR through the normal error path,
 * nothing internal in it. Pools made without it (workers, migrations, scripts) have none.
 */
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createRouter } from '../../../api/context.js';
import { config, loadConfig } from '../../../shared/config.js';
import { createDb, db, limitStatements, pgErrorCode } from '../../../shared/db.js';
import { api } from '../../helpers/app.js';
import { createWorkspace, headersOf, sessionOf } from '../../factories/enterprise.js';

const slowRouter = createRouter();
// A read that takes as long as it is asked to (the shape of the overview's heaviest query).
slowRouter.get('/test/statement-timeout/sleep', async (ctx) => {
  await db.raw('SELECT pg_sleep(?)', [Number(ctx.query.seconds)]);
  ctx.body = { success: true };
});

/** New connections of `db` from now on get `ms` (the idle ones are dropped: knex's public destroy and initialize). */
async function reconnectWith(ms: number): Promise<void> {
  limitStatements(ms);
  await db.destroy();
  db.initialize();
}

describe('issue 42: the API statement timeout', () => {
  it('API_STATEMENT_TIMEOUT_MS: 10 s by default, 0 turns it off, negative refused', () => {
    expect(loadConfig({}).apiStatementTimeoutMs).to.equal(10_000);
    expect(loadConfig({ API_STATEMENT_TIMEOUT_MS: '0' }).apiStatementTimeoutMs).to.equal(0);
    expect(loadConfig({ API_STATEMENT_TIMEOUT_MS: '2500' }).apiStatementTimeoutMs).to.equal(2500);
    expect(() => loadConfig({ API_STATEMENT_TIMEOUT_MS: '-1' })).to.throw(/API_STATEMENT_TIMEOUT_MS/);
  });

  it('a pool made with a timeout cancels a longer statement (57014); one made without runs it', async () => {
    const limited = createDb(config.databaseUrl, 1, false, 300);
    const unlimited = createDb(config.databaseUrl, 1, false, 0);
    try {
      const shown = await limited.raw<{ rows: { statement_timeout: string }[] }>('SHOW statement_timeout');
      expect(shown.rows[0]!.statement_timeout).to.equal('300ms');
      const err = await limited.raw('SELECT pg_sleep(2)').then(() => null, (e: unknown) => e);
      expect(pgErrorCode(err)).to.equal('57014');
      // The connection is usable again afterwards.
      expect((await limited.raw<{ rows: { one: number }[] }>('SELECT 1 AS one')).rows[0]!.one).to.equal(1);
      const started = Date.now();
      await unlimited.raw('SELECT pg_sleep(0.6)');
      expect(Date.now() - started).to.be.at.least(550);
      expect((await unlimited.raw<{ rows: { statement_timeout: string }[] }>('SHOW statement_timeout')).rows[0]!.statement_timeout).to.equal('0');
    } finally {
      await Promise.all([limited.destroy(), unlimited.destroy()]);
    }
  });

  describe('through HTTP, with the process pool limited to 300 ms', () => {
    let locker: Knex | undefined;
    beforeEach(async () => reconnectWith(300));
    afterEach(async () => {
      await locker?.destroy();
      locker = undefined;
      await reconnectWith(0);
    });

    it('a request whose statement runs longer answers 500 INTERNAL_ERROR with nothing internal, within the timeout', async () => {
      const client = api({ extraRouters: [slowRouter] });
      expect((await client.get('/test/statement-timeout/sleep?seconds=0.05')).status).to.equal(200);
      const started = Date.now();
      const res = await client.get('/test/statement-timeout/sleep?seconds=5').set('X-Service-Lang', 'en');
      const took = Date.now() - started;
      expect(res.status).to.equal(500);
      expect(res.body.error.code).to.equal('INTERNAL_ERROR');
      expect(res.body.error.message).to.equal('Something went wrong on our side; try again later');
      expect(JSON.stringify(res.body)).to.not.match(/cancel|statement|timeout|pg_sleep|57014/i);
      expect(took).to.be.below(3000);
      // The pool is not poisoned: the next request is answered.
      expect((await client.get('/test/statement-timeout/sleep?seconds=0.05')).status).to.equal(200);
    });

    it('a real route waiting on a lock longer than the timeout gives its connection back (500), instead of holding it', async () => {
      const client = api();
      const { workspace, owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      locker = createDb(config.databaseUrl, 1, false, 0);
      const trx = await locker.transaction();
      try {
        await trx('workspaces').where({ id: workspace.id }).forUpdate().first();
        const started = Date.now();
        const res = await client.post('/v1/enterprise/counterparties').set(h).send({ name: 'PT Menunggu', country_code: 'ID', relationship: 'seller' });
        expect(res.status).to.equal(500);
        expect(res.body.error.code).to.equal('INTERNAL_ERROR');
        expect(Date.now() - started).to.be.below(3000);
      } finally {
        await trx.rollback();
      }
      const ok = await client.post('/v1/enterprise/counterparties').set(h).send({ name: 'PT Menunggu', country_code: 'ID', relationship: 'seller' });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
    });
  });
});
