import type { Knex } from 'knex';

/**
 * Withdrawals (consumer spec 2 and 4.4, decision 0008). The amount leaves the user's
 * balance when the row is written (the ledger moves it to payouts in flight in the same
 * transaction); the fee is fixed then and kept with its parts. Money and state invariants
 * are constraints: the fee is below the amount, net = amount - fee, the fee is its base
 * minus the discounts, each status carries the timestamps of the moves that led to it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE withdrawals (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      amount bigint NOT NULL,
      -- The configured rule after its floor and cap, then the loyalty and voucher discounts.
      fee_base bigint NOT NULL,
      loyalty_discount bigint NOT NULL DEFAULT 0,
      voucher_discount bigint NOT NULL DEFAULT 0,
      -- The used voucher (constraint added with the vouchers tables, next migration).
      voucher_redemption_id uuid,
      fee_amount bigint NOT NULL,
      net_amount bigint NOT NULL,
      method text NOT NULL,
      destination_details jsonb NOT NULL,
      -- sha256 of the method and the normalised destination (risk: new, changed, shared).
      destination_key text NOT NULL,
      destination_ack boolean NOT NULL DEFAULT false,
      status text NOT NULL DEFAULT 'pending',
      risk_action text NOT NULL,
      risk_flags jsonb NOT NULL DEFAULT '[]'::jsonb,
      admin_note text,
      processed_by uuid REFERENCES users (id) ON DELETE RESTRICT,
      processed_at timestamptz,
      approved_by uuid REFERENCES users (id) ON DELETE RESTRICT,
      approved_at timestamptz,
      -- The payout worker's claim: while processing, no other run calls the adapter before this time.
      payout_lease_until timestamptz,
      payout_attempts integer NOT NULL DEFAULT 0,
      payout_reference text,
      payout_error text,
      paid_at timestamptz,
      rejected_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT withdrawals_status_known CHECK (status IN ('pending', 'approved', 'processing', 'paid', 'rejected')),
      CONSTRAINT withdrawals_method_known CHECK (method IN ('bank_transfer', 'dana', 'gopay', 'crypto')),
      CONSTRAINT withdrawals_amount_positive CHECK (amount > 0),
      CONSTRAINT withdrawals_fee_parts_non_negative CHECK (fee_base >= 0 AND loyalty_discount >= 0 AND voucher_discount >= 0),
      CONSTRAINT withdrawals_fee_from_parts CHECK (fee_amount = fee_base - loyalty_discount - voucher_discount),
      CONSTRAINT withdrawals_fee_below_amount CHECK (fee_amount >= 0 AND fee_amount < amount),
      CONSTRAINT withdrawals_net_amount CHECK (net_amount = amount - fee_amount),
      CONSTRAINT withdrawals_voucher_has_discount CHECK ((voucher_redemption_id IS NULL) = (voucher_discount = 0)),
      CONSTRAINT withdrawals_destination_object CHECK (jsonb_typeof(destination_details) = 'object'),
      CONSTRAINT withdrawals_risk_action_known CHECK (risk_action IN ('allow', 'review')),
      CONSTRAINT withdrawals_risk_flags_array CHECK (jsonb_typeof(risk_flags) = 'array'),
      CONSTRAINT withdrawals_admin_note_length CHECK (admin_note IS NULL OR char_length(admin_note) <= 2000),
      CONSTRAINT withdrawals_payout_attempts_non_negative CHECK (payout_attempts >= 0),
      CONSTRAINT withdrawals_approved_recorded CHECK (
        status NOT IN ('approved', 'processing') OR (approved_at IS NOT NULL AND approved_by IS NOT NULL)),
      CONSTRAINT withdrawals_processing_leased CHECK (status <> 'processing' OR payout_lease_until IS NOT NULL),
      CONSTRAINT withdrawals_paid_recorded CHECK ((status = 'paid') = (paid_at IS NOT NULL)),
      CONSTRAINT withdrawals_rejected_recorded CHECK ((status = 'rejected') = (rejected_at IS NOT NULL)),
      CONSTRAINT withdrawals_processed_recorded CHECK ((processed_at IS NULL) = (status = 'pending'))
    );
    CREATE INDEX withdrawals_user ON withdrawals (user_id, created_at DESC, id DESC);
    CREATE INDEX withdrawals_status ON withdrawals (status, created_at, id);
    CREATE INDEX withdrawals_destination ON withdrawals (destination_key, user_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('withdrawals');
}
