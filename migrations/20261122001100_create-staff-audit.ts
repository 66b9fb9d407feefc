import type { Knex } from 'knex';

/** Every staff action: who, what, on which record, why. Append-only. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE staff_audit (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      actor_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      action text NOT NULL,
      target_type text NOT NULL,
      target_id text NOT NULL,
      note text,
      details jsonb NOT NULL DEFAULT '{}'::jsonb,
      ip text,
      created_at timestamptz NOT NULL,
      CONSTRAINT staff_audit_note_length CHECK (note IS NULL OR char_length(note) <= 2000)
    );
    CREATE INDEX staff_audit_target ON staff_audit (target_type, target_id, created_at DESC);
    CREATE TRIGGER staff_audit_append_only BEFORE UPDATE OR DELETE ON staff_audit
      FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('staff_audit');
}
