/** SQL for uploads. */
import type { Db } from '../db.js';
import type { Purpose } from './sanitise/index.js';

/** What an upload is bound to; `kyb` is an enterprise KYB submission, `deal_document` an enterprise deal document. */
export type BoundKind = 'escrow' | 'chat' | 'dispute' | 'kyb' | 'deal_document';

export interface UploadRow {
  id: string;
  stored_name: string;
  user_id: string;
  purpose: Purpose;
  mime: string;
  size: number;
  sha256: string;
  storage_key: string;
  created_at: Date;
  bound_kind: BoundKind | null;
  bound_id: string | null;
  bound_at: Date | null;
}

const toRow = (r: UploadRow): UploadRow => ({ ...r, size: Number(r.size) });

/** Serialises uploads of one user (quota count and insert) for the rest of the transaction. */
export async function lockUser(trx: Db, userId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`uploads:${userId}`]);
}

/** Serialises bindings to one target (count and bind) for the rest of the transaction. */
export async function lockTarget(trx: Db, kind: BoundKind, id: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`uploads-target:${kind}:${id}`]);
}

/** Uploads of a user since `since`, per purpose. */
export async function countSince(trx: Db, userId: string, since: Date): Promise<Record<Purpose, number>> {
  const rows = (await trx('uploads')
    .where('user_id', userId)
    .andWhere('created_at', '>', since)
    .groupBy('purpose')
    .select('purpose')
    .count<{ purpose: Purpose; count: string }[]>('* as count')) as unknown as { purpose: Purpose; count: string }[];
  const out: Record<Purpose, number> = { escrow: 0, chat: 0, kyc: 0, kyb: 0 };
  for (const r of rows) out[r.purpose] = Number(r.count);
  return out;
}

/** The oldest upload of a user since `since` (of one purpose, or any), or null. */
export async function oldestSince(trx: Db, userId: string, since: Date, purpose: Purpose | null): Promise<Date | null> {
  const q = trx('uploads').where('user_id', userId).andWhere('created_at', '>', since);
  if (purpose) q.andWhere('purpose', purpose);
  const row = (await q.min('created_at as oldest').first()) as { oldest: Date | string | null } | undefined;
  return row?.oldest ? new Date(row.oldest) : null;
}

export async function insert(trx: Db, row: Omit<UploadRow, 'bound_kind' | 'bound_id' | 'bound_at'>): Promise<UploadRow> {
  const [created] = (await trx('uploads').insert(row).returning('*')) as UploadRow[];
  return toRow(created!);
}

export async function byId(trx: Db, id: string): Promise<UploadRow | null> {
  const row = (await trx('uploads').where({ id }).first()) as UploadRow | undefined;
  return row ? toRow(row) : null;
}

export async function byStoredName(trx: Db, name: string): Promise<UploadRow | null> {
  const row = (await trx('uploads').where('stored_name', name).first()) as UploadRow | undefined;
  return row ? toRow(row) : null;
}

/** Compare-and-set: binds the upload only if it is the user's, of an allowed purpose, and still unbound. */
export async function bind(
  trx: Db,
  name: string,
  userId: string,
  purposes: readonly Purpose[],
  target: { kind: BoundKind; id: string; at: Date },
): Promise<UploadRow | null> {
  const [row] = (await trx('uploads')
    .where({ stored_name: name, user_id: userId })
    .whereIn('purpose', purposes)
    .whereNull('bound_at')
    .update({ bound_kind: target.kind, bound_id: target.id, bound_at: target.at })
    .returning('*')) as UploadRow[];
  return row ? toRow(row) : null;
}

export async function countBound(trx: Db, kind: BoundKind, id: string): Promise<number> {
  const row: { count: string } | undefined = await trx('uploads').where({ bound_kind: kind, bound_id: id }).count<{ count: string }>('* as count').first();
  return Number(row?.count ?? 0);
}

/** Clears one binding (its target is gone), so the daily purge takes the upload; only if it is still bound to that target. */
export async function unbind(trx: Db, id: string, target: { kind: BoundKind; id: string }): Promise<boolean> {
  const n = await trx('uploads').where({ id, bound_kind: target.kind, bound_id: target.id }).update({ bound_kind: null, bound_id: null, bound_at: null });
  return n > 0;
}

/** Unbound uploads created before `before` (oldest first), at most `limit`. */
export async function unboundBefore(trx: Db, before: Date, limit: number): Promise<UploadRow[]> {
  const rows = (await trx('uploads').whereNull('bound_at').andWhere('created_at', '<', before).orderBy('created_at').limit(limit)) as UploadRow[];
  return rows.map(toRow);
}

/** Deletes the row only if it is still unbound (a binding that won the race keeps it). */
export async function deleteIfUnbound(trx: Db, id: string): Promise<boolean> {
  return (await trx('uploads').where('id', id).whereNull('bound_at').delete()) > 0;
}

export async function existingNames(trx: Db, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows: { stored_name: string }[] = await trx('uploads').whereIn('stored_name', names).select('stored_name');
  return new Set(rows.map((r) => r.stored_name));
}

/** The uploads bound to one target, in the order they were attached. */
export async function boundTo(trx: Db, kind: BoundKind, id: string): Promise<UploadRow[]> {
  const rows = (await trx('uploads').where({ bound_kind: kind, bound_id: id }).orderBy([{ column: 'bound_at' }, { column: 'id' }])) as UploadRow[];
  return rows.map(toRow);
}
