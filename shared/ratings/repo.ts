/** SQL for ratings. Callers pass the transaction. */
import type { Db } from '../db.js';

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

/** A published rating as the public list shows it, with its rater. */
export interface PublicRating {
  stars: number;
  review: string | null;
  created_at: Date;
  rater_username: string;
  rater_email_verified_at: Date | null;
  ratee_role: 'buyer' | 'seller';
}

export async function insert(trx: Db, row: Omit<RatingRow, 'id'>): Promise<RatingRow> {
  const [created] = (await trx('ratings').insert(row).returning('*')) as RatingRow[];
  if (!created) throw new Error('ratings insert returned no row');
  return created;
}

/** The other party's rating of the escrow, if any. */
export async function otherRating(trx: Db, escrowId: string, raterId: string): Promise<RatingRow | undefined> {
  return (await trx('ratings').where({ escrow_id: escrowId }).whereNot({ rater_id: raterId }).first()) as RatingRow | undefined;
}

export async function publish(trx: Db, id: string, at: Date): Promise<void> {
  await trx('ratings').where({ id }).update({ published_at: at });
}

export async function ofEscrow(trx: Db, escrowId: string): Promise<RatingRow[]> {
  return (await trx('ratings').where({ escrow_id: escrowId }).orderBy('created_at')) as RatingRow[];
}

/** A listed user (active, not staff) by username (matched in lowercase). */
export async function listedUserId(trx: Db, username: string): Promise<string | undefined> {
  const row = (await trx('users').select('id').where({ username: username.toLowerCase(), role: 'user', status: 'active' }).first()) as
    | { id: string }
    | undefined;
  return row?.id;
}

/** The ratings of a user published by `now`, newest first (spec 4.7), by the time shown. */
export async function published(trx: Db, rateeId: string, now: Date, page: number, limit: number): Promise<{ total: number; items: PublicRating[] }> {
  const base = () => trx('ratings as r').where('r.ratee_id', rateeId).where('r.published_at', '<=', now);
  const [items, count] = await Promise.all([
    base()
      .join('users as u', 'u.id', 'r.rater_id')
      .select('r.stars', 'r.review', 'r.created_at', 'u.username as rater_username', 'u.email_verified_at as rater_email_verified_at', 'r.ratee_role')
      .orderBy([{ column: 'r.created_at', order: 'desc' }, { column: 'r.id', order: 'desc' }])
      .limit(limit)
      .offset((page - 1) * limit) as Promise<PublicRating[]>,
    base().count<{ count: string }[]>('* as count'),
  ]);
  return { total: Number(count[0]?.count ?? 0), items };
}
