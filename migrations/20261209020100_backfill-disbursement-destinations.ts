import type { Knex } from 'knex';

/**
 * Issue 42, the data half of 20261209020000: payouts released before the release wrote
 * their destination get the destination of their instruction as it is NOW (the only record
 * there is). A payout whose instruction was edited after it settled therefore carries the
 * edited destination; every payout released from this version on carries the one it was
 * released to (decision 0019, "Issue 42" addendum). Deleted instructions still have their
 * row (the delete is soft), so every payout finds one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE disbursements d
       SET destination_bank_name = p.bank_name,
           destination_account_holder = p.account_holder,
           destination_account_last4 = p.account_number_last4
      FROM payout_instructions p
     WHERE p.id = d.payout_instruction_id
       AND d.destination_bank_name IS NULL
  `);
}

export async function down(): Promise<void> {
  // The columns go with 20261209020000's down; nothing to undo here.
}
