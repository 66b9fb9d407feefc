import type { Knex } from 'knex';

/**
 * Hash chains (issue 47; decision 0028), the triggers: every journal line and staff audit row
 * inserted from now on is linked to its chain before it is written, whichever path inserts
 * it (ledger_post_many, a migration, a raw INSERT). Each chain position is unique.
 *
 * - journal_lines: the line's account row is updated to the new head and the line takes it.
 *   Postings hold that row FOR UPDATE already (ledger_post_many step 4), so this waits on
 *   nothing new; two lines of one account in one statement link one after the other.
 *   `journal_lines_chain` (account_id, chain_seq) replaces the index on account_id alone,
 *   which it covers, so an insert maintains as many indexes as before.
 * - staff_audit: the actor's head in audit_chain_heads is created or moved (ON CONFLICT), which
 *   serialises only the actions of one staff member.
 *
 * A row inserted with these triggers off (session_replication_role = replica) has no link or a
 * forged one; npm run ledger:check names it (shared/ledger/chains.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION ledger_chain_line() RETURNS trigger LANGUAGE plpgsql AS $$
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
    CREATE TRIGGER journal_lines_chain BEFORE INSERT ON journal_lines
      FOR EACH ROW EXECUTE FUNCTION ledger_chain_line();

    CREATE FUNCTION staff_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO audit_chain_heads AS h (chain, seq, hash)
        VALUES (coalesce(NEW.actor_id::text, 'system'), 1,
                sha256(staff_audit_canon(NEW.id, NEW.actor_id, NEW.action, NEW.target_type, NEW.target_id, NEW.note,
                                         NEW.details, NEW.ip, NEW.created_at, 1)))
      ON CONFLICT (chain) DO UPDATE
        SET seq = h.seq + 1,
            hash = sha256(h.hash || staff_audit_canon(NEW.id, NEW.actor_id, NEW.action, NEW.target_type, NEW.target_id, NEW.note,
                                                     NEW.details, NEW.ip, NEW.created_at, h.seq + 1))
      RETURNING h.seq, h.hash INTO NEW.chain_seq, NEW.chain_hash;
      RETURN NEW;
    END $$;
    CREATE TRIGGER staff_audit_chain BEFORE INSERT ON staff_audit
      FOR EACH ROW EXECUTE FUNCTION staff_audit_chain();

    CREATE UNIQUE INDEX journal_lines_chain ON journal_lines (account_id, chain_seq);
    DROP INDEX journal_lines_account;
    CREATE UNIQUE INDEX staff_audit_chain_position ON staff_audit ((coalesce(actor_id::text, 'system')), chain_seq);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX staff_audit_chain_position;
    CREATE INDEX journal_lines_account ON journal_lines (account_id);
    DROP INDEX journal_lines_chain;
    DROP TRIGGER staff_audit_chain ON staff_audit;
    DROP FUNCTION staff_audit_chain();
    DROP TRIGGER journal_lines_chain ON journal_lines;
    DROP FUNCTION ledger_chain_line();
  `);
}
