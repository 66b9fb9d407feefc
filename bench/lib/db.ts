/**
 * The database side of the benches: the service's knex pool (loaded lazily, so nothing of
 * the service is imported until the environment points at the bench's stores), raw
 * queries, databases of their own beside the bench database, the bench users, Redis
 * counters to clear, and a small concurrency pool for seeding.
 */
import type { Knex } from 'knex';
import { Redis } from 'ioredis';
import { runToCompletion } from './procs.js';

let knex: Knex | undefined;

/** The service's knex pool (shared/db.ts), imported on first use. */
export async function benchDb(): Promise<Knex> {
  knex ??= (await import('../../shared/db.js')).db;
  return knex;
}

/**
 * Closes the service's connections this process may hold: the knex pool if it was opened,
 * and the service's Redis client (shared/redis.ts connects when imported, and modules such
 * as the queues, the outbox or the auth helpers import it), so the process can exit.
 */
export async function closeBenchDb(): Promise<void> {
  await knex?.destroy();
  knex = undefined;
  (await import('../../shared/redis.js')).redis.disconnect();
}

/** The first row of a raw query; throws when there is none. */
export async function one<T>(sql: string, bindings: readonly unknown[] = []): Promise<T> {
  const row = (await all<T>(sql, bindings))[0];
  if (!row) throw new Error(`no row from: ${sql.slice(0, 120)}`);
  return row;
}

export async function all<T>(sql: string, bindings: readonly unknown[] = []): Promise<T[]> {
  const db = await benchDb();
  return (await db.raw<{ rows: T[] }>(sql, bindings as Knex.RawBinding[])).rows;
}

/** `url` with another database name. */
export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export const databaseName = (url: string): string => decodeURIComponent(new URL(url).pathname.slice(1));

/**
 * `<bench db>_<suffix>` beside the bench database bench/run.sh made (e.g.
 * `escrow_bench_payments`), created when missing (dropped first with `recreate`) and
 * migrated unless `migrate` is false. Returns its URL.
 */
export async function sideDatabase(runUrl: string, suffix: string, opts: { recreate?: boolean; migrate?: boolean } = {}): Promise<string> {
  const url = withDatabase(runUrl, `${databaseName(runUrl)}_${suffix}`);
  const ensure = ['--import', 'tsx', 'scripts/ensure-db.ts', url, ...(opts.recreate ? ['--recreate'] : [])];
  await runToCompletion(`ensure-db (${suffix} database)`, ensure, process.env);
  if (opts.migrate !== false) {
    await runToCompletion(`migrate (${suffix} database)`, ['--import', 'tsx', 'scripts/migrate.ts'], { ...process.env, DATABASE_URL: url });
  }
  return url;
}

/** Seeds write only to a bench database: DATABASE_URL's name must match `pattern`. */
export function refuseUnlessBenchDatabase(pattern: RegExp, tag: string): void {
  const name = databaseName(process.env.DATABASE_URL ?? 'postgres://unset/unset');
  if (!pattern.test(name)) throw new Error(`${tag}: refusing to write to ${name}; it seeds only a database named like ${String(pattern)}`);
}

export const BENCH_EMAIL_DOMAIN = 'bench.invalid';

/** A bench user row: `email` identifies it; the rest is what it is created (or reset) with. */
export type UserSeedRow = { email: string; username: string; full_name: string } & Record<string, unknown>;

/**
 * Creates the users that are missing (found by e-mail, in batches of 200) and resets the
 * others; returns their ids in `rows` order. Users are never deleted: each opens a ledger
 * account by trigger, and ledger accounts stay. `reset: 'row'` writes every field of each
 * row back (and role `user`); an object is one UPDATE of those fields for all of them.
 */
export async function upsertUsers(rows: readonly UserSeedRow[], reset: 'row' | Record<string, unknown>): Promise<string[]> {
  const db = await benchDb();
  const emails = rows.map((r) => r.email);
  const existing = await db('users').whereIn('email', emails).select<{ id: string; email: string }[]>('id', 'email');
  const idByEmail = new Map(existing.map((r) => [r.email, r.id]));
  const missing = rows.filter((r) => !idByEmail.has(r.email));
  for (let i = 0; i < missing.length; i += 200) {
    const created = await db('users')
      .insert(missing.slice(i, i + 200))
      .returning<{ id: string; email: string }[]>(['id', 'email']);
    for (const r of created) idByEmail.set(r.email, r.id);
  }
  if (reset === 'row') {
    const present = rows.filter((r) => existing.some((e) => e.email === r.email));
    for (let i = 0; i < present.length; i += 200) {
      await db.transaction(async (trx) => {
        for (const { email, ...fields } of present.slice(i, i + 200)) await trx('users').where({ email }).update({ ...fields, role: 'user' });
      });
    }
  } else {
    await db('users').whereIn('email', emails).update(reset);
  }
  return rows.map((r) => {
    const id = idByEmail.get(r.email);
    if (!id) throw new Error(`seed: user ${r.email} was not created`);
    return id;
  });
}

/**
 * `count` active, verified users named `<prefix>0001`…, each buying from the next one
 * (the last from the first), with fresh personal keys (their earlier keys deleted): the
 * callers of the money-flow benches (release, pay).
 */
export async function ringOfBuyers(prefix: string, fullName: string, count: number): Promise<{ names: string[]; ids: string[]; buyers: { id: string; key: string }[] }> {
  const { insertKey } = await import('../../shared/auth/api-keys.js');
  const db = await benchDb();
  const now = new Date();
  const names = Array.from({ length: count }, (_, i) => `${prefix}${String(i + 1).padStart(4, '0')}`);
  const ids = await upsertUsers(
    names.map((username, i) => ({ email: `${username}@${BENCH_EMAIL_DOMAIN}`, username, full_name: `${fullName} ${i + 1}`, kyc_status: 'verified', email_verified_at: now, created_at: now, updated_at: now })),
    { status: 'active', role: 'user' },
  );
  const buyers: { id: string; key: string }[] = [];
  await db.transaction(async (trx) => {
    await trx('api_keys').whereIn('user_id', ids).delete();
    for (const id of ids) buyers.push({ id, key: (await insertKey(trx, id, 'bench', '127.0.0.1')).plaintext });
  });
  return { names, ids, buyers };
}

/** A seed script's integer argument, refused outside `min..max`. */
export function intArg(raw: string | undefined, name: string, min: number, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer in ${min}..${max}`);
  return n;
}

/**
 * Deletes the Redis keys matching `patterns` (SCAN + DEL, on REDIS_URL with a connection
 * of its own), so one run's rate-limit counters cannot turn the next run's requests into
 * 429s. Only the bench's own prefixes are ever named: nothing is flushed.
 */
export async function deleteRedisKeys(patterns: readonly string[]): Promise<number> {
  const redis = new Redis(process.env.REDIS_URL ?? '', { maxRetriesPerRequest: 3, lazyConnect: true });
  await redis.connect();
  let deleted = 0;
  try {
    for (const pattern of patterns) {
      let cursor = '0';
      do {
        const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = nextCursor;
        if (keys.length > 0) deleted += await redis.del(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/** Runs `work` over `items` with at most `limit` in flight; results in input order. */
export async function inPool<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!, i);
    }
  });
  await Promise.all(runners);
  return out;
}

/**
 * `ANALYZE` of the whole bench database, after every run (warm-ups included) once its work
 * is done, as autovacuum's ANALYZE would keep the statistics in production. This server
 * runs with autovacuum off (its CI configuration, /etc/postgresql/15/main/conf.d/90-ci.conf),
 * so without it a freshly seeded database keeps the statistics of its near-empty ledger and
 * payment tables for the whole bench, and each backend keeps the plans it cached then
 * (PL/pgSQL functions and triggers, foreign-key checks, named statements): sequential scans
 * of tables that grow by thousands of rows a round. Found on the pay bench's first run on a
 * new database: the worker's reconciliation fell from 301 to 42 payments/s over four
 * rounds while `journal_lines` was read sequentially 1.25 billion rows' worth; the same
 * database's next run (statistics from the seed's ANALYZE of the filled tables) held
 * 422-494/s. About 1.5 s on the pay bench's database.
 */
export async function analyzeAfterRun(): Promise<void> {
  const db = await benchDb();
  await db.raw('ANALYZE');
}
