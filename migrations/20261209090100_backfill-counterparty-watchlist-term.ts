import type { Knex } from 'knex';

/** Fills `counterparties.watchlist_term` for the rows that existed before its triggers (previous migration). */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    WITH w AS (SELECT id, watchlist_entries(watchlist) AS entries FROM workspaces WHERE watchlist <> '[]'::jsonb),
         t AS (SELECT c.id, watchlist_term_in(c.name, w.entries, watchlist_lowered(w.entries)) AS term
                 FROM counterparties c JOIN w ON w.id = c.workspace_id)
    UPDATE counterparties c SET watchlist_term = t.term FROM t WHERE t.id = c.id AND t.term IS NOT NULL
  `);
}

export async function down(): Promise<void> {
  // The column goes with the previous migration's down.
}
