import type { Knex } from 'knex';

/**
 * Issue 42, point 1 (decision 0017, "Issue 42" addendum): a counterparty's application
 * belongs to the one person who fills it through its verification link.
 * - `kyb_applications.holder_id`: the user who claimed a link to this version (null for a
 *   workspace's own application, and for a counterparty's until a link to it is claimed).
 *   Every read and write through a link checks it; a re-issued link is bound to it.
 * - `kyb_invites (workspace_id, created_at)`: the daily count of a workspace's links.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE kyb_applications
      ADD COLUMN holder_id uuid REFERENCES users (id),
      ADD CONSTRAINT kyb_applications_holder_counterparty CHECK (holder_id IS NULL OR counterparty_id IS NOT NULL);
    CREATE INDEX kyb_invites_workspace_created ON kyb_invites (workspace_id, created_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX kyb_invites_workspace_created;
    ALTER TABLE kyb_applications DROP CONSTRAINT kyb_applications_holder_counterparty, DROP COLUMN holder_id;
  `);
}
