import type { Knex } from 'knex';

/**
 * Outbox rows are kept until their job completes (decision 0006): `completed_at` is set
 * by the worker when the job succeeds (or by the sweeper when BullMQ says it did);
 * `dead_at`/`dead_reason` take a row out of every automatic path (unknown queue or job,
 * job failed for good) for an operator. Pending rows exclude dead ones; the sweeper reads
 * rows relayed and not finished; the purge reads completed rows by completion time.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE outbox
      ADD COLUMN completed_at timestamptz,
      ADD COLUMN dead_at timestamptz,
      ADD COLUMN dead_reason text,
      ADD CONSTRAINT outbox_completed_after_relay CHECK (completed_at IS NULL OR relayed_at IS NOT NULL),
      ADD CONSTRAINT outbox_dead_has_reason CHECK ((dead_at IS NULL) = (dead_reason IS NULL));
    DROP INDEX outbox_pending;
    CREATE INDEX outbox_pending ON outbox (available_at, id) WHERE relayed_at IS NULL AND dead_at IS NULL;
    CREATE INDEX outbox_unfinished ON outbox (id) INCLUDE (relayed_at)
      WHERE relayed_at IS NOT NULL AND completed_at IS NULL AND dead_at IS NULL;
    CREATE INDEX outbox_completed ON outbox (completed_at) WHERE completed_at IS NOT NULL;
    CREATE INDEX outbox_dead ON outbox (dead_at) WHERE dead_at IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX outbox_dead;
    DROP INDEX outbox_completed;
    DROP INDEX outbox_unfinished;
    DROP INDEX outbox_pending;
    ALTER TABLE outbox
      DROP CONSTRAINT outbox_dead_has_reason,
      DROP CONSTRAINT outbox_completed_after_relay,
      DROP COLUMN dead_reason,
      DROP COLUMN dead_at,
      DROP COLUMN completed_at;
    CREATE INDEX outbox_pending ON outbox (available_at, id) WHERE relayed_at IS NULL;
  `);
}
