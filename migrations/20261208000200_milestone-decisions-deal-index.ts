import type { Knex } from 'knex';

/**
 * Every deal answer counts the deal's approve decisions (shared/deals/repo.ts
 * approveDecisions: `WHERE deal_id = ? AND decision = 'approve'`), and no index had
 * deal_id: each GET /deals/:id and each deal write's answer scanned the whole table (found
 * by the fund bench, issue 29: both the API and its floor slowed run after run as the
 * seeded decisions grew).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX IF NOT EXISTS milestone_decisions_deal ON milestone_decisions (deal_id, decision)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS milestone_decisions_deal');
}
