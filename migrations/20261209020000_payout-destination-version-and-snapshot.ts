import type { Knex } from 'knex';

/**
 * Issue 42 (decision 0019, "Issue 42" addendum), the schema half:
 * - `payout_instructions.destination_version`: bumped on every edit (the label included) and
 *   when the workspace goes live; staff verification names the version it was shown and is
 *   refused when the row moved on.
 * - `disbursements.destination_*`: where a payout was released to (bank, holder, last four
 *   digits; the label is `instruction_label`, kept since issue 27), written by the release in
 *   its own transaction. Nullable here; 20261209020100 fills the existing rows and
 *   20261209020200 makes them required.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payout_instructions
      ADD COLUMN destination_version integer NOT NULL DEFAULT 1,
      ADD CONSTRAINT payout_instructions_destination_version CHECK (destination_version >= 1);
    ALTER TABLE disbursements
      ADD COLUMN destination_bank_name text,
      ADD COLUMN destination_account_holder text,
      ADD COLUMN destination_account_last4 text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE disbursements
      DROP COLUMN destination_account_last4,
      DROP COLUMN destination_account_holder,
      DROP COLUMN destination_bank_name;
    ALTER TABLE payout_instructions
      DROP CONSTRAINT payout_instructions_destination_version,
      DROP COLUMN destination_version;
  `);
}
