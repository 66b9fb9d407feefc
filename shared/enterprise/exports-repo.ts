/** SQL of enterprise exports (the audit CSV): the pending row, the read, the one-time store. */
import type { Db } from '../db.js';

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

/** A `date` column as YYYY-MM-DD (node-postgres answers a Date at local midnight of that day). */
export function dateString(v: unknown): string {
  if (!(v instanceof Date)) return String(v);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${v.getFullYear()}-${pad(v.getMonth() + 1)}-${pad(v.getDate())}`;
}

export async function insertExport(
  trx: Db,
  input: { workspace_id: string; requested_by: string; kind: 'audit'; range_from: string; range_to: string; created_at: Date },
): Promise<ExportRow> {
  const [row] = await trx('enterprise_exports').insert(input).returning<ExportRow[]>('*');
  return row!;
}

export async function exportById(trx: Db, id: string): Promise<ExportRow | undefined> {
  return (await trx('enterprise_exports').where({ id }).first()) as ExportRow | undefined;
}

export async function exportOfWorkspace(trx: Db, workspaceId: string, id: string): Promise<ExportRow | undefined> {
  return (await trx('enterprise_exports').where({ id, workspace_id: workspaceId }).first()) as ExportRow | undefined;
}

/** Stores the built CSV once: false when the export was already ready (a re-run job). */
export async function storeExport(
  trx: Db,
  id: string,
  built: { csv: string; row_count: number; truncated: boolean; finished_at: Date },
): Promise<boolean> {
  const updated = await trx('enterprise_exports').where({ id, status: 'pending' }).update({ status: 'ready', ...built });
  return updated > 0;
}
