/**
 * Public users (consumer spec 4.7, "Public user"): the listing and one profile, read from
 * `public_profiles` (repo.ts). Only usernames, names, verification, join date and counters
 * leave: never contact data, balance or internal ids. Answers are cached in Redis for 60 s
 * per query (off with `publicSettings.cache = false`).
 */
import type { Redis } from 'ioredis';
import { turnstileEnabled } from '../auth/turnstile.js';
import { config } from '../config.js';
import { db } from '../db.js';
import { publicRatings, serializePublicRating, USERNAME_PATTERN } from '../ratings/service.js';
import { publicErrors } from './errors.js';
import * as repo from './repo.js';
import type { UsersQuery } from './schemas.js';
import { serializeProfile, serializePublicUser, type PublicUser } from './serialize.js';
import { publicSettings } from './settings.js';

export { searchPlan } from './repo.js';
export { usersQuery, type UsersQuery } from './schemas.js';
export type { PublicUser } from './serialize.js';
export { publicSettings } from './settings.js';

/** What a sign-in page needs to know before it shows its form. */
export function authConfig() {
  return {
    turnstile: { enabled: turnstileEnabled(), site_key: config.turnstileSiteKey },
    // Federated sign-in is not built yet, so it is never reported available.
    google: { enabled: false },
  };
}

export async function listUsers(q: UsersQuery): Promise<{ users: PublicUser[]; page: number; limit: number; total: number; has_more: boolean }> {
  const { rows, total } = await repo.listProfiles(db, q);
  const stats = await repo.ratingStats(db, rows.map((r) => r.user_id));
  return { users: rows.map((r) => serializePublicUser(r, stats)), page: q.page, limit: q.limit, total, has_more: q.page * q.limit < total };
}

/** One listed-or-not but public-able user (a user account, active); 404 USER_NOT_FOUND otherwise. */
export async function profileOf(username: string) {
  if (!USERNAME_PATTERN.test(username)) throw publicErrors.userNotFound();
  const p = await repo.findProfile(db, username);
  if (!p) throw publicErrors.userNotFound();
  const [stats, recent] = await Promise.all([repo.ratingStats(db, [p.user_id]), publicRatings(p.username, 1, 20)]);
  return serializeProfile(p, stats, recent.items.map(serializePublicRating));
}

/** An answer and how long a client may keep it (what is left of its 60 s in the cache). */
export interface CachedAnswer<T> {
  value: T;
  maxAge: number;
}

/** The listing page for this query, from the answer cache or computed and cached. */
export async function publicUsers(redis: Redis, q: UsersQuery): Promise<CachedAnswer<Awaited<ReturnType<typeof listUsers>>>> {
  const verified = q.verified === '1' || q.verified === 'true';
  const sort = q.sort === 'top' ? 'top' : 'new';
  const key = `users:${sort}:${verified ? 1 : 0}:${q.page}:${q.limit}:${encodeURIComponent(q.search.toLowerCase())}`;
  return cached(redis, key, () => listUsers(q));
}

/** One profile, from the answer cache or computed and cached. */
export async function publicProfile(redis: Redis, name: string): Promise<CachedAnswer<Awaited<ReturnType<typeof profileOf>>>> {
  const username = name.toLowerCase();
  return cached(redis, `user:${encodeURIComponent(username)}`, () => profileOf(username));
}

/**
 * Reads `key` from the Redis answer cache or computes and stores it for 60 s. `maxAge` is
 * what is left of those 60 s, for the answer's Cache-Control: an answer is never older
 * than 60 s wherever it is cached (spec 4.7).
 */
export async function cached<T>(redis: Redis, key: string, compute: () => Promise<T>): Promise<CachedAnswer<T>> {
  const full = `${config.queuePrefix}:public:${key}`;
  if (publicSettings.cache) {
    const [[, hit], [, ttl]] = (await redis.multi().get(full).ttl(full).exec()) as [[Error | null, string | null], [Error | null, number]];
    if (hit !== null) return { value: JSON.parse(hit) as T, maxAge: Math.max(0, Math.min(publicSettings.cacheSeconds, ttl)) };
  }
  const value = await compute();
  if (publicSettings.cache) await redis.set(full, JSON.stringify(value), 'EX', publicSettings.cacheSeconds);
  return { value, maxAge: publicSettings.cacheSeconds };
}
