import type { Knex } from 'knex';

/**
 * Trace context through the durable hand-offs (issue 47, OpenTelemetry tracing): an outbox
 * row, and a stored gateway callback (the gateway-callbacks worker's inbox), keep the W3C
 * `traceparent` of the span that wrote them (`00-<trace id>-<span id>-<flags>`, 55
 * characters), so the job it becomes, or the reconciliation that takes it, continues that
 * trace. NULL when tracing is off (shared/tracing.ts) or nothing was being traced.
 *
 * Both tables are written by every request that changes anything and can be large: the
 * columns are nullable without a default (no rewrite) and each CHECK is added NOT VALID
 * (no scan under the ACCESS EXCLUSIVE lock), then validated, which scans without blocking
 * writes. That needs each statement to commit on its own, so this migration runs outside a
 * transaction and every step can run again after an interruption.
 */
export const config = { transaction: false };

const TABLES = ['outbox', 'payment_callbacks'] as const;
const SHAPE = `trace_context ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'`;

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS trace_context text`);
    await knex.raw(`
      DO $$ BEGIN
        ALTER TABLE ${table} ADD CONSTRAINT ${table}_trace_context_shape CHECK (${SHAPE}) NOT VALID;
      EXCEPTION WHEN duplicate_object THEN NULL;
      END $$`);
    await knex.raw(`ALTER TABLE ${table} VALIDATE CONSTRAINT ${table}_trace_context_shape`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.raw(`ALTER TABLE ${table} DROP COLUMN IF EXISTS trace_context`);
  }
}
