/** The operator console's own reads (accounts, orders waiting for a move, the overview counts): all their SQL. */
import type { Db } from '../db.js';
import { queuePage, type QueueCursor, type QueuePage, type StaffSearch } from '../staff/queue.js';
import type { OrderRow } from '../orders/repo.js';
import type { UserRow } from '../users/repo.js';

export type ListedUser = Pick<UserRow, 'id' | 'email' | 'username' | 'full_name' | 'role' | 'status' | 'created_at'>;

/** The accounts list's search: the account's id exactly, or part of its e-mail, username or name. */
const USER_SEARCHED = { ids: ['id'], text: ['email', 'username', 'full_name'] } as const;

/** One page of the accounts (newest first, keyset pages), narrowed by `by.q` (and `by.before`: joined then or earlier). */
export async function findUsers(trx: Db, page: QueueCursor, by: StaffSearch): Promise<QueuePage<ListedUser>> {
  const query = trx('users').select('id', 'email', 'username', 'full_name', 'role', 'status', 'created_at');
  return queuePage<ListedUser>(query, { sandbox: null, since: 'created_at', id: 'id', newestFirst: true }, page, { by, columns: USER_SEARCHED });
}

/** A payment-service order as the console lists it (never the sealed credentials). */
export type ListedOrder = Pick<
  OrderRow,
  'id' | 'status' | 'target_url' | 'target_label' | 'notes' | 'item_price' | 'service_fee' | 'total' | 'paid_via' | 'sla_deadline_at' | 'created_at'
> & { buyer_id: string; buyer_email: string };

/** The order statuses that wait for an operator's move. */
export const ORDERS_TO_MOVE = ['pending_review', 'paid', 'processing'] as const;
export type OrderToMove = (typeof ORDERS_TO_MOVE)[number];

/** The order queue's search (issue 46): the order's or buyer's id exactly, or part of the buyer's e-mail, username or name, or of what is bought (its label or address). */
const ORDER_SEARCHED = { ids: ['o.id', 'u.id'], text: ['u.email', 'u.username', 'u.full_name', 'o.target_label', 'o.target_url'] } as const;

/** Orders in `ORDERS_TO_MOVE`, oldest first (keyset pages), with their buyer's email, narrowed as staff ask (`before`: created then or earlier). */
export async function ordersToMove(trx: Db, page: QueueCursor, by: StaffSearch, statuses: readonly OrderToMove[] = ORDERS_TO_MOVE): Promise<QueuePage<ListedOrder>> {
  const q = trx('service_orders as o')
    .join('users as u', 'u.id', 'o.buyer_id')
    .whereIn('o.status', [...statuses])
    .select(
      'o.id', 'o.status', 'o.target_url', 'o.target_label', 'o.notes', 'o.item_price', 'o.service_fee', 'o.total', 'o.paid_via', 'o.sla_deadline_at', 'o.created_at',
      'o.buyer_id',
      'u.email as buyer_email',
    );
  return queuePage<ListedOrder>(q, { sandbox: null, since: 'o.created_at', id: 'o.id' }, page, { by, columns: ORDER_SEARCHED });
}

/** Open or held disputes, pending withdrawals and orders waiting for a move. */
export async function waitingCounts(trx: Db): Promise<{ disputes: number; withdrawals: number; orders: number }> {
  const [d] = await trx('disputes').whereIn('status', ['open', 'on_hold']).count<{ count: string }[]>('* as count');
  const [w] = await trx('withdrawals').where('status', 'pending').count<{ count: string }[]>('* as count');
  const [o] = await trx('service_orders').whereIn('status', ORDERS_TO_MOVE).count<{ count: string }[]>('* as count');
  return { disputes: Number(d?.count ?? 0), withdrawals: Number(w?.count ?? 0), orders: Number(o?.count ?? 0) };
}
