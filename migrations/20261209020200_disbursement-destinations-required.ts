import type { Knex } from 'knex';

/** Issue 42: once 20261209020100 filled them, every payout carries its destination (a release writes it). */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE disbursements
      ALTER COLUMN destination_bank_name SET NOT NULL,
      ALTER COLUMN destination_account_holder SET NOT NULL,
      ALTER COLUMN destination_account_last4 SET NOT NULL,
      ADD CONSTRAINT disbursements_destination_last4 CHECK (destination_account_last4 ~ '^[0-9]{4}$');
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE disbursements
      DROP CONSTRAINT disbursements_destination_last4,
      ALTER COLUMN destination_account_last4 DROP NOT NULL,
      ALTER COLUMN destination_account_holder DROP NOT NULL,
      ALTER COLUMN destination_bank_name DROP NOT NULL;
  `);
}
