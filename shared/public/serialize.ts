/** The public user resources (consumer spec 4.7, "Public user"): no contact data, balance or internal ids. */
import type { ProfileRow, RatingStats } from './repo.js';

export interface PublicUser {
  username: string;
  full_name: string;
  is_verified: boolean;
  joined_at: string;
  total_escrows_completed: number;
  average_rating: number | null;
  rating_count: number;
}

export function serializePublicUser(p: ProfileRow, stats: RatingStats): PublicUser {
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

/** One profile: the listing's fields, the social handles and the most recent published ratings. */
export function serializeProfile<R>(
  p: ProfileRow & { social_instagram: string | null; social_shopee: string | null; social_tiktokshop: string | null },
  stats: RatingStats,
  recentRatings: R[],
) {
  return {
    ...serializePublicUser(p, stats),
    social_instagram: p.social_instagram,
    social_shopee: p.social_shopee,
    social_tiktokshop: p.social_tiktokshop,
    recent_ratings: recentRatings,
  };
}
