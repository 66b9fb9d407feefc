import type { Knex } from 'knex';

/**
 * Stored gateway callbacks become the worker's inbox (decision 0009, "Reconciled in batches"):
 * the API stores a delivery in one statement, and the gateway-callbacks worker takes due,
 * unprocessed rows in batches. A row whose reconciliation failed is retried after a backoff
 * (`next_attempt_at`), with the attempts and the last error kept for staff.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payment_callbacks
      ADD COLUMN attempts integer NOT NULL DEFAULT 0,
      ADD COLUMN last_error text,
      ADD COLUMN next_attempt_at timestamptz;
    UPDATE payment_callbacks SET next_attempt_at = received_at WHERE processed_at IS NULL;
    DROP INDEX payment_callbacks_unprocessed;
    CREATE INDEX payment_callbacks_due ON payment_callbacks (next_attempt_at, id) WHERE processed_at IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX payment_callbacks_due;
    CREATE INDEX payment_callbacks_unprocessed ON payment_callbacks (received_at) WHERE processed_at IS NULL;
    ALTER TABLE payment_callbacks DROP COLUMN attempts, DROP COLUMN last_error, DROP COLUMN next_attempt_at;
  `);
}
