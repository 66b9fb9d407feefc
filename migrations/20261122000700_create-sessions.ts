import type { Knex } from 'knex';

/** Browser sessions: the cookie token is stored only as a SHA-256 hash. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE sessions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      token_hash text NOT NULL,
      csrf_token text NOT NULL,
      ip text,
      user_agent text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      CONSTRAINT sessions_token_hash_unique UNIQUE (token_hash)
    );
    CREATE INDEX sessions_user_live ON sessions (user_id) WHERE revoked_at IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sessions');
}
