/**
 * Ratings after a released escrow (consumer spec 4.7): each party rates the other once,
 * 1 to 5 stars with an optional review. A rating is published when both sides have rated
 * or three days after it was given, whichever comes first; `published_at` holds that time,
 * so publication needs no timer (a read compares it with the clock).
 */
import type { Actor } from '../actors.js';
import { clock } from '../clock.js';
import { db, pgConstraint, pgErrorCode, PG } from '../db.js';
import { loadForParty, partyOf } from '../escrows/service.js';
import { ratingErrors } from './errors.js';
import * as repo from './repo.js';
import type { PublicRating, RatingRow } from './repo.js';

export type { PublicRating, RatingRow } from './repo.js';
// api/routes/public.ts and shared/public/service.ts import these from here.
export { publicRatingsQuery } from './schemas.js';
export { serializePublicRating, serializeRating } from './serialize.js';

export const PUBLISH_AFTER_MS = 3 * 24 * 3600_000;

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
      if (e.status !== 'released') throw ratingErrors.notReleased(e.status);
      const now = clock.now();
      const other = await repo.otherRating(trx, e.id, actor.userId);
      const row = await repo.insert(trx, {
        escrow_id: e.id,
        rater_id: actor.userId,
        ratee_id: party === 'buyer' ? e.seller_id : e.buyer_id,
        ratee_role: party === 'buyer' ? 'seller' : 'buyer',
        stars: input.stars,
        review: input.review ? input.review : null,
        published_at: other ? now : new Date(now.getTime() + PUBLISH_AFTER_MS),
        created_at: now,
      });
      // Both sides have rated: the earlier rating is published now too (if it was not already).
      if (other && other.published_at > now) await repo.publish(trx, other.id, now);
      return row;
    });
  } catch (err) {
    if (pgErrorCode(err) === PG.uniqueViolation && pgConstraint(err) === 'ratings_one_per_rater') throw ratingErrors.alreadyRated();
    throw err;
  }
}

/** The ratings of one escrow a party may see: their own, and the other side's once published. */
export async function ratingsOfEscrow(actor: Actor, escrowId: string): Promise<RatingRow[]> {
  const e = await loadForParty(db, escrowId, actor, { staff: true });
  const rows = await repo.ofEscrow(db, e.id);
  const now = clock.now();
  return rows.filter((r) => r.rater_id === actor.userId || r.published_at <= now || actor.role === 'admin');
}

// ---- Public ratings (consumer spec 4.7) ----------------------------------------------------

export const USERNAME_PATTERN = /^[a-z0-9_.]{1,32}$/i;

/**
 * GET /v1/public/users/:username/ratings: published ratings of a listed user, newest first.
 * A malformed username, an admin, or a suspended or inactive account is 404 USER_NOT_FOUND.
 */
export async function publicRatings(username: string, page: number, limit: number): Promise<{ total: number; items: PublicRating[] }> {
  if (!USERNAME_PATTERN.test(username)) throw ratingErrors.userNotFound();
  const userId = await repo.listedUserId(db, username);
  if (!userId) throw ratingErrors.userNotFound();
  return repo.published(db, userId, clock.now(), page, limit);
}
