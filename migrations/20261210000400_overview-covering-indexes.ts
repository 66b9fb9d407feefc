import type { Knex } from 'knex';

/**
 * Covering indexes for the overview's rollups (issue 44; decision 0020 "The overview's
 * rollups"): its windows and its active deals are read from the index alone, never from
 * the table (on 100,000 deals the 90-day window read 22,500 rows of `deal_statuses` from the
 * heap, and `transactions_secured` every day row of the workspace).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX deal_statuses_window ON deal_statuses (workspace_id, created_at)
      INCLUDE (deal_id, counterparty_id, activated, milestones, m_released, m_open, m_disputed, m_cancelled, m_straight,
               m_funded, m_funded_disputed, m_due_released, m_on_time);
    CREATE INDEX deal_statuses_active ON deal_statuses (workspace_id) INCLUDE (currency, live_total)
      WHERE status IN ('terms_review', 'awaiting_funding', 'funded', 'in_progress', 'disputed');
    CREATE INDEX report_event_days_funded ON report_event_days (workspace_id) INCLUDE (funded_count);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX report_event_days_funded;
    DROP INDEX deal_statuses_active;
    DROP INDEX deal_statuses_window;
  `);
}
