import type { Knex } from 'knex';

/** Personal API keys: only the SHA-256 hash and a masked preview are kept; one live key per user. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      key_hash text NOT NULL,
      preview text NOT NULL,
      label text,
      created_at timestamptz NOT NULL,
      created_ip text,
      last_used_at timestamptz,
      revoked_at timestamptz,
      revoked_reason text,
      CONSTRAINT api_keys_key_hash_unique UNIQUE (key_hash),
      CONSTRAINT api_keys_revoked_reason CHECK ((revoked_at IS NULL) = (revoked_reason IS NULL))
    );
    CREATE UNIQUE INDEX api_keys_one_live_per_user ON api_keys (user_id) WHERE revoked_at IS NULL;
    CREATE INDEX api_keys_user_created ON api_keys (user_id, created_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
}
