import type { Knex } from 'knex';

/**
 * Ledger accounts per currency (issue 42 point 4; decision 0023). Until now an account had
 * no currency: a USD milestone's money and an IDR milestone's passed through the same
 * `enterprise:*` system accounts and summed together.
 *
 * 1. `ledger_accounts.currency` (three capital letters, IDR for every existing account).
 * 2. A milestone's account takes its deal's currency.
 * 3. History: the part of each shared enterprise account that came from entries of a
 *    non-IDR deal (entries refer to a deal_milestone or a disbursement) moves to that
 *    account's own currency account (`<code>:<CUR>`) with one reclassifying entry per
 *    account and currency (kind `ledger.currency_reclassified`; the only entries whose lines
 *    are in two currencies, and only ever made here). On a database without non-IDR money
 *    nothing moves.
 * 4. From here on the database refuses, in the lines trigger, any entry whose lines are in
 *    more than one currency, and any change of an account's currency.
 * 5. `ledger_post_many` takes each line's currency: an account it creates gets it, and a line
 *    naming a currency other than its existing account's is refused (22023).
 */

const applyLines = (currencyCheck: string) => `
    CREATE OR REPLACE FUNCTION ledger_apply_lines() RETURNS trigger LANGUAGE plpgsql
      SET ledger.applying_lines = 'on' AS $$
    DECLARE
      mixed bigint;
    BEGIN
      ${currencyCheck}
      -- Lock order of post(): users rows, then ledger accounts, each in id order (post()
      -- holds them already; raw inserts get the same order).
      PERFORM 1 FROM users
        WHERE id IN (SELECT a.user_id FROM ledger_accounts a WHERE a.id IN (SELECT account_id FROM new_lines))
        ORDER BY id FOR NO KEY UPDATE;
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

// Every line of an entry in one currency: the entries this statement wrote lines for, with
// all their lines (an entry's lines may come in more than one statement).
const CURRENCY_CHECK = `
      SELECT l.entry_id INTO mixed
        FROM journal_lines l JOIN ledger_accounts a ON a.id = l.account_id
       WHERE l.entry_id IN (SELECT DISTINCT entry_id FROM new_lines)
       GROUP BY l.entry_id HAVING count(DISTINCT a.currency) > 1
       LIMIT 1;
      IF mixed IS NOT NULL THEN
        RAISE EXCEPTION 'journal entry % has lines in more than one currency', mixed
          USING ERRCODE = 'check_violation', CONSTRAINT = 'journal_entries_one_currency';
      END IF;`;

const postMany = (withCurrency: boolean) => `
    CREATE FUNCTION ledger_post_many(
        e_kinds text[], e_ref_types text[], e_ref_ids text[], e_keys text[], e_memos text[],
        l_postings integer[], l_codes text[], l_kinds text[], l_users uuid[], l_allow_negative boolean[], l_amounts bigint[],
        ${withCurrency ? 'l_currencies text[],' : ''}
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
        -- 3. Missing non-user accounts, in code order${withCurrency ? ', in the currency of their line' : ''}.
        INSERT INTO ledger_accounts (code, kind, user_id, allow_negative, created_at${withCurrency ? ', currency' : ''})
          SELECT DISTINCT ON (l.c) l.c, l.k, NULL::uuid, l.a, p_at${withCurrency ? ', l.cur' : ''}
            FROM unnest(l_postings, l_codes, l_kinds, l_allow_negative${withCurrency ? ', l_currencies' : ''}) AS l(p, c, k, a${withCurrency ? ', cur' : ''})
           WHERE l.k <> 'user' AND is_fresh[l.p]
           ORDER BY l.c
          ON CONFLICT (code) DO NOTHING;
        SELECT min(l.c) INTO missing
          FROM unnest(l_postings, l_codes) AS l(p, c)
         WHERE is_fresh[l.p] AND NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.code = l.c);
        IF missing IS NOT NULL THEN
          RAISE EXCEPTION 'ledger account % missing: % has no ledger account (no such user?)', missing, missing
            USING ERRCODE = 'no_data_found';
        END IF;${
          withCurrency
            ? `
        -- 3b. Each line in its account's currency (a milestone account is made in its deal's).
        SELECT min(l.c) INTO missing
          FROM unnest(l_postings, l_codes, l_currencies) AS l(p, c, cur)
          JOIN ledger_accounts a ON a.code = l.c
         WHERE is_fresh[l.p] AND a.currency <> l.cur;
        IF missing IS NOT NULL THEN
          RAISE EXCEPTION 'ledger account % is not in the currency of its posting line', missing
            USING ERRCODE = 'invalid_parameter_value';
        END IF;`
            : ''
        }
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
    END $$;`;

const OLD_SIGNATURE = 'ledger_post_many(text[], text[], text[], text[], text[], integer[], text[], text[], uuid[], boolean[], bigint[], timestamptz)';
const NEW_SIGNATURE = 'ledger_post_many(text[], text[], text[], text[], text[], integer[], text[], text[], uuid[], boolean[], bigint[], text[], timestamptz)';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE ledger_accounts ADD COLUMN currency text NOT NULL DEFAULT 'IDR'
      CONSTRAINT ledger_accounts_currency_valid CHECK (currency ~ '^[A-Z]{3}$');

    UPDATE ledger_accounts a SET currency = d.currency
      FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
     WHERE a.code = 'milestone:' || m.id::text AND d.currency <> 'IDR';
  `);

  // 3. History: each non-IDR entry's lines on the shared accounts, per account and currency.
  // (Any other account such an entry touched too: only the enterprise accounts do in practice.)
  const { rows } = await knex.raw<{ rows: { code: string; kind: string; allow_negative: boolean; currency: string; amount: string }[] }>(
    `WITH entry_currency AS (
       SELECT e.id, d.currency FROM journal_entries e
         JOIN deal_milestones m ON e.ref_type = 'deal_milestone' AND m.id::text = e.ref_id
         JOIN deals d ON d.id = m.deal_id
       UNION ALL
       SELECT e.id, b.currency FROM journal_entries e
         JOIN disbursements b ON e.ref_type = 'disbursement' AND b.id::text = e.ref_id
     )
     SELECT a.code, a.kind, a.allow_negative, ec.currency, sum(l.amount)::text AS amount
       FROM journal_lines l
       JOIN ledger_accounts a ON a.id = l.account_id
       JOIN entry_currency ec ON ec.id = l.entry_id
      WHERE a.kind <> 'user' AND a.code NOT LIKE 'milestone:%' AND ec.currency <> 'IDR'
      GROUP BY a.code, a.kind, a.allow_negative, ec.currency
     HAVING sum(l.amount) <> 0
      ORDER BY a.code, ec.currency`,
  );
  for (const r of rows) {
    const target = `${r.code}:${r.currency}`;
    await knex.raw(
      `INSERT INTO ledger_accounts (code, kind, user_id, allow_negative, created_at, currency)
       VALUES (?, ?, NULL, ?, now(), ?) ON CONFLICT (code) DO NOTHING`,
      [target, r.kind, r.allow_negative, r.currency],
    );
    await knex.raw(
      `WITH e AS (
         INSERT INTO journal_entries (kind, ref_type, ref_id, posting_key, memo, created_at)
         VALUES ('ledger.currency_reclassified', 'ledger_account', ?, ?, ?, now()) RETURNING id
       )
       INSERT INTO journal_lines (entry_id, account_id, amount)
       SELECT e.id, a.id, CASE WHEN a.code = ? THEN -?::bigint ELSE ?::bigint END
         FROM e, ledger_accounts a WHERE a.code IN (?, ?)`,
      [target, `currency-reclass:${target}`, `${r.currency} money of ${r.code} moved to ${target} (decision 0023)`, r.code, r.amount, r.amount, r.code, target],
    );
  }

  await knex.raw(`
    ${applyLines(CURRENCY_CHECK)}

    CREATE FUNCTION ledger_account_currency_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'ledger_accounts.currency cannot change: open an account in the other currency'
        USING ERRCODE = '42501';
    END $$;
    CREATE TRIGGER ledger_accounts_currency_guard BEFORE UPDATE ON ledger_accounts FOR EACH ROW
      WHEN (OLD.currency IS DISTINCT FROM NEW.currency) EXECUTE FUNCTION ledger_account_currency_guard();

    DROP FUNCTION ${OLD_SIGNATURE};
    ${postMany(true)}
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP FUNCTION ${NEW_SIGNATURE};
    ${postMany(false)}
    DROP TRIGGER ledger_accounts_currency_guard ON ledger_accounts;
    DROP FUNCTION ledger_account_currency_guard();
    ${applyLines('')}
  `);
  // The reclassifying entries stay (the ledger is append-only); the currency column goes.
  await knex.raw('ALTER TABLE ledger_accounts DROP COLUMN currency');
}
