/** Reads of the operator console that no other service offers (the moves themselves go through their own services). */
import { db } from '../db.js';
import type { OrderRow } from '../orders/repo.js';
import { listForStaff, type StaffPaymentRow } from '../payments/repo.js';
import type { UserRow } from '../users/repo.js';

/**
 * Payments waiting for staff, oldest first: claimed manual transfers (escrows and
 * payment-service orders) to confirm or reject, claims that came late and gateway payments
 * whose amount did not match, to credit or mark returned (decision 0009).
 */
export async function attentionPayments(limit = 50): Promise<StaffPaymentRow[]> {
  return (await listForStaff(db, { attention: true, page: 1, limit })).rows;
}

export type ListedUser = Pick<UserRow, 'id' | 'email' | 'username' | 'full_name' | 'role' | 'status' | 'created_at'>;

/** Accounts whose email, username or name contains `q` (newest first); the newest accounts without `q`. */
export async function findUsers(q: string, limit = 50): Promise<ListedUser[]> {
  const query = db('users').select('id', 'email', 'username', 'full_name', 'role', 'status', 'created_at');
  const term = q.trim();
  if (term !== '') {
    const like = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    void query.where((w) => void w.whereILike('email', like).orWhereILike('username', like).orWhereILike('full_name', like));
  }
  return (await query.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit)) as ListedUser[];
}

/** A payment-service order as the console lists it (never the sealed credentials). */
export type ListedOrder = Pick<
  OrderRow,
  'id' | 'status' | 'target_url' | 'target_label' | 'notes' | 'item_price' | 'service_fee' | 'total' | 'paid_via' | 'sla_deadline_at' | 'created_at'
> & { buyer_email: string };

/** The order statuses that wait for an operator's move. */
const ORDERS_TO_MOVE = ['pending_review', 'paid', 'processing'] as const;

/** Payment-service orders waiting for the operator (claimed transfer, paid, processing), oldest first. */
export async function ordersToMove(limit = 50): Promise<ListedOrder[]> {
  return db('service_orders as o')
    .join('users as u', 'u.id', 'o.buyer_id')
    .whereIn('o.status', ORDERS_TO_MOVE)
    .orderBy([{ column: 'o.created_at', order: 'asc' }, { column: 'o.id', order: 'asc' }])
    .limit(limit)
    .select<ListedOrder[]>(
      'o.id', 'o.status', 'o.target_url', 'o.target_label', 'o.notes', 'o.item_price', 'o.service_fee', 'o.total', 'o.paid_via', 'o.sla_deadline_at', 'o.created_at',
      'u.email as buyer_email',
    );
}

export async function consoleCounts(): Promise<{ disputes: number; payments: number; withdrawals: number; orders: number }> {
  const [d] = await db('disputes').whereIn('status', ['open', 'on_hold']).count<{ count: string }[]>('* as count');
  const p = { count: String((await listForStaff(db, { attention: true, page: 1, limit: 1 })).total) };
  const [w] = await db('withdrawals').where('status', 'pending').count<{ count: string }[]>('* as count');
  const [o] = await db('service_orders').whereIn('status', ORDERS_TO_MOVE).count<{ count: string }[]>('* as count');
  return { disputes: Number(d?.count ?? 0), payments: Number(p?.count ?? 0), withdrawals: Number(w?.count ?? 0), orders: Number(o?.count ?? 0) };
}
