/** Spec shapes of ratings (consumer spec 4.7): a party's view and the public list. */
import { clock } from '../clock.js';
import type { PublicRating, RatingRow } from './repo.js';

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
