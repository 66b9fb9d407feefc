import type { Knex } from 'knex';

/**
 * CSV exports built by the exports worker (enterprise spec 4.9 audit export). The request
 * writes a pending row and its outbox job in one transaction; the worker fills `csv` once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE enterprise_exports (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      requested_by uuid NOT NULL REFERENCES users (id),
      kind text NOT NULL,
      range_from date NOT NULL,
      range_to date NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      csv text,
      row_count integer,
      truncated boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      finished_at timestamptz,
      CONSTRAINT enterprise_exports_kind CHECK (kind IN ('audit')),
      CONSTRAINT enterprise_exports_status CHECK (status IN ('pending', 'ready')),
      CONSTRAINT enterprise_exports_ready CHECK ((status = 'ready') = (csv IS NOT NULL AND finished_at IS NOT NULL)),
      CONSTRAINT enterprise_exports_range CHECK (range_from <= range_to)
    );
    CREATE INDEX enterprise_exports_workspace ON enterprise_exports (workspace_id, created_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('enterprise_exports');
}
