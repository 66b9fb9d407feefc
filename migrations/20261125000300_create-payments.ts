import type { Knex } from 'knex';

/**
 * Payments (consumer spec 2 and 4.2, section 6 inbound callbacks; decisions D4, D5): one
 * row per payment link, every verified gateway delivery stored raw before it is
 * reconciled, and the sandbox gateway's own view of its charges (what its status API answers).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE payments (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      escrow_id uuid NOT NULL REFERENCES escrows (id) ON DELETE RESTRICT,
      buyer_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      provider text NOT NULL,
      method text NOT NULL,
      is_manual boolean NOT NULL DEFAULT false,
      gateway_order_id text NOT NULL,
      escrow_amount bigint NOT NULL,
      surcharge bigint NOT NULL,
      amount bigint NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      qr_string text,
      qr_url text,
      va_number text,
      va_bank text,
      redirect_url text,
      deep_link_url text,
      raw_response text NOT NULL DEFAULT '{}',
      expires_at timestamptz,
      paid_at timestamptz,
      claimed_at timestamptz,
      claim_reference text,
      flag text,
      decided_by uuid REFERENCES users (id) ON DELETE RESTRICT,
      next_poll_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT payments_gateway_order_unique UNIQUE (gateway_order_id),
      CONSTRAINT payments_status_known CHECK (status IN ('pending', 'paid', 'expired', 'failed', 'awaiting_confirmation')),
      CONSTRAINT payments_method_known CHECK (method IN ('qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto')),
      CONSTRAINT payments_amounts CHECK (escrow_amount > 0 AND surcharge >= 0 AND amount = escrow_amount + surcharge),
      CONSTRAINT payments_paid_has_time CHECK ((status = 'paid') = (paid_at IS NOT NULL)),
      CONSTRAINT payments_claim_only_manual CHECK (status <> 'awaiting_confirmation' OR is_manual)
    );
    CREATE INDEX payments_escrow ON payments (escrow_id, created_at DESC);
    -- At most one paid payment per escrow: a second paid link is credited to the buyer instead.
    CREATE UNIQUE INDEX payments_one_paid_per_escrow ON payments (escrow_id) WHERE status = 'paid' AND flag IS NULL;
    CREATE INDEX payments_poll_due ON payments (next_poll_at) WHERE status = 'pending' AND NOT is_manual;

    CREATE TABLE payment_callbacks (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      provider text NOT NULL,
      source text NOT NULL,
      gateway_order_id text NOT NULL,
      status text NOT NULL,
      amount bigint,
      dedupe_key text NOT NULL,
      raw_body text NOT NULL,
      headers jsonb NOT NULL DEFAULT '{}'::jsonb,
      received_at timestamptz NOT NULL,
      processed_at timestamptz,
      outcome text,
      deliveries integer NOT NULL DEFAULT 1,
      CONSTRAINT payment_callbacks_dedupe_unique UNIQUE (dedupe_key),
      CONSTRAINT payment_callbacks_source_known CHECK (source IN ('callback', 'poll', 'staff')),
      CONSTRAINT payment_callbacks_status_known CHECK (status IN ('pending', 'paid', 'expired', 'failed'))
    );
    CREATE INDEX payment_callbacks_order ON payment_callbacks (gateway_order_id, id);
    CREATE INDEX payment_callbacks_unprocessed ON payment_callbacks (received_at) WHERE processed_at IS NULL;

    CREATE TABLE sandbox_charges (
      gateway_order_id text PRIMARY KEY,
      amount bigint NOT NULL,
      method text NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT sandbox_charges_status_known CHECK (status IN ('pending', 'paid', 'expired', 'failed'))
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sandbox_charges');
  await knex.schema.dropTable('payment_callbacks');
  await knex.schema.dropTable('payments');
}
