/**
 * Which database, Redis database and queue prefix this test process uses. Imported by
 * hooks.ts before anything reads the configuration.
 *
 * `npm test` runs files in parallel (mocha --parallel): each worker process gets its own
 * database (cloned from the migrated template), its own Redis database and its own queue
 * prefix (Redis pub/sub channels are not per database), chosen by mocha's MOCHA_WORKER_ID
 * from the lists scripts/test.sh exports. A serial run (one shard) uses DATABASE_URL and
 * REDIS_URL as they are.
 */
const databases = process.env.TEST_SHARD_DATABASE_URLS?.split(',').filter(Boolean) ?? [];
const redises = process.env.TEST_SHARD_REDIS_URLS?.split(',').filter(Boolean) ?? [];
const workerId = process.env.MOCHA_WORKER_ID;

if (workerId !== undefined && (databases.length > 0 || redises.length > 0) && databases.length !== redises.length) {
  throw new Error(`TEST_SHARD_DATABASE_URLS names ${databases.length} databases, TEST_SHARD_REDIS_URLS ${redises.length}`);
}

/** The shard's number (1-based) in a parallel run, or null in a serial run. */
export const shard: number | null = workerId !== undefined && databases.length > 0 ? (Number(workerId) % databases.length) + 1 : null;

if (shard !== null) {
  process.env.DATABASE_URL = databases[shard - 1];
  process.env.REDIS_URL = redises[shard - 1];
  process.env.QUEUE_PREFIX = `${process.env.QUEUE_PREFIX ?? 'escrow-test'}-${shard}`;
}
