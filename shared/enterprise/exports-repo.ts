/** SQL of enterprise exports (audit, deals, disbursements CSVs): the pending row, the build's lock, the file's parts, the one-time finish. */
import type { Db } from '../db.js';

export const EXPORT_KINDS = ['audit', 'deals', 'disbursements'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

export interface ExportRow {
  id: string;
  workspace_id: string;
  requested_by: string;
  kind: ExportKind;
  range_from: string;
  range_to: string;
  status: 'pending' | 'ready';
  /** The whole file of an export built before files were stored in parts (enterprise_export_parts); null since. */
  csv: string | null;
  row_count: number | null;
  truncated: boolean;
  created_at: Date;
  finished_at: Date | null;
}

/** A `date` column as YYYY-MM-DD (node-postgres answers a Date at local midnight of that day). */
export function dateString(v: unknown): string {
  if (!(v instanceof Date)) return String(v);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${v.getFullYear()}-${pad(v.getMonth() + 1)}-${pad(v.getDate())}`;
}

export async function insertExport(
  trx: Db,
  input: { workspace_id: string; requested_by: string; kind: ExportKind; range_from: string; range_to: string; created_at: Date },
): Promise<ExportRow> {
  const [row] = await trx('enterprise_exports').insert(input).returning<ExportRow[]>('*');
  return row!;
}

/** The export; with `lock` its row FOR UPDATE (the build holds it, so two runs of one job build it once). */
export async function exportById(trx: Db, id: string, lock = false): Promise<ExportRow | undefined> {
  const q = trx('enterprise_exports').where({ id }).first<ExportRow | undefined>('*');
  if (lock) q.forUpdate();
  return q;
}

export async function exportOfWorkspace(trx: Db, workspaceId: string, kind: ExportKind, id: string): Promise<ExportRow | undefined> {
  return (await trx('enterprise_exports').where({ id, workspace_id: workspaceId, kind }).first()) as ExportRow | undefined;
}

export async function insertPart(trx: Db, exportId: string, partNo: number, body: string): Promise<void> {
  await trx('enterprise_export_parts').insert({ export_id: exportId, part_no: partNo, body });
}

/** Part `partNo` of a stored file (parts count from 0), or undefined past the last. */
export async function part(trx: Db, exportId: string, partNo: number): Promise<string | undefined> {
  const row = await trx('enterprise_export_parts').where({ export_id: exportId, part_no: partNo }).first<{ body: string } | undefined>('body');
  return row?.body;
}

/** Marks a built export ready once: false when it was already ready (a re-run job). */
export async function finishExport(trx: Db, id: string, built: { row_count: number; truncated: boolean; finished_at: Date }): Promise<boolean> {
  const updated = await trx('enterprise_exports').where({ id, status: 'pending' }).update({ status: 'ready', ...built });
  return updated > 0;
}

/** Deletes up to `batch` exports created before `cutoff` (their parts go with them: ON DELETE CASCADE); answers how many. */
export async function deleteExportsBefore(trx: Db, cutoff: Date, batch: number): Promise<number> {
  const doomed = trx('enterprise_exports').select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(batch);
  return trx('enterprise_exports').whereIn('id', doomed).delete();
}

/**
 * The newest ready export of this workspace, kind and range created at or after `since`
 * (decision 0026: an identical request within the reuse window gets it instead of a new build).
 */
export async function recentReadyExport(trx: Db, workspaceId: string, kind: ExportKind, range: { from: string; to: string }, since: Date): Promise<ExportRow | undefined> {
  return (await trx('enterprise_exports')
    .where({ workspace_id: workspaceId, kind, range_from: range.from, range_to: range.to, status: 'ready' })
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .first()) as ExportRow | undefined;
}

/** Bytes stored by the workspace's exports created at or after `since` (parts and old whole files), and the oldest such export's creation. */
export async function storedExportBytes(trx: Db, workspaceId: string, since: Date): Promise<{ bytes: number; oldest: Date | null }> {
  const row = await trx('enterprise_exports as e')
    .where('e.workspace_id', workspaceId)
    .where('e.created_at', '>=', since)
    .first<{ bytes: string | null; oldest: Date | null }>(
      trx.raw(
        'coalesce(sum(coalesce(octet_length(e.csv), 0) + coalesce((SELECT sum(octet_length(p.body)) FROM enterprise_export_parts p WHERE p.export_id = e.id), 0)), 0) AS bytes',
      ),
      trx.raw('min(e.created_at) AS oldest'),
    );
  return { bytes: Number(row?.bytes ?? 0), oldest: row?.oldest ?? null };
}
