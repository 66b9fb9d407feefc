import type { Knex } from 'knex';

/** Idempotency keys (spec section 8): per caller and endpoint, first 2xx kept 24 hours. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE idempotency_keys (
      scope text NOT NULL,
      endpoint text NOT NULL,
      key uuid NOT NULL,
      request_hash text NOT NULL,
      state text NOT NULL,
      response_status integer,
      response_body text,
      locked_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope, endpoint, key),
      CONSTRAINT idempotency_keys_state_valid CHECK (state IN ('in_flight', 'completed')),
      CONSTRAINT idempotency_keys_completed_has_response CHECK (state = 'in_flight' OR response_status IS NOT NULL)
    );
    CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idempotency_keys');
}
