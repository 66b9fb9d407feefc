import type { Knex } from 'knex';

/** Operator settings (fees and limits) and the payment gateways table. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE settings (
      key text PRIMARY KEY,
      value jsonb NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE TABLE payment_gateways (
      provider text PRIMARY KEY,
      display_name text NOT NULL,
      supported_methods text[] NOT NULL,
      is_manual boolean NOT NULL DEFAULT false,
      enabled boolean NOT NULL DEFAULT true,
      in_maintenance boolean NOT NULL DEFAULT false,
      config jsonb,
      fee_percent numeric(6, 3) NOT NULL DEFAULT 0,
      fee_fixed bigint NOT NULL DEFAULT 0,
      sort_order integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT payment_gateways_fee_percent_range CHECK (fee_percent >= 0 AND fee_percent <= 100),
      CONSTRAINT payment_gateways_fee_fixed_non_negative CHECK (fee_fixed >= 0)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('payment_gateways');
  await knex.schema.dropTable('settings');
}
