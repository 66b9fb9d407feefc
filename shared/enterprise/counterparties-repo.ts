/** SQL of a workspace's counterparties (decision D7). */
import type { Db } from '../db.js';

export interface CounterpartyRow {
  id: string;
  workspace_id: string;
  name: string;
  country_code: string;
  relationship: 'seller' | 'buyer';
  email: string | null;
  kyb_status: 'not_started' | 'pending' | 'verified' | 'rejected';
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** One page of the workspace's counterparties, newest first, with the total. */
export async function listCounterparties(trx: Db, workspaceId: string, page: number, limit: number): Promise<{ rows: CounterpartyRow[]; total: number }> {
  const base = trx('counterparties').where({ workspace_id: workspaceId });
  const [countRow] = await base.clone().count<{ count: string }[]>('* as count');
  const rows = (await base
    .clone()
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit)
    .offset((page - 1) * limit)) as CounterpartyRow[];
  return { rows, total: Number(countRow?.count ?? 0) };
}

/** How many counterparties the workspace has (index counterparties by workspace). */
export async function countCounterparties(trx: Db, workspaceId: string): Promise<number> {
  const [count] = await trx('counterparties').where({ workspace_id: workspaceId }).count<{ count: string }[]>('* as count');
  return Number(count?.count ?? 0);
}

export async function insertCounterparty(
  trx: Db,
  input: Omit<CounterpartyRow, 'id' | 'kyb_status'> & { kyb_status: 'not_started' },
): Promise<CounterpartyRow> {
  const [row] = (await trx('counterparties').insert(input).returning('*')) as CounterpartyRow[];
  return row!;
}

/** Changes a counterparty of the workspace; undefined when the workspace has none with this id. */
export async function updateCounterparty(trx: Db, workspaceId: string, id: string, patch: Record<string, unknown>): Promise<CounterpartyRow | undefined> {
  const [row] = (await trx('counterparties').where({ id, workspace_id: workspaceId }).update(patch).returning('*')) as CounterpartyRow[];
  return row;
}

/** One counterparty by id (any workspace: the staff side), locked for the rest of the transaction when `lock`. */
export async function counterpartyById(trx: Db, id: string, lock = false): Promise<CounterpartyRow | undefined> {
  const q = trx('counterparties').where({ id }).first();
  if (lock) q.forUpdate();
  return (await q) as CounterpartyRow | undefined;
}
