import type { Knex } from 'knex';

/**
 * A forgot-password request for an unknown or inactive address writes a reset row too
 * (the same work as for a real account, so the answer time tells nothing), born used and
 * belonging to nobody. Such a row can never be live.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE password_resets ALTER COLUMN user_id DROP NOT NULL;
    ALTER TABLE password_resets
      ADD CONSTRAINT password_resets_void_without_user CHECK (user_id IS NOT NULL OR used_at IS NOT NULL);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DELETE FROM password_resets WHERE user_id IS NULL;
    ALTER TABLE password_resets DROP CONSTRAINT password_resets_void_without_user;
    ALTER TABLE password_resets ALTER COLUMN user_id SET NOT NULL;
  `);
}
