import type { Knex } from 'knex';

/**
 * The lines trigger locks the users rows of the accounts it moves FOR NO KEY UPDATE instead
 * of FOR UPDATE (post() does the same). It still serialises balance changes, but no longer
 * blocks the FOR KEY SHARE locks that foreign-key checks take when a row referencing the
 * user is inserted (an escrow, an escrow event, a notification). Under load that wait
 * closed deadlock cycles with the hot ledger accounts (found by npm run chaos).
 */
const body = (userLock: string) => `
    CREATE OR REPLACE FUNCTION ledger_apply_lines() RETURNS trigger LANGUAGE plpgsql
      SET ledger.applying_lines = 'on' AS $$
    BEGIN
      -- Lock order of post(): users rows, then ledger accounts, each in id order (post()
      -- holds them already; raw inserts get the same order).
      PERFORM 1 FROM users
        WHERE id IN (SELECT a.user_id FROM ledger_accounts a WHERE a.id IN (SELECT account_id FROM new_lines))
        ORDER BY id ${userLock};
      PERFORM 1 FROM ledger_accounts WHERE id IN (SELECT account_id FROM new_lines) ORDER BY id FOR UPDATE;
      -- One net change per account for the whole statement, whatever the order of its lines.
      WITH delta AS (
        SELECT account_id, SUM(amount)::bigint AS amount FROM new_lines GROUP BY account_id
      ), moved AS (
        UPDATE ledger_accounts a SET balance = a.balance + d.amount
          FROM delta d WHERE a.id = d.account_id AND d.amount <> 0
          RETURNING a.user_id, d.amount
      )
      UPDATE users u SET balance = u.balance + m.amount FROM moved m WHERE u.id = m.user_id;
      RETURN NULL;
    END $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(body('FOR NO KEY UPDATE'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(body('FOR UPDATE'));
}
