import type { Knex } from 'knex';

/**
 * Ratings after a released escrow: each party rates the other once. A rating is published
 * at `published_at`: three days after it was given, or at once when the other side rates
 * too (both rows then get the second rating's time).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE ratings (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      escrow_id uuid NOT NULL REFERENCES escrows (id) ON DELETE RESTRICT,
      rater_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      ratee_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      ratee_role text NOT NULL,
      stars smallint NOT NULL,
      review text,
      published_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT ratings_one_per_rater UNIQUE (escrow_id, rater_id),
      CONSTRAINT ratings_stars_range CHECK (stars BETWEEN 1 AND 5),
      CONSTRAINT ratings_ratee_role_known CHECK (ratee_role IN ('buyer', 'seller')),
      CONSTRAINT ratings_not_self CHECK (rater_id <> ratee_id),
      CONSTRAINT ratings_review_length CHECK (review IS NULL OR char_length(review) <= 1000)
    );
    CREATE INDEX ratings_ratee_published ON ratings (ratee_id, published_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ratings');
}
