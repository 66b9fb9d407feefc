import type { Knex } from 'knex';

/**
 * The reconciliation's store (issue 44; decision 0020 "Reconciliation: figures kept per
 * milestone"). `GET /v1/enterprise/reconciliation` worked out every milestone of the
 * workspace on every read (6.6 s on 100,000 deals); it now reads figures kept per milestone
 * and works out again only the milestones a write touched since.
 *
 * - `reconciliation_figures`: per milestone, the seven figures of the ledger's side and of
 *   the deals' side as last worked out (shared/reconciliation/repo.ts), and whether any pair
 *   differs. Written only by the reconciliation (under a per-workspace advisory lock), never by
 *   the money paths.
 * - `reconciliation_marks`: append-only, one row per write that may change a milestone's
 *   figures, inserted by triggers in the writing transaction (so no code path can forget):
 *   a milestone inserted or updated, a payout inserted or updated, a journal entry that refers
 *   to a milestone or a payout (the only ledger references of enterprise postings; the
 *   `held` figure is the milestone account's balance, which only lines of such entries move),
 *   a deal's currency or sandbox flag changed. A writer only inserts: it never waits on a
 *   reader, and no row is shared between two writers (no hot row).
 * - Every milestone that exists now is marked once here, so the first reconciliation of a
 *   workspace (or the nightly pass) works its figures out.
 *
 * What the triggers cannot see (a change made with triggers disabled, as
 * `session_replication_role = replica` does) is found by the nightly pass, which works out
 * every milestone again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE reconciliation_figures (
      milestone_id uuid PRIMARY KEY REFERENCES deal_milestones (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      currency text NOT NULL,
      l_funded bigint NOT NULL, l_held bigint NOT NULL, l_buyer_fees_held bigint NOT NULL, l_in_flight bigint NOT NULL,
      l_paid_out bigint NOT NULL, l_fees bigint NOT NULL, l_refunds bigint NOT NULL,
      d_funded bigint NOT NULL, d_held bigint NOT NULL, d_buyer_fees_held bigint NOT NULL, d_in_flight bigint NOT NULL,
      d_paid_out bigint NOT NULL, d_fees bigint NOT NULL, d_refunds bigint NOT NULL,
      differs boolean NOT NULL,
      computed_at timestamptz NOT NULL
    );
    CREATE INDEX reconciliation_figures_workspace ON reconciliation_figures (workspace_id, currency);
    CREATE INDEX reconciliation_figures_differs ON reconciliation_figures (workspace_id) WHERE differs;

    CREATE TABLE reconciliation_marks (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id uuid NOT NULL,
      milestone_id uuid NOT NULL
    );
    CREATE INDEX reconciliation_marks_workspace ON reconciliation_marks (workspace_id, id) INCLUDE (milestone_id);

    CREATE FUNCTION reconciliation_mark_milestone() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO reconciliation_marks (workspace_id, milestone_id) VALUES (NEW.workspace_id, NEW.id);
      RETURN NULL;
    END $$;
    CREATE TRIGGER deal_milestones_reconciliation_mark AFTER INSERT OR UPDATE ON deal_milestones
      FOR EACH ROW EXECUTE FUNCTION reconciliation_mark_milestone();

    CREATE FUNCTION reconciliation_mark_disbursement() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO reconciliation_marks (workspace_id, milestone_id) VALUES (NEW.workspace_id, NEW.milestone_id);
      RETURN NULL;
    END $$;
    CREATE TRIGGER disbursements_reconciliation_mark AFTER INSERT OR UPDATE ON disbursements
      FOR EACH ROW EXECUTE FUNCTION reconciliation_mark_disbursement();

    CREATE FUNCTION reconciliation_mark_deal() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO reconciliation_marks (workspace_id, milestone_id)
      SELECT m.workspace_id, m.id FROM deal_milestones m WHERE m.deal_id = NEW.id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER deals_reconciliation_mark AFTER UPDATE OF currency, is_test ON deals
      FOR EACH ROW WHEN (OLD.currency IS DISTINCT FROM NEW.currency OR OLD.is_test IS DISTINCT FROM NEW.is_test)
      EXECUTE FUNCTION reconciliation_mark_deal();

    -- Only entries that refer to a milestone or a payout run the function (the WHEN is
    -- evaluated without entering plpgsql): consumer postings pay nothing for it.
    -- A reference that is not a uuid names no milestone or payout (nothing to mark).
    CREATE FUNCTION reconciliation_mark_entry() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.ref_id IS NULL OR NEW.ref_id !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN
        RETURN NULL;
      END IF;
      IF NEW.ref_type = 'deal_milestone' THEN
        INSERT INTO reconciliation_marks (workspace_id, milestone_id)
        SELECT m.workspace_id, m.id FROM deal_milestones m WHERE m.id = NEW.ref_id::uuid;
      ELSE
        INSERT INTO reconciliation_marks (workspace_id, milestone_id)
        SELECT b.workspace_id, b.milestone_id FROM disbursements b WHERE b.id = NEW.ref_id::uuid;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER journal_entries_reconciliation_mark AFTER INSERT ON journal_entries
      FOR EACH ROW WHEN (NEW.ref_type IN ('deal_milestone', 'disbursement'))
      EXECUTE FUNCTION reconciliation_mark_entry();

    INSERT INTO reconciliation_marks (workspace_id, milestone_id)
    SELECT workspace_id, id FROM deal_milestones ORDER BY workspace_id, id;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER journal_entries_reconciliation_mark ON journal_entries;
    DROP FUNCTION reconciliation_mark_entry();
    DROP TRIGGER deals_reconciliation_mark ON deals;
    DROP FUNCTION reconciliation_mark_deal();
    DROP TRIGGER disbursements_reconciliation_mark ON disbursements;
    DROP FUNCTION reconciliation_mark_disbursement();
    DROP TRIGGER deal_milestones_reconciliation_mark ON deal_milestones;
    DROP FUNCTION reconciliation_mark_milestone();
    DROP TABLE reconciliation_marks;
    DROP TABLE reconciliation_figures;
  `);
}
