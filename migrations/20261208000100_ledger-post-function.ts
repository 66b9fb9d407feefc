import type { Knex } from 'knex';

/**
 * `ledger_post_many`: shared/ledger/post.ts `postMany` in one round trip (issue 29: a
 * posting was eight statements from Node, each a round trip with knex's query building:
 * the posting keys' check, the users' lock, the accounts' creation, their ids, their lock,
 * the entry ids, the entries, the lines). The same steps in the same order, so the same
 * locks are taken in the same order (ARCHITECTURE rule 2; decision 0005):
 *
 * 1. Posting keys already used (or used earlier in the list) make their posting a
 *    duplicate that moves nothing; the others are fresh.
 * 2. The users rows of the fresh postings' lines, FOR NO KEY UPDATE, in id order. Lock
 *    order everywhere: users rows first (services often lock a user row before posting),
 *    then ledger accounts, each in id order, so two transactions over the same accounts
 *    never wait on each other in a circle; the users rows are locked before any account is
 *    created, so a transaction holding a user row never waits on one that created an
 *    account and now waits for that row. NO KEY UPDATE serialises balance changes without
 *    blocking the KEY SHARE locks of foreign-key checks, so inserting a row that references
 *    the user (an escrow, an event, a notification) never waits on a posting (that wait
 *    closed deadlock cycles with the hot ledger accounts in the chaos run).
 * 3. Missing escrow/milestone/system accounts created (in code order, ON CONFLICT DO
 *    NOTHING); user accounts are never created here: the database opens one with the users
 *    row (a key-share lock on it here could wait behind a holder of that row), so a missing
 *    one is an error.
 * 4. The accounts locked FOR UPDATE in id order; the next statement (a new snapshot in a
 *    VOLATILE function) reads their committed balances.
 * 5. Each fresh posting checked as it would leave the balances, in list order (a running
 *    sum per account); a shortfall raises check_violation on
 *    ledger_accounts_balance_non_negative, which post.ts already maps to
 *    InsufficientFundsError (the CHECK constraint itself remains the last line of defence).
 * 6. Entry ids from the sequence, the entries, then the lines in one INSERT (the balance
 *    trigger applies them as one net change per account). A posting key taken by a
 *    concurrent transaction since step 1 fails on its unique constraint, as before.
 *
 * Arguments: the postings as parallel arrays (kind, ref_type, ref_id, posting_key, memo),
 * the lines as parallel arrays (posting's 1-based index, account code, kind, user id,
 * allow_negative, amount), and the time of the entries. Returns one row per posting, in
 * order: its entry id and whether it was a duplicate.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION ledger_post_many(
        e_kinds text[], e_ref_types text[], e_ref_ids text[], e_keys text[], e_memos text[],
        l_postings integer[], l_codes text[], l_kinds text[], l_users uuid[], l_allow_negative boolean[], l_amounts bigint[],
        p_at timestamptz)
      RETURNS TABLE (posting integer, entry_id bigint, duplicate boolean)
      LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
      n integer := cardinality(e_kinds);
      ids bigint[] := array_fill(NULL::bigint, ARRAY[n]);
      dups boolean[] := array_fill(false, ARRAY[n]);
      first_of integer[] := array_fill(NULL::integer, ARRAY[n]);
      fresh integer[] := '{}';
      is_fresh boolean[] := array_fill(false, ARRAY[n]);
      k integer;
      j integer;
      used bigint;
      missing text;
      short boolean;
    BEGIN
      IF n IS NULL OR n = 0 THEN
        RETURN;
      END IF;
      -- 1. Duplicates: a key already used, or used earlier in the list.
      FOR k IN 1..n LOOP
        IF e_keys[k] IS NOT NULL THEN
          SELECT je.id INTO used FROM journal_entries je WHERE je.posting_key = e_keys[k];
          IF FOUND THEN
            ids[k] := used;
            dups[k] := true;
            CONTINUE;
          END IF;
          j := array_position(e_keys, e_keys[k]);
          IF j < k THEN
            first_of[k] := j;
            dups[k] := true;
            CONTINUE;
          END IF;
        END IF;
        fresh := fresh || k;
        is_fresh[k] := true;
      END LOOP;

      IF cardinality(fresh) > 0 THEN
        -- 2. The users rows first, in id order.
        PERFORM 1 FROM users u
          WHERE u.id IN (SELECT l.u FROM unnest(l_postings, l_users) AS l(p, u) WHERE l.u IS NOT NULL AND is_fresh[l.p])
          ORDER BY u.id FOR NO KEY UPDATE OF u;
        -- 3. Missing non-user accounts, in code order.
        INSERT INTO ledger_accounts (code, kind, user_id, allow_negative, created_at)
          SELECT DISTINCT ON (l.c) l.c, l.k, NULL::uuid, l.a, p_at
            FROM unnest(l_postings, l_codes, l_kinds, l_allow_negative) AS l(p, c, k, a)
           WHERE l.k <> 'user' AND is_fresh[l.p]
           ORDER BY l.c
          ON CONFLICT (code) DO NOTHING;
        SELECT min(l.c) INTO missing
          FROM unnest(l_postings, l_codes) AS l(p, c)
         WHERE is_fresh[l.p] AND NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.code = l.c);
        IF missing IS NOT NULL THEN
          RAISE EXCEPTION 'ledger account % missing: % has no ledger account (no such user?)', missing, missing
            USING ERRCODE = 'no_data_found';
        END IF;
        -- 4. The accounts, locked in id order.
        PERFORM 1 FROM ledger_accounts a
          WHERE a.code IN (SELECT l.c FROM unnest(l_postings, l_codes) AS l(p, c) WHERE is_fresh[l.p])
          ORDER BY a.id FOR UPDATE OF a;
        -- 5. Each posting as it would leave the balances, in list order.
        SELECT EXISTS (
          SELECT 1
            FROM (SELECT a.allow_negative,
                         a.balance + sum(d.delta) OVER (PARTITION BY a.id ORDER BY d.p) AS after
                    FROM (SELECT l.c, l.p, sum(l.amt) AS delta
                            FROM unnest(l_postings, l_codes, l_amounts) AS l(p, c, amt)
                           WHERE is_fresh[l.p]
                           GROUP BY l.c, l.p) d
                    JOIN ledger_accounts a ON a.code = d.c) x
           WHERE NOT x.allow_negative AND x.after < 0) INTO short;
        IF short THEN
          RAISE EXCEPTION 'insufficient balance for this posting'
            USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_accounts_balance_non_negative';
        END IF;
        -- 6. Entry ids, entries, lines.
        FOREACH k IN ARRAY fresh LOOP
          ids[k] := nextval(pg_get_serial_sequence('journal_entries', 'id'));
        END LOOP;
        INSERT INTO journal_entries (id, kind, ref_type, ref_id, posting_key, memo, created_at) OVERRIDING SYSTEM VALUE
          SELECT ids[f.k], e_kinds[f.k], e_ref_types[f.k], e_ref_ids[f.k], e_keys[f.k], e_memos[f.k], p_at
            FROM unnest(fresh) WITH ORDINALITY AS f(k, ord)
           ORDER BY f.ord;
        INSERT INTO journal_lines (entry_id, account_id, amount)
          SELECT ids[l.p], a.id, l.amt
            FROM unnest(l_postings, l_codes, l_amounts) WITH ORDINALITY AS l(p, c, amt, ord)
            JOIN ledger_accounts a ON a.code = l.c
           WHERE is_fresh[l.p]
           ORDER BY l.ord;
      END IF;

      -- A key used earlier in the list: the first posting's entry.
      FOR k IN 1..n LOOP
        IF first_of[k] IS NOT NULL THEN
          ids[k] := ids[first_of[k]];
        END IF;
      END LOOP;
      RETURN QUERY SELECT g.k, ids[g.k], dups[g.k] FROM generate_series(1, n) AS g(k);
    END $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'DROP FUNCTION ledger_post_many(text[], text[], text[], text[], text[], integer[], text[], text[], uuid[], boolean[], bigint[], timestamptz)',
  );
}
