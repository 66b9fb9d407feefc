/** SQL of outbound webhooks: endpoints, their cursor and lease, delivery records (decision 0020 "Webhooks"). */
import type { Knex } from 'knex';
import type { Db } from '../db.js';
import type { EventRow } from '../enterprise/events-repo.js';
import type { DeliveryKind, DeliveryStatus, EndpointStatus } from './states.js';

export interface EndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  events: string[];
  status: EndpointStatus;
  secret_sealed: string;
  cursor_seq: string | number;
  attempts: number;
  next_attempt_at: Date | null;
  lease_until: Date | null;
  lease_token: string | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

/** An endpoint with its creator's name (the answer's `created_by`). */
export interface EndpointView extends EndpointRow {
  creator_name: string | null;
}

export interface DeliveryRow {
  id: string;
  position: string | number;
  endpoint_id: string;
  workspace_id: string;
  message_id: string;
  event_id: string | null;
  event_seq: string | number | null;
  event_type: string;
  kind: DeliveryKind;
  attempt: number;
  status: DeliveryStatus;
  payload: string;
  response_status: number | null;
  response_excerpt: string | null;
  error: string | null;
  duration_ms: number | null;
  next_attempt_at: Date | null;
  requested_by: string | null;
  created_at: Date;
  attempted_at: Date | null;
}

export interface DeliveryView extends DeliveryRow {
  requester_name: string | null;
}

export type NewDelivery = Omit<DeliveryRow, 'id' | 'position'>;

const endpointView = (trx: Db) => trx('webhook_endpoints as e').leftJoin('users as u', 'u.id', 'e.created_by').select('e.*', 'u.full_name as creator_name');

export async function countEndpoints(trx: Db, workspaceId: string): Promise<number> {
  const [row] = await trx('webhook_endpoints').where({ workspace_id: workspaceId }).count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}

export async function listEndpoints(trx: Db, workspaceId: string, page: number, limit: number): Promise<{ rows: EndpointView[]; total: number }> {
  const total = await countEndpoints(trx, workspaceId);
  const rows = (await endpointView(trx)
    .where('e.workspace_id', workspaceId)
    .orderBy([{ column: 'e.created_at', order: 'desc' }, { column: 'e.id', order: 'desc' }])
    .limit(limit)
    .offset((page - 1) * limit)) as EndpointView[];
  return { rows, total };
}

/** An endpoint of the workspace with its creator's name. */
export async function endpointById(trx: Db, workspaceId: string, id: string): Promise<EndpointView | undefined> {
  return (await endpointView(trx).where({ 'e.id': id, 'e.workspace_id': workspaceId }).first()) as EndpointView | undefined;
}

/** An endpoint of the workspace, locked FOR UPDATE (after the workspace row: the lock order). */
export async function lockEndpointIn(trx: Db, workspaceId: string, id: string): Promise<EndpointRow | undefined> {
  return (await trx('webhook_endpoints').where({ id, workspace_id: workspaceId }).forUpdate().first()) as EndpointRow | undefined;
}

/** The worker's lock on an endpoint by id alone (it never holds the workspace row, but on disabling: then after it). */
export async function lockEndpoint(trx: Db, id: string): Promise<EndpointRow | undefined> {
  return (await trx('webhook_endpoints').where({ id }).forUpdate().first()) as EndpointRow | undefined;
}

export async function insertEndpoint(trx: Db, row: Omit<EndpointRow, 'attempts' | 'next_attempt_at' | 'lease_until' | 'lease_token' | 'disabled_at' | 'disabled_reason'>): Promise<void> {
  await trx('webhook_endpoints').insert({ ...row, events: row.events });
}

export async function updateEndpoint(trx: Db, id: string, patch: Partial<Omit<EndpointRow, 'id' | 'workspace_id' | 'created_at' | 'created_by'>>): Promise<void> {
  await trx('webhook_endpoints').where({ id }).update(patch);
}

export async function deleteEndpoint(trx: Db, id: string): Promise<void> {
  await trx('webhook_endpoints').where({ id }).delete();
}

/** The workspace's active endpoints (partial index webhook_endpoints_active; nudge.ts asks the same in SQL). */
export async function activeEndpointIds(trx: Db, workspaceId: string): Promise<string[]> {
  const rows = await trx('webhook_endpoints').where({ workspace_id: workspaceId, status: 'active' }).select<{ id: string }[]>('id');
  return rows.map((r) => r.id);
}

/**
 * The workspace's last committed event seq. Every event up to it is committed (events.ts:
 * the seq and its event are written in one transaction, under the workspace row's lock).
 */
export async function lastEventSeq(trx: Db, workspaceId: string): Promise<number> {
  const row = await trx('workspaces').where({ id: workspaceId }).first<{ last_event_seq: string | number } | undefined>('last_event_seq');
  return Number(row?.last_event_seq ?? 0);
}

/** The first event after `after` and at most `upTo` whose name is in `names` (null: any name). */
export async function nextEvent(trx: Db, workspaceId: string, after: number, upTo: number, names: string[] | null): Promise<EventRow | undefined> {
  const q = trx('workspace_events').where('workspace_id', workspaceId).where('seq', '>', after).where('seq', '<=', upTo);
  if (names) q.whereIn('event', names);
  return (await q.orderBy('seq', 'asc').first()) as EventRow | undefined;
}

export async function eventById(trx: Db, workspaceId: string, id: string): Promise<EventRow | undefined> {
  return (await trx('workspace_events').where({ workspace_id: workspaceId, id }).first()) as EventRow | undefined;
}

/**
 * Active endpoints with work and nobody on it: the lease free or run out, no retry waiting,
 * and an event after the cursor (the sweeper's query).
 */
export async function endpointsWithWork(trx: Db, now: Date, limit: number): Promise<string[]> {
  const rows = await trx('webhook_endpoints as e')
    .join('workspaces as w', 'w.id', 'e.workspace_id')
    .where('e.status', 'active')
    .where((q) => void q.whereNull('e.lease_until').orWhere('e.lease_until', '<=', now))
    .where((q) => void q.whereNull('e.next_attempt_at').orWhere('e.next_attempt_at', '<=', now))
    .whereRaw('w.last_event_seq > e.cursor_seq')
    .orderBy('e.id')
    .limit(limit)
    .select<{ id: string }[]>('e.id');
  return rows.map((r) => r.id);
}

export async function insertDelivery(trx: Db, row: NewDelivery): Promise<DeliveryRow> {
  const [inserted] = (await trx('webhook_deliveries').insert(row).returning('*')) as DeliveryRow[];
  return inserted!;
}

const deliveryView = (trx: Db) => trx('webhook_deliveries as d').leftJoin('users as u', 'u.id', 'd.requested_by').select('d.*', 'u.full_name as requester_name');

/** One page of an endpoint's deliveries, newest first, with the total. */
export async function listDeliveries(trx: Db, endpointId: string, q: { page: number; limit: number; status?: DeliveryStatus }): Promise<{ rows: DeliveryView[]; total: number }> {
  const filter = (b: Knex.QueryBuilder) => {
    if (q.status) void b.where('d.status', q.status);
  };
  const [count] = await trx('webhook_deliveries as d').where('d.endpoint_id', endpointId).modify(filter).count<{ count: string }[]>('* as count');
  const rows = (await deliveryView(trx)
    .where('d.endpoint_id', endpointId)
    .modify(filter)
    .orderBy('d.position', 'desc')
    .limit(q.limit)
    .offset((q.page - 1) * q.limit)) as DeliveryView[];
  return { rows, total: Number(count?.count ?? 0) };
}

export async function deliveryOf(trx: Db, endpointId: string, id: string): Promise<DeliveryView | undefined> {
  return (await deliveryView(trx).where({ 'd.id': id, 'd.endpoint_id': endpointId }).first()) as DeliveryView | undefined;
}

/** A pending delivery with where it goes (the one-off sender). */
export async function pendingDelivery(trx: Db, id: string): Promise<(DeliveryRow & { url: string; secret_sealed: string }) | undefined> {
  return trx('webhook_deliveries as d')
    .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .where({ 'd.id': id, 'd.status': 'pending' })
    .first<(DeliveryRow & { url: string; secret_sealed: string }) | undefined>('d.*', 'e.url', 'e.secret_sealed');
}

export async function completeDelivery(
  trx: Db,
  id: string,
  result: Pick<DeliveryRow, 'status' | 'response_status' | 'response_excerpt' | 'error' | 'duration_ms' | 'attempted_at'>,
): Promise<boolean> {
  return (await trx('webhook_deliveries').where({ id, status: 'pending' }).update(result)) > 0;
}

/** Deletes up to `limit` delivery records created before `before`; returns how many. */
export async function purgeDeliveries(trx: Db, before: Date, limit: number): Promise<number> {
  return trx('webhook_deliveries').whereIn('id', trx('webhook_deliveries').select('id').where('created_at', '<', before).limit(limit)).delete();
}
