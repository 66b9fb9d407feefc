import type { Knex } from 'knex';

/** Transactional outbox: side effects written with the change, relayed to BullMQ. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE outbox (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      queue text NOT NULL,
      job text NOT NULL,
      payload jsonb NOT NULL DEFAULT '{}'::jsonb,
      available_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      relayed_at timestamptz,
      CONSTRAINT outbox_payload_object CHECK (jsonb_typeof(payload) = 'object')
    );
    CREATE INDEX outbox_pending ON outbox (available_at, id) WHERE relayed_at IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('outbox');
}
