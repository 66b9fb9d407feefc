/**
 * SQL of the enterprise reconciliation (enterprise spec 4.9 `GET /reconciliation`; decision
 * 0020 "Overview and reconciliation"; the accounts of decision 0019 and
 * shared/payouts/postings.ts).
 *
 * Per milestone of the workspace, two sets of the same seven figures:
 *  - the ledger's: the balance of its own account `milestone:<id>` (held), and the lines of
 *    the shared accounts (enterprise:funding_received, enterprise:buyer_fees_held,
 *    enterprise:payouts_in_flight, enterprise:payouts_sent, platform:enterprise_fees,
 *    enterprise:refunds_sent) in the journal entries whose reference is the milestone
 *    (`deal_milestone`) or one of its payouts (`disbursement`): the shared accounts are
 *    global, so a workspace's part of them is what its own entries moved;
 *  - the figures the deals and payouts imply (live deals only: sandbox money never reaches
 *    the ledger, spec 4.5 rule 4): funded = funding_amount once funded; held = amount less
 *    refunds while held, what failed payouts brought back once released; buyer fees held
 *    while held; in flight = its queued and processing payouts; paid out = its settled
 *    payouts; fees = the platform fee shares once released; refunds = what rulings refunded
 *    (and the buyer fee with a full refund).
 * Both sides of a milestone are worked out in one statement (one snapshot) and kept in
 * `reconciliation_figures` (migration 20261210000100): the read adds up what is kept, after the
 * service has worked out again every milestone a write marked since (service.ts).
 */
import type { Db } from '../db.js';

export const FIGURES = ['funded', 'held', 'buyer_fees_held', 'in_flight', 'paid_out', 'fees', 'refunds'] as const;
export type Figure = (typeof FIGURES)[number];
export type Figures = Record<Figure, number>;

type Pairs = { [F in Figure as `l_${F}` | `d_${F}`]: number };

export interface ReconRow extends Pairs {
  row_kind: 'total' | 'milestone';
  currency: string;
  milestone_id: string | null;
  deal_id: string | null;
  deal_reference: string | null;
  sequence_no: number | null;
  is_test: boolean | null;
}

const HELD = `('funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed')`;

const ledgerCols = FIGURES.map((f) => `l_${f}`);
const derivedCols = FIGURES.map((f) => `d_${f}`);
const sums = [...ledgerCols, ...derivedCols].map((c) => `COALESCE(SUM(${c}), 0)::bigint AS ${c}`).join(', ');
const casts = [...ledgerCols, ...derivedCols].map((c) => `f.${c}::bigint AS ${c}`).join(', ');

/** Milestones of the workspace by id after `afterId`, at most `limit` (the nightly pass works every one out again). */
export async function milestoneIds(trx: Db, workspaceId: string, afterId: string | null, limit: number): Promise<string[]> {
  const q = trx('deal_milestones').where({ workspace_id: workspaceId }).orderBy('id').limit(limit).pluck<string[]>('id');
  if (afterId) q.where('id', '>', afterId);
  return q;
}

export interface Mark {
  id: string;
  milestone_id: string;
}

/** The workspace's marks (writes since its figures were worked out) by id after `afterId`, at most `limit`. */
export async function marks(trx: Db, workspaceId: string, afterId: string | null, limit: number): Promise<Mark[]> {
  const q = trx('reconciliation_marks').where({ workspace_id: workspaceId }).orderBy('id').limit(limit).select<Mark[]>('id', 'milestone_id');
  if (afterId) q.where('id', '>', afterId);
  return q;
}

/** Deletes the marks read and dealt with (by id: a mark committed meanwhile stays for the next pass). */
export async function deleteMarks(trx: Db, workspaceId: string, ids: readonly string[]): Promise<void> {
  await trx('reconciliation_marks').where({ workspace_id: workspaceId }).whereIn('id', ids).delete();
}

/**
 * Serialises the writers of one workspace's figures until the transaction ends, so figures
 * are stored in the order they were worked out (a pass never overwrites a newer one).
 */
export async function lockFigures(trx: Db, workspaceId: string): Promise<void> {
  await trx.raw(`SELECT pg_advisory_xact_lock(hashtextextended('reconciliation:' || ?, 0))`, [workspaceId]);
}

/**
 * Works out both sides of the given milestones of the workspace in one statement (one
 * snapshot: a release committing meanwhile cannot show as a difference) and stores them in
 * `reconciliation_figures`. Returns how many were stored.
 */
export async function storeFigures(trx: Db, workspaceId: string, milestoneIds: readonly string[], at: Date): Promise<number> {
  if (milestoneIds.length === 0) return 0;
  const result = await trx.raw<{ rowCount: number }>(
    `WITH ms AS (
       SELECT m.id, m.deal_id, d.currency, d.is_test, m.status, m.amount, m.refunded_amount,
              m.returned_amount, m.buyer_fee, m.seller_fee, m.funding_amount, m.funded_at, m.ruling
         FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
        WHERE m.workspace_id = :ws AND m.id = ANY(:ids::uuid[])
     ), refs AS (
       SELECT ms.id AS milestone_id, 'deal_milestone'::text AS ref_type, ms.id::text AS ref_id FROM ms
       UNION ALL
       SELECT b.milestone_id, 'disbursement'::text, b.id::text FROM disbursements b WHERE b.milestone_id = ANY(:ids::uuid[]) AND b.workspace_id = :ws
     ), led AS (
       SELECT r.milestone_id,
              -COALESCE(SUM(l.amount) FILTER (WHERE (a.code = 'enterprise:funding_received' OR starts_with(a.code, 'enterprise:funding_received:'))), 0) AS funded,
              COALESCE(SUM(l.amount) FILTER (WHERE (a.code = 'enterprise:buyer_fees_held' OR starts_with(a.code, 'enterprise:buyer_fees_held:'))), 0) AS buyer_fees_held,
              COALESCE(SUM(l.amount) FILTER (WHERE (a.code = 'enterprise:payouts_in_flight' OR starts_with(a.code, 'enterprise:payouts_in_flight:'))), 0) AS in_flight,
              COALESCE(SUM(l.amount) FILTER (WHERE (a.code = 'enterprise:payouts_sent' OR starts_with(a.code, 'enterprise:payouts_sent:'))), 0) AS paid_out,
              COALESCE(SUM(l.amount) FILTER (WHERE (a.code = 'platform:enterprise_fees' OR starts_with(a.code, 'platform:enterprise_fees:'))), 0) AS fees,
              COALESCE(SUM(l.amount) FILTER (WHERE (a.code = 'enterprise:refunds_sent' OR starts_with(a.code, 'enterprise:refunds_sent:'))), 0) AS refunds
         FROM refs r
         JOIN ms ON ms.id = r.milestone_id
         JOIN journal_entries e ON e.ref_type = r.ref_type AND e.ref_id = r.ref_id
         JOIN journal_lines l ON l.entry_id = e.id
         -- Each enterprise account in the milestone's currency (decision 0023): a line in another currency is a difference.
         JOIN ledger_accounts a ON a.id = l.account_id AND a.currency = ms.currency
        GROUP BY r.milestone_id
     ), pay AS (
       SELECT milestone_id,
              COALESCE(SUM(amount) FILTER (WHERE status IN ('queued', 'processing')), 0) AS in_flight,
              COALESCE(SUM(amount) FILTER (WHERE status = 'settled'), 0) AS paid_out
         FROM disbursements WHERE milestone_id = ANY(:ids::uuid[]) AND workspace_id = :ws GROUP BY milestone_id
     ), per AS (
       SELECT ms.id AS milestone_id, ms.currency,
              COALESCE(led.funded, 0) AS l_funded,
              COALESCE(acc.balance, 0) AS l_held,
              COALESCE(led.buyer_fees_held, 0) AS l_buyer_fees_held,
              COALESCE(led.in_flight, 0) AS l_in_flight,
              COALESCE(led.paid_out, 0) AS l_paid_out,
              COALESCE(led.fees, 0) AS l_fees,
              COALESCE(led.refunds, 0) AS l_refunds,
              CASE WHEN ms.is_test OR ms.funded_at IS NULL THEN 0 ELSE ms.funding_amount END AS d_funded,
              CASE WHEN ms.is_test THEN 0
                   WHEN ms.status IN ${HELD} THEN ms.amount - ms.refunded_amount
                   WHEN ms.status = 'released' THEN ms.returned_amount ELSE 0 END AS d_held,
              CASE WHEN NOT ms.is_test AND ms.status IN ${HELD} THEN ms.buyer_fee ELSE 0 END AS d_buyer_fees_held,
              CASE WHEN ms.is_test THEN 0 ELSE COALESCE(pay.in_flight, 0) END AS d_in_flight,
              CASE WHEN ms.is_test THEN 0 ELSE COALESCE(pay.paid_out, 0) END AS d_paid_out,
              CASE WHEN NOT ms.is_test AND ms.status = 'released' THEN ms.buyer_fee + ms.seller_fee ELSE 0 END AS d_fees,
              CASE WHEN ms.is_test THEN 0 ELSE ms.refunded_amount + CASE WHEN ms.ruling = 'refund' THEN ms.buyer_fee ELSE 0 END END AS d_refunds
         FROM ms
         LEFT JOIN led ON led.milestone_id = ms.id
         LEFT JOIN pay ON pay.milestone_id = ms.id
         LEFT JOIN ledger_accounts acc ON acc.code = 'milestone:' || ms.id::text AND acc.currency = ms.currency
     )
     INSERT INTO reconciliation_figures AS f (milestone_id, workspace_id, currency, ${[...ledgerCols, ...derivedCols].join(', ')}, differs, computed_at)
     SELECT milestone_id, :ws, currency, ${[...ledgerCols, ...derivedCols].join(', ')},
            (${ledgerCols.join(', ')}) IS DISTINCT FROM (${derivedCols.join(', ')}), :at
       FROM per
     ON CONFLICT (milestone_id) DO UPDATE SET
       currency = EXCLUDED.currency, ${[...ledgerCols, ...derivedCols].map((c) => `${c} = EXCLUDED.${c}`).join(', ')},
       differs = EXCLUDED.differs, computed_at = EXCLUDED.computed_at`,
    { ws: workspaceId, ids: milestoneIds, at },
  );
  return result.rowCount;
}

/** The stored figures of the workspace: totals per currency (every currency of its deals) and the milestones whose figures differ, by deal reference and milestone number. */
export async function storedRows(trx: Db, workspaceId: string): Promise<ReconRow[]> {
  const result = await trx.raw<{ rows: ReconRow[] }>(
    `SELECT * FROM (
       SELECT 'total' AS row_kind, currency, NULL::uuid AS milestone_id, NULL::uuid AS deal_id, NULL::text AS deal_reference,
              NULL::int AS sequence_no, NULL::boolean AS is_test, ${sums}
         FROM reconciliation_figures WHERE workspace_id = :ws GROUP BY currency
       UNION ALL
       SELECT 'milestone', f.currency, f.milestone_id, m.deal_id, d.reference, m.sequence_no, d.is_test, ${casts}
         FROM reconciliation_figures f JOIN deal_milestones m ON m.id = f.milestone_id JOIN deals d ON d.id = m.deal_id
        WHERE f.workspace_id = :ws AND f.differs
     ) x
     ORDER BY row_kind DESC, currency, deal_reference, sequence_no`,
    { ws: workspaceId },
  );
  return result.rows;
}

/** Workspaces that have deal milestones (the only ones with anything to reconcile), by id, after `afterId`, at most `limit`. */
export async function workspacesWithDeals(trx: Db, afterId: string | null, limit: number): Promise<{ id: string; display_name: string }[]> {
  const q = trx('workspaces as w')
    .whereExists(trx('deal_milestones as m').whereRaw('m.workspace_id = w.id').select(trx.raw('1')))
    .orderBy('w.id')
    .limit(limit)
    .select('w.id', 'w.display_name');
  if (afterId) q.where('w.id', '>', afterId);
  return (await q) as { id: string; display_name: string }[];
}

export interface RunRow {
  id: string;
  /** The UTC day of the run (YYYY-MM-DD when written). */
  run_on: Date | string;
  workspaces_checked: number;
  workspaces_with_differences: number;
  differences: number;
  staff_alerted: number;
  created_at: Date;
}

/** Records the day's nightly run; undefined when that day already has one (the job ran twice). */
export async function insertRun(trx: Db, row: Omit<RunRow, 'id' | 'staff_alerted'> & { summary: string }): Promise<RunRow | undefined> {
  const [inserted] = (await trx('enterprise_reconciliation_runs').insert(row).onConflict('run_on').ignore().returning('*')) as RunRow[];
  return inserted;
}

export async function markAlerted(trx: Db, runId: string, staff: number): Promise<void> {
  await trx('enterprise_reconciliation_runs').where({ id: runId }).update({ staff_alerted: staff });
}
