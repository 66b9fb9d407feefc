import type { Knex } from 'knex';

/** Fills `counterparties.watchlist_term` for the rows that existed before its triggers (previous migration). */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE counterparties c SET watchlist_term = watchlist_term_of(c.name, w.watchlist)
      FROM workspaces w
     WHERE w.id = c.workspace_id AND watchlist_term_of(c.name, w.watchlist) IS NOT NULL
  `);
}

export async function down(): Promise<void> {
  // The column goes with the previous migration's down.
}
