/**
 * `tsx bench/seed.ts <out.json> [users]`: the bench's callers, in the bench database
 * (DATABASE_URL, REDIS_URL and QUEUE_PREFIX as bench/run.sh sets them). Run by
 * bench/run.ts and bench/profile.ts before they start any server.
 *
 * - `users` (default 600) users `bench_user_0001`…, each with one fresh personal key
 *   (through the service's own insertKey, so the stored hash is what the service
 *   expects), so that a load spread over them is not one user's load;
 * - one user `bench_session` with a fresh session (createSession), for the cookie path.
 *
 * Idempotent: users are found by e-mail and created only when missing (the users table
 * opens a ledger account per user by trigger, and ledger accounts are never deleted, so
 * users are kept rather than truncated); their keys and sessions are deleted and made
 * anew, their profile fields reset. The Redis counters of the authenticated path (the
 * per-user limit, failed-credential counters, the floor server's counters) are deleted,
 * so one run's leftovers cannot turn the next run's requests into 429s.
 *
 * Writes `{ keys, userIds, session: { userId, token, csrfToken }, unknownKey }` to the
 * output file (mode 0600; plaintext keys of a throwaway database).
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { Redis } from 'ioredis';
import { config } from '../shared/config.js';
import { db } from '../shared/db.js';
import { insertKey } from '../shared/auth/api-keys.js';
import { createSession } from '../shared/auth/sessions.js';
import type { UserRow } from '../shared/users/repo.js';

export interface BenchSeed {
  /** Plaintext personal keys, one per user, in user order. */
  keys: string[];
  userIds: string[];
  session: { userId: string; token: string; csrfToken: string };
  /** A well-formed personal key that matches no row (for the 401 check). */
  unknownKey: string;
}

/** The floor server's Redis key prefix (bench/floor-server.ts, FLOOR_PREFIX). */
const FLOOR_PREFIX = 'bench-floor';

const EMAIL_DOMAIN = 'bench.invalid';
const SESSION_USERNAME = 'bench_session';
// A syntactically plausible argon2id string: the bench never signs in, the field only
// decides `has_password`.
const FAKE_PASSWORD_HASH = '$argon2id$v=19$m=19456,t=2,p=1$YmVuY2hiZW5jaA$YmVuY2hiZW5jaGJlbmNoYmVuY2hiZW5jaGJlbmNoYmVu';

type UserSeed = Omit<UserRow, 'id' | 'balance' | 'role' | 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date };

/** Profile fields vary across users so the serialisers are compared on nulls and values alike. */
function profile(username: string, i: number, now: Date): UserSeed {
  const some = (n: number) => i % n === 0;
  return {
    email: `${username}@${EMAIL_DOMAIN}`,
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

type IdEmail = { id: string; email: string };

/** Creates the missing users and resets the profile of the existing ones; returns ids in order. */
async function upsertUsers(rows: UserSeed[]): Promise<string[]> {
  const emails = rows.map((r) => r.email);
  const existing = await db('users').whereIn('email', emails).select<IdEmail[]>('id', 'email');
  const idByEmail = new Map(existing.map((r) => [r.email, r.id]));
  const missing = rows.filter((r) => !idByEmail.has(r.email));
  for (let i = 0; i < missing.length; i += 200) {
    const created = await db('users')
      .insert(missing.slice(i, i + 200))
      .returning<IdEmail[]>(['id', 'email']);
    for (const r of created) idByEmail.set(r.email, r.id);
  }
  // Reset the fields a previous run (or a profile tool) may have changed: one UPDATE ... FROM VALUES.
  const existingEmails = new Set(existing.map((e) => e.email));
  const present = rows.filter((r) => existingEmails.has(r.email));
  for (let i = 0; i < present.length; i += 200) {
    const batch = present.slice(i, i + 200);
    await db.transaction(async (trx) => {
      for (const r of batch) {
        const { email, ...fields } = r;
        await trx('users').where({ email }).update({ ...fields, role: 'user' });
      }
    });
  }
  return rows.map((r) => {
    const id = idByEmail.get(r.email);
    if (!id) throw new Error(`seed: user ${r.email} was not created`);
    return id;
  });
}

async function clearCounters(): Promise<number> {
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 3, lazyConnect: true });
  await redis.connect();
  let deleted = 0;
  try {
    for (const pattern of [`${config.queuePrefix}:rl:authenticated:*`, `${config.queuePrefix}:authfail:*`, `${FLOOR_PREFIX}:*`]) {
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

async function main(): Promise<void> {
  const [out, usersArg] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/seed.ts <out.json> [users]');
  const count = usersArg === undefined ? 600 : Number(usersArg);
  if (!Number.isInteger(count) || count < 1 || count > 9999) throw new Error('users must be an integer in 1..9999');
  if (!/_bench$/.test(new URL(config.databaseUrl).pathname)) {
    throw new Error(`seed: refusing to write to ${new URL(config.databaseUrl).pathname.slice(1)}; the bench seeds only a *_bench database`);
  }

  const started = Date.now();
  const now = new Date();
  const names = Array.from({ length: count }, (_, i) => `bench_user_${String(i + 1).padStart(4, '0')}`);
  const userIds = await upsertUsers(names.map((n, i) => profile(n, i + 1, now)));
  const [sessionUserId] = await upsertUsers([{ ...profile(SESSION_USERNAME, 0, now), full_name: 'Bench Session' }]);
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
  const cleared = await clearCounters();

  const seed: BenchSeed = { keys, userIds, session, unknownKey: `rpk_${randomBytes(32).toString('base64url')}` };
  await writeFile(out, JSON.stringify(seed), { mode: 0o600 });
  console.log(
    `seed: ${count} users with a fresh personal key each, 1 session user, ${cleared} Redis counters cleared ` +
      `(${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
}

try {
  await main();
} catch (err) {
  console.error(`seed failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
