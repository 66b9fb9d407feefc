import type { Knex } from 'knex';

/**
 * Every run of the ledger check (`npm run ledger:check`; issue 47): when it ran, whether every
 * invariant held, how many violations and the first of them, so /metrics can say when the
 * books were last proven sound (`ledger_check_last_ok`, `ledger_check_last_run_age_seconds`)
 * and an alert can wake someone. Append-only, like the ledger it reports on.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE ledger_check_runs (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      ran_at timestamptz NOT NULL,
      ok boolean NOT NULL,
      violations integer NOT NULL CHECK (violations >= 0),
      first_violations jsonb NOT NULL DEFAULT '[]'::jsonb,
      CONSTRAINT ledger_check_runs_ok_means_none CHECK (ok = (violations = 0))
    );
    CREATE INDEX ledger_check_runs_latest ON ledger_check_runs (ran_at DESC, id DESC);
    CREATE TRIGGER ledger_check_runs_append_only BEFORE UPDATE OR DELETE ON ledger_check_runs
      FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE ledger_check_runs');
}
