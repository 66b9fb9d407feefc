import type { Knex } from 'knex';

/**
 * Hash chains (decision 0028): a journal line links to its account's previous line without
 * writing the account row per line, and the head moves once per statement with the balance.
 *
 * 20261212000210 moved the head (`ledger_accounts.chain_seq`, `chain_hash`) with an UPDATE per
 * line, on top of the balance's UPDATE per statement: every posting wrote its accounts' rows
 * twice or more. On a hot account (gateway:clearing while the release bench seeded 105,410
 * paid escrows) the extra row versions lengthened every posting that held its lock, and
 * seeding ran at about half the rate of the code before the chains.
 *
 * Now:
 * - the line trigger takes the account row FOR UPDATE (a posting holds it already:
 *   ledger_post_many step 4; a raw INSERT waits here for any posting on the account), then
 *   reads the account's last line through `journal_lines_chain` (a new snapshot after the lock
 *   sees every committed line; a row trigger sees the lines its statement inserted before this
 *   one), and links the line to it;
 * - the lines trigger (`ledger_apply_lines`, once per statement) moves each account's head to
 *   its last line of the statement in the same UPDATE that moves the balance (an account whose
 *   lines net to zero is updated too, for its head; its user's balance is not touched).
 * The body of `ledger_apply_lines` is otherwise the one of 20261209300000 (currencies).
 */
const APPLY_LINES = (headColumns: boolean) => `
    CREATE OR REPLACE FUNCTION ledger_apply_lines() RETURNS trigger LANGUAGE plpgsql
      SET ledger.applying_lines = 'on' AS $$
    DECLARE
      mixed bigint;
    BEGIN
      SELECT l.entry_id INTO mixed
        FROM journal_lines l JOIN ledger_accounts a ON a.id = l.account_id
       WHERE l.entry_id IN (SELECT DISTINCT entry_id FROM new_lines)
       GROUP BY l.entry_id HAVING count(DISTINCT a.currency) > 1
       LIMIT 1;
      IF mixed IS NOT NULL THEN
        RAISE EXCEPTION 'journal entry % has lines in more than one currency', mixed
          USING ERRCODE = 'check_violation', CONSTRAINT = 'journal_entries_one_currency';
      END IF;
      -- Lock order of post(): users rows, then ledger accounts, each in id order (post()
      -- holds them already; raw inserts get the same order).
      PERFORM 1 FROM users
        WHERE id IN (SELECT a.user_id FROM ledger_accounts a WHERE a.id IN (SELECT account_id FROM new_lines))
        ORDER BY id FOR NO KEY UPDATE;
      PERFORM 1 FROM ledger_accounts WHERE id IN (SELECT account_id FROM new_lines) ORDER BY id FOR UPDATE;
      ${
        headColumns
          ? `-- One net change per account for the whole statement, whatever the order of its lines,
      -- and the account's chain head moved to its last line of the statement (decision 0028).
      WITH delta AS (
        SELECT account_id, SUM(amount)::bigint AS amount, max(chain_seq) AS last_seq FROM new_lines GROUP BY account_id
      ), head AS (
        SELECT d.account_id, d.amount, d.last_seq, l.chain_hash AS last_hash
          FROM delta d JOIN new_lines l ON l.account_id = d.account_id AND l.chain_seq = d.last_seq
      ), moved AS (
        UPDATE ledger_accounts a SET balance = a.balance + h.amount, chain_seq = h.last_seq, chain_hash = h.last_hash
          FROM head h WHERE a.id = h.account_id
          RETURNING a.user_id, h.amount
      )
      UPDATE users u SET balance = u.balance + m.amount FROM moved m WHERE u.id = m.user_id AND m.amount <> 0;`
          : `-- One net change per account for the whole statement, whatever the order of its lines.
      WITH delta AS (
        SELECT account_id, SUM(amount)::bigint AS amount FROM new_lines GROUP BY account_id
      ), moved AS (
        UPDATE ledger_accounts a SET balance = a.balance + d.amount
          FROM delta d WHERE a.id = d.account_id AND d.amount <> 0
          RETURNING a.user_id, d.amount
      )
      UPDATE users u SET balance = u.balance + m.amount FROM moved m WHERE u.id = m.user_id;`
      }
      RETURN NULL;
    END $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION ledger_chain_line() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      e record;
      prev_seq bigint;
      prev_hash bytea;
    BEGIN
      PERFORM 1 FROM ledger_accounts WHERE id = NEW.account_id FOR UPDATE;
      SELECT l.chain_seq, l.chain_hash INTO prev_seq, prev_hash
        FROM journal_lines l
       WHERE l.account_id = NEW.account_id AND l.chain_seq IS NOT NULL
       ORDER BY l.chain_seq DESC
       LIMIT 1;
      SELECT kind, ref_type, ref_id, posting_key, memo, created_at INTO e FROM journal_entries WHERE id = NEW.entry_id;
      NEW.chain_seq := coalesce(prev_seq, 0) + 1;
      NEW.chain_hash := sha256(coalesce(prev_hash, ''::bytea)
                               || ledger_line_canon(NEW.id, NEW.entry_id, NEW.account_id, NEW.amount, NEW.chain_seq,
                                                    e.kind, e.ref_type, e.ref_id, e.posting_key, e.memo, e.created_at));
      RETURN NEW;
    END $$;
    ${APPLY_LINES(true)}
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION ledger_chain_line() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      e record;
    BEGIN
      SELECT kind, ref_type, ref_id, posting_key, memo, created_at INTO e FROM journal_entries WHERE id = NEW.entry_id;
      UPDATE ledger_accounts a
         SET chain_seq = a.chain_seq + 1,
             chain_hash = sha256(coalesce(a.chain_hash, ''::bytea)
                                 || ledger_line_canon(NEW.id, NEW.entry_id, NEW.account_id, NEW.amount, a.chain_seq + 1,
                                                      e.kind, e.ref_type, e.ref_id, e.posting_key, e.memo, e.created_at))
       WHERE a.id = NEW.account_id
       RETURNING a.chain_seq, a.chain_hash INTO NEW.chain_seq, NEW.chain_hash;
      RETURN NEW;
    END $$;
    ${APPLY_LINES(false)}
  `);
}
