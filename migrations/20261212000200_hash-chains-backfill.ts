import type { Knex } from 'knex';

/**
 * Hash chains (issue 47; decision 0028), the data part: links every journal line and staff
 * audit row written before the chains existed, in the order they were written (by id within
 * each chain), and sets each chain's head. The append-only triggers are off for this
 * transaction only (ALTER TABLE ... DISABLE TRIGGER is transactional): the rows' own columns
 * are not touched, only their new link columns are filled. Run before the chaining triggers
 * (20261212000210) exist, so nothing else writes a link meanwhile.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE journal_lines DISABLE TRIGGER journal_lines_append_only;
    ALTER TABLE staff_audit DISABLE TRIGGER staff_audit_append_only;

    DO $$
    DECLARE
      r record;
      chain_of bigint := NULL;
      audit_chain text := NULL;
      seq bigint;
      prev bytea;
    BEGIN
      FOR r IN
        SELECT l.id, l.entry_id, l.account_id, l.amount, e.kind, e.ref_type, e.ref_id, e.posting_key, e.memo, e.created_at
          FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
         WHERE l.chain_seq IS NULL
         ORDER BY l.account_id, l.id
      LOOP
        IF chain_of IS DISTINCT FROM r.account_id THEN
          chain_of := r.account_id;
          seq := 0;
          prev := ''::bytea;
        END IF;
        seq := seq + 1;
        prev := sha256(prev || ledger_line_canon(r.id, r.entry_id, r.account_id, r.amount, seq, r.kind, r.ref_type, r.ref_id, r.posting_key, r.memo, r.created_at));
        UPDATE journal_lines SET chain_seq = seq, chain_hash = prev WHERE id = r.id;
      END LOOP;

      FOR r IN
        SELECT a.*, coalesce(a.actor_id::text, 'system') AS chain FROM staff_audit a WHERE a.chain_seq IS NULL ORDER BY chain, a.id
      LOOP
        IF audit_chain IS DISTINCT FROM r.chain THEN
          audit_chain := r.chain;
          seq := 0;
          prev := ''::bytea;
        END IF;
        seq := seq + 1;
        prev := sha256(prev || staff_audit_canon(r.id, r.actor_id, r.action, r.target_type, r.target_id, r.note, r.details, r.ip, r.created_at, seq));
        UPDATE staff_audit SET chain_seq = seq, chain_hash = prev WHERE id = r.id;
      END LOOP;
    END $$;

    UPDATE ledger_accounts a SET chain_seq = h.chain_seq, chain_hash = h.chain_hash
      FROM (SELECT DISTINCT ON (account_id) account_id, chain_seq, chain_hash FROM journal_lines ORDER BY account_id, chain_seq DESC) h
     WHERE a.id = h.account_id;

    INSERT INTO audit_chain_heads (chain, seq, hash)
      SELECT DISTINCT ON (coalesce(actor_id::text, 'system')) coalesce(actor_id::text, 'system'), chain_seq, chain_hash
        FROM staff_audit ORDER BY coalesce(actor_id::text, 'system'), chain_seq DESC;

    ALTER TABLE staff_audit ENABLE TRIGGER staff_audit_append_only;
    ALTER TABLE journal_lines ENABLE TRIGGER journal_lines_append_only;
  `);
}

/** The links stay: 20261212000100's down drops their columns. */
export async function down(): Promise<void> {}
