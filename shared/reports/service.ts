/**
 * Reports (enterprise spec 4.8; decision 0020 "Reports"): the summary of a range and the
 * deals and disbursements CSV exports. The range is `from`/`to` as YYYY-MM-DD UTC, both
 * days included, by default the last 90 days ending today, at most 366 days (400
 * INVALID_QUERY otherwise: shared/enterprise/exports.ts parseRange).
 *
 * Every summary figure is an SQL aggregate (repo.ts), read in one repeatable-read snapshot
 * so the figures agree with each other; nothing loads the workspace's deals.
 */
import { db } from '../db.js';
import { DEAL_STATUSES, type DealStatus } from '../deals/states.js';
import type { WorkspaceActor } from '../enterprise/access.js';
import { csvExport, parseRange, rangeBounds, type DayRange, type ExportRow } from '../enterprise/exports.js';
import * as repo from './repo.js';
import type { ExportQuery, SummaryQuery } from './schemas.js';

export const TOP_COUNTERPARTIES = 10;

export interface Summary {
  range: DayRange;
  deals: { created: number; byStatus: Record<DealStatus, number> };
  /** The money figures are in one currency (the query's, IDR by default; decision 0023). */
  currency: string;
  money: { funded: number; released: number; queued: number };
  approvals: { medianHours: number | null; decided: number; revisions: number };
  disputes: { opened: number; resolved: number; ratePct: number };
  topCounterparties: repo.CounterpartyFigures[];
  monthly: repo.MonthFigures[];
}

/** One decimal place. */
const tenth = (x: number): number => Math.round(x * 10) / 10;

/**
 * Disputes opened per milestone funded in the range, in percent (one decimal), at most
 * 100 (disputes of milestones funded before the range can outnumber those funded in it);
 * 0 when nothing was funded or disputed, 100 when something was disputed but nothing funded.
 */
export function disputeRatePct(opened: number, funded: number): number {
  if (funded === 0) return opened > 0 ? 100 : 0;
  return Math.min(100, tenth((opened / funded) * 100));
}

/** GET /reports/summary. */
export async function summary(actor: WorkspaceActor, q: SummaryQuery): Promise<Summary> {
  const range = parseRange(q);
  const currency = q.currency ?? 'IDR';
  const b = rangeBounds(range);
  const ws = actor.workspaceId;
  return db.transaction(
    async (trx) => {
      const counted = await repo.dealCounts(trx, ws, b);
      const byStatus = Object.fromEntries(DEAL_STATUSES.map((s) => [s, counted.byStatus.get(s) ?? 0])) as Record<DealStatus, number>;
      const ev = await repo.eventFigures(trx, ws, b, currency);
      const median = await repo.medianApprovalHours(trx, ws, b);
      return {
        range,
        deals: { created: DEAL_STATUSES.reduce((n, s) => n + byStatus[s], 0), byStatus },
        currency,
        money: { funded: ev.funded, released: ev.released, queued: await repo.queuedPayouts(trx, ws, currency) },
        approvals: { medianHours: median === null ? null : tenth(median), decided: ev.approved + ev.revisions, revisions: ev.revisions },
        disputes: { opened: ev.disputesOpened, resolved: ev.disputesResolved, ratePct: disputeRatePct(ev.disputesOpened, ev.fundedCount) },
        topCounterparties: await repo.topCounterparties(trx, ws, b, currency, counted.byCounterparty, TOP_COUNTERPARTIES),
        monthly: await repo.monthly(trx, ws, b, currency),
      };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

/** GET /reports/deals.csv: a new export of the range, or the one named by `export_id`. */
export const dealsExport = (actor: WorkspaceActor, q: ExportQuery): Promise<ExportRow> => csvExport(actor, 'deals', q);

/** GET /reports/disbursements.csv: a new export of the range, or the one named by `export_id`. */
export const disbursementsExport = (actor: WorkspaceActor, q: ExportQuery): Promise<ExportRow> => csvExport(actor, 'disbursements', q);
