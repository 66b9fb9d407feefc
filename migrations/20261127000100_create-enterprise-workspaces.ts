import type { Knex } from 'knex';

/**
 * Enterprise workspaces (enterprise spec 2, 3): the workspace with its settings and its
 * event counter, the memberships (one live membership per user and workspace), and the
 * KYB applications (register creates version 1 as a draft; every version is kept).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE workspaces (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      display_name text NOT NULL,
      legal_name text NOT NULL,
      country_code char(2) NOT NULL,
      entity_type text NOT NULL,
      kyb_status text NOT NULL DEFAULT 'not_started',
      risk_tier text NOT NULL DEFAULT 'standard',
      is_sandbox boolean NOT NULL DEFAULT true,
      four_eyes_threshold bigint NOT NULL DEFAULT 100000000,
      dispute_sla_hours integer NOT NULL DEFAULT 72,
      watchlist jsonb NOT NULL DEFAULT '[]'::jsonb,
      account_manager_name text,
      account_manager_email text,
      created_by uuid NOT NULL REFERENCES users (id),
      last_event_seq bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT workspaces_kyb_status CHECK (kyb_status IN ('not_started', 'draft', 'pending', 'verified', 'rejected')),
      CONSTRAINT workspaces_entity_type CHECK (entity_type IN ('pt', 'pt_perorangan', 'cv', 'firma', 'koperasi', 'ud', 'foreign')),
      CONSTRAINT workspaces_four_eyes_non_negative CHECK (four_eyes_threshold >= 0),
      CONSTRAINT workspaces_sla_positive CHECK (dispute_sla_hours > 0),
      CONSTRAINT workspaces_event_seq_non_negative CHECK (last_event_seq >= 0)
    );

    CREATE TABLE workspace_members (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users (id),
      role text NOT NULL,
      status text NOT NULL,
      invited_by uuid REFERENCES users (id),
      notify_email boolean NOT NULL DEFAULT true,
      notify_approvals boolean NOT NULL DEFAULT true,
      notify_money boolean NOT NULL DEFAULT true,
      notify_reminders boolean NOT NULL DEFAULT true,
      joined_at timestamptz,
      removed_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT workspace_members_role CHECK (role IN ('viewer', 'operator', 'finance', 'admin', 'owner')),
      CONSTRAINT workspace_members_status CHECK (status IN ('invited', 'active', 'suspended', 'removed')),
      CONSTRAINT workspace_members_joined CHECK (status <> 'active' OR joined_at IS NOT NULL),
      CONSTRAINT workspace_members_removed CHECK ((status = 'removed') = (removed_at IS NOT NULL))
    );
    CREATE UNIQUE INDEX workspace_members_one_live ON workspace_members (workspace_id, user_id) WHERE status <> 'removed';
    CREATE INDEX workspace_members_user ON workspace_members (user_id, joined_at) WHERE status <> 'removed';

    CREATE TABLE kyb_applications (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      version integer NOT NULL,
      status text NOT NULL DEFAULT 'draft',
      entity_type text,
      legal_name text,
      country_code char(2),
      nib text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT kyb_applications_version_positive CHECK (version >= 1),
      CONSTRAINT kyb_applications_status CHECK (status IN ('draft', 'submitted', 'changes_requested', 'approved', 'rejected')),
      CONSTRAINT kyb_applications_version_unique UNIQUE (workspace_id, version)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('kyb_applications');
  await knex.schema.dropTable('workspace_members');
  await knex.schema.dropTable('workspaces');
}
