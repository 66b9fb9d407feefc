/** The operator console's own reads (accounts, orders waiting for a move, the overview counts): all their SQL. */
import type { Db } from '../db.js';
import { whereSearch } from '../staff/search.js';
import type { OrderRow } from '../orders/repo.js';
import type { UserRow } from '../users/repo.js';

export type ListedUser = Pick<UserRow, 'id' | 'email' | 'username' | 'full_name' | 'role' | 'status' | 'created_at'>;

/** Accounts whose id is `term` or whose email, username or name contains it (newest first); the newest accounts for an empty term. */
export async function findUsers(trx: Db, term: string, limit: number): Promise<ListedUser[]> {
  const query = trx('users').select('id', 'email', 'username', 'full_name', 'role', 'status', 'created_at');
  if (term !== '') {
    whereSearch(query, term, { ids: ['id'], text: ['email', 'username', 'full_name'] });
  }
  return (await query.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit)) as ListedUser[];
}

/** A payment-service order as the console lists it (never the sealed credentials). */
export type ListedOrder = Pick<
  OrderRow,
  'id' | 'status' | 'target_url' | 'target_label' | 'notes' | 'item_price' | 'service_fee' | 'total' | 'paid_via' | 'sla_deadline_at' | 'created_at'
> & { buyer_email: string };

/** The order statuses that wait for an operator's move. */
export const ORDERS_TO_MOVE = ['pending_review', 'paid', 'processing'] as const;

/** Orders in `ORDERS_TO_MOVE`, oldest first, with their buyer's email. */
export async function ordersToMove(trx: Db, limit: number): Promise<ListedOrder[]> {
  return trx('service_orders as o')
    .join('users as u', 'u.id', 'o.buyer_id')
    .whereIn('o.status', ORDERS_TO_MOVE)
    .orderBy([{ column: 'o.created_at', order: 'asc' }, { column: 'o.id', order: 'asc' }])
    .limit(limit)
    .select<ListedOrder[]>(
      'o.id', 'o.status', 'o.target_url', 'o.target_label', 'o.notes', 'o.item_price', 'o.service_fee', 'o.total', 'o.paid_via', 'o.sla_deadline_at', 'o.created_at',
      'u.email as buyer_email',
    );
}

/** Open or held disputes, pending withdrawals and orders waiting for a move. */
export async function waitingCounts(trx: Db): Promise<{ disputes: number; withdrawals: number; orders: number }> {
  const [d] = await trx('disputes').whereIn('status', ['open', 'on_hold']).count<{ count: string }[]>('* as count');
  const [w] = await trx('withdrawals').where('status', 'pending').count<{ count: string }[]>('* as count');
  const [o] = await trx('service_orders').whereIn('status', ORDERS_TO_MOVE).count<{ count: string }[]>('* as count');
  return { disputes: Number(d?.count ?? 0), withdrawals: Number(w?.count ?? 0), orders: Number(o?.count ?? 0) };
}
