import type { Knex } from 'knex';

/**
 * Indexes for the summary report (enterprise spec 4.8; decision 0020 "Reports"): its
 * figures are aggregates over the workspace's feed by event name and time (funded,
 * released, approved, disputed in the range) and over its open payouts (queued now).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX workspace_events_name_time ON workspace_events (workspace_id, event, created_at);
    CREATE INDEX disbursements_workspace_open ON disbursements (workspace_id) WHERE status IN ('queued', 'processing');
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX disbursements_workspace_open;
    DROP INDEX workspace_events_name_time;
  `);
}
