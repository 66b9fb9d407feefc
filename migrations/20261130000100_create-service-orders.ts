import type { Knex } from 'knex';

/**
 * Payment-service orders (consumer spec 2 "Payment-service order", 3 and 4.8; issue 11,
 * decision 0012): the order, its event trail, and payment links that target an order
 * instead of an escrow (exactly one of payments.escrow_id and payments.order_id is set).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE service_orders (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      buyer_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      target_url text NOT NULL,
      target_label text,
      notes text,
      item_price bigint NOT NULL,
      service_fee bigint NOT NULL,
      total bigint NOT NULL,
      status text NOT NULL DEFAULT 'awaiting_payment',
      paid_via text,
      sla_deadline_at timestamptz,
      paid_at timestamptz,
      delivered_at timestamptz,
      delivery_note text,
      credentials_sealed text,
      first_viewed_at timestamptz,
      refunded_at timestamptz,
      refund_reason text,
      auto_refunded boolean NOT NULL DEFAULT false,
      cancelled_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT service_orders_status_known CHECK (status IN ('awaiting_payment', 'pending_review', 'paid', 'processing', 'delivered', 'refunded', 'cancelled')),
      CONSTRAINT service_orders_amounts CHECK (item_price >= 0 AND service_fee >= 0 AND total = item_price + service_fee AND total > 0),
      CONSTRAINT service_orders_paid_via_known CHECK (paid_via IS NULL OR paid_via IN ('balance', 'gateway', 'manual')),
      CONSTRAINT service_orders_sla_only_when_funded CHECK (sla_deadline_at IS NULL OR paid_at IS NOT NULL)
    );
    CREATE INDEX service_orders_buyer ON service_orders (buyer_id, created_at DESC, id DESC);
    CREATE INDEX service_orders_sla_due ON service_orders (sla_deadline_at) WHERE status IN ('paid', 'processing');

    CREATE TABLE service_order_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      order_id uuid NOT NULL REFERENCES service_orders (id) ON DELETE CASCADE,
      event text NOT NULL,
      message text NOT NULL,
      actor_role text NOT NULL,
      actor_id uuid REFERENCES users (id) ON DELETE RESTRICT,
      created_at timestamptz NOT NULL,
      CONSTRAINT service_order_events_role_known CHECK (actor_role IN ('buyer', 'admin', 'system'))
    );
    CREATE INDEX service_order_events_order ON service_order_events (order_id, id);

    ALTER TABLE payments ALTER COLUMN escrow_id DROP NOT NULL;
    ALTER TABLE payments ADD COLUMN order_id uuid REFERENCES service_orders (id) ON DELETE RESTRICT;
    ALTER TABLE payments ADD CONSTRAINT payments_one_target CHECK ((escrow_id IS NULL) <> (order_id IS NULL));
    CREATE INDEX payments_order ON payments (order_id, created_at DESC) WHERE order_id IS NOT NULL;
    CREATE UNIQUE INDEX payments_one_paid_per_order ON payments (order_id) WHERE status = 'paid' AND flag IS NULL AND order_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX payments_one_paid_per_order;
    DROP INDEX payments_order;
    ALTER TABLE payments DROP CONSTRAINT payments_one_target;
    ALTER TABLE payments DROP COLUMN order_id;
    ALTER TABLE payments ALTER COLUMN escrow_id SET NOT NULL;
    DROP TABLE service_order_events;
    DROP TABLE service_orders;
  `);
}
