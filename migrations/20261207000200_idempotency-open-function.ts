import type { Knex } from 'knex';

/**
 * `idempotency_open`: the key's advisory lock and, once held, its stored row, in one round
 * trip (shared/idempotency.ts openKey; issue 29). A VOLATILE plpgsql function takes a new
 * snapshot for each statement in it, so the row is read after the lock was taken, exactly
 * as the two separate statements did: a request that held the key and committed before the
 * lock was granted is seen, and replayed. Returns one row: `locked` false (someone holds the
 * key; nothing read), or true with the stored columns (all NULL when there is no row).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION idempotency_open(p_scope text, p_endpoint text, p_key uuid)
      RETURNS TABLE (locked boolean, request_hash text, state text, response_status integer, response_body text, expires_at timestamptz)
      LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      IF NOT pg_try_advisory_xact_lock(hashtextextended(p_scope || '|' || p_endpoint || '|' || p_key::text, 0)) THEN
        RETURN QUERY SELECT false, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::timestamptz;
        RETURN;
      END IF;
      RETURN QUERY
        SELECT true, k.request_hash, k.state, k.response_status, k.response_body, k.expires_at
          FROM (SELECT 1) one
          LEFT JOIN idempotency_keys k ON k.scope = p_scope AND k.endpoint = p_endpoint AND k.key = p_key;
    END $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION idempotency_open(text, text, uuid)');
}
