/** Payment-service order factories: configuration, orders through the service, and their money. */
import { clock } from '../../shared/clock.js';
import { db } from '../../shared/db.js';
import { loadOrderConfig, ORDER_SETTING_KEY, quote } from '../../shared/orders/fees.js';
import type { OrderRow } from '../../shared/orders/repo.js';
import { create } from '../../shared/orders/service.js';

/** Writes the `jasabayar` setting (merged over nothing: what is given is what the operator set). */
export async function setOrderConfig(value: Record<string, unknown>): Promise<void> {
  await db('settings')
    .insert({ key: ORDER_SETTING_KEY, value: JSON.stringify(value), updated_at: clock.now() })
    .onConflict('key')
    .merge();
}

export interface OrderOptions {
  id?: string;
  itemPrice?: number;
  targetUrl?: string;
  label?: string;
  notes?: string;
}

/** An awaiting_payment order of `buyerId`, made through the service (fee from live configuration). */
export async function createOrder(buyerId: string, o: OrderOptions = {}): Promise<OrderRow> {
  const input = {
    target_url: o.targetUrl ?? 'https://shop.example.com/item/42',
    target_label: o.label ?? 'Voucher game',
    item_price: o.itemPrice ?? 100_000,
    notes: o.notes ?? null,
  };
  if (o.id === undefined) return create(undefined, { userId: buyerId, role: 'user' }, input);
  // A fixed id (tables that name the order before it exists): the row as the service would make it.
  const q = quote(input.item_price, await loadOrderConfig(db));
  const now = clock.now();
  const [row] = (await db('service_orders')
    .insert({ id: o.id, buyer_id: buyerId, ...input, item_price: q.itemPrice, service_fee: q.serviceFee, total: q.total, created_at: now, updated_at: now })
    .returning('*')) as OrderRow[];
  return row!;
}
