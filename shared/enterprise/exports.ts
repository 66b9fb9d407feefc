/**
 * CSV exports built by the exports worker: the audit export (enterprise spec 4.9: finance,
 * 5 per minute; shape not shown, see decision 0011) and the reports' deals.csv and
 * disbursements.csv (spec 4.8; decision 0020 "Reports", their sources in
 * shared/reports/exports.ts). The request stores a pending export and its outbox job in
 * one transaction; the worker streams the range's rows (oldest first, at most 10,000,
 * `truncated` when more existed) through the CSV writer (csv.ts) into the export's stored
 * parts and marks it ready, once; the caller fetches it with the export id and the API
 * streams the parts back. A re-run job finds the export ready and does nothing.
 */
import { Readable } from 'node:stream';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { db, deleteInBatches, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { enqueue } from '../outbox.js';
import { REPORT_SOURCES } from '../reports/sources.js';
import type { WorkspaceActor } from './access.js';
import { writeCsv, type CsvRecord } from './csv.js';
import { enterpriseErrors } from './errors.js';
import * as events from './events-repo.js';
import * as repo from './exports-repo.js';
import { keyset } from './keyset.js';
import { dateString, type ExportKind, type ExportRow } from './exports-repo.js';

export { dateString, type ExportKind, type ExportRow } from './exports-repo.js';
export { csvCell, type Cell } from './csv.js';

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

export interface DayRange {
  from: string;
  to: string;
}

/** from/to as YYYY-MM-DD UTC, both included; default the last 90 days ending today; at most 366 days. */
export function parseRange(q: { from?: string; to?: string }): DayRange {
  const today = Date.UTC(clock.now().getUTCFullYear(), clock.now().getUTCMonth(), clock.now().getUTCDate());
  const to = q.to ? parseDay(q.to, 'to') : today;
  const from = q.from ? parseDay(q.from, 'from') : to - (DEFAULT_RANGE_DAYS - 1) * DAY_MS;
  if (from > to) throw enterpriseErrors.rangeReversed();
  if ((to - from) / DAY_MS + 1 > MAX_RANGE_DAYS) throw enterpriseErrors.rangeTooLong(MAX_RANGE_DAYS);
  return { from: day(from), to: day(to) };
}

/** The instants of a day range: [from 00:00 UTC, the day after `to` 00:00 UTC). */
export function rangeBounds(r: DayRange): { from: Date; to: Date } {
  return { from: new Date(`${r.from}T00:00:00.000Z`), to: new Date(new Date(`${r.to}T00:00:00.000Z`).getTime() + DAY_MS) };
}

/**
 * What an export is built from: its columns, and its rows created in the range, oldest
 * first, read page by page (keyset) in the build's transaction. The builder stops reading
 * after EXPORT_ROW_LIMIT + 1 rows.
 */
export interface CsvSource<C extends string = string> {
  columns: readonly C[];
  rows(trx: Db, workspaceId: string, range: { from: Date; to: Date }): AsyncIterable<CsvRecord<C>>;
}

const PAGE = 1_000;

export const AUDIT_COLUMNS = [
  'seq', 'created_at', 'event', 'entity_type', 'entity_id', 'deal_id', 'deal_reference',
  'actor_id', 'actor_name', 'actor_label', 'amount', 'summary', 'livemode',
] as const;

/** The audit export: the feed's events created in the range, by seq. */
export const AUDIT_SOURCE: CsvSource<(typeof AUDIT_COLUMNS)[number]> = {
  columns: AUDIT_COLUMNS,
  async *rows(trx, workspaceId, range) {
    const found = keyset(PAGE, (last: events.EventRow | undefined) => events.eventsBetween(trx, workspaceId, range.from, range.to, last ? Number(last.seq) : 0, PAGE));
    for await (const e of found) {
      yield {
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
    }
  },
};

const SOURCES: Record<ExportKind, CsvSource> = { audit: AUDIT_SOURCE, ...REPORT_SOURCES };

/** The job that builds an export of this kind. */
const JOB_OF = { audit: 'exports.audit-csv', deals: 'exports.report-csv', disbursements: 'exports.report-csv' } as const satisfies Record<ExportKind, string>;

/**
 * An identical export (same workspace, kind and range) made ready at most this long ago is
 * answered again instead of building a new one (decision 0026).
 */
export const EXPORT_REUSE_MS = 10 * 60_000;

/**
 * Stores a pending export of the range and its outbox job in one transaction, or answers a
 * recent identical ready export (EXPORT_REUSE_MS). A new one is refused with 429
 * EXPORT_STORAGE_FULL (Retry-After: when the oldest unexpired export is purged) while the
 * workspace's unexpired exports hold config.exportBytesPerWorkspace bytes or more.
 */
export async function requestExport(actor: WorkspaceActor, kind: ExportKind, range: DayRange): Promise<ExportRow> {
  const now = clock.now();
  const reused = await repo.recentReadyExport(db, actor.workspaceId, kind, range, new Date(now.getTime() - EXPORT_REUSE_MS));
  if (reused) return reused;
  const stored = await repo.storedExportBytes(db, actor.workspaceId, new Date(now.getTime() - EXPORT_RETENTION_MS));
  if (stored.bytes >= config.exportBytesPerWorkspace) {
    const freesAt = (stored.oldest ?? now).getTime() + EXPORT_RETENTION_MS;
    throw enterpriseErrors.exportStorageFull(Math.max(1, Math.ceil((freesAt - now.getTime()) / 1000)));
  }
  return db.transaction(async (trx) => {
    const row = await repo.insertExport(trx, {
      workspace_id: actor.workspaceId,
      requested_by: actor.userId,
      kind,
      range_from: range.from,
      range_to: range.to,
      created_at: now,
    });
    await enqueue(trx, JOB_OF[kind], { export_id: row.id });
    return row;
  });
}

/** An export of this kind in this workspace, or 404 NOT_FOUND (another workspace's or another kind's id too). */
export async function exportOf(workspaceId: string, kind: ExportKind, id: string): Promise<ExportRow> {
  const row = isUuid(id) ? await repo.exportOfWorkspace(db, workspaceId, kind, id) : undefined;
  if (!row) throw enterpriseErrors.exportNotFound();
  return row;
}

/**
 * A CSV route's one call: without `export_id` a new export of the range, waited for up to
 * EXPORT_WAIT_MS (the worker usually builds it in well under a second, so the caller gets
 * the file at once); with it, that export as it stands. Pending after the wait: 202 with
 * the export id to fetch later. The wait holds no connection and no transaction: each look
 * is one short query (ARCHITECTURE rule 7).
 */
export async function csvExport(actor: WorkspaceActor, kind: ExportKind, q: { from?: string; to?: string; export_id?: string }): Promise<ExportRow> {
  if (q.export_id !== undefined) return exportOf(actor.workspaceId, kind, q.export_id);
  let row = await requestExport(actor, kind, parseRange(q));
  const until = Date.now() + config.exportWaitMs;
  while (row.status !== 'ready' && Date.now() < until) {
    await new Promise((r) => setTimeout(r, Math.min(EXPORT_POLL_MS, Math.max(1, until - Date.now()))));
    row = await exportOf(actor.workspaceId, kind, row.id);
  }
  return row;
}

/** How often a waiting export request looks again. */
const EXPORT_POLL_MS = 100;

/** GET /audit/export.csv. */
export const auditExport = (actor: WorkspaceActor, q: { from?: string; to?: string; export_id?: string }): Promise<ExportRow> => csvExport(actor, 'audit', q);

/** A ready export's file as a stream: its parts read one at a time (no connection held between them). */
export function exportFile(row: ExportRow, knex: Db = db): Readable {
  async function* parts(): AsyncGenerator<string> {
    if (row.csv !== null) {
      yield row.csv;
      return;
    }
    for (let n = 0; ; n += 1) {
      const body = await repo.part(knex, row.id, n);
      if (body === undefined) return;
      yield body;
    }
  }
  return Readable.from(parts());
}

/**
 * The worker's step: builds and stores the CSV once. One repeatable-read transaction: the
 * export row locked (a second run waits, then finds it ready or fails and retries), every
 * page of rows read in one snapshot, the parts written as the writer produces them, the
 * export marked ready; a run killed midway leaves nothing behind.
 */
export async function buildExport(exportId: string, knex: Db = db): Promise<{ status: 'built' | 'already'; rows?: number }> {
  return knex.transaction(
    async (trx) => {
      const exp = await repo.exportById(trx, exportId, true);
      if (!exp) throw new Error(`export ${exportId} not found`);
      if (exp.status === 'ready') return { status: 'already' as const };
      const source = SOURCES[exp.kind];
      const bounds = rangeBounds({ from: dateString(exp.range_from), to: dateString(exp.range_to) });
      let count = 0;
      let truncated = false;
      async function* limited() {
        for await (const record of source.rows(trx, exp!.workspace_id, bounds)) {
          if (count === EXPORT_ROW_LIMIT) {
            truncated = true;
            return;
          }
          count += 1;
          yield record;
        }
      }
      let partNo = 0;
      await writeCsv(source.columns, limited(), (text) => repo.insertPart(trx, exportId, partNo++, text));
      const finished = await repo.finishExport(trx, exportId, { row_count: count, truncated, finished_at: clock.now() });
      return finished ? { status: 'built' as const, rows: count } : { status: 'already' as const };
    },
    { isolationLevel: 'repeatable read' },
  );
}

/**
 * How long an export (row and stored parts) is kept (issue 42, review R10): a day to fetch
 * it, then job `exports.purge-expired` (hourly) deletes it; its id then answers 404.
 */
export const EXPORT_RETENTION_MS = 24 * 3600_000;
/** Exports deleted per statement by the purge (short transactions; it loops until none is left). */
const PURGE_BATCH = 100;

/** Job `exports.purge-expired`: deletes every export created more than EXPORT_RETENTION_MS ago. */
export async function purgeExpiredExports(knex: Db = db): Promise<{ purged: number }> {
  const cutoff = new Date(clock.now().getTime() - EXPORT_RETENTION_MS);
  return { purged: await deleteInBatches(PURGE_BATCH, (limit) => repo.deleteExportsBefore(knex, cutoff, limit)) };
}

/** The audit job's step (the same builder for every kind). */
export const buildAuditExport = buildExport;
