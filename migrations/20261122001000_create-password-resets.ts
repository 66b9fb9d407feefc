import type { Knex } from 'knex';

/** Password-reset tokens (hash only), single use, short-lived. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE password_resets (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      token_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      CONSTRAINT password_resets_token_hash_unique UNIQUE (token_hash)
    );
    CREATE INDEX password_resets_user ON password_resets (user_id, created_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('password_resets');
}
