/**
 * Test files that compare wall times or hold answers to a latency bound run alone in a
 * parallel run: the other workers wait between their tests until such a file is done, so
 * their load lands neither on one side of a comparison nor on a measured answer. A session-level advisory lock on the migrated
 * template database (TEST_LOCK_DATABASE_URL, which no worker uses for data) does it: every
 * test holds it shared, an alone file holds it exclusively. Without that variable (a
 * serial run) all of this does nothing.
 */
import { relative } from 'node:path';
import pg from 'pg';

export const ALONE_FILES = [
  // Medians of a known and an unknown account within 20% / 50% of each other.
  'test/integration/auth/signin-timing.test.ts',
  'test/integration/auth/password-forgot-timing.test.ts',
  // Reads answer within 1 s while a burst holds the pool.
  'test/integration/platform/pool-burst.test.ts',
  // Separate API and worker processes start, and a notice crosses them within 1 s.
  'test/integration/platform/processes.test.ts',
];

/** Arbitrary; the lock lives in the template database, which holds no other advisory locks. */
const LOCK_KEY = 740_621;

let client: Promise<pg.Client> | null = null;
let exclusive = false;
let shared = false;

function lockClient(): Promise<pg.Client> | null {
  const url = process.env.TEST_LOCK_DATABASE_URL;
  if (!url) return null;
  client ??= (async () => {
    const c = new pg.Client({ connectionString: url });
    c.on('error', (err) => console.error(`[test lock] ${err.message}`));
    await c.connect();
    return c;
  })();
  return client;
}

/** Whether waiting for the lock can take long (a parallel run): the root hooks then allow for it. */
export const locking = (): boolean => !!process.env.TEST_LOCK_DATABASE_URL;

export async function enterFile(file: string | undefined): Promise<void> {
  const c = lockClient();
  if (!c || !file || !ALONE_FILES.includes(relative(process.cwd(), file))) return;
  await (await c).query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
  exclusive = true;
}

export async function leaveFile(): Promise<void> {
  await leaveTest();
  if (!exclusive) return;
  exclusive = false;
  await (await lockClient()!).query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]);
}

export async function enterTest(): Promise<void> {
  const c = lockClient();
  if (!c || exclusive || shared) return;
  await (await c).query('SELECT pg_advisory_lock_shared($1)', [LOCK_KEY]);
  shared = true;
}

export async function leaveTest(): Promise<void> {
  if (!shared) return;
  shared = false;
  await (await lockClient()!).query('SELECT pg_advisory_unlock_shared($1)', [LOCK_KEY]);
}
