import type { Knex } from 'knex';

/**
 * Workspace API keys (enterprise spec 4.10, section 5 rule 3): `rpe_` keys stored as their
 * SHA-256 hash only. The creating membership decides whether the key is active (it stops
 * when that member leaves) and, for read+write keys, the role it acts with.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE workspace_api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      created_by_member uuid NOT NULL REFERENCES workspace_members (id),
      label text NOT NULL,
      scopes text[] NOT NULL,
      key_hash text NOT NULL,
      key_preview text NOT NULL,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz,
      revoked_at timestamptz,
      CONSTRAINT workspace_api_keys_hash_unique UNIQUE (key_hash),
      CONSTRAINT workspace_api_keys_scopes CHECK (scopes = ARRAY['read']::text[] OR scopes = ARRAY['read', 'write']::text[])
    );
    CREATE INDEX workspace_api_keys_live ON workspace_api_keys (workspace_id, created_at DESC) WHERE revoked_at IS NULL;
    CREATE INDEX workspace_api_keys_member ON workspace_api_keys (created_by_member) WHERE revoked_at IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('workspace_api_keys');
}
