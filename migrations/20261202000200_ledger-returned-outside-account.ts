import type { Knex } from 'knex';

/**
 * The system account `payments:returned_outside` (SYSTEM_ACCOUNTS.returnedOutside): money that
 * came in through gateway clearing and staff returned to the payer outside the service
 * (decision 0009). Opened here so it exists before its first posting; a posting would also
 * open it on demand, so this is idempotent.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    INSERT INTO ledger_accounts (code, kind, user_id, allow_negative, created_at)
    VALUES ('payments:returned_outside', 'system', NULL, false, now())
    ON CONFLICT (code) DO NOTHING
  `);
}

export async function down(knex: Knex): Promise<void> {
  // Only while nothing was posted to it (journal lines reference the account).
  await knex.raw(`
    DELETE FROM ledger_accounts a
     WHERE a.code = 'payments:returned_outside'
       AND NOT EXISTS (SELECT 1 FROM journal_lines l WHERE l.account_id = a.id)
  `);
}
