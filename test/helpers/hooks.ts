/** Root hooks: a clean database, Redis and clock before every test; pools closed at the end. */
import { clock } from '../../shared/clock.js';
import { config } from '../../shared/config.js';
import { db } from '../../shared/db.js';
import { closeQueues } from '../../shared/queues.js';
import { redis } from '../../shared/redis.js';
import { closeMailTransport } from '../../shared/mail/transport.js';

let tables: string[] = [];

export async function resetDatabase(): Promise<void> {
  if (tables.length === 0) return;
  await db.raw(`TRUNCATE ${tables.map((t) => `"${t}"`).join(', ')} RESTART IDENTITY CASCADE`);
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    const dbName = new URL(config.databaseUrl).pathname.slice(1);
    if (config.nodeEnv !== 'test' || !dbName.includes('_test')) {
      throw new Error(`tests refuse to run against ${dbName} (NODE_ENV=${config.nodeEnv}); use npm test`);
    }
    const rows = await db.raw<{ rows: { tablename: string }[] }>(
      `SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_migrations%'`,
    );
    tables = rows.rows.map((r) => r.tablename);
  },
  async beforeEach() {
    clock.reset();
    await resetDatabase();
    await redis.flushdb();
  },
  async afterAll() {
    clock.reset();
    closeMailTransport();
    await closeQueues();
    await db.destroy();
    redis.disconnect();
  },
};
