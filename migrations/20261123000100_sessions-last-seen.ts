import type { Knex } from 'knex';

/**
 * Sessions end after SESSION_IDLE_MINUTES without use, on top of their absolute lifetime.
 * `last_seen_at` is refreshed at most once a minute per session by the auth middleware.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sessions ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sessions DROP COLUMN last_seen_at');
}
