import type { Knex } from 'knex';

/**
 * Rollups for the summary report (enterprise spec 4.8; decision 0020 "Reports", "The
 * summary's rollups"), kept by triggers in the writing transaction so no code path can
 * forget them and every figure stays exact and as fresh as the rows:
 *
 * - `deal_statuses`: one row per deal (its workspace, counterparty, creation time and the
 *   deal status of `dealStatus`), rewritten when the deal's cancellation or terms review or
 *   one of its milestones' statuses changes. Deals created in a range are counted by status,
 *   month and counterparty from one index-only scan instead of grouping every milestone.
 * - `report_event_days`: per workspace, UTC day and counterparty, the sums and counts of the
 *   feed events the summary reads (funded and released amounts, approvals, revisions,
 *   disputes opened and resolved). The feed is append-only and its rows never change, so a
 *   day's figures only grow; a range sums at most 366 rows per counterparty.
 * - `report_approvals`: per milestone.approved event, the hours since the milestone's
 *   evidence was submitted (an approved round is the milestone's last, so this never
 *   changes), for the median.
 *
 * Lock order: the event trigger runs inside appendEvent after the workspace row lock (the
 * seq), so its upserts on a workspace's day rows are already serialised by that lock; the
 * deal trigger touches only the deal's own row.
 *
 * The deal status rule is the one of shared/deals/status-sql.ts, written out here as it is
 * today (test/integration/reports/status-sql.test.ts compares the stored status with
 * `dealStatus` after inserts and after random changes).
 */
const SUMMARY_EVENTS = ['milestone.funded', 'milestone.released', 'milestone.approved', 'milestone.rejected', 'milestone.revision_requested', 'milestone.disputed', 'milestone.dispute_resolved'];
const events = SUMMARY_EVENTS.map((e) => `'${e}'`).join(', ');
const NO_COUNTERPARTY = '00000000-0000-0000-0000-000000000000';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION deal_status_now(p_deal uuid) RETURNS text LANGUAGE sql STABLE AS $$
      SELECT CASE
        WHEN d.cancelled_at IS NOT NULL OR count(m.id) FILTER (WHERE m.status <> 'cancelled') = 0 THEN 'cancelled'
        WHEN bool_or(m.status = 'disputed') THEN 'disputed'
        WHEN bool_and(m.status = 'released') FILTER (WHERE m.status <> 'cancelled') THEN 'completed'
        WHEN bool_or(m.status = 'released') THEN 'in_progress'
        WHEN bool_or(m.status IN ('funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed')) THEN 'funded'
        WHEN bool_or(m.status = 'awaiting_funding') THEN 'awaiting_funding'
        WHEN d.terms_review THEN 'terms_review'
        ELSE 'draft'
      END
      FROM deals d LEFT JOIN deal_milestones m ON m.deal_id = d.id
      WHERE d.id = p_deal
      GROUP BY d.id
    $$;

    CREATE TABLE deal_statuses (
      deal_id uuid PRIMARY KEY REFERENCES deals(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      counterparty_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      status text NOT NULL
    );
    CREATE INDEX deal_statuses_range ON deal_statuses (workspace_id, created_at) INCLUDE (counterparty_id, status);

    CREATE FUNCTION deal_statuses_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO deal_statuses (deal_id, workspace_id, counterparty_id, created_at, status)
      VALUES (NEW.id, NEW.workspace_id, NEW.counterparty_id, NEW.created_at, deal_status_now(NEW.id));
      RETURN NULL;
    END $$;
    CREATE TRIGGER deals_status_insert AFTER INSERT ON deals FOR EACH ROW EXECUTE FUNCTION deal_statuses_insert();

    CREATE FUNCTION deal_statuses_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      v_deal uuid;
      v_status text;
    BEGIN
      IF TG_TABLE_NAME = 'deals' THEN v_deal := NEW.id;
      ELSIF TG_OP = 'DELETE' THEN v_deal := OLD.deal_id;
      ELSE v_deal := NEW.deal_id;
      END IF;
      v_status := deal_status_now(v_deal);
      IF v_status IS NOT NULL THEN
        UPDATE deal_statuses SET status = v_status WHERE deal_id = v_deal AND status <> v_status;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER deals_status_update AFTER UPDATE OF cancelled_at, terms_review ON deals FOR EACH ROW
      WHEN (OLD.cancelled_at IS DISTINCT FROM NEW.cancelled_at OR OLD.terms_review IS DISTINCT FROM NEW.terms_review)
      EXECUTE FUNCTION deal_statuses_refresh();
    CREATE TRIGGER deal_milestones_status_insert AFTER INSERT ON deal_milestones FOR EACH ROW EXECUTE FUNCTION deal_statuses_refresh();
    CREATE TRIGGER deal_milestones_status_update AFTER UPDATE OF status ON deal_milestones FOR EACH ROW
      WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION deal_statuses_refresh();
    CREATE TRIGGER deal_milestones_status_delete AFTER DELETE ON deal_milestones FOR EACH ROW EXECUTE FUNCTION deal_statuses_refresh();

    INSERT INTO deal_statuses (deal_id, workspace_id, counterparty_id, created_at, status)
    SELECT d.id, d.workspace_id, d.counterparty_id, d.created_at, deal_status_now(d.id) FROM deals d;

    CREATE TABLE report_event_days (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      day date NOT NULL,
      counterparty_id uuid NOT NULL,
      funded bigint NOT NULL DEFAULT 0,
      funded_count integer NOT NULL DEFAULT 0,
      released bigint NOT NULL DEFAULT 0,
      approved integer NOT NULL DEFAULT 0,
      revisions integer NOT NULL DEFAULT 0,
      disputed integer NOT NULL DEFAULT 0,
      resolved integer NOT NULL DEFAULT 0,
      PRIMARY KEY (workspace_id, day, counterparty_id)
    );

    CREATE TABLE report_approvals (
      event_id uuid PRIMARY KEY REFERENCES workspace_events(id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      approved_at timestamptz NOT NULL,
      hours double precision NOT NULL
    );
    CREATE INDEX report_approvals_range ON report_approvals (workspace_id, approved_at) INCLUDE (hours);

    CREATE FUNCTION report_event_days_add() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      v_cp uuid;
    BEGIN
      SELECT counterparty_id INTO v_cp FROM deals WHERE id = NEW.deal_id;
      INSERT INTO report_event_days AS r (workspace_id, day, counterparty_id, funded, funded_count, released, approved, revisions, disputed, resolved)
      VALUES (
        NEW.workspace_id, (NEW.created_at AT TIME ZONE 'UTC')::date, coalesce(v_cp, '${NO_COUNTERPARTY}'),
        CASE WHEN NEW.event = 'milestone.funded' THEN coalesce(NEW.amount, 0) ELSE 0 END,
        CASE WHEN NEW.event = 'milestone.funded' THEN 1 ELSE 0 END,
        CASE WHEN NEW.event = 'milestone.released' THEN coalesce(NEW.amount, 0) ELSE 0 END,
        CASE WHEN NEW.event = 'milestone.approved' THEN 1 ELSE 0 END,
        CASE WHEN NEW.event IN ('milestone.rejected', 'milestone.revision_requested') THEN 1 ELSE 0 END,
        CASE WHEN NEW.event = 'milestone.disputed' THEN 1 ELSE 0 END,
        CASE WHEN NEW.event = 'milestone.dispute_resolved' THEN 1 ELSE 0 END)
      ON CONFLICT (workspace_id, day, counterparty_id) DO UPDATE SET
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
    END $$;
    CREATE TRIGGER workspace_events_report_days AFTER INSERT ON workspace_events FOR EACH ROW
      WHEN (NEW.event IN (${events})) EXECUTE FUNCTION report_event_days_add();

    INSERT INTO report_event_days (workspace_id, day, counterparty_id, funded, funded_count, released, approved, revisions, disputed, resolved)
    SELECT e.workspace_id, (e.created_at AT TIME ZONE 'UTC')::date, coalesce(d.counterparty_id, '${NO_COUNTERPARTY}'),
           coalesce(sum(e.amount) FILTER (WHERE e.event = 'milestone.funded'), 0),
           count(*) FILTER (WHERE e.event = 'milestone.funded'),
           coalesce(sum(e.amount) FILTER (WHERE e.event = 'milestone.released'), 0),
           count(*) FILTER (WHERE e.event = 'milestone.approved'),
           count(*) FILTER (WHERE e.event IN ('milestone.rejected', 'milestone.revision_requested')),
           count(*) FILTER (WHERE e.event = 'milestone.disputed'),
           count(*) FILTER (WHERE e.event = 'milestone.dispute_resolved')
      FROM workspace_events e LEFT JOIN deals d ON d.id = e.deal_id
     WHERE e.event IN (${events})
     GROUP BY 1, 2, 3;

    INSERT INTO report_approvals (event_id, workspace_id, approved_at, hours)
    SELECT e.id, e.workspace_id, e.created_at, greatest(0, extract(epoch FROM e.created_at - m.evidence_submitted_at)) / 3600
      FROM workspace_events e JOIN deal_milestones m ON m.id = e.entity_id AND m.workspace_id = e.workspace_id
     WHERE e.event = 'milestone.approved' AND m.evidence_submitted_at IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER workspace_events_report_days ON workspace_events;
    DROP FUNCTION report_event_days_add();
    DROP TABLE report_approvals;
    DROP TABLE report_event_days;
    DROP TRIGGER deal_milestones_status_delete ON deal_milestones;
    DROP TRIGGER deal_milestones_status_update ON deal_milestones;
    DROP TRIGGER deal_milestones_status_insert ON deal_milestones;
    DROP TRIGGER deals_status_update ON deals;
    DROP TRIGGER deals_status_insert ON deals;
    DROP FUNCTION deal_statuses_refresh();
    DROP FUNCTION deal_statuses_insert();
    DROP TABLE deal_statuses;
    DROP FUNCTION deal_status_now(uuid);
  `);
}
