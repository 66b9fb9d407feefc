/**
 * SQL of the workspace overview (enterprise spec 4.9; decision 0020 "Overview and
 * reconciliation"): every figure is an aggregate computed in Postgres over the workspace's
 * deals, milestones, decisions, payouts and feed. "Now" and every window edge come from the
 * caller (shared/clock.ts), never from the database's clock. Sums are cast to bigint, so
 * they arrive as numbers (shared/db.ts); counts likewise.
 */
import type { Db } from '../db.js';

/** Milestones that are not finished: anything but released and cancelled. */
const UNFINISHED = `('draft', 'awaiting_funding', 'funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed')`;

/**
 * A released milestone that went straight through (the overview's "automation"): approved in
 * its first evidence round, never disputed or ruled on, and none of its payouts failed.
 * Over `deal_milestones m`.
 */
export const STRAIGHT_THROUGH = `(m.approval_round <= 1 AND m.disputed_at IS NULL AND m.ruling IS NULL
  AND NOT EXISTS (SELECT 1 FROM disbursements fb WHERE fb.milestone_id = m.id AND fb.status = 'failed'))`;

async function rows<T>(trx: Db, sql: string, bindings: Record<string, unknown>): Promise<T[]> {
  const result = await trx.raw<{ rows: T[] }>(sql, bindings);
  return result.rows;
}

export interface StatsRow {
  deals_active: number;
  active_deal_value: number;
  transactions_secured: number;
  released_24h: number;
  median_approval_hours: number | null;
  avg_settlement_minutes: number | null;
}

/**
 * The deal statuses (of `dealStatus`, kept per deal in `deal_statuses` by triggers) of an
 * active deal: activated, not cancelled, some milestone unfinished (activation leaves a deal
 * in terms_review or its milestones awaiting funding; draft is never activated; completed
 * and cancelled have no unfinished milestone).
 */
const ACTIVE_DEAL_STATUSES = `('terms_review', 'awaiting_funding', 'funded', 'in_progress', 'disputed')`;

/**
 * The headline figures (issue 44: read from the rollups, never every deal of the workspace):
 * active deals (activated, not cancelled, some milestone unfinished: ACTIVE_DEAL_STATUSES) and
 * the value of their live milestones (money figures in rupiah, IDR deals only: amounts of two
 * currencies are never added, decision 0023); milestones ever funded (the milestone.funded
 * events counted in `report_event_days`: both funding moves write one, once per milestone); the amount of milestone.released
 * events in (since24h, now]; the median hours from evidence to the approving decision
 * (milestone.approved events, as the summary report counts them; staff rulings are no
 * approval) in (since, now]; the mean minutes from a payout's creation to its settlement for payouts
 * settled in (since, now].
 */
export async function stats(trx: Db, workspaceId: string, now: Date, since24h: Date, since: Date): Promise<StatsRow> {
  const [row] = await rows<StatsRow>(
    trx,
    `WITH active AS MATERIALIZED (
       SELECT s.currency, s.live_total FROM deal_statuses s WHERE s.workspace_id = :ws AND s.status IN ${ACTIVE_DEAL_STATUSES}
     )
     SELECT (SELECT COUNT(*) FROM active) AS deals_active,
            (SELECT COALESCE(SUM(live_total), 0)::bigint FROM active WHERE currency = 'IDR') AS active_deal_value,
            (SELECT COALESCE(SUM(funded_count), 0)::bigint FROM report_event_days WHERE workspace_id = :ws) AS transactions_secured,
            (SELECT COALESCE(SUM(e.amount), 0)::bigint FROM workspace_events e JOIN deals d ON d.id = e.deal_id
              WHERE e.workspace_id = :ws AND e.event = 'milestone.released' AND e.created_at > :since24h AND e.created_at <= :now
                AND d.currency = 'IDR') AS released_24h,
            -- report_approvals keeps each milestone.approved event's hours since the evidence (as the summary reads them).
            (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY hours) FROM report_approvals
              WHERE workspace_id = :ws AND approved_at > :since AND approved_at <= :now) AS median_approval_hours,
            (SELECT AVG(EXTRACT(EPOCH FROM settled_at - created_at) / 60)::float8
               FROM disbursements WHERE workspace_id = :ws AND settled_at > :since AND settled_at <= :now) AS avg_settlement_minutes`,
    { ws: workspaceId, now, since24h, since },
  );
  return row!;
}

export interface HourRow {
  bucket: number;
  funded: number;
  approved: number;
  released: number;
  disputed: number;
}

/** Milestone events per hour in [start, start + 24 h): bucket 0 is the hour starting at `start`. */
export async function hourly(trx: Db, workspaceId: string, start: Date, end: Date): Promise<HourRow[]> {
  return rows<HourRow>(
    trx,
    `SELECT FLOOR(EXTRACT(EPOCH FROM created_at - :start) / 3600)::int AS bucket,
            COUNT(*) FILTER (WHERE event = 'milestone.funded')::int AS funded,
            COUNT(*) FILTER (WHERE event = 'milestone.approved')::int AS approved,
            COUNT(*) FILTER (WHERE event = 'milestone.released')::int AS released,
            COUNT(*) FILTER (WHERE event = 'milestone.disputed')::int AS disputed
       FROM workspace_events
      WHERE workspace_id = :ws AND created_at >= :start AND created_at < :end
        AND event IN ('milestone.funded', 'milestone.approved', 'milestone.released', 'milestone.disputed')
      GROUP BY 1`,
    { ws: workspaceId, start, end },
  );
}

export interface DayReleases {
  day: string;
  released: number;
  straight: number;
}

/** Milestones released per UTC day in [from, to), and how many of them went straight through. */
export async function releasesByDay(trx: Db, workspaceId: string, from: Date, to: Date): Promise<DayReleases[]> {
  return rows<DayReleases>(
    trx,
    `SELECT (m.released_at AT TIME ZONE 'UTC')::date::text AS day, COUNT(*)::int AS released,
            COUNT(*) FILTER (WHERE ${STRAIGHT_THROUGH})::int AS straight
       FROM deal_milestones m
      WHERE m.workspace_id = :ws AND m.status = 'released' AND m.released_at >= :from AND m.released_at < :to
      GROUP BY 1`,
    { ws: workspaceId, from, to },
  );
}

/** Reject and revision decisions per UTC day in [from, to). */
export async function revisionsByDay(trx: Db, workspaceId: string, from: Date, to: Date): Promise<{ day: string; revisions: number }[]> {
  return rows(
    trx,
    `SELECT (decided_at AT TIME ZONE 'UTC')::date::text AS day, COUNT(*)::int AS revisions
       FROM milestone_decisions
      WHERE workspace_id = :ws AND decision IN ('reject', 'revision') AND decided_at >= :from AND decided_at < :to
      GROUP BY 1`,
    { ws: workspaceId, from, to },
  );
}

export interface OutcomesRow {
  released: number;
  open: number;
  disputed: number;
  cancelled: number;
  reviewed: number;
  revised: number;
  straight: number;
}

/**
 * Where the milestones of deals created in (since, now] stand (drafts left out: never
 * activated): released, open (awaiting funding up to approved), disputed, cancelled; how
 * many had a decision and how many of those were sent back (reject or revision) at least
 * once; how many of the released went straight through.
 */
export async function outcomes(trx: Db, workspaceId: string, now: Date, since: Date): Promise<OutcomesRow> {
  const [row] = await rows<OutcomesRow>(
    trx,
    `WITH win AS MATERIALIZED (
       SELECT deal_id, m_released, m_open, m_disputed, m_cancelled, m_straight FROM deal_statuses
        WHERE workspace_id = :ws AND created_at > :since AND created_at <= :now
     ), dec AS (
       -- Decisions and failed payouts come after their deal's creation, so inside the window
       -- (few: never every milestone of the window). A decided milestone is never a draft
       -- (decisions need evidence, and no move leads back to draft: shared/deals/states.ts).
       SELECT md.milestone_id, bool_or(md.decision IN ('reject', 'revision')) AS revised
         FROM milestone_decisions md
         JOIN win ON win.deal_id = md.deal_id
        WHERE md.workspace_id = :ws AND md.decided_at > :since
        GROUP BY md.milestone_id
     ), failed AS (
       SELECT DISTINCT fb.milestone_id FROM disbursements fb
         JOIN win ON win.deal_id = fb.deal_id
         JOIN deal_milestones m ON m.id = fb.milestone_id
        WHERE fb.workspace_id = :ws AND fb.status = 'failed' AND fb.created_at > :since
          AND m.status = 'released' AND m.approval_round <= 1 AND m.disputed_at IS NULL AND m.ruling IS NULL
     )
     SELECT t.released, t.open, t.disputed, t.cancelled,
            (SELECT COUNT(*) FROM dec)::int AS reviewed,
            (SELECT COUNT(*) FILTER (WHERE revised) FROM dec)::int AS revised,
            (t.straight - (SELECT COUNT(*) FROM failed))::int AS straight
       FROM (SELECT COALESCE(SUM(m_released), 0)::int AS released, COALESCE(SUM(m_open), 0)::int AS open,
                    COALESCE(SUM(m_disputed), 0)::int AS disputed, COALESCE(SUM(m_cancelled), 0)::int AS cancelled,
                    COALESCE(SUM(m_straight), 0)::int AS straight
               FROM win) t`,
    { ws: workspaceId, now, since },
  );
  return row!;
}

export interface CounterpartyRow {
  id: string;
  name: string;
  deals: number;
  /** Milestones with a due date that were released or are past it (not cancelled). */
  due: number;
  on_time: number;
  funded: number;
  disputed: number;
}

/**
 * Counterparties of activated deals created in (since, now], most deals first (then by name),
 * at most `limit`: their deals, milestones due and released on time, milestones funded and
 * disputed.
 */
export async function counterparties(trx: Db, workspaceId: string, now: Date, since: Date, limit: number): Promise<CounterpartyRow[]> {
  return rows<CounterpartyRow>(
    trx,
    `WITH win AS MATERIALIZED (
       SELECT deal_id, counterparty_id, m_due_released, m_on_time, m_funded, m_funded_disputed FROM deal_statuses
        WHERE workspace_id = :ws AND created_at > :since AND created_at <= :now AND activated AND milestones > 0
     ), late AS (
       -- Due and neither released nor cancelled: from the overdue alert's partial index.
       SELECT m.deal_id, COUNT(*) AS n FROM deal_milestones m
        WHERE m.workspace_id = :ws AND m.due_at IS NOT NULL AND m.due_at < :now AND m.status NOT IN ('released', 'cancelled')
        GROUP BY m.deal_id
     ), per AS (
       SELECT w.counterparty_id,
              COUNT(*)::int AS deals,
              SUM(w.m_due_released + COALESCE(l.n, 0))::int AS due,
              SUM(w.m_on_time)::int AS on_time,
              SUM(w.m_funded)::int AS funded,
              SUM(w.m_funded_disputed)::int AS disputed
         FROM win w LEFT JOIN late l ON l.deal_id = w.deal_id
        GROUP BY w.counterparty_id
     )
     SELECT c.id, c.name, per.deals, per.due, per.on_time, per.funded, per.disputed
       FROM per JOIN counterparties c ON c.id = per.counterparty_id
      ORDER BY per.deals DESC, c.name, c.id
      LIMIT :limit`,
    { ws: workspaceId, now, since, limit },
  );
}

/** What each counterparty was paid per UTC day in [from, to): payout amounts of IDR milestones released that day (one currency: decision 0023). */
export async function releasedToByDay(trx: Db, workspaceId: string, counterpartyIds: string[], from: Date, to: Date): Promise<{ counterparty_id: string; day: string; amount: number }[]> {
  if (counterpartyIds.length === 0) return [];
  return rows(
    trx,
    `SELECT d.counterparty_id, (m.released_at AT TIME ZONE 'UTC')::date::text AS day, SUM(m.payout_amount - m.refunded_amount)::bigint AS amount
       FROM deal_milestones m
      -- Each milestone's deal by its key (LIMIT keeps it a lookup: a join was planned as a scan of every deal).
      CROSS JOIN LATERAL (SELECT d.counterparty_id FROM deals d WHERE d.id = m.deal_id AND d.currency = 'IDR' LIMIT 1) d
      WHERE m.workspace_id = :ws AND d.counterparty_id IN (SELECT jsonb_array_elements_text(:ids::jsonb)::uuid) AND m.status = 'released' AND m.released_at >= :from AND m.released_at < :to
      GROUP BY 1, 2`,
    { ws: workspaceId, ids: JSON.stringify(counterpartyIds), from, to },
  );
}

// ---- Alerts ----------------------------------------------------------------------------------

/** A milestone an alert points at. */
export interface AlertMilestoneRow {
  milestone_id: string;
  deal_id: string;
  reference: string;
  sequence_no: number;
  amount: number;
  currency: string;
  /** When the condition started (disputed_at, due_at, evidence_submitted_at). */
  since: Date;
}

const MILESTONE_COLUMNS = `m.id AS milestone_id, m.deal_id, d.reference, m.sequence_no, m.amount, d.currency`;

/** Disputed milestones disputed before `cutoff` (longer than the SLA), oldest first. */
export function disputesPastSla(trx: Db, workspaceId: string, cutoff: Date, limit: number): Promise<AlertMilestoneRow[]> {
  return rows(
    trx,
    `SELECT ${MILESTONE_COLUMNS}, m.disputed_at AS since
       FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
      WHERE m.workspace_id = :ws AND m.status = 'disputed' AND m.disputed_at < :cutoff
      ORDER BY m.disputed_at, m.id LIMIT :limit`,
    { ws: workspaceId, cutoff, limit },
  );
}

/** Milestones past their due date and neither released nor cancelled, most overdue first. */
export function overdue(trx: Db, workspaceId: string, now: Date, limit: number): Promise<AlertMilestoneRow[]> {
  return rows(
    trx,
    `SELECT ${MILESTONE_COLUMNS}, m.due_at AS since
       FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
      WHERE m.workspace_id = :ws AND m.due_at < :now AND m.status NOT IN ('released', 'cancelled')
      ORDER BY m.due_at, m.id LIMIT :limit`,
    { ws: workspaceId, now, limit },
  );
}

/** Milestones at or above `threshold` waiting for approval (evidence submitted), oldest evidence first. */
export function highValuePending(trx: Db, workspaceId: string, threshold: number, limit: number): Promise<AlertMilestoneRow[]> {
  return rows(
    trx,
    `SELECT ${MILESTONE_COLUMNS}, m.evidence_submitted_at AS since
       FROM deal_milestones m
      CROSS JOIN LATERAL (SELECT d.reference, d.currency FROM deals d WHERE d.id = m.deal_id LIMIT 1) d
      WHERE m.workspace_id = :ws AND m.status = 'evidence_submitted' AND (m.amount >= :threshold OR d.currency <> 'IDR')
      ORDER BY m.evidence_submitted_at, m.id LIMIT :limit`,
    { ws: workspaceId, threshold, limit },
  );
}

export interface ReturnedRow extends AlertMilestoneRow {
  returned_amount: number;
  failed: number;
}

/** Released milestones holding money that came back from failed payouts (waiting to be released again), the oldest failure first. */
export function failedPayouts(trx: Db, workspaceId: string, limit: number): Promise<ReturnedRow[]> {
  return rows(
    trx,
    `SELECT ${MILESTONE_COLUMNS}, m.returned_amount, f.failed, f.since
       FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
       JOIN LATERAL (SELECT COUNT(*)::int AS failed, MIN(b.failed_at) AS since FROM disbursements b WHERE b.milestone_id = m.id AND b.status = 'failed') f ON true
      WHERE m.workspace_id = :ws AND m.status = 'released' AND m.returned_amount > 0
      ORDER BY f.since, m.id LIMIT :limit`,
    { ws: workspaceId, limit },
  );
}

export interface StuckRow extends AlertMilestoneRow {
  payouts: number;
  total: number;
}

/** Milestones with payouts queued or processing since before `cutoff`, the oldest payout first. */
export function stuckPayouts(trx: Db, workspaceId: string, cutoff: Date, limit: number): Promise<StuckRow[]> {
  return rows(
    trx,
    `SELECT ${MILESTONE_COLUMNS}, s.payouts, s.total, s.since
       FROM (SELECT b.milestone_id, COUNT(*)::int AS payouts, SUM(b.amount)::bigint AS total, MIN(b.created_at) AS since
               FROM disbursements b
              WHERE b.workspace_id = :ws AND b.status IN ('queued', 'processing') AND b.created_at < :cutoff
              GROUP BY b.milestone_id) s
       JOIN deal_milestones m ON m.id = s.milestone_id JOIN deals d ON d.id = m.deal_id
      ORDER BY s.since, m.id LIMIT :limit`,
    { ws: workspaceId, cutoff, limit },
  );
}

/** Payout amounts created in (since24h, now] and in (since8d, since24h] (the seven days before), per currency (decision 0023). */
export async function payoutVolume(trx: Db, workspaceId: string, now: Date, since24h: Date, since8d: Date): Promise<{ currency: string; last_24h: number; previous_7d: number }[]> {
  return rows<{ currency: string; last_24h: number; previous_7d: number }>(
    trx,
    `SELECT currency, COALESCE(SUM(amount) FILTER (WHERE created_at > :since24h), 0)::bigint AS last_24h,
            COALESCE(SUM(amount) FILTER (WHERE created_at <= :since24h), 0)::bigint AS previous_7d
       FROM disbursements WHERE workspace_id = :ws AND created_at > :since8d AND created_at <= :now
      GROUP BY currency ORDER BY currency`,
    { ws: workspaceId, now, since24h, since8d },
  );
}

export interface CounterpartyAlertRow {
  counterparty_id: string;
  name: string;
  kyb_status: string;
  /** The newest open deal with the counterparty (not cancelled, some milestone unfinished), if any. */
  deal_id: string | null;
  reference: string | null;
  open_deals: number;
  /** The watchlist entry the name matched (watchlist query only). */
  term?: string;
}

/** Per counterparty: its open deals (how many, the newest). */
const OPEN_DEALS = `LEFT JOIN LATERAL (
    SELECT (array_agg(d.id ORDER BY d.created_at DESC, d.id DESC))[1] AS deal_id,
           (array_agg(d.reference ORDER BY d.created_at DESC, d.id DESC))[1] AS reference,
           COUNT(*)::int AS open_deals
      FROM deals d
     WHERE d.workspace_id = c.workspace_id AND d.counterparty_id = c.id AND d.cancelled_at IS NULL
       AND EXISTS (SELECT 1 FROM deal_milestones om WHERE om.deal_id = d.id AND om.status IN ${UNFINISHED})
  ) od ON true`;

/**
 * The watchlist alert's page, read from the stored match (`counterparties.watchlist_term`,
 * kept by triggers when a name or the watchlist changes: migration
 * 20261209090000_counterparty-watchlist-term; issue 42, review R3). Its cost follows what the
 * page shows, never what the workspace holds: the counterparties with open deals are taken
 * from the workspace's open deals (`deal_statuses`, index-only, status neither cancelled nor
 * completed, which is OPEN_DEALS' "not cancelled, some milestone unfinished"), at most
 * `limit` of those that match; those without open deals are read from the partial index of
 * matching counterparties in name order, stopping after `limit`. Counterparties that match
 * nothing are never read. OPEN_DEALS then runs for the page's rows only.
 * Bindings: ws, limit.
 */
export const WATCHLIST_HITS_SQL = `WITH open_cp AS MATERIALIZED (
       SELECT DISTINCT s.counterparty_id FROM deal_statuses s
        WHERE s.workspace_id = :ws AND s.status NOT IN ('cancelled', 'completed')
     ), busy AS (
       -- LATERAL with LIMIT (never flattened into a join the planner may turn around): driven
       -- from the open deals' counterparties (few), each looked up by its id; never
       -- the watchlist index walked in name order until an open one turns up (thousands of
       -- rows when the first open match sorts last: a plan the planner chose under load).
       SELECT c.id, c.name, false AS quiet FROM open_cp o
        CROSS JOIN LATERAL (SELECT c.id, c.name FROM counterparties c
                             WHERE c.id = o.counterparty_id AND c.workspace_id = :ws AND c.watchlist_term IS NOT NULL
                             LIMIT 1) c
        ORDER BY c.name, c.id LIMIT :limit
     ), quiet AS (
       SELECT c.id, c.name, true AS quiet FROM counterparties c
        WHERE c.workspace_id = :ws AND c.watchlist_term IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM open_cp o WHERE o.counterparty_id = c.id)
        ORDER BY c.name, c.id LIMIT :limit
     ), page AS (
       SELECT * FROM busy UNION ALL SELECT * FROM quiet ORDER BY quiet, name, id LIMIT :limit
     )
     SELECT c.id AS counterparty_id, c.name, c.kyb_status, od.deal_id, od.reference, od.open_deals, c.watchlist_term AS term
       FROM page JOIN counterparties c ON c.id = page.id
       ${OPEN_DEALS}
      ORDER BY (od.open_deals = 0), c.name, c.id`;

/**
 * Counterparties whose name contains an entry of the watchlist (case-insensitive; blank
 * entries ignored; the first entry in the watchlist's order that matches): those with open
 * deals first, then by name. An empty watchlist matches nothing (and no stored term is left).
 */
export function watchlistHits(trx: Db, workspaceId: string, watchlist: string[], limit: number): Promise<CounterpartyAlertRow[]> {
  if (watchlist.length === 0) return Promise.resolve([]);
  return rows(trx, WATCHLIST_HITS_SQL, { ws: workspaceId, limit });
}

/** Counterparties with open deals that are not KYB-verified, by name. */
export function unverifiedCounterparties(trx: Db, workspaceId: string, limit: number): Promise<CounterpartyAlertRow[]> {
  return rows(
    trx,
    `SELECT c.id AS counterparty_id, c.name, c.kyb_status, od.deal_id, od.reference, od.open_deals
       FROM counterparties c
       ${OPEN_DEALS}
      WHERE c.workspace_id = :ws AND c.kyb_status <> 'verified' AND od.open_deals > 0
      ORDER BY c.name, c.id LIMIT :limit`,
    { ws: workspaceId, limit },
  );
}
