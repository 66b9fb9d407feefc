/**
 * The callers of the authenticated read (and of bench:profile and bench:uploads), in the
 * bench database. `seedCallers()` runs this file as a script (`tsx bench/auth-read/seed.ts
 * <out.json> <users>`, with DATABASE_URL, REDIS_URL and QUEUE_PREFIX as bench/run.sh sets
 * them) before any server starts, and reads back what it wrote:
 *
 * - `users` users `bench_user_0001`…, each with one fresh personal key (through the
 *   service's own insertKey, so the stored hash is what the service expects), so that a
 *   load spread over them is not one user's load; profile fields vary (phone, socials,
 *   verified or not, with or without password) so the two serialisers are compared on
 *   nulls and values alike;
 * - one user `bench_session` with a fresh session (createSession), for the cookie path.
 *
 * Idempotent: users are created when missing and reset otherwise (never deleted: each
 * opens a ledger account); their keys and sessions are deleted and made anew. The Redis
 * counters of the authenticated path (per-user limits, failed-credential counters, the
 * floor server's counters) are deleted, so one run's leftovers cannot turn the next run's
 * requests into 429s. The plaintext keys go to a temporary file (mode 0600) that the bench
 * reads and removes.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { UserRow } from '../../shared/users/repo.js';
import { BENCH_EMAIL_DOMAIN, benchDb, closeBenchDb, deleteRedisKeys, refuseUnlessBenchDatabase, upsertUsers } from '../lib/db.js';
import { isMain, runJsonScript } from '../lib/procs.js';

export interface BenchSeed {
  /** Plaintext personal keys, one per user, in user order. */
  keys: string[];
  userIds: string[];
  session: { userId: string; token: string; csrfToken: string };
  /** A well-formed personal key that matches no row (for the 401 check). */
  unknownKey: string;
}

/** The floor server's Redis key prefix (floor-server.ts reads FLOOR_PREFIX, this by default). */
export const FLOOR_PREFIX = 'bench-floor';

/** Seeds `users` callers (a key each) and one session user; returns the plaintext keys. */
export async function seedCallers(env: NodeJS.ProcessEnv, users: number): Promise<BenchSeed> {
  const seed = await runJsonScript<BenchSeed>('bench/auth-read/seed.ts', [String(users)], env);
  if (seed.keys.length !== users) throw new Error(`seed wrote ${seed.keys.length} keys, expected ${users}`);
  return seed;
}

// ---- The script ------------------------------------------------------------------------

const SESSION_USERNAME = 'bench_session';
// A syntactically plausible argon2id string: the bench never signs in, the field only
// decides `has_password`.
const FAKE_PASSWORD_HASH = '$argon2id$v=19$m=19456,t=2,p=1$YmVuY2hiZW5jaA$YmVuY2hiZW5jaGJlbmNoYmVuY2hiZW5jaGJlbmNoYmVu';

type UserSeed = Omit<UserRow, 'id' | 'balance' | 'role' | 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date };

function profile(username: string, i: number, now: Date): UserSeed {
  const some = (n: number) => i % n === 0;
  return {
    email: `${username}@${BENCH_EMAIL_DOMAIN}`,
    username,
    full_name: `Bench User ${i}`,
    phone: some(2) ? `+62812${String(100000 + i).padStart(7, '0')}` : null,
    password_hash: some(3) ? FAKE_PASSWORD_HASH : null,
    status: 'active',
    kyc_status: some(5) ? 'verified' : 'unverified',
    email_verified_at: some(4) ? null : new Date(now.getTime() - i * 60_000),
    two_factor_method: some(7) ? 'email' : 'none',
    dashboard_tour_completed_at: some(2) ? new Date(now.getTime() - i * 1000) : null,
    social_instagram: some(3) ? `bench.ig.${i}` : null,
    social_shopee: some(5) ? `bench-shop-${i}` : null,
    social_tiktokshop: some(11) ? `bench_tt_${i}` : null,
    created_at: new Date(now.getTime() - 86_400_000 - i * 1000),
    updated_at: now,
  };
}

async function main(): Promise<void> {
  const [out, usersArg] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/auth-read/seed.ts <out.json> [users]');
  const count = usersArg === undefined ? 600 : Number(usersArg);
  if (!Number.isInteger(count) || count < 1 || count > 9999) throw new Error('users must be an integer in 1..9999');
  refuseUnlessBenchDatabase(/_bench$/, 'seed');
  const { config } = await import('../../shared/config.js');
  const { insertKey } = await import('../../shared/auth/api-keys.js');
  const { createSession } = await import('../../shared/auth/sessions.js');
  const db = await benchDb();

  const started = Date.now();
  const now = new Date();
  const names = Array.from({ length: count }, (_, i) => `bench_user_${String(i + 1).padStart(4, '0')}`);
  const userIds = await upsertUsers(
    names.map((n, i) => profile(n, i + 1, now)),
    'row',
  );
  const [sessionUserId] = await upsertUsers([{ ...profile(SESSION_USERNAME, 0, now), full_name: 'Bench Session' }], 'row');
  if (!sessionUserId) throw new Error('seed: no session user');

  const keys: string[] = [];
  let session: BenchSeed['session'] | undefined;
  await db.transaction(async (trx) => {
    await trx('api_keys').whereIn('user_id', [...userIds, sessionUserId]).delete();
    await trx('sessions').where({ user_id: sessionUserId }).delete();
    for (const id of userIds) keys.push((await insertKey(trx, id, 'bench', '127.0.0.1')).plaintext);
    const s = await createSession(trx, sessionUserId, { ip: '127.0.0.1', userAgent: 'bench' });
    session = { userId: sessionUserId, token: s.token, csrfToken: s.csrfToken };
  });
  if (!session) throw new Error('seed: no session');
  const p = config.queuePrefix;
  const cleared = await deleteRedisKeys([`${p}:rl:authenticated:*`, `${p}:authfail:*`, `${FLOOR_PREFIX}:*`]);

  const seed: BenchSeed = { keys, userIds, session, unknownKey: `rpk_${randomBytes(32).toString('base64url')}` };
  await writeFile(out, JSON.stringify(seed), { mode: 0o600 });
  console.log(
    `seed: ${count} users with a fresh personal key each, 1 session user, ${cleared} Redis counters cleared ` +
      `(${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
}

if (isMain(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    console.error(`seed failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  } finally {
    await closeBenchDb();
  }
}
