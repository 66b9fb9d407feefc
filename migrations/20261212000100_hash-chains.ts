import type { Knex } from 'knex';

/**
 * Hash chains for tamper evidence (issue 47; decision 0028), the schema part: the columns,
 * the chain heads and the functions that give a row's canonical bytes. The rows already
 * written are chained by 20261212000200; the triggers that chain every new row come in
 * 20261212000210, once every row has its link.
 *
 * - Ledger: one chain per ledger account over its journal lines, in the order they were
 *   posted (`journal_lines.chain_seq` 1, 2, …). A line's hash covers its own columns, its
 *   entry's (kind, reference, posting key, memo, time) and the previous line's hash of the
 *   same account. The head (`ledger_accounts.chain_seq`, `chain_hash`) sits on the account
 *   row every posting already locks FOR UPDATE (ledger_post_many step 4), so chaining adds
 *   no lock and no row that postings of other accounts wait for.
 * - Staff audit: one chain per actor (`coalesce(actor_id::text, 'system')`), heads in
 *   `audit_chain_heads`. Rows written by the service itself (the daily record of chain heads)
 *   have no actor: `actor_id` may now be NULL for actions named `system.*` only.
 *
 * The canonical bytes are a JSON array of text values (json_build_array's output, which
 * shared/ledger/chains.ts writes out the same way to verify without trusting these functions):
 * a version tag, then every column as text, times in UTC with microseconds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE ledger_accounts
      ADD COLUMN chain_seq bigint NOT NULL DEFAULT 0,
      ADD COLUMN chain_hash bytea,
      ADD CONSTRAINT ledger_accounts_chain_head CHECK ((chain_seq = 0) = (chain_hash IS NULL) AND chain_seq >= 0);

    ALTER TABLE journal_lines
      ADD COLUMN chain_seq bigint,
      ADD COLUMN chain_hash bytea,
      ADD CONSTRAINT journal_lines_chain_link CHECK ((chain_seq IS NULL) = (chain_hash IS NULL) AND chain_seq >= 1 AND octet_length(chain_hash) = 32);

    ALTER TABLE staff_audit
      ALTER COLUMN actor_id DROP NOT NULL,
      ADD CONSTRAINT staff_audit_actor_or_system CHECK (actor_id IS NOT NULL OR starts_with(action, 'system.')),
      ADD COLUMN chain_seq bigint,
      ADD COLUMN chain_hash bytea,
      ADD CONSTRAINT staff_audit_chain_link CHECK ((chain_seq IS NULL) = (chain_hash IS NULL) AND chain_seq >= 1 AND octet_length(chain_hash) = 32);

    CREATE TABLE audit_chain_heads (
      chain text PRIMARY KEY,
      seq bigint NOT NULL CONSTRAINT audit_chain_heads_seq_positive CHECK (seq >= 1),
      hash bytea NOT NULL CONSTRAINT audit_chain_heads_hash_length CHECK (octet_length(hash) = 32)
    );

    CREATE FUNCTION chain_time(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');

    CREATE FUNCTION ledger_line_canon(
        l_id bigint, l_entry bigint, l_account bigint, l_amount bigint, l_seq bigint,
        e_kind text, e_ref_type text, e_ref_id text, e_key text, e_memo text, e_at timestamptz)
      RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN convert_to(json_build_array('ledger-line/1', l_id::text, l_entry::text, l_account::text, l_amount::text, l_seq::text,
                                         e_kind, e_ref_type, e_ref_id, e_key, e_memo, chain_time(e_at))::text, 'UTF8');

    CREATE FUNCTION staff_audit_canon(
        a_id bigint, a_actor uuid, a_action text, a_target_type text, a_target_id text, a_note text,
        a_details jsonb, a_ip text, a_at timestamptz, a_seq bigint)
      RETURNS bytea LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN convert_to(json_build_array('staff-audit/1', a_id::text, a_actor::text, a_action, a_target_type, a_target_id, a_note,
                                         a_details::text, a_ip, chain_time(a_at), a_seq::text)::text, 'UTF8');
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP FUNCTION staff_audit_canon(bigint, uuid, text, text, text, text, jsonb, text, timestamptz, bigint);
    DROP FUNCTION ledger_line_canon(bigint, bigint, bigint, bigint, bigint, text, text, text, text, text, timestamptz);
    DROP FUNCTION chain_time(timestamptz);
    DROP TABLE audit_chain_heads;
    -- The service's own rows (the daily chain heads) have no actor and mean nothing without the chains.
    ALTER TABLE staff_audit DISABLE TRIGGER staff_audit_append_only;
    DELETE FROM staff_audit WHERE actor_id IS NULL;
    ALTER TABLE staff_audit ENABLE TRIGGER staff_audit_append_only;
    ALTER TABLE staff_audit DROP CONSTRAINT staff_audit_chain_link, DROP COLUMN chain_hash, DROP COLUMN chain_seq,
      DROP CONSTRAINT staff_audit_actor_or_system, ALTER COLUMN actor_id SET NOT NULL;
    ALTER TABLE journal_lines DROP CONSTRAINT journal_lines_chain_link, DROP COLUMN chain_hash, DROP COLUMN chain_seq;
    ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_chain_head, DROP COLUMN chain_hash, DROP COLUMN chain_seq;
  `);
}
