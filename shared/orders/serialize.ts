/** Spec shapes of payment-service orders (consumer spec section 2): the sealed credentials never leave here. */
import type { OrderEventRow, OrderRow } from './repo.js';
import type { OrderConfig } from './fees.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function serializeOrder(o: OrderRow) {
  return {
    id: o.id,
    target_url: o.target_url,
    target_label: o.target_label,
    notes: o.notes,
    item_price: o.item_price,
    service_fee: o.service_fee,
    total: o.total,
    status: o.status,
    sla_deadline_at: iso(o.sla_deadline_at),
    paid_at: iso(o.paid_at),
    delivered_at: iso(o.delivered_at),
    delivery_note: o.delivery_note,
    has_credentials: o.credentials_sealed !== null,
    first_viewed_at: iso(o.first_viewed_at),
    refunded_at: iso(o.refunded_at),
    refund_reason: o.refund_reason,
    auto_refunded: o.auto_refunded,
    cancelled_at: iso(o.cancelled_at),
    created_at: o.created_at.toISOString(),
    updated_at: o.updated_at.toISOString(),
  };
}

export function serializeOrderDetail(o: OrderRow, credentials: string | null, events: readonly OrderEventRow[]) {
  return {
    ...serializeOrder(o),
    credentials,
    events: events.map((e) => ({ event: e.event, message: e.message, actor_role: e.actor_role, created_at: e.created_at.toISOString() })),
  };
}

export function serializeConfig(c: OrderConfig) {
  return {
    enabled: c.enabled,
    fee_type: c.fee_type,
    fee_value: c.fee_value,
    fee_min_idr: c.fee_min_idr,
    fee_max_idr: c.fee_max_idr,
    sla_hours: c.sla_hours,
    min_item_price_idr: c.min_item_price_idr,
    max_item_price_idr: c.max_item_price_idr,
  };
}
