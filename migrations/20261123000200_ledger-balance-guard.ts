import type { Knex } from 'knex';

/**
 * Balances move only through journal lines (decision 0005). Inserting journal lines
 * applies them: one statement-level trigger adds each account's net amount to
 * ledger_accounts.balance and, for user accounts, to users.balance. Guard triggers refuse
 * any other change of those balances (and of an account's owner or kind) and any new
 * account or user that starts with a balance. The users table opens each user's ledger
 * account when the row is inserted, so a posting never creates one under a user row lock.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Runs with ledger.applying_lines = 'on' for its own duration only (restored on exit,
    -- even on error); the guards accept a balance change only from a nested trigger that
    -- sees this flag, so neither the flag set by a client nor another trigger opens them.
    CREATE FUNCTION ledger_apply_lines() RETURNS trigger LANGUAGE plpgsql
      SET ledger.applying_lines = 'on' AS $$
    BEGIN
      -- Lock order of post(): users rows, then ledger accounts, each in id order (post()
      -- holds them already; raw inserts get the same order).
      PERFORM 1 FROM users
        WHERE id IN (SELECT a.user_id FROM ledger_accounts a WHERE a.id IN (SELECT account_id FROM new_lines))
        ORDER BY id FOR UPDATE;
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
    END $$;
    CREATE TRIGGER journal_lines_apply AFTER INSERT ON journal_lines
      REFERENCING NEW TABLE AS new_lines
      FOR EACH STATEMENT EXECUTE FUNCTION ledger_apply_lines();

    CREATE FUNCTION ledger_opening_balance_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '%.balance must start at 0, not %: money arrives only through journal lines', TG_TABLE_NAME, NEW.balance
        USING ERRCODE = '42501', HINT = 'Insert the row without a balance and post a journal entry (shared/ledger post()).';
    END $$;
    CREATE TRIGGER ledger_accounts_opening_balance_guard BEFORE INSERT ON ledger_accounts FOR EACH ROW
      WHEN (NEW.balance <> 0) EXECUTE FUNCTION ledger_opening_balance_guard();
    CREATE TRIGGER users_opening_balance_guard BEFORE INSERT ON users FOR EACH ROW
      WHEN (NEW.balance <> 0) EXECUTE FUNCTION ledger_opening_balance_guard();

    CREATE FUNCTION ledger_balance_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF pg_trigger_depth() > 1 AND current_setting('ledger.applying_lines', true) = 'on' THEN
        RETURN NEW;
      END IF;
      RAISE EXCEPTION '%.balance changes only through journal lines', TG_TABLE_NAME
        USING ERRCODE = '42501', HINT = 'Post a journal entry (shared/ledger post()); correct a mistake with a reversing entry.';
    END $$;
    CREATE TRIGGER ledger_accounts_balance_guard BEFORE UPDATE ON ledger_accounts FOR EACH ROW
      WHEN (OLD.balance IS DISTINCT FROM NEW.balance) EXECUTE FUNCTION ledger_balance_guard();
    CREATE TRIGGER users_balance_guard BEFORE UPDATE ON users FOR EACH ROW
      WHEN (OLD.balance IS DISTINCT FROM NEW.balance) EXECUTE FUNCTION ledger_balance_guard();

    -- The lines trigger moves users.balance by ledger_accounts.user_id: an account keeps
    -- its owner and kind for good.
    CREATE FUNCTION ledger_account_identity_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.user_id IS DISTINCT FROM NEW.user_id THEN
        RAISE EXCEPTION 'ledger_accounts.user_id cannot change: an account belongs to one user for good'
          USING ERRCODE = '42501';
      END IF;
      RAISE EXCEPTION 'ledger_accounts.kind cannot change: open another account instead'
        USING ERRCODE = '42501';
    END $$;
    CREATE TRIGGER ledger_accounts_identity_guard BEFORE UPDATE ON ledger_accounts FOR EACH ROW
      WHEN (OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.kind IS DISTINCT FROM NEW.kind)
      EXECUTE FUNCTION ledger_account_identity_guard();

    -- Sign-up opens the user's account in the same transaction as the users row.
    CREATE FUNCTION ledger_open_user_account() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ledger_accounts (code, kind, user_id, allow_negative, created_at)
        VALUES ('user:' || NEW.id::text, 'user', NEW.id, false, NEW.created_at);
      RETURN NULL;
    END $$;
    CREATE TRIGGER users_open_ledger_account AFTER INSERT ON users FOR EACH ROW
      EXECUTE FUNCTION ledger_open_user_account();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER users_open_ledger_account ON users;
    DROP FUNCTION ledger_open_user_account();
    DROP TRIGGER ledger_accounts_identity_guard ON ledger_accounts;
    DROP FUNCTION ledger_account_identity_guard();
    DROP TRIGGER users_balance_guard ON users;
    DROP TRIGGER ledger_accounts_balance_guard ON ledger_accounts;
    DROP FUNCTION ledger_balance_guard();
    DROP TRIGGER users_opening_balance_guard ON users;
    DROP TRIGGER ledger_accounts_opening_balance_guard ON ledger_accounts;
    DROP FUNCTION ledger_opening_balance_guard();
    DROP TRIGGER journal_lines_apply ON journal_lines;
    DROP FUNCTION ledger_apply_lines();
  `);
}
