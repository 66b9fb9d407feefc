import type { Knex } from 'knex';

/**
 * E-mailed 6-digit codes: e-mail verification and two-step sign-in (which also has a
 * ticket). Codes and tickets are stored as keyed hashes; attempts are counted.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE auth_codes (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      purpose text NOT NULL,
      code_hash text NOT NULL,
      ticket_hash text,
      attempts integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL,
      created_at timestamptz NOT NULL,
      code_expires_at timestamptz NOT NULL,
      ticket_expires_at timestamptz,
      consumed_at timestamptz,
      CONSTRAINT auth_codes_purpose_valid CHECK (purpose IN ('verify_email', 'login')),
      CONSTRAINT auth_codes_login_has_ticket CHECK ((purpose = 'login') = (ticket_hash IS NOT NULL)),
      CONSTRAINT auth_codes_attempts_bounded CHECK (attempts >= 0 AND attempts <= max_attempts),
      CONSTRAINT auth_codes_ticket_hash_unique UNIQUE (ticket_hash)
    );
    CREATE INDEX auth_codes_user_purpose ON auth_codes (user_id, purpose, created_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('auth_codes');
}
