import type { Knex } from 'knex';

/**
 * The deal list without a status filter (GET /v1/enterprise/deals; decision 0018 "Issue 42"),
 * newest first by (created_at, deal_id): `deal_statuses_range` (workspace_id, created_at)
 * lacks the deal id, so a page read it with a heap fetch per entry and sorted each instant's
 * entries by id; an offset (page 2,500 of 100,000 deals) then fetched 50,000 rows (the
 * reports bench: p95 659 ms under load). This index answers the page's ids, offset
 * included, from an index-only scan in the list's order.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX deal_statuses_order ON deal_statuses (workspace_id, created_at, deal_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX deal_statuses_order');
}
