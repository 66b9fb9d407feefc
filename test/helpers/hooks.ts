/**
 * Root hooks: a clean database, Redis and clock before every test; pools closed at the end.
 *
 * In a parallel run (mocha --parallel, see scripts/test.sh) each worker process runs many
 * files, one at a time, and mocha runs root beforeAll/afterAll around each file; the pools
 * then stay open until the worker process ends, as they do across files in a serial run.
 */
import './shard-env.js';
import './contract.js';
import { appendFileSync } from 'node:fs';
import { enterFile, enterTest, leaveFile, leaveTest, locking } from './alone.js';
import { clock } from '../../shared/clock.js';
import { config } from '../../shared/config.js';
import { db } from '../../shared/db.js';
import { closeQueues } from '../../shared/queues.js';
import { redis } from '../../shared/redis.js';
import { closeMailTransport } from '../../shared/mail/transport.js';

const inWorker = process.env.MOCHA_WORKER_ID !== undefined;
let tables: string[] | null = null;
/** Sequences owned by the tables' columns (what TRUNCATE ... RESTART IDENTITY restarts). */
let sequences: string[] = [];
let truncate = false;

/**
 * Empties every table and restarts the tables' sequences, as `TRUNCATE <all> RESTART
 * IDENTITY CASCADE` would, but by DELETE with triggers and foreign keys off for the
 * transaction (the tests connect as a superuser): a TRUNCATE of ~40 tables costs tens to
 * hundreds of milliseconds (new files for every table and index), the DELETEs a few.
 * Falls back to the TRUNCATE when the role may not set session_replication_role.
 */
export async function resetDatabase(): Promise<void> {
  if (!tables || tables.length === 0) return;
  const list = tables.map((t) => `"${t}"`);
  if (!truncate) {
    try {
      await db.transaction(async (trx) => {
        await trx.raw('SET LOCAL session_replication_role = replica');
        await trx.raw(list.map((t) => `DELETE FROM ${t};`).join(' '));
        await trx.raw(
          `SELECT setval(format('%I.%I', schemaname, sequencename), start_value, false)
             FROM pg_sequences WHERE schemaname = 'public' AND last_value IS NOT NULL AND sequencename = ANY(?)`,
          [sequences],
        );
      });
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '42501') throw err; // insufficient_privilege
      truncate = true;
    }
  }
  await db.raw(`TRUNCATE ${list.join(', ')} RESTART IDENTITY CASCADE`);
}

/** The file a root hook runs for (a parallel worker's run has exactly one). */
function fileOf(ctx: Mocha.Context): string | undefined {
  return ctx.test?.parent?.suites[0]?.file;
}

let fileStarted = 0;

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    if (locking()) this.timeout(300_000); // an alone file waits for the other workers' current tests
    await enterFile(fileOf(this));
    fileStarted = Date.now();
    if (tables) return;
    const dbName = new URL(config.databaseUrl).pathname.slice(1);
    if (config.nodeEnv !== 'test' || !dbName.includes('_test')) {
      throw new Error(`tests refuse to run against ${dbName} (NODE_ENV=${config.nodeEnv}); use npm test`);
    }
    const rows = await db.raw<{ rows: { tablename: string }[] }>(
      `SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_migrations%'`,
    );
    tables = rows.rows.map((r) => r.tablename);
    const owned = await db.raw<{ rows: { name: string }[] }>(
      `SELECT DISTINCT s.relname AS name
         FROM pg_class s
         JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = s.oid AND d.deptype IN ('a', 'i')
         JOIN pg_class t ON t.oid = d.refobjid
         JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE s.relkind = 'S' AND n.nspname = 'public' AND t.relname = ANY(?)`,
      [tables],
    );
    sequences = owned.rows.map((r) => r.name);
  },
  async beforeEach(this: Mocha.Context) {
    if (locking()) this.timeout(300_000); // waits while an alone file runs in another worker
    await enterTest();
    clock.reset();
    await resetDatabase();
    await redis.flushdb();
  },
  async afterEach() {
    await leaveTest();
  },
  async afterAll(this: Mocha.Context) {
    await leaveFile();
    clock.reset();
    // Per-file wall times (scripts/test.sh orders the next run's files by them, longest first).
    const file = fileOf(this);
    if (inWorker && file && process.env.TEST_TIMINGS_OUT) {
      appendFileSync(process.env.TEST_TIMINGS_OUT, `${Date.now() - fileStarted}\t${file}\n`);
    }
    if (inWorker) return;
    closeMailTransport();
    await closeQueues();
    await db.destroy();
    redis.disconnect();
  },
};
