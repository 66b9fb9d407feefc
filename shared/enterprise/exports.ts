/**
 * The audit export (enterprise spec 4.9: finance, 5 per minute; shape not shown, see
 * decision 0011). The request stores a pending export and its outbox job in one
 * transaction; the exports worker builds the CSV from the event feed (oldest first, at
 * most 10,000 rows, `truncated` when more existed) and stores it once; the caller
 * fetches it with the export id. A re-run job finds the export ready and does nothing.
 */
import { clock } from '../clock.js';
import { db, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { enqueue } from '../outbox.js';
import type { WorkspaceActor } from './access.js';
import { enterpriseErrors } from './errors.js';
import * as events from './events-repo.js';
import * as repo from './exports-repo.js';
import { dateString, type ExportRow } from './exports-repo.js';

export { dateString, type ExportRow } from './exports-repo.js';

export const EXPORT_ROW_LIMIT = 10_000;
export const MAX_RANGE_DAYS = 366;
export const DEFAULT_RANGE_DAYS = 90;

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function parseDay(value: string, field: string): number {
  const m = DATE.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    throw enterpriseErrors.invalidDate(field);
  }
  return ms;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** from/to as YYYY-MM-DD UTC, both included; default the last 90 days ending today; at most 366 days. */
export function parseRange(q: { from?: string; to?: string }): { from: string; to: string } {
  const today = Date.UTC(clock.now().getUTCFullYear(), clock.now().getUTCMonth(), clock.now().getUTCDate());
  const to = q.to ? parseDay(q.to, 'to') : today;
  const from = q.from ? parseDay(q.from, 'from') : to - (DEFAULT_RANGE_DAYS - 1) * DAY_MS;
  if (from > to) throw enterpriseErrors.rangeReversed();
  if ((to - from) / DAY_MS + 1 > MAX_RANGE_DAYS) throw enterpriseErrors.rangeTooLong(MAX_RANGE_DAYS);
  return { from: day(from), to: day(to) };
}

/** Stores a pending export of the range and its outbox job in one transaction. */
export async function requestAuditExport(actor: WorkspaceActor, range: { from: string; to: string }): Promise<ExportRow> {
  return db.transaction(async (trx) => {
    const row = await repo.insertExport(trx, {
      workspace_id: actor.workspaceId,
      requested_by: actor.userId,
      kind: 'audit',
      range_from: range.from,
      range_to: range.to,
      created_at: clock.now(),
    });
    await enqueue(trx, 'exports.audit-csv', { export_id: row.id });
    return row;
  });
}

/** An export of this workspace, or 404 NOT_FOUND. */
export async function exportOf(workspaceId: string, id: string): Promise<ExportRow> {
  const row = isUuid(id) ? await repo.exportOfWorkspace(db, workspaceId, id) : undefined;
  if (!row) throw enterpriseErrors.exportNotFound();
  return row;
}

/**
 * GET /audit/export.csv: without `export_id` a new export of the range (pending), with it
 * that export as it stands (pending, or ready with its CSV).
 */
export async function auditExport(actor: WorkspaceActor, q: { from?: string; to?: string; export_id?: string }): Promise<ExportRow> {
  if (q.export_id === undefined) return requestAuditExport(actor, parseRange(q));
  return exportOf(actor.workspaceId, q.export_id);
}

export const AUDIT_COLUMNS = [
  'seq', 'created_at', 'event', 'entity_type', 'entity_id', 'deal_id', 'deal_reference',
  'actor_id', 'actor_name', 'actor_label', 'amount', 'summary', 'livemode',
] as const;

/** One CSV cell: quoted when needed; a leading = + - @ is defused so spreadsheets do not run it. */
export type Cell = string | number | boolean | Date | null | undefined;

export function csvCell(value: Cell): string {
  if (value === null || value === undefined) return '';
  let text = value instanceof Date ? value.toISOString() : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The worker's step: builds and stores the CSV once. */
export async function buildAuditExport(exportId: string, knex: Db = db): Promise<{ status: 'built' | 'already'; rows?: number }> {
  const exp = await repo.exportById(knex, exportId);
  if (!exp) throw new Error(`export ${exportId} not found`);
  if (exp.status === 'ready') return { status: 'already' };
  const from = new Date(`${dateString(exp.range_from)}T00:00:00.000Z`);
  const to = new Date(new Date(`${dateString(exp.range_to)}T00:00:00.000Z`).getTime() + DAY_MS);
  const found = await events.eventsBetween(knex, exp.workspace_id, from, to, EXPORT_ROW_LIMIT + 1);
  const truncated = found.length > EXPORT_ROW_LIMIT;
  const rows = found.slice(0, EXPORT_ROW_LIMIT);
  const lines = [AUDIT_COLUMNS.join(',')];
  for (const e of rows) {
    const record: Record<(typeof AUDIT_COLUMNS)[number], Cell> = {
      seq: e.seq,
      created_at: e.created_at,
      event: e.event,
      entity_type: e.entity_type,
      entity_id: e.entity_id,
      deal_id: e.deal_id,
      deal_reference: e.deal_reference,
      actor_id: e.actor_id,
      actor_name: e.actor_name,
      actor_label: e.actor_label,
      amount: e.amount,
      summary: e.summary,
      livemode: e.livemode,
    };
    lines.push(AUDIT_COLUMNS.map((c) => csvCell(record[c])).join(','));
  }
  const stored = await repo.storeExport(knex, exportId, { csv: `${lines.join('\r\n')}\r\n`, row_count: rows.length, truncated, finished_at: clock.now() });
  return stored ? { status: 'built', rows: rows.length } : { status: 'already' };
}
