import type { Knex } from 'knex';

/**
 * The nightly enterprise reconciliation's runs (decision 0020 "Overview and reconciliation";
 * shared/reconciliation/nightly.ts): one row per UTC day, written in the transaction that
 * queues the staff e-mails, so a job that runs twice in a day alerts staff once. `summary`
 * lists the workspaces with differences and how many each had.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE enterprise_reconciliation_runs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      run_on date NOT NULL,
      workspaces_checked integer NOT NULL,
      workspaces_with_differences integer NOT NULL,
      differences integer NOT NULL,
      summary jsonb NOT NULL DEFAULT '[]'::jsonb,
      staff_alerted integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      CONSTRAINT enterprise_reconciliation_runs_day UNIQUE (run_on),
      CONSTRAINT enterprise_reconciliation_runs_counts CHECK (
        workspaces_checked >= 0 AND workspaces_with_differences BETWEEN 0 AND workspaces_checked
        AND differences >= workspaces_with_differences AND staff_alerted >= 0),
      CONSTRAINT enterprise_reconciliation_runs_summary CHECK (jsonb_typeof(summary) = 'array')
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE enterprise_reconciliation_runs;`);
}
