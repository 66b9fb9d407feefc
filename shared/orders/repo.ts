/** SQL for payment-service orders and their events. */
import type { Knex } from 'knex';
import type { Db } from '../db.js';
import type { OrderEventName, OrderStatus } from './states.js';

export interface OrderRow {
  id: string;
  buyer_id: string;
  target_url: string;
  target_label: string | null;
  notes: string | null;
  item_price: number;
  service_fee: number;
  total: number;
  status: OrderStatus;
  paid_via: 'balance' | 'gateway' | 'manual' | null;
  sla_deadline_at: Date | null;
  paid_at: Date | null;
  delivered_at: Date | null;
  delivery_note: string | null;
  /** AES-256-GCM sealed (shared/crypto.ts); never leaves the service except decrypted for the owner. */
  credentials_sealed: string | null;
  first_viewed_at: Date | null;
  refunded_at: Date | null;
  refund_reason: string | null;
  auto_refunded: boolean;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type ActorRole = 'buyer' | 'admin' | 'system';

export interface OrderEventRow {
  event: OrderEventName;
  message: string;
  actor_role: ActorRole;
  created_at: Date;
}

const TABLE = 'service_orders';

// bigint columns arrive as strings from pg unless parsed; the db module parses int8 (see shared/db.ts).
export async function insert(trx: Db, row: Pick<OrderRow, 'buyer_id' | 'target_url' | 'target_label' | 'notes' | 'item_price' | 'service_fee' | 'total' | 'created_at' | 'updated_at'>): Promise<OrderRow> {
  const [created] = (await trx(TABLE).insert(row).returning('*')) as OrderRow[];
  if (!created) throw new Error('service_orders insert returned no row');
  return created;
}

export async function findById(trx: Db, id: string, options: { lock?: boolean } = {}): Promise<OrderRow | undefined> {
  const q = trx(TABLE).where({ id }).first();
  if (options.lock) void q.forUpdate();
  return (await q) as OrderRow | undefined;
}

/** Order rows by id, locked in id order (the gateway-callbacks worker, after the payments). */
export async function findByIdsForUpdate(trx: Db, ids: readonly string[]): Promise<OrderRow[]> {
  if (ids.length === 0) return [];
  return (await trx(TABLE).whereIn('id', [...ids]).orderBy('id').forUpdate()) as OrderRow[];
}

/** Compare-and-set on the status; undefined when the order was not in one of `from`. */
export async function move(
  trx: Db,
  id: string,
  from: readonly OrderStatus[],
  changes: Partial<OrderRow>,
  extra?: (q: Knex.QueryBuilder) => void,
): Promise<OrderRow | undefined> {
  const q = trx(TABLE).where({ id }).whereIn('status', [...from]);
  if (extra) extra(q);
  const [row] = (await q.update(changes).returning('*')) as OrderRow[];
  return row;
}

export interface ListFilter {
  /** Undefined: every buyer's orders (the operator's list). */
  buyerId?: string;
  status?: OrderStatus;
  page: number;
  limit: number;
}

export async function listOrders(trx: Db, f: ListFilter): Promise<{ rows: OrderRow[]; total: number }> {
  const base = () => {
    const q = trx(TABLE);
    if (f.buyerId !== undefined) void q.where({ buyer_id: f.buyerId });
    if (f.status) void q.where({ status: f.status });
    return q;
  };
  const [count] = (await base().count<{ n: string }[]>({ n: '*' })) as { n: string }[];
  const rows = (await base()
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(f.limit)
    .offset((f.page - 1) * f.limit)) as OrderRow[];
  return { rows, total: Number(count?.n ?? 0) };
}

export interface NewEvent {
  orderId: string;
  event: OrderEventName;
  message: string;
  actorRole: ActorRole;
  actorId: string | null;
  at: Date;
}

export async function recordEvents(trx: Db, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await trx('service_order_events').insert(
    events.map((e) => ({ order_id: e.orderId, event: e.event, message: e.message, actor_role: e.actorRole, actor_id: e.actorId, created_at: e.at })),
  );
}

export const MAX_EVENTS = 100;

/** The first 100 events, oldest first. */
export async function eventsOf(trx: Db, orderId: string): Promise<OrderEventRow[]> {
  return (await trx('service_order_events').select('event', 'message', 'actor_role', 'created_at').where({ order_id: orderId }).orderBy('id').limit(MAX_EVENTS)) as OrderEventRow[];
}

/** Funded orders whose SLA deadline has passed (the sweeper's work list). */
export async function dueSlaRefunds(trx: Db, now: Date, limit: number): Promise<string[]> {
  const rows = (await trx(TABLE).select('id').whereIn('status', ['paid', 'processing']).where('sla_deadline_at', '<', now).orderBy('sla_deadline_at').limit(limit)) as { id: string }[];
  return rows.map((r) => r.id);
}

/** The settings row of the payment-service orders (fees, limits, SLA; fees.ts reads it). */
export const ORDER_SETTING_KEY = 'jasabayar';

export async function orderSettings(trx: Db): Promise<unknown> {
  const row = (await trx('settings').select('value').where({ key: ORDER_SETTING_KEY }).first()) as { value: unknown } | undefined;
  return row?.value;
}
