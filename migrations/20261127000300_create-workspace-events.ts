import type { Knex } from 'knex';

/**
 * The workspace event feed (enterprise spec 2 Event, 4.9, 6): `seq` is taken from
 * workspaces.last_event_seq in the writer's transaction, so it is gap-free and
 * increasing per workspace; `livemode` is fixed at write time. No IP address column.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE workspace_events (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      seq bigint NOT NULL,
      id uuid NOT NULL DEFAULT gen_random_uuid(),
      event text NOT NULL,
      entity_type text NOT NULL,
      entity_id uuid,
      deal_id uuid,
      deal_reference text,
      actor_id uuid REFERENCES users (id),
      actor_name text,
      actor_label text,
      amount bigint,
      summary text NOT NULL,
      livemode boolean NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT workspace_events_pkey PRIMARY KEY (workspace_id, seq),
      CONSTRAINT workspace_events_id_unique UNIQUE (id),
      CONSTRAINT workspace_events_seq_positive CHECK (seq >= 1)
    );
    CREATE INDEX workspace_events_deal ON workspace_events (workspace_id, deal_id, seq) WHERE deal_id IS NOT NULL;
    CREATE INDEX workspace_events_name ON workspace_events (workspace_id, event, seq);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('workspace_events');
}
