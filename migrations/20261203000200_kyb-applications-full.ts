import type { Knex } from 'knex';

/**
 * KYB applications in full (enterprise spec 2 "KYB application", 3, 4.2; decisions D9, D10):
 * - an application belongs to a subject, the workspace itself or one of its counterparties
 *   (`counterparty_id`); versions count per subject, and every version is kept;
 * - the draft's company, people and bank fields; identity and account numbers are sealed
 *   (AES-256-GCM, shared/crypto.ts) with only their last four digits in clear;
 * - the review: change requests, decision, reason, risk tier, timestamps;
 * - documents: an application's uploads by slot (each version holds its own rows, the
 *   files are shared by the versions that carry them);
 * - counterparty invite links (`kyb_invites`): signed tokens whose row decides revocation,
 *   expiry and the one user who claimed the link.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE kyb_applications
      ADD COLUMN counterparty_id uuid REFERENCES counterparties (id) ON DELETE CASCADE,
      ADD COLUMN npwp text,
      ADD COLUMN address text,
      ADD COLUMN industry text,
      ADD COLUMN monthly_volume text,
      ADD COLUMN website text,
      ADD COLUMN bank_name text,
      ADD COLUMN bank_account_holder text,
      ADD COLUMN bank_account_number_sealed text,
      ADD COLUMN bank_account_last4 text,
      ADD COLUMN people jsonb NOT NULL DEFAULT '[]'::jsonb,
      ADD COLUMN change_requests jsonb NOT NULL DEFAULT '[]'::jsonb,
      ADD COLUMN submitted_at timestamptz,
      ADD COLUMN decided_at timestamptz,
      ADD COLUMN decided_by uuid REFERENCES users (id),
      ADD COLUMN decision_reason text,
      ADD COLUMN risk_tier_assigned text,
      ADD CONSTRAINT kyb_applications_last4 CHECK (bank_account_last4 IS NULL OR bank_account_last4 ~ '^[0-9]{1,4}$'),
      ADD CONSTRAINT kyb_applications_sealed_with_last4 CHECK ((bank_account_number_sealed IS NULL) = (bank_account_last4 IS NULL)),
      ADD CONSTRAINT kyb_applications_people_array CHECK (jsonb_typeof(people) = 'array'),
      ADD CONSTRAINT kyb_applications_submitted CHECK (status = 'draft' OR submitted_at IS NOT NULL),
      ADD CONSTRAINT kyb_applications_decided CHECK (status NOT IN ('approved', 'rejected', 'changes_requested') OR decided_at IS NOT NULL),
      DROP CONSTRAINT kyb_applications_version_unique;

    CREATE UNIQUE INDEX kyb_applications_workspace_version ON kyb_applications (workspace_id, version) WHERE counterparty_id IS NULL;
    CREATE UNIQUE INDEX kyb_applications_counterparty_version ON kyb_applications (counterparty_id, version) WHERE counterparty_id IS NOT NULL;
    CREATE INDEX kyb_applications_review_queue ON kyb_applications (submitted_at) WHERE status = 'submitted';

    CREATE TABLE kyb_documents (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      application_id uuid NOT NULL REFERENCES kyb_applications (id) ON DELETE CASCADE,
      upload_id uuid NOT NULL REFERENCES uploads (id),
      doc_type text NOT NULL,
      person_id uuid,
      created_by uuid REFERENCES users (id),
      created_at timestamptz NOT NULL,
      CONSTRAINT kyb_documents_type CHECK (doc_type IN ('akta_pendirian', 'sk_kemenkumham', 'akta_perubahan', 'bank_proof', 'ktp', 'passport')),
      CONSTRAINT kyb_documents_person CHECK ((doc_type IN ('ktp', 'passport')) = (person_id IS NOT NULL))
    );
    CREATE INDEX kyb_documents_application ON kyb_documents (application_id, created_at);
    CREATE INDEX kyb_documents_upload ON kyb_documents (upload_id);

    CREATE TABLE kyb_invites (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      counterparty_id uuid NOT NULL REFERENCES counterparties (id) ON DELETE CASCADE,
      created_by uuid NOT NULL REFERENCES users (id),
      expires_at timestamptz NOT NULL,
      claimed_by uuid REFERENCES users (id),
      claimed_at timestamptz,
      revoked_at timestamptz,
      created_at timestamptz NOT NULL,
      CONSTRAINT kyb_invites_claimed CHECK ((claimed_by IS NULL) = (claimed_at IS NULL))
    );
    CREATE INDEX kyb_invites_counterparty ON kyb_invites (counterparty_id, created_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE kyb_invites;
    DROP TABLE kyb_documents;
    DROP INDEX kyb_applications_review_queue;
    DROP INDEX kyb_applications_counterparty_version;
    DROP INDEX kyb_applications_workspace_version;
    DELETE FROM kyb_applications WHERE counterparty_id IS NOT NULL;
    ALTER TABLE kyb_applications
      DROP CONSTRAINT kyb_applications_last4,
      DROP CONSTRAINT kyb_applications_sealed_with_last4,
      DROP CONSTRAINT kyb_applications_people_array,
      DROP CONSTRAINT kyb_applications_submitted,
      DROP CONSTRAINT kyb_applications_decided,
      DROP COLUMN counterparty_id, DROP COLUMN npwp, DROP COLUMN address, DROP COLUMN industry,
      DROP COLUMN monthly_volume, DROP COLUMN website, DROP COLUMN bank_name, DROP COLUMN bank_account_holder,
      DROP COLUMN bank_account_number_sealed, DROP COLUMN bank_account_last4, DROP COLUMN people,
      DROP COLUMN change_requests, DROP COLUMN submitted_at, DROP COLUMN decided_at, DROP COLUMN decided_by,
      DROP COLUMN decision_reason, DROP COLUMN risk_tier_assigned,
      ADD CONSTRAINT kyb_applications_version_unique UNIQUE (workspace_id, version);
  `);
}
