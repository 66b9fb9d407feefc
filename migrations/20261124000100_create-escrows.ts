import type { Knex } from 'knex';

/**
 * Escrows (consumer spec sections 2 and 3, decisions D3 and D6): the escrow row with its
 * durable timers, the per-escrow event log, and the sellers' link-signing secrets.
 * State invariants live in constraints: status set, amount bounds, a courier only with a
 * tracking number, one partner ref per seller.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE link_secrets (
      user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      secret_sealed text NOT NULL,
      preview text NOT NULL,
      created_at timestamptz NOT NULL
    );

    CREATE TABLE escrows (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      buyer_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      seller_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      created_by uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      source text NOT NULL,
      item_name text NOT NULL,
      description text NOT NULL DEFAULT '',
      amount bigint NOT NULL,
      category text NOT NULL,
      status text NOT NULL DEFAULT 'pending_payment',
      partner_ref text,
      partner_sig_version integer,
      courier text,
      tracking_number text,
      expires_at timestamptz NOT NULL,
      auto_release_at timestamptz,
      extension_count integer NOT NULL DEFAULT 0,
      fee_amount bigint,
      cancel_reason text,
      paid_at timestamptz,
      sent_at timestamptz,
      received_at timestamptz,
      released_at timestamptz,
      disputed_at timestamptz,
      refunded_at timestamptz,
      cancelled_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT escrows_status_known CHECK (status IN
        ('pending_payment', 'paid', 'sent', 'received', 'released', 'disputed', 'refunded', 'cancelled')),
      CONSTRAINT escrows_source_known CHECK (source IN ('link', 'direct')),
      CONSTRAINT escrows_category_known CHECK (category IN ('goods', 'service', 'digital')),
      CONSTRAINT escrows_amount_range CHECK (amount BETWEEN 10000 AND 500000000),
      CONSTRAINT escrows_parties_differ CHECK (buyer_id <> seller_id),
      CONSTRAINT escrows_tracking_pair CHECK ((courier IS NULL) = (tracking_number IS NULL)),
      CONSTRAINT escrows_fee_range CHECK (fee_amount IS NULL OR (fee_amount >= 0 AND fee_amount <= amount)),
      CONSTRAINT escrows_extension_count_non_negative CHECK (extension_count >= 0),
      CONSTRAINT escrows_link_has_ref CHECK (source <> 'link' OR (partner_ref IS NOT NULL AND partner_sig_version IS NOT NULL)),
      CONSTRAINT escrows_item_name_length CHECK (char_length(item_name) BETWEEN 1 AND 200),
      CONSTRAINT escrows_description_length CHECK (char_length(description) <= 2000)
    );
    CREATE UNIQUE INDEX escrows_seller_ref_unique ON escrows (seller_id, partner_ref) WHERE partner_ref IS NOT NULL;
    CREATE INDEX escrows_buyer ON escrows (buyer_id, created_at DESC);
    CREATE INDEX escrows_seller ON escrows (seller_id, created_at DESC);
    -- The timer sweeper's two scans.
    CREATE INDEX escrows_auto_release_due ON escrows (auto_release_at) WHERE status IN ('sent', 'received');
    CREATE INDEX escrows_expiry_due ON escrows (expires_at) WHERE status = 'pending_payment';

    -- The planned partner event set (spec section 6), recorded per escrow. Append-only.
    CREATE TABLE escrow_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      escrow_id uuid NOT NULL REFERENCES escrows (id) ON DELETE RESTRICT,
      event text NOT NULL,
      actor_id uuid REFERENCES users (id) ON DELETE RESTRICT,
      actor_role text NOT NULL,
      data jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL,
      CONSTRAINT escrow_events_actor_role_known CHECK (actor_role IN ('buyer', 'seller', 'admin', 'system'))
    );
    CREATE INDEX escrow_events_escrow ON escrow_events (escrow_id, id);
    CREATE TRIGGER escrow_events_append_only BEFORE UPDATE OR DELETE ON escrow_events
      FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('escrow_events');
  await knex.schema.dropTable('escrows');
  await knex.schema.dropTable('link_secrets');
}
