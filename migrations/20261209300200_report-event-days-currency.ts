import type { Knex } from 'knex';

/**
 * The summary report's day rollup per currency (decision 0023): `report_event_days` summed
 * funded and released amounts of every deal together, whatever its currency. Each row is now
 * one currency's (the deal's); the trigger writes it so and the rollup is rebuilt from the
 * events. Counts (approvals, revisions, disputes) are split by currency too and still add up.
 */
const SUMMARY_EVENTS = ['milestone.funded', 'milestone.released', 'milestone.approved', 'milestone.rejected', 'milestone.revision_requested', 'milestone.disputed', 'milestone.dispute_resolved'];
const events = SUMMARY_EVENTS.map((e) => `'${e}'`).join(', ');
const NO_COUNTERPARTY = '00000000-0000-0000-0000-000000000000';

const addFunction = (withCurrency: boolean) => `
    CREATE OR REPLACE FUNCTION report_event_days_add() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      v_cp uuid;
      v_currency text;
    BEGIN
      SELECT counterparty_id, currency INTO v_cp, v_currency FROM deals WHERE id = NEW.deal_id;
      INSERT INTO report_event_days AS r (workspace_id, day, counterparty_id, ${withCurrency ? 'currency, ' : ''}funded, funded_count, released, approved, revisions, disputed, resolved)
      VALUES (
        NEW.workspace_id, (NEW.created_at AT TIME ZONE 'UTC')::date, coalesce(v_cp, '${NO_COUNTERPARTY}'), ${withCurrency ? "coalesce(v_currency, 'IDR')," : ''}
        CASE WHEN NEW.event = 'milestone.funded' THEN coalesce(NEW.amount, 0) ELSE 0 END,
        CASE WHEN NEW.event = 'milestone.funded' THEN 1 ELSE 0 END,
        CASE WHEN NEW.event = 'milestone.released' THEN coalesce(NEW.amount, 0) ELSE 0 END,
        CASE WHEN NEW.event = 'milestone.approved' THEN 1 ELSE 0 END,
        CASE WHEN NEW.event IN ('milestone.rejected', 'milestone.revision_requested') THEN 1 ELSE 0 END,
        CASE WHEN NEW.event = 'milestone.disputed' THEN 1 ELSE 0 END,
        CASE WHEN NEW.event = 'milestone.dispute_resolved' THEN 1 ELSE 0 END)
      ON CONFLICT (workspace_id, day, counterparty_id${withCurrency ? ', currency' : ''}) DO UPDATE SET
        funded = r.funded + EXCLUDED.funded, funded_count = r.funded_count + EXCLUDED.funded_count,
        released = r.released + EXCLUDED.released, approved = r.approved + EXCLUDED.approved,
        revisions = r.revisions + EXCLUDED.revisions, disputed = r.disputed + EXCLUDED.disputed,
        resolved = r.resolved + EXCLUDED.resolved;
      IF NEW.event = 'milestone.approved' THEN
        INSERT INTO report_approvals (event_id, workspace_id, approved_at, hours)
        SELECT NEW.id, NEW.workspace_id, NEW.created_at, greatest(0, extract(epoch FROM NEW.created_at - m.evidence_submitted_at)) / 3600
          FROM deal_milestones m
         WHERE m.id = NEW.entity_id AND m.workspace_id = NEW.workspace_id AND m.evidence_submitted_at IS NOT NULL;
      END IF;
      RETURN NULL;
    END $$;`;

const rebuild = (withCurrency: boolean) => `
    DELETE FROM report_event_days;
    INSERT INTO report_event_days (workspace_id, day, counterparty_id, ${withCurrency ? 'currency, ' : ''}funded, funded_count, released, approved, revisions, disputed, resolved)
    SELECT e.workspace_id, (e.created_at AT TIME ZONE 'UTC')::date, coalesce(d.counterparty_id, '${NO_COUNTERPARTY}'), ${withCurrency ? "coalesce(d.currency, 'IDR')," : ''}
           coalesce(sum(e.amount) FILTER (WHERE e.event = 'milestone.funded'), 0),
           count(*) FILTER (WHERE e.event = 'milestone.funded'),
           coalesce(sum(e.amount) FILTER (WHERE e.event = 'milestone.released'), 0),
           count(*) FILTER (WHERE e.event = 'milestone.approved'),
           count(*) FILTER (WHERE e.event IN ('milestone.rejected', 'milestone.revision_requested')),
           count(*) FILTER (WHERE e.event = 'milestone.disputed'),
           count(*) FILTER (WHERE e.event = 'milestone.dispute_resolved')
      FROM workspace_events e LEFT JOIN deals d ON d.id = e.deal_id
     WHERE e.event IN (${events})
     GROUP BY ${withCurrency ? '1, 2, 3, 4' : '1, 2, 3'};`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE report_event_days ADD COLUMN currency text NOT NULL DEFAULT 'IDR';
    ALTER TABLE report_event_days DROP CONSTRAINT report_event_days_pkey;
    ALTER TABLE report_event_days ADD PRIMARY KEY (workspace_id, day, counterparty_id, currency);
    ${addFunction(true)}
    ${rebuild(true)}
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE report_event_days DROP CONSTRAINT report_event_days_pkey;
    ALTER TABLE report_event_days DROP COLUMN currency;
    ${rebuild(false)}
    ALTER TABLE report_event_days ADD PRIMARY KEY (workspace_id, day, counterparty_id);
    ${addFunction(false)}
  `);
}
