import type { Knex } from 'knex';

/**
 * GET /v1/enterprise/deals filters and pages in SQL over the `deal_statuses` rollup
 * (20261207000100_report-rollups; decision 0018 "Issue 42: the deal list in SQL"), newest
 * first (`created_at DESC, deal_id DESC`):
 *
 * - `deal_statuses_list` serves `status=…` with its order: the page is the first `limit`
 *   entries of one index range read backwards (offset included), and the total counts that
 *   range alone (an index-only scan). Without a status: `deal_statuses_order`
 *   (20261209050100_deal-statuses-order-index).
 * - The list orders by the rollup's copy of the deal's creation time, so the copy follows
 *   the deal: the rollup's insert trigger copies `created_at` and `counterparty_id` once,
 *   and nothing refreshed them after (no code path changes them today; a correction by SQL
 *   would have left the list and the summary's counts in the old order and counterparty).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX deal_statuses_list ON deal_statuses (workspace_id, status, created_at, deal_id);

    CREATE FUNCTION deal_statuses_follow() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE deal_statuses SET created_at = NEW.created_at, counterparty_id = NEW.counterparty_id WHERE deal_id = NEW.id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER deals_status_follow AFTER UPDATE OF created_at, counterparty_id ON deals FOR EACH ROW
      WHEN (OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.counterparty_id IS DISTINCT FROM NEW.counterparty_id)
      EXECUTE FUNCTION deal_statuses_follow();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER deals_status_follow ON deals;
    DROP FUNCTION deal_statuses_follow();
    DROP INDEX deal_statuses_list;
  `);
}
