/**
 * SQL of the reports (enterprise spec 4.8; decision 0020 "Reports"): the summary's
 * aggregates (every figure computed by Postgres over the rollups the triggers of migration
 * 20261207000100 keep: `deal_statuses`, `report_event_days`, `report_approvals`; no deal
 * is loaded into memory) and the
 * pages of the deals and disbursements exports. Every query is bounded by the workspace;
 * `from`/`to` are the range's instants [from, to).
 */
import type { Db } from '../db.js';
import { dealStatusSql } from '../deals/status-sql.js';
import { HELD, type DealStatus } from '../deals/states.js';

export interface Bounds {
  from: Date;
  to: Date;
}

/** NUMERIC sums arrive as text (shared/db.ts); money sums are whole rupiah within the safe range. */
const whole = (v: string | number | null | undefined): number => (v === null || v === undefined ? 0 : Number(v));

/** The range's UTC days as dates, [fromDay, toDay): bounds of a DayRange are always UTC midnights. */
function days(b: Bounds): [string, string] {
  return [b.from.toISOString().slice(0, 10), b.to.toISOString().slice(0, 10)];
}

export interface DealCounts {
  /** Deals created in the range by their status now. */
  byStatus: Map<DealStatus, number>;
  /** Deals created in the range by counterparty id. */
  byCounterparty: Map<string, number>;
}

/** Deals created in the range, counted by status and by counterparty in one scan of `deal_statuses` (kept by triggers). */
export async function dealCounts(trx: Db, workspaceId: string, b: Bounds): Promise<DealCounts> {
  const { rows } = await trx.raw<{ rows: { status: DealStatus; counterparty_id: string; n: number }[] }>(
    `SELECT status, counterparty_id, count(*)::int AS n FROM deal_statuses
      WHERE workspace_id = ? AND created_at >= ? AND created_at < ?
      GROUP BY status, counterparty_id`,
    [workspaceId, b.from, b.to],
  );
  const byStatus = new Map<DealStatus, number>();
  const byCounterparty = new Map<string, number>();
  for (const r of rows) {
    byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + r.n);
    byCounterparty.set(r.counterparty_id, (byCounterparty.get(r.counterparty_id) ?? 0) + r.n);
  }
  return { byStatus, byCounterparty };
}

export interface EventFigures {
  funded: number;
  fundedCount: number;
  released: number;
  approved: number;
  revisions: number;
  disputesOpened: number;
  disputesResolved: number;
}

/**
 * The feed's figures in the range (`report_event_days`): sums of the funded and released
 * events' amounts of the deals in `currency` (amounts of two currencies are never added;
 * decision 0023), counts of the others over every deal.
 */
export async function eventFigures(trx: Db, workspaceId: string, b: Bounds, currency: string): Promise<EventFigures> {
  const { rows } = await trx.raw<{ rows: Record<string, string | number | null>[] }>(
    `SELECT sum(funded) FILTER (WHERE currency = ?) AS funded, sum(funded_count) AS funded_count,
            sum(released) FILTER (WHERE currency = ?) AS released, sum(approved) AS approved,
            sum(revisions) AS revisions, sum(disputed) AS disputes_opened, sum(resolved) AS disputes_resolved
       FROM report_event_days
      WHERE workspace_id = ? AND day >= ?::date AND day < ?::date`,
    [currency, currency, workspaceId, ...days(b)],
  );
  const r = rows[0]!;
  return {
    funded: whole(r.funded),
    fundedCount: whole(r.funded_count),
    released: whole(r.released),
    approved: whole(r.approved),
    revisions: whole(r.revisions),
    disputesOpened: whole(r.disputes_opened),
    disputesResolved: whole(r.disputes_resolved),
  };
}

/**
 * The median, in hours, from a milestone's evidence submission to the decision that
 * approved it, over approvals in the range; null without any. `report_approvals` keeps
 * each milestone.approved event's hours as of its writing (an approved round is always the
 * milestone's last: nothing submits evidence after an approval, so they never change).
 */
export async function medianApprovalHours(trx: Db, workspaceId: string, b: Bounds): Promise<number | null> {
  const { rows } = await trx.raw<{ rows: { median: number | null }[] }>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY hours) AS median
       FROM report_approvals
      WHERE workspace_id = ? AND approved_at >= ? AND approved_at < ?`,
    [workspaceId, b.from, b.to],
  );
  const median = rows[0]?.median;
  return median === null || median === undefined ? null : Number(median);
}

/** Money in payouts of `currency` queued or processing now (any range). */
export async function queuedPayouts(trx: Db, workspaceId: string, currency: string): Promise<number> {
  const { rows } = await trx.raw<{ rows: { queued: string | null }[] }>(
    `SELECT sum(amount) AS queued FROM disbursements WHERE workspace_id = ? AND status IN ('queued', 'processing') AND currency = ?`,
    [workspaceId, currency],
  );
  return whole(rows[0]?.queued);
}

export interface CounterpartyFigures {
  id: string;
  name: string;
  deals: number;
  released: number;
}

/**
 * Up to `limit` counterparties by money released to them in the range in `currency` (one
 * currency: decision 0023) (their deals'
 * milestone.released events), then by deals created with them in the range (`created`, from
 * dealCounts), then by name; only counterparties with a deal created or a release in the range.
 */
export async function topCounterparties(trx: Db, workspaceId: string, b: Bounds, currency: string, created: ReadonlyMap<string, number>, limit: number): Promise<CounterpartyFigures[]> {
  const [fromDay, toDay] = days(b);
  const { rows } = await trx.raw<{ rows: { id: string; name: string; deals: number; released: string | null }[] }>(
    `WITH created AS (
        SELECT * FROM unnest(?::uuid[], ?::int[]) AS t(counterparty_id, deals)
     ), released AS (
        SELECT counterparty_id, sum(released) AS released FROM report_event_days
         WHERE workspace_id = ? AND day >= ?::date AND day < ?::date AND released > 0 AND currency = ?
         GROUP BY counterparty_id
     )
     SELECT c.id, c.name, coalesce(cr.deals, 0) AS deals, coalesce(r.released, 0) AS released
       FROM counterparties c
       LEFT JOIN created cr ON cr.counterparty_id = c.id
       LEFT JOIN released r ON r.counterparty_id = c.id
      WHERE c.workspace_id = ? AND (cr.counterparty_id IS NOT NULL OR r.counterparty_id IS NOT NULL)
      ORDER BY coalesce(r.released, 0) DESC, coalesce(cr.deals, 0) DESC, c.name, c.id
      LIMIT ?`,
    [[...created.keys()], [...created.values()], workspaceId, fromDay, toDay, currency, workspaceId, limit],
  );
  return rows.map((r) => ({ id: r.id, name: r.name, deals: r.deals, released: whole(r.released) }));
}

export interface MonthFigures {
  month: string;
  created: number;
  funded: number;
  released: number;
  disputed: number;
}

/**
 * One bucket per calendar month (UTC) the range touches, oldest first, each over the part
 * of the month inside the range: deals created (a count of the month's slice of the
 * `deal_statuses` index: no per-row date arithmetic), funded and released amounts of the
 * deals in `currency` (event sums; decision 0023), milestones disputed (events).
 */
export async function monthly(trx: Db, workspaceId: string, b: Bounds, currency: string): Promise<MonthFigures[]> {
  const [fromDay, toDay] = days(b);
  const { rows } = await trx.raw<{ rows: { month: string; created: number; funded: string | null; released: string | null; disputed: string | null }[] }>(
    `WITH months AS (
        SELECT generate_series(date_trunc('month', ?::timestamp), date_trunc('month', ?::timestamp - interval '1 day'), interval '1 month') AS month
     ), ev AS (
        SELECT date_trunc('month', day::timestamp) AS month, sum(funded) FILTER (WHERE currency = ?) AS funded,
               sum(released) FILTER (WHERE currency = ?) AS released, sum(disputed) AS disputed
          FROM report_event_days
         WHERE workspace_id = ? AND day >= ?::date AND day < ?::date
         GROUP BY 1
     )
     SELECT to_char(months.month, 'YYYY-MM') AS month,
            (SELECT count(*)::int FROM deal_statuses
              WHERE workspace_id = ? AND created_at >= greatest(months.month AT TIME ZONE 'UTC', ?::timestamptz)
                AND created_at < least((months.month + interval '1 month') AT TIME ZONE 'UTC', ?::timestamptz)) AS created,
            ev.funded, ev.released, ev.disputed
       FROM months LEFT JOIN ev USING (month)
      ORDER BY months.month`,
    [fromDay, toDay, currency, currency, workspaceId, fromDay, toDay, workspaceId, b.from, b.to],
  );
  return rows.map((r) => ({ month: r.month, created: r.created, funded: whole(r.funded), released: whole(r.released), disputed: whole(r.disputed) }));
}

// ---- Export pages (keyset: created_at as Postgres text, so microseconds are never lost) ----

export interface DealExportRow {
  id: string;
  cursor_at: string;
  reference: string;
  title: string;
  counterparty: string;
  status: DealStatus;
  currency: string;
  total_amount: string | null;
  funded_amount: string | null;
  released_amount: string | null;
  external_ref: string | null;
  created_at: Date;
  updated_at: Date;
  fee_rate_bp: number | null;
  platform_fee: number | null;
  fee_buyer_percent: number | null;
  buyer_fee: number | null;
  seller_fee: number | null;
}

const heldOrReleased = [...HELD, 'released'];

/**
 * Deals created in the range after `after`, oldest first, at most `limit`, with their
 * status and totals computed from their milestones as the deal answers compute them
 * (shared/deals/serialize.ts: live milestones; funded = held or released; released less
 * what a split ruling refunded).
 */
export async function dealExportPage(trx: Db, workspaceId: string, b: Bounds, after: { cursor_at: string; id: string } | undefined, limit: number): Promise<DealExportRow[]> {
  const { rows } = await trx.raw<{ rows: DealExportRow[] }>(
    `SELECT d.id, d.created_at::text AS cursor_at, d.reference, d.title, c.name AS counterparty, ${dealStatusSql('d', 'm')} AS status, d.currency,
            sum(m.amount) FILTER (WHERE m.status <> 'cancelled') AS total_amount,
            sum(m.amount) FILTER (WHERE m.status = ANY(?)) AS funded_amount,
            sum(m.amount - m.refunded_amount) FILTER (WHERE m.status = 'released') AS released_amount,
            d.external_ref, d.created_at, d.updated_at,
            d.fee_rate_bp, d.platform_fee, d.fee_buyer_percent, d.buyer_fee, d.seller_fee
       FROM deals d
       JOIN counterparties c ON c.id = d.counterparty_id
       LEFT JOIN deal_milestones m ON m.deal_id = d.id
      WHERE d.workspace_id = ? AND d.created_at >= ? AND d.created_at < ?
        AND (?::timestamptz IS NULL OR (d.created_at, d.id) > (?::timestamptz, ?::uuid))
      GROUP BY d.id, c.name
      ORDER BY d.created_at, d.id
      LIMIT ?`,
    [heldOrReleased, workspaceId, b.from, b.to, after?.cursor_at ?? null, after?.cursor_at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

export interface DisbursementExportRow {
  id: string;
  cursor_at: string;
  milestone_id: string;
  release_no: number;
  split_no: number;
  created_at: Date;
  deal: string;
  milestone: string;
  instruction: string;
  bank: string;
  account_number_last4: string;
  amount: number;
  currency: string;
  status: string;
  settled_at: Date | null;
  failure_reason: string | null;
}

/**
 * Payouts created in the range after `after`, oldest first (the splits of a release in their
 * order), at most `limit`. The instruction, bank and account are where each payout was
 * released to (kept on the payout, issue 42), not its instruction's current destination.
 */
export async function disbursementExportPage(
  trx: Db,
  workspaceId: string,
  b: Bounds,
  after: Pick<DisbursementExportRow, 'cursor_at' | 'milestone_id' | 'release_no' | 'split_no'> | undefined,
  limit: number,
): Promise<DisbursementExportRow[]> {
  const { rows } = await trx.raw<{ rows: DisbursementExportRow[] }>(
    `SELECT b.id, b.created_at::text AS cursor_at, b.milestone_id, b.release_no, b.split_no, b.created_at,
            d.reference AS deal, m.title AS milestone, b.instruction_label AS instruction, b.destination_bank_name AS bank,
            b.destination_account_last4 AS account_number_last4, b.amount, b.currency, b.status, b.settled_at, b.failure_reason
       FROM disbursements b
       JOIN deals d ON d.id = b.deal_id
       JOIN deal_milestones m ON m.id = b.milestone_id
      WHERE b.workspace_id = ? AND b.created_at >= ? AND b.created_at < ?
        AND (?::timestamptz IS NULL OR (b.created_at, b.milestone_id, b.release_no, b.split_no) > (?::timestamptz, ?::uuid, ?::int, ?::int))
      ORDER BY b.created_at, b.milestone_id, b.release_no, b.split_no
      LIMIT ?`,
    [workspaceId, b.from, b.to, after?.cursor_at ?? null, after?.cursor_at ?? null, after?.milestone_id ?? null, after?.release_no ?? null, after?.split_no ?? null, limit],
  );
  return rows;
}
