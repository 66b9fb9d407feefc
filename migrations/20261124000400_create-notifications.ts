import type { Knex } from 'knex';

/**
 * In-app notifications (consumer spec 2 and 4.6). Rows are written by the notifications
 * worker from outbox jobs; `source_key` (the outbox job id) makes a re-run job insert nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE notifications (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      type text NOT NULL,
      title text NOT NULL,
      body text NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      is_read boolean NOT NULL DEFAULT false,
      read_at timestamptz,
      source_key text NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT notifications_source_key_unique UNIQUE (source_key, user_id)
    );
    CREATE INDEX notifications_user ON notifications (user_id, created_at DESC);
    CREATE INDEX notifications_user_unread ON notifications (user_id) WHERE NOT is_read;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('notifications');
}
