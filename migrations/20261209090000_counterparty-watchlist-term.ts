import type { Knex } from 'knex';

/**
 * The watchlist entry each counterparty's name matches, stored (issue 42, review R3;
 * decision 0020 "Issue 42: one tenant's counterparties"). The overview's watchlist alert
 * used to match every counterparty of the workspace against every entry on each read
 * (100,000 counterparties × 100 entries: 40 s per overview). Now triggers keep
 * `counterparties.watchlist_term` in the writing transaction, so no code path can forget
 * it: a counterparty inserted or renamed gets the first entry of its workspace's watchlist
 * its name contains (ignoring case, entries trimmed, blank ones ignored: the alert's rule);
 * a workspace whose watchlist changes has its counterparties' terms rewritten (at most
 * COUNTERPARTIES_PER_WORKSPACE rows, once per settings write). The partial index holds only
 * the counterparties that match, in the alert's order, so a read never touches the others.
 * The existing rows are filled by the next migration (data apart from schema).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE counterparties ADD COLUMN watchlist_term text;

    -- The watchlist's entries, trimmed, blank ones and non-strings left out, in its order.
    CREATE FUNCTION watchlist_entries(p_watchlist jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
      SELECT coalesce(array_agg(btrim(t.value #>> '{}') ORDER BY t.ord), '{}')
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_watchlist) = 'array' THEN p_watchlist ELSE '[]'::jsonb END) WITH ORDINALITY AS t(value, ord)
       WHERE jsonb_typeof(t.value) = 'string' AND btrim(t.value #>> '{}') <> ''
    $$;

    -- The first entry the name contains, ignoring case; p_lower holds the entries lowered
    -- (computed once per watchlist: a watchlist change matches 10,000 names x 100 entries
    -- in about 0.15 s this way, against 1.7 s re-reading the jsonb for each name).
    CREATE FUNCTION watchlist_term_in(p_name text, p_entries text[], p_lower text[]) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
    DECLARE
      v_name text := lower(p_name);
    BEGIN
      FOR i IN 1 .. coalesce(array_length(p_lower, 1), 0) LOOP
        IF strpos(v_name, p_lower[i]) > 0 THEN RETURN p_entries[i]; END IF;
      END LOOP;
      RETURN NULL;
    END $$;

    CREATE FUNCTION watchlist_lowered(p_entries text[]) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
      SELECT coalesce(array_agg(lower(e) ORDER BY o), '{}') FROM unnest(p_entries) WITH ORDINALITY AS u(e, o)
    $$;

    CREATE FUNCTION counterparties_watchlist_term() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      v_entries text[] := watchlist_entries((SELECT w.watchlist FROM workspaces w WHERE w.id = NEW.workspace_id));
    BEGIN
      NEW.watchlist_term := watchlist_term_in(NEW.name, v_entries, watchlist_lowered(v_entries));
      RETURN NEW;
    END $$;
    CREATE TRIGGER counterparties_watchlist_term BEFORE INSERT OR UPDATE OF name, workspace_id ON counterparties
      FOR EACH ROW EXECUTE FUNCTION counterparties_watchlist_term();

    CREATE FUNCTION workspaces_watchlist_terms() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      v_entries text[] := watchlist_entries(NEW.watchlist);
      v_lower text[] := watchlist_lowered(v_entries);
    BEGIN
      UPDATE counterparties c SET watchlist_term = x.term
        FROM (SELECT id, watchlist_term_in(name, v_entries, v_lower) AS term FROM counterparties WHERE workspace_id = NEW.id) x
       WHERE c.id = x.id AND c.watchlist_term IS DISTINCT FROM x.term;
      RETURN NULL;
    END $$;
    CREATE TRIGGER workspaces_watchlist_terms AFTER UPDATE OF watchlist ON workspaces FOR EACH ROW
      WHEN (OLD.watchlist IS DISTINCT FROM NEW.watchlist) EXECUTE FUNCTION workspaces_watchlist_terms();

    CREATE INDEX counterparties_watchlist_hits ON counterparties (workspace_id, name, id) WHERE watchlist_term IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX counterparties_watchlist_hits;
    DROP TRIGGER workspaces_watchlist_terms ON workspaces;
    DROP FUNCTION workspaces_watchlist_terms();
    DROP TRIGGER counterparties_watchlist_term ON counterparties;
    DROP FUNCTION counterparties_watchlist_term();
    DROP FUNCTION watchlist_lowered(text[]);
    DROP FUNCTION watchlist_term_in(text, text[], text[]);
    DROP FUNCTION watchlist_entries(jsonb);
    ALTER TABLE counterparties DROP COLUMN watchlist_term;
  `);
}
