/**
 * Ratings after a released escrow (consumer spec 4.7): each party rates the other once,
 * 1 to 5 stars with an optional review. A rating is published when both sides have rated
 * or three days after it was given, whichever comes first; `published_at` holds that time,
 * so publication needs no timer (a read compares it with the clock).
 */
import Joi from 'joi';
import { clock } from '../clock.js';
import { db, pgConstraint, pgErrorCode, PG } from '../db.js';
import { AppError } from '../errors.js';
import { loadForParty, partyOf, type Actor } from '../escrows/service.js';

export const PUBLISH_AFTER_MS = 3 * 24 * 3600_000;

export interface RatingRow {
  id: string;
  escrow_id: string;
  rater_id: string;
  ratee_id: string;
  ratee_role: 'buyer' | 'seller';
  stars: number;
  review: string | null;
  published_at: Date;
  created_at: Date;
}

export const rateSchema = Joi.object({
  stars: Joi.number().integer().min(1).max(5).required(),
  review: Joi.string().trim().max(1000).allow('', null),
});

export interface RateInput {
  stars: number;
  review?: string | null;
}

/** POST /api/escrows/:id/rating: once per party, only after release. */
export async function rate(actor: Actor, escrowId: string, input: RateInput): Promise<RatingRow> {
  try {
    return await db.transaction(async (trx) => {
      // The escrow row is locked: the two parties rating at once see each other's rating.
      const e = await loadForParty(trx, escrowId, actor, { lock: true });
      const party = partyOf(e, actor.userId)!;
      if (e.status !== 'released') {
        throw AppError.legacy(409, 'INVALID_STATE', `The escrow is ${e.status}; ratings open once it is released`, { status: e.status });
      }
      const now = clock.now();
      const other = (await trx('ratings').where({ escrow_id: e.id }).whereNot({ rater_id: actor.userId }).first()) as RatingRow | undefined;
      const [row] = (await trx('ratings')
        .insert({
          escrow_id: e.id,
          rater_id: actor.userId,
          ratee_id: party === 'buyer' ? e.seller_id : e.buyer_id,
          ratee_role: party === 'buyer' ? 'seller' : 'buyer',
          stars: input.stars,
          review: input.review ? input.review : null,
          published_at: other ? now : new Date(now.getTime() + PUBLISH_AFTER_MS),
          created_at: now,
        })
        .returning('*')) as RatingRow[];
      // Both sides have rated: the earlier rating is published now too (if it was not already).
      if (other && other.published_at > now) await trx('ratings').where({ id: other.id }).update({ published_at: now });
      return row!;
    });
  } catch (err) {
    if (pgErrorCode(err) === PG.uniqueViolation && pgConstraint(err) === 'ratings_one_per_rater') {
      throw AppError.legacy(409, 'ALREADY_RATED', 'You have already rated this escrow');
    }
    throw err;
  }
}

/** The ratings of one escrow a party may see: their own, and the other side's once published. */
export async function ratingsOfEscrow(actor: Actor, escrowId: string): Promise<RatingRow[]> {
  const e = await loadForParty(db, escrowId, actor, { staff: true });
  const rows = (await db('ratings').where({ escrow_id: e.id }).orderBy('created_at')) as RatingRow[];
  const now = clock.now();
  return rows.filter((r) => r.rater_id === actor.userId || r.published_at <= now || actor.role === 'admin');
}

export function serializeRating(r: RatingRow, now = clock.now()) {
  return {
    id: r.id,
    escrow_id: r.escrow_id,
    rater_id: r.rater_id,
    ratee_id: r.ratee_id,
    ratee_role: r.ratee_role,
    stars: r.stars,
    review: r.review,
    published: r.published_at <= now,
    published_at: r.published_at <= now ? r.published_at.toISOString() : null,
    created_at: r.created_at.toISOString(),
  };
}

// ---- Public ratings (consumer spec 4.7) ----------------------------------------------------

export const USERNAME_PATTERN = /^[a-z0-9_.]{1,32}$/i;

export const publicRatingsQuery = Joi.object({
  page: Joi.number().integer().min(1).max(10_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
}).options({ stripUnknown: true }); // public: a cache-buster (`?_=...`) is not an error

export interface PublicRating {
  stars: number;
  review: string | null;
  created_at: Date;
  rater_username: string;
  rater_email_verified_at: Date | null;
  ratee_role: 'buyer' | 'seller';
}

const userNotFound = () => AppError.legacy(404, 'USER_NOT_FOUND', 'User not found');

/**
 * GET /v1/public/users/:username/ratings: published ratings of a listed user, newest first.
 * A malformed username, an admin, or a suspended or inactive account is 404 USER_NOT_FOUND.
 */
export async function publicRatings(username: string, page: number, limit: number): Promise<{ total: number; items: PublicRating[] }> {
  if (!USERNAME_PATTERN.test(username)) throw userNotFound();
  const user = (await db('users').select('id').where({ username: username.toLowerCase(), role: 'user', status: 'active' }).first()) as
    | { id: string }
    | undefined;
  if (!user) throw userNotFound();
  const now = clock.now();
  const base = () => db('ratings as r').where('r.ratee_id', user.id).where('r.published_at', '<=', now);
  const [items, count] = await Promise.all([
    base()
      .join('users as u', 'u.id', 'r.rater_id')
      .select('r.stars', 'r.review', 'r.created_at', 'u.username as rater_username', 'u.email_verified_at as rater_email_verified_at', 'r.ratee_role')
      .orderBy([{ column: 'r.created_at', order: 'desc' }, { column: 'r.id', order: 'desc' }]) // newest first (spec 4.7), by the time shown
      .limit(limit)
      .offset((page - 1) * limit) as Promise<PublicRating[]>,
    base().count<{ count: string }[]>('* as count'),
  ]);
  return { total: Number(count[0]?.count ?? 0), items };
}

export function serializePublicRating(r: PublicRating) {
  return {
    stars: r.stars,
    review: r.review,
    created_at: r.created_at.toISOString(),
    rater_username: r.rater_username,
    rater_is_verified: r.rater_email_verified_at !== null,
    ratee_role: r.ratee_role,
  };
}
