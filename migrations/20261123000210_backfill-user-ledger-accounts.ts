import type { Knex } from 'knex';

/**
 * Opens a ledger account for every user who has none (new users get theirs from the
 * users_open_ledger_account trigger). The accounts start at 0: a user whose users.balance
 * is not 0 without an account is a projection error for `npm run ledger:check` to report
 * and staff to correct with a posting, not money to invent here.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    INSERT INTO ledger_accounts (code, kind, user_id, allow_negative, created_at)
    SELECT 'user:' || u.id::text, 'user', u.id, false, u.created_at
      FROM users u
     WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.user_id = u.id)
     ORDER BY u.created_at, u.id
    ON CONFLICT (code) DO NOTHING
  `);
}

export async function down(): Promise<void> {
  // Nothing to undo: the accounts are indistinguishable from those opened at sign-up, and
  // accounts with journal lines cannot be removed.
}
