import type { Knex } from 'knex';

/**
 * Outbound webhooks (enterprise spec 4.11, D8; decision 0020 "Webhooks").
 *
 * `webhook_endpoints`: a workspace's receivers. The signing secret is sealed (AES-256-GCM,
 * shared/crypto.ts) because the worker must sign with it. Each endpoint follows the
 * workspace feed with its own cursor: `cursor_seq` is the last feed `seq` it is done with
 * (delivered, or not matching its filter). The head event's retry state lives on the row
 * (`attempts` made on it, `next_attempt_at`), and one delivery at a time holds the lease
 * (`lease_until` with the holder's `lease_token`).
 *
 * `webhook_deliveries`: every attempt, with the exact body sent (a redelivery sends the
 * same bytes with the same webhook-id), the receiver's status, duration, error and the
 * start of its answer. Test sends and redeliveries are queued as `pending` rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE webhook_endpoints (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      url text NOT NULL,
      description text,
      events text[] NOT NULL,
      status text NOT NULL DEFAULT 'active',
      secret_sealed text NOT NULL,
      cursor_seq bigint NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      lease_until timestamptz,
      lease_token uuid,
      disabled_at timestamptz,
      disabled_reason text,
      created_by uuid REFERENCES users (id),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT webhook_endpoints_status_known CHECK (status IN ('active', 'paused', 'disabled')),
      CONSTRAINT webhook_endpoints_url_length CHECK (char_length(url) BETWEEN 8 AND 2000),
      CONSTRAINT webhook_endpoints_events_count CHECK (cardinality(events) BETWEEN 1 AND 100),
      CONSTRAINT webhook_endpoints_cursor_non_negative CHECK (cursor_seq >= 0),
      CONSTRAINT webhook_endpoints_attempts_non_negative CHECK (attempts >= 0),
      CONSTRAINT webhook_endpoints_lease_pair CHECK ((lease_until IS NULL) = (lease_token IS NULL)),
      CONSTRAINT webhook_endpoints_disabled_when CHECK ((status = 'disabled') = (disabled_at IS NOT NULL))
    );
    CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id, created_at DESC, id DESC);
    CREATE INDEX webhook_endpoints_active ON webhook_endpoints (workspace_id) WHERE status = 'active';

    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      position bigint GENERATED ALWAYS AS IDENTITY,
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      message_id text NOT NULL,
      event_id uuid REFERENCES workspace_events (id) ON DELETE CASCADE,
      event_seq bigint,
      event_type text NOT NULL,
      kind text NOT NULL,
      attempt integer NOT NULL,
      status text NOT NULL,
      payload text NOT NULL,
      response_status integer,
      response_excerpt text,
      error text,
      duration_ms integer,
      next_attempt_at timestamptz,
      requested_by uuid REFERENCES users (id),
      created_at timestamptz NOT NULL,
      attempted_at timestamptz,
      CONSTRAINT webhook_deliveries_kind_known CHECK (kind IN ('event', 'test', 'redelivery')),
      CONSTRAINT webhook_deliveries_status_known CHECK (status IN ('pending', 'succeeded', 'failed')),
      CONSTRAINT webhook_deliveries_attempt_positive CHECK (attempt >= 1),
      CONSTRAINT webhook_deliveries_attempted_when CHECK ((status = 'pending') = (attempted_at IS NULL)),
      CONSTRAINT webhook_deliveries_event_pair CHECK ((event_id IS NULL) = (event_seq IS NULL)),
      CONSTRAINT webhook_deliveries_event_kind CHECK (kind <> 'event' OR event_id IS NOT NULL)
    );
    CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, position DESC);
    CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhook_endpoints');
}
