import type { Knex } from 'knex';

/**
 * Rows relayed before completion was recorded are taken as completed, so the outbox
 * sweeper does not re-send history whose BullMQ jobs have long been removed. Their
 * completion time is unknown; the relay time stands in (the retention purge counts from it).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE outbox SET completed_at = relayed_at
     WHERE relayed_at IS NOT NULL AND completed_at IS NULL AND dead_at IS NULL
  `);
}

export async function down(): Promise<void> {
  // Nothing to undo: backfilled rows cannot be told from rows the worker completed.
}
