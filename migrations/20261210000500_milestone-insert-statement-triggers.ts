import type { Knex } from 'knex';

/**
 * A deal's milestones are inserted in one statement (shared/deals/repo.ts insertMilestones),
 * but the row triggers of migrations 20261207000100 and 20261210000100/0300 refreshed the
 * deal's `deal_statuses` row and wrote a reconciliation mark once per milestone: three
 * refreshes (each now an UPDATE of a row with six indexes) and three marks for a deal of
 * three. Deal creation fell from 109 to 90 per second (bench:deals, e1bc422 → 434e4b7).
 * Inserts now fire statement triggers over the inserted rows (a transition table): one
 * refresh per deal touched and one INSERT of every mark. Updates and deletes keep their row
 * triggers. The figures are those of 20261210000300, written out again here.
 */
const FIGURES_SELECT = `
  SELECT d.id AS deal_id, deal_status_now(d.id) AS status, d.currency::text AS currency, d.activated_at IS NOT NULL AS activated,
         count(m.id)::int AS milestones,
         coalesce(sum(m.amount) FILTER (WHERE m.status <> 'cancelled'), 0)::bigint AS live_total,
         count(*) FILTER (WHERE m.status = 'released')::int AS m_released,
         count(*) FILTER (WHERE m.status IN ('awaiting_funding', 'funded', 'evidence_submitted', 'revision_requested', 'approved'))::int AS m_open,
         count(*) FILTER (WHERE m.status = 'disputed')::int AS m_disputed,
         count(*) FILTER (WHERE m.status = 'cancelled')::int AS m_cancelled,
         count(*) FILTER (WHERE m.status = 'released' AND m.approval_round <= 1 AND m.disputed_at IS NULL AND m.ruling IS NULL)::int AS m_straight,
         count(*) FILTER (WHERE m.funded_at IS NOT NULL)::int AS m_funded,
         count(*) FILTER (WHERE m.funded_at IS NOT NULL AND m.disputed_at IS NOT NULL)::int AS m_funded_disputed,
         count(*) FILTER (WHERE m.due_at IS NOT NULL AND m.status = 'released')::int AS m_due_released,
         count(*) FILTER (WHERE m.due_at IS NOT NULL AND m.status = 'released' AND m.released_at <= m.due_at)::int AS m_on_time
    FROM deals d LEFT JOIN deal_milestones m ON m.deal_id = d.id`;

const COLUMNS = ['status', 'currency', 'activated', 'milestones', 'live_total', 'm_released', 'm_open', 'm_disputed', 'm_cancelled', 'm_straight', 'm_funded', 'm_funded_disputed', 'm_due_released', 'm_on_time'];
const set = COLUMNS.map((c) => `${c} = x.${c}`).join(', ');
const differs = `(${COLUMNS.map((c) => `s.${c}`).join(', ')}) IS DISTINCT FROM (${COLUMNS.map((c) => `x.${c}`).join(', ')})`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION deal_statuses_refresh_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE deal_statuses s SET ${set}
        FROM (${FIGURES_SELECT} WHERE d.id IN (SELECT DISTINCT deal_id FROM new_milestones) GROUP BY d.id) x
       WHERE s.deal_id = x.deal_id AND ${differs};
      RETURN NULL;
    END $$;
    DROP TRIGGER deal_milestones_status_insert ON deal_milestones;
    CREATE TRIGGER deal_milestones_status_insert AFTER INSERT ON deal_milestones REFERENCING NEW TABLE AS new_milestones
      FOR EACH STATEMENT EXECUTE FUNCTION deal_statuses_refresh_inserted();

    CREATE FUNCTION reconciliation_mark_inserted_milestones() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO reconciliation_marks (workspace_id, milestone_id) SELECT workspace_id, id FROM new_milestones;
      RETURN NULL;
    END $$;
    DROP TRIGGER deal_milestones_reconciliation_mark ON deal_milestones;
    CREATE TRIGGER deal_milestones_reconciliation_mark AFTER UPDATE ON deal_milestones
      FOR EACH ROW EXECUTE FUNCTION reconciliation_mark_milestone();
    CREATE TRIGGER deal_milestones_reconciliation_mark_insert AFTER INSERT ON deal_milestones REFERENCING NEW TABLE AS new_milestones
      FOR EACH STATEMENT EXECUTE FUNCTION reconciliation_mark_inserted_milestones();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER deal_milestones_reconciliation_mark_insert ON deal_milestones;
    DROP FUNCTION reconciliation_mark_inserted_milestones();
    DROP TRIGGER deal_milestones_reconciliation_mark ON deal_milestones;
    CREATE TRIGGER deal_milestones_reconciliation_mark AFTER INSERT OR UPDATE ON deal_milestones
      FOR EACH ROW EXECUTE FUNCTION reconciliation_mark_milestone();
    DROP TRIGGER deal_milestones_status_insert ON deal_milestones;
    CREATE TRIGGER deal_milestones_status_insert AFTER INSERT ON deal_milestones FOR EACH ROW EXECUTE FUNCTION deal_statuses_refresh();
    DROP FUNCTION deal_statuses_refresh_inserted();
  `);
}
