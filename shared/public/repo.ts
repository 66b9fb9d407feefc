/**
 * The SQL of the public user pages: `public_profiles` (kept by triggers; migrations
 * 20261129000200 and 20261201000100) and the published ratings beside them.
 */
import type { Knex } from 'knex';
import { clock } from '../clock.js';
import type { Db } from '../db.js';
import type { UsersQuery } from './schemas.js';
import { publicSettings } from './settings.js';

export interface ProfileRow {
  user_id: string;
  username: string;
  full_name: string;
  is_verified: boolean;
  joined_at: Date;
  completed_count: number;
  ratings_received: number;
}

export type ProfileWithSocial = ProfileRow & { social_instagram: string | null; social_shopee: string | null; social_tiktokshop: string | null };

export type RatingStats = Map<string, { avg: number; count: number }>;

/** Published ratings (average, count) of these users, keyed by user id. */
export async function ratingStats(knex: Db, userIds: string[]): Promise<RatingStats> {
  if (userIds.length === 0) return new Map();
  const rows = await knex('ratings')
    .whereIn('ratee_id', userIds)
    .where('published_at', '<=', clock.now())
    .groupBy('ratee_id')
    .select<{ ratee_id: string; avg: string; count: string }[]>('ratee_id', knex.raw('avg(stars)::numeric(3,2)::text as avg'), knex.raw('count(*) as count'));
  return new Map(rows.map((r) => [r.ratee_id, { avg: Number(r.avg), count: Number(r.count) }]));
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

const ORDER = {
  top: [
    { column: 'completed_count', order: 'desc' as const },
    { column: 'ratings_received', order: 'desc' as const },
    { column: 'joined_at', order: 'asc' as const },
    { column: 'user_id', order: 'asc' as const },
  ],
  new: [
    { column: 'joined_at', order: 'desc' as const },
    { column: 'user_id', order: 'desc' as const },
  ],
};

/** One page of listed profiles matching the query, and how many match in all. */
export async function listProfiles(knex: Db, q: UsersQuery): Promise<{ rows: ProfileRow[]; total: number }> {
  const term = q.search.toLowerCase();
  const offset = (q.page - 1) * q.limit;
  const matching = () => {
    const b = knex('public_profiles').where({ listed: true });
    if (q.verified === '1' || q.verified === 'true') b.where({ is_verified: true });
    if (term === '') return b;
    const pattern = `%${likeEscape(term)}%`;
    // search_text joins the two fields with a newline: a term holding one is tested on each field.
    if (term.includes('\n')) b.where((w) => void w.where('username', 'like', pattern).orWhereRaw('lower(full_name) like ?', [pattern]));
    else b.where('search_text', 'like', pattern);
    return b;
  };
  const order = q.sort === 'top' ? ORDER.top : ORDER.new;
  const page = (from: Knex.QueryBuilder) => from.select<ProfileRow[]>(...PROFILE_COLUMNS).orderBy(order).limit(q.limit).offset(offset);
  const counted = matching().first<{ n: string; profiles: number }>(
    knex.raw('count(*) as n'),
    knex.raw("(SELECT reltuples FROM pg_class WHERE oid = 'public_profiles'::regclass)::float8 as profiles"),
  );

  if (term === '') {
    // Every listed profile matches: the sort's index serves the page, beside the count.
    const [count, rows] = await Promise.all([counted, page(matching())]);
    return { rows, total: Number(count?.n ?? 0) };
  }
  const count = await counted;
  const total = Number(count?.n ?? 0);
  if (offset >= total) return { rows: [], total };
  if (searchPlan(offset, q.limit, total, Number(count?.profiles ?? 0)) === 'walk') return { rows: await page(matching()), total };
  return { rows: await page(knex.withMaterialized('matches', matching().select(...PROFILE_COLUMNS)).from('matches')), total };
}

/** A public-able profile (a user account, active; listed or not) with its social handles. */
export async function findProfile(knex: Db, username: string): Promise<ProfileWithSocial | undefined> {
  return knex('public_profiles as p')
    .join('users as u', 'u.id', 'p.user_id')
    .where({ 'p.username': username.toLowerCase(), 'p.eligible': true })
    .first<ProfileWithSocial | undefined>(
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
}
