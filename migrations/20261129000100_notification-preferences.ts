import type { Knex } from 'knex';

/**
 * Per-type notification preferences (consumer spec 4.6): a missing row means both channels
 * on. A type switched off in-app still gets its row, hidden (`in_app` false), so the
 * worker stays idempotent for the e-mail; lists and counts read `in_app` rows only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE notification_preferences (
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      type text NOT NULL,
      in_app boolean NOT NULL DEFAULT true,
      email boolean NOT NULL DEFAULT true,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, type)
    );
    ALTER TABLE notifications ADD COLUMN in_app boolean NOT NULL DEFAULT true;
    DROP INDEX notifications_user_unread;
    CREATE INDEX notifications_user_unread ON notifications (user_id) WHERE NOT is_read AND in_app;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX notifications_user_unread;
    CREATE INDEX notifications_user_unread ON notifications (user_id) WHERE NOT is_read;
    ALTER TABLE notifications DROP COLUMN in_app;
  `);
  await knex.schema.dropTable('notification_preferences');
}
