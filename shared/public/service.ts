/**
 * Public users (consumer spec 4.7, "Public user"): the listing and one profile, read from
 * `public_profiles` (kept by triggers; migration 20261129000200). Only usernames, names,
 * verification, join date and counters leave: never contact data, balance or internal ids.
 * Answers are cached in Redis for 60 s per query (off with `publicSettings.cache = false`).
 */
import Joi from 'joi';
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { db } from '../db.js';
import { AppError } from '../errors.js';
import { publicRatings, serializePublicRating, USERNAME_PATTERN } from '../ratings/service.js';

export const publicSettings = {
  /** Redis answer cache (the bench turns it off to measure the queries). */
  cache: process.env.PUBLIC_CACHE !== '0',
  cacheSeconds: 60,
  /** Search plan choice (`searchPlan`): walk the sort index while it visits under this × matches rows. */
  walkFactor: 4,
};

export const usersQuery = Joi.object({
  page: Joi.number().integer().min(1).max(10_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(24),
  search: Joi.string().trim().allow('').max(32).default(''),
  sort: Joi.string().valid('top', 'new', 'newest').default('top'),
  verified: Joi.string().valid('1', 'true', '0', 'false'),
}).options({ stripUnknown: true }); // a cache-buster (`?_=...`) is neither an error nor a cache key

export interface UsersQuery {
  page: number;
  limit: number;
  search: string;
  sort: 'top' | 'new' | 'newest';
  verified?: '1' | 'true' | '0' | 'false';
}

interface ProfileRow {
  user_id: string;
  username: string;
  full_name: string;
  is_verified: boolean;
  joined_at: Date;
  completed_count: number;
  ratings_received: number;
}

export interface PublicUser {
  username: string;
  full_name: string;
  is_verified: boolean;
  joined_at: string;
  total_escrows_completed: number;
  average_rating: number | null;
  rating_count: number;
}

/** Published ratings (average, count) of these users, keyed by user id. */
async function ratingStats(userIds: string[]): Promise<Map<string, { avg: number; count: number }>> {
  if (userIds.length === 0) return new Map();
  const rows = await db('ratings')
    .whereIn('ratee_id', userIds)
    .where('published_at', '<=', clock.now())
    .groupBy('ratee_id')
    .select<{ ratee_id: string; avg: string; count: string }[]>('ratee_id', db.raw('avg(stars)::numeric(3,2)::text as avg'), db.raw('count(*) as count'));
  return new Map(rows.map((r) => [r.ratee_id, { avg: Number(r.avg), count: Number(r.count) }]));
}

function toPublic(p: ProfileRow, stats: Map<string, { avg: number; count: number }>): PublicUser {
  const s = stats.get(p.user_id);
  return {
    username: p.username,
    full_name: p.full_name,
    is_verified: p.is_verified,
    joined_at: p.joined_at.toISOString(),
    total_escrows_completed: p.completed_count,
    average_rating: s ? s.avg : null,
    rating_count: s?.count ?? 0,
  };
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

const PROFILE_COLUMNS = ['user_id', 'username', 'full_name', 'is_verified', 'joined_at', 'completed_count', 'ratings_received'] as const;

/**
 * How a page of a search is read, chosen from the number of matches (the count comes first):
 * - `walk`: follow the sort's index and test each row until the page is filled. It visits
 *   about (offset + limit) × profiles ÷ matches rows, at ~0.2 µs each: cheap for common terms.
 * - `matches`: read the matches first (trigram index, or a scan for terms under 3 characters)
 *   and sort them: ~1 µs per match, cheap for rare terms, for which a walk would visit the
 *   whole index without filling the page (36 ms on 100,000 profiles).
 * The walk is taken while it visits fewer than `walkFactor` × matches rows.
 */
export function searchPlan(offset: number, limit: number, matches: number, profiles: number): 'walk' | 'matches' {
  return (offset + limit) * Math.max(profiles, matches) < publicSettings.walkFactor * matches * matches ? 'walk' : 'matches';
}

export async function listUsers(q: UsersQuery): Promise<{ users: PublicUser[]; page: number; limit: number; total: number; has_more: boolean }> {
  const term = q.search.toLowerCase();
  const offset = (q.page - 1) * q.limit;
  const matching = () => {
    const b = db('public_profiles').where({ listed: true });
    if (q.verified === '1' || q.verified === 'true') b.where({ is_verified: true });
    if (term === '') return b;
    const pattern = `%${likeEscape(term)}%`;
    // search_text joins the two fields with a newline: a term holding one is tested on each field.
    if (term.includes('\n')) b.where((w) => void w.where('username', 'like', pattern).orWhereRaw('lower(full_name) like ?', [pattern]));
    else b.where('search_text', 'like', pattern);
    return b;
  };
  const order =
    q.sort === 'top'
      ? [
          { column: 'completed_count', order: 'desc' as const },
          { column: 'ratings_received', order: 'desc' as const },
          { column: 'joined_at', order: 'asc' as const },
          { column: 'user_id', order: 'asc' as const },
        ]
      : [
          { column: 'joined_at', order: 'desc' as const },
          { column: 'user_id', order: 'desc' as const },
        ];
  const page = (from: Knex.QueryBuilder) => from.select<ProfileRow[]>(...PROFILE_COLUMNS).orderBy(order).limit(q.limit).offset(offset);
  const counted = matching().first<{ n: string; profiles: number }>(
    db.raw('count(*) as n'),
    db.raw("(SELECT reltuples FROM pg_class WHERE oid = 'public_profiles'::regclass)::float8 as profiles"),
  );

  let total: number;
  let rows: ProfileRow[];
  if (term === '') {
    // Every listed profile matches: the sort's index serves the page, beside the count.
    const [count, found] = await Promise.all([counted, page(matching())]);
    total = Number(count?.n ?? 0);
    rows = found;
  } else {
    const count = await counted;
    total = Number(count?.n ?? 0);
    if (offset >= total) rows = [];
    else if (searchPlan(offset, q.limit, total, Number(count?.profiles ?? 0)) === 'walk') rows = await page(matching());
    else rows = await page(db.withMaterialized('matches', matching().select(...PROFILE_COLUMNS)).from('matches'));
  }
  const stats = await ratingStats(rows.map((r) => r.user_id));
  return { users: rows.map((r) => toPublic(r, stats)), page: q.page, limit: q.limit, total, has_more: q.page * q.limit < total };
}

const userNotFound = () => AppError.legacy(404, 'USER_NOT_FOUND', 'User not found');

/** One listed-or-not but public-able user (a user account, active); 404 USER_NOT_FOUND otherwise. */
export async function profileOf(username: string) {
  if (!USERNAME_PATTERN.test(username)) throw userNotFound();
  const p = await db('public_profiles as p')
    .join('users as u', 'u.id', 'p.user_id')
    .where({ 'p.username': username.toLowerCase(), 'p.eligible': true })
    .first<(ProfileRow & { social_instagram: string | null; social_shopee: string | null; social_tiktokshop: string | null }) | undefined>(
      'p.user_id',
      'p.username',
      'p.full_name',
      'p.is_verified',
      'p.joined_at',
      'p.completed_count',
      'u.social_instagram',
      'u.social_shopee',
      'u.social_tiktokshop',
    );
  if (!p) throw userNotFound();
  const [stats, recent] = await Promise.all([ratingStats([p.user_id]), publicRatings(p.username, 1, 20)]);
  return {
    ...toPublic(p, stats),
    social_instagram: p.social_instagram,
    social_shopee: p.social_shopee,
    social_tiktokshop: p.social_tiktokshop,
    recent_ratings: recent.items.map(serializePublicRating),
  };
}

/**
 * Reads `key` from the Redis answer cache or computes and stores it for 60 s. `maxAge` is
 * what is left of those 60 s, for the answer's Cache-Control: an answer is never older
 * than 60 s wherever it is cached (spec 4.7).
 */
export async function cached<T>(redis: Redis, key: string, compute: () => Promise<T>): Promise<{ value: T; maxAge: number }> {
  const full = `${config.queuePrefix}:public:${key}`;
  if (publicSettings.cache) {
    const [[, hit], [, ttl]] = (await redis.multi().get(full).ttl(full).exec()) as [[Error | null, string | null], [Error | null, number]];
    if (hit !== null) return { value: JSON.parse(hit) as T, maxAge: Math.max(0, Math.min(publicSettings.cacheSeconds, ttl)) };
  }
  const value = await compute();
  if (publicSettings.cache) await redis.set(full, JSON.stringify(value), 'EX', publicSettings.cacheSeconds);
  return { value, maxAge: publicSettings.cacheSeconds };
}
