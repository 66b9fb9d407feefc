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

    CREATE FUNCTION watchlist_term_of(p_name text, p_watchlist jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$
      SELECT btrim(t.value #>> '{}')
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p_watchlist) = 'array' THEN p_watchlist ELSE '[]'::jsonb END) WITH ORDINALITY AS t(value, ord)
       WHERE jsonb_typeof(t.value) = 'string' AND btrim(t.value #>> '{}') <> ''
         AND strpos(lower(p_name), lower(btrim(t.value #>> '{}'))) > 0
       ORDER BY t.ord LIMIT 1
    $$;

    CREATE FUNCTION counterparties_watchlist_term() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.watchlist_term := watchlist_term_of(NEW.name, (SELECT w.watchlist FROM workspaces w WHERE w.id = NEW.workspace_id));
      RETURN NEW;
    END $$;
    CREATE TRIGGER counterparties_watchlist_term BEFORE INSERT OR UPDATE OF name, workspace_id ON counterparties
      FOR EACH ROW EXECUTE FUNCTION counterparties_watchlist_term();

    CREATE FUNCTION workspaces_watchlist_terms() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE counterparties c SET watchlist_term = x.term
        FROM (SELECT id, watchlist_term_of(name, NEW.watchlist) AS term FROM counterparties WHERE workspace_id = NEW.id) x
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
    DROP FUNCTION watchlist_term_of(text, jsonb);
    ALTER TABLE counterparties DROP COLUMN watchlist_term;
  `);
}
