/**
 * The audit export (enterprise spec 4.9: finance, 5 per minute; shape not shown, see
 * decision 0011). The request stores a pending export and its outbox job in one
 * transaction; the exports worker builds the CSV from the event feed (oldest first, at
 * most 10,000 rows, `truncated` when more existed) and stores it once; the caller
 * fetches it with the export id. A re-run job finds the export ready and does nothing.
 */
import { clock } from '../clock.js';
import { db, type Db } from '../db.js';
import { errors } from '../errors.js';
import { isUuid } from '../ids.js';
import { enqueue } from '../outbox.js';
import type { EventRow } from './events.js';
import type { Actor } from './service.js';

export const EXPORT_ROW_LIMIT = 10_000;
export const MAX_RANGE_DAYS = 366;
export const DEFAULT_RANGE_DAYS = 90;

export interface ExportRow {
  id: string;
  workspace_id: string;
  requested_by: string;
  kind: 'audit';
  range_from: string;
  range_to: string;
  status: 'pending' | 'ready';
  csv: string | null;
  row_count: number | null;
  truncated: boolean;
  created_at: Date;
  finished_at: Date | null;
}

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function parseDay(value: string, field: string): number {
  const m = DATE.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    throw errors.invalidQuery({ formErrors: [], fieldErrors: { [field]: ['must be a date YYYY-MM-DD'] } });
  }
  return ms;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** from/to as YYYY-MM-DD UTC, both included; default the last 90 days ending today; at most 366 days. */
export function parseRange(q: { from?: string; to?: string }): { from: string; to: string } {
  const today = Date.UTC(clock.now().getUTCFullYear(), clock.now().getUTCMonth(), clock.now().getUTCDate());
  const to = q.to ? parseDay(q.to, 'to') : today;
  const from = q.from ? parseDay(q.from, 'from') : to - (DEFAULT_RANGE_DAYS - 1) * DAY_MS;
  if (from > to) throw errors.invalidQuery({ formErrors: ['from is after to'], fieldErrors: {} });
  if ((to - from) / DAY_MS + 1 > MAX_RANGE_DAYS) {
    throw errors.invalidQuery({ formErrors: [`the range is longer than ${MAX_RANGE_DAYS} days`], fieldErrors: {} });
  }
  return { from: day(from), to: day(to) };
}

export async function requestAuditExport(actor: Actor, range: { from: string; to: string }): Promise<ExportRow> {
  return db.transaction(async (trx) => {
    const [row] = await trx('enterprise_exports')
      .insert({
        workspace_id: actor.workspaceId,
        requested_by: actor.userId,
        kind: 'audit',
        range_from: range.from,
        range_to: range.to,
        created_at: clock.now(),
      })
      .returning<ExportRow[]>('*');
    await enqueue(trx, 'exports.audit-csv', { export_id: row!.id });
    return row!;
  });
}

/** An export of this workspace, or 404 NOT_FOUND. */
export async function exportOf(workspaceId: string, id: string): Promise<ExportRow> {
  const row = isUuid(id) ? ((await db('enterprise_exports').where({ id, workspace_id: workspaceId }).first()) as ExportRow | undefined) : undefined;
  if (!row) throw errors.notFound({ en: 'No export with this id in the workspace', id: 'Tidak ada ekspor dengan id ini di workspace' });
  return row;
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

/** A `date` column as YYYY-MM-DD (node-postgres answers a Date at local midnight of that day). */
export function dateString(v: unknown): string {
  if (!(v instanceof Date)) return String(v);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${v.getFullYear()}-${pad(v.getMonth() + 1)}-${pad(v.getDate())}`;
}

/** The worker's step: builds and stores the CSV once. */
export async function buildAuditExport(exportId: string, knex: Db = db): Promise<{ status: 'built' | 'already'; rows?: number }> {
  const exp = (await knex('enterprise_exports').where({ id: exportId }).first()) as ExportRow | undefined;
  if (!exp) throw new Error(`export ${exportId} not found`);
  if (exp.status === 'ready') return { status: 'already' };
  const from = new Date(`${dateString(exp.range_from)}T00:00:00.000Z`);
  const to = new Date(new Date(`${dateString(exp.range_to)}T00:00:00.000Z`).getTime() + DAY_MS);
  const events = (await knex('workspace_events')
    .where({ workspace_id: exp.workspace_id })
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .orderBy('seq', 'asc')
    .limit(EXPORT_ROW_LIMIT + 1)) as EventRow[];
  const truncated = events.length > EXPORT_ROW_LIMIT;
  const rows = events.slice(0, EXPORT_ROW_LIMIT);
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
  const updated = await knex('enterprise_exports')
    .where({ id: exportId, status: 'pending' })
    .update({ status: 'ready', csv: `${lines.join('\r\n')}\r\n`, row_count: rows.length, truncated, finished_at: clock.now() });
  return updated ? { status: 'built', rows: rows.length } : { status: 'already' };
}
