import type { Knex } from 'knex';

/**
 * One-time withdrawal fee vouchers (consumer spec 2 "Withdrawal configuration", 4.4;
 * decision 0008). A voucher is the offer; a redemption is one user's copy of it, used by
 * at most one withdrawal at a time: `used` exactly when it names the withdrawal that
 * consumed it (restored to `available` if that withdrawal is rejected).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE withdrawal_fee_vouchers (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      code text NOT NULL,
      percent_off integer,
      amount_off bigint,
      max_discount_amount bigint,
      expires_at timestamptz,
      created_at timestamptz NOT NULL,
      CONSTRAINT withdrawal_fee_vouchers_code_unique UNIQUE (code),
      CONSTRAINT withdrawal_fee_vouchers_code_format CHECK (code ~ '^[A-Z0-9_-]{3,40}$'),
      CONSTRAINT withdrawal_fee_vouchers_one_kind CHECK ((percent_off IS NULL) <> (amount_off IS NULL)),
      CONSTRAINT withdrawal_fee_vouchers_percent_range CHECK (percent_off IS NULL OR percent_off BETWEEN 1 AND 100),
      CONSTRAINT withdrawal_fee_vouchers_amount_positive CHECK (amount_off IS NULL OR amount_off > 0),
      CONSTRAINT withdrawal_fee_vouchers_max_positive CHECK (max_discount_amount IS NULL OR max_discount_amount > 0)
    );

    CREATE TABLE withdrawal_fee_voucher_redemptions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      voucher_id uuid NOT NULL REFERENCES withdrawal_fee_vouchers (id) ON DELETE RESTRICT,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      status text NOT NULL DEFAULT 'available',
      withdrawal_id uuid REFERENCES withdrawals (id) ON DELETE RESTRICT,
      used_at timestamptz,
      created_at timestamptz NOT NULL,
      CONSTRAINT withdrawal_fee_voucher_redemptions_status_known CHECK (status IN ('available', 'used')),
      CONSTRAINT withdrawal_fee_voucher_redemptions_used_recorded CHECK (
        (status = 'used') = (withdrawal_id IS NOT NULL) AND (status = 'used') = (used_at IS NOT NULL)),
      CONSTRAINT withdrawal_fee_voucher_redemptions_once_per_user UNIQUE (voucher_id, user_id)
    );
    CREATE UNIQUE INDEX withdrawal_fee_voucher_redemptions_one_per_withdrawal
      ON withdrawal_fee_voucher_redemptions (withdrawal_id) WHERE withdrawal_id IS NOT NULL;
    CREATE INDEX withdrawal_fee_voucher_redemptions_user ON withdrawal_fee_voucher_redemptions (user_id, status);

    ALTER TABLE withdrawals
      ADD CONSTRAINT withdrawals_voucher_redemption_fk
      FOREIGN KEY (voucher_redemption_id) REFERENCES withdrawal_fee_voucher_redemptions (id) ON DELETE RESTRICT;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE withdrawals DROP CONSTRAINT withdrawals_voucher_redemption_fk');
  await knex.schema.dropTable('withdrawal_fee_voucher_redemptions');
  await knex.schema.dropTable('withdrawal_fee_vouchers');
}
