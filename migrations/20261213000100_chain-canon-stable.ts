import type { Knex } from 'knex';

/**
 * Hash chains (decision 0028): the canonical-bytes functions declared STABLE, so that the
 * planner inlines them into the triggers' expressions. Their bodies, and so every byte they
 * give, are unchanged.
 *
 * 20261212000100 declared `chain_time`, `ledger_line_canon` and `staff_audit_canon`
 * IMMUTABLE, but their bodies call functions Postgres marks STABLE (`to_char`, `convert_to`,
 * `json_build_array`). A SQL function whose body is less immutable than it is declared is never
 * inlined, so each journal line's trigger ran `ledger_line_canon` through the SQL-function
 * executor: about 9 µs a line, 60,000 calls 655 ms against 124 ms inlined. Inserting 6,000
 * lines on two hot accounts in one statement took 258 ms with the chain trigger against 100 ms
 * before the chains; with these functions inlined, 212 ms.
 *
 * STABLE is also what they are: nothing may use them where IMMUTABLE is needed (an index,
 * a generated column), and none does.
 */
const FUNCTIONS = (volatility: 'STABLE' | 'IMMUTABLE') => `
    CREATE OR REPLACE FUNCTION chain_time(t timestamptz) RETURNS text LANGUAGE sql ${volatility} PARALLEL SAFE
      RETURN to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');

    CREATE OR REPLACE FUNCTION ledger_line_canon(
        l_id bigint, l_entry bigint, l_account bigint, l_amount bigint, l_seq bigint,
        e_kind text, e_ref_type text, e_ref_id text, e_key text, e_memo text, e_at timestamptz)
      RETURNS bytea LANGUAGE sql ${volatility} PARALLEL SAFE
      RETURN convert_to(json_build_array('ledger-line/1', l_id::text, l_entry::text, l_account::text, l_amount::text, l_seq::text,
                                         e_kind, e_ref_type, e_ref_id, e_key, e_memo, chain_time(e_at))::text, 'UTF8');

    CREATE OR REPLACE FUNCTION staff_audit_canon(
        a_id bigint, a_actor uuid, a_action text, a_target_type text, a_target_id text, a_note text,
        a_details jsonb, a_ip text, a_at timestamptz, a_seq bigint)
      RETURNS bytea LANGUAGE sql ${volatility} PARALLEL SAFE
      RETURN convert_to(json_build_array('staff-audit/1', a_id::text, a_actor::text, a_action, a_target_type, a_target_id, a_note,
                                         a_details::text, a_ip, chain_time(a_at), a_seq::text)::text, 'UTF8');
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(FUNCTIONS('STABLE'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(FUNCTIONS('IMMUTABLE'));
}
