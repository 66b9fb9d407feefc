import type { Knex } from 'knex';

/** Counterparties of a workspace (decision D7) and per-member enterprise notifications. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE counterparties (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      country_code char(2) NOT NULL,
      relationship text NOT NULL,
      email text,
      kyb_status text NOT NULL DEFAULT 'not_started',
      created_by uuid REFERENCES users (id),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT counterparties_relationship CHECK (relationship IN ('seller', 'buyer')),
      CONSTRAINT counterparties_kyb_status CHECK (kyb_status IN ('not_started', 'pending', 'verified', 'rejected'))
    );
    CREATE INDEX counterparties_workspace ON counterparties (workspace_id, created_at DESC);

    CREATE TABLE enterprise_notifications (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      type text NOT NULL,
      title text NOT NULL,
      body text NOT NULL,
      is_read boolean NOT NULL DEFAULT false,
      read_at timestamptz,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX enterprise_notifications_user ON enterprise_notifications (workspace_id, user_id, created_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('enterprise_notifications');
  await knex.schema.dropTable('counterparties');
}
