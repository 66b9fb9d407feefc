import type { Knex } from 'knex';

/**
 * Enterprise approvals, releases and payouts, documents and notes (enterprise spec 2
 * Approval item, Milestone, Document record; 3; 4.6; 4.7; D7; D10; decision 0019).
 *
 * - Milestones count evidence rounds (`approval_round`, one per submit-evidence) and keep
 *   what a ruling refunded to the workspace (`refunded_amount`) and what failed payouts
 *   brought back to the milestone's held balance for a retry (`returned_amount`).
 * - `milestone_approvals`: the approval slots of a round (1, or 2 for four-eyes), filled by
 *   approve decisions; one person fills at most one slot of a round (unique).
 * - `milestone_decisions`: every saved decision (approve, reject, revision); one per person
 *   and round (unique), final once saved.
 * - `payout_instructions`: a counterparty's bank destination, the account number sealed
 *   (AES-256-GCM), verified by staff with a signature over the destination.
 * - `disbursements`: one per release split, queued -> processing -> settled | failed, signed
 *   at release over what it pays where (a payout whose row no longer matches is never sent).
 * - `deal_documents` and `deal_notes`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE deal_milestones
      ADD COLUMN approval_round integer NOT NULL DEFAULT 0,
      ADD COLUMN returned_amount bigint NOT NULL DEFAULT 0,
      ADD COLUMN refunded_amount bigint NOT NULL DEFAULT 0,
      ADD COLUMN ruling text,
      ADD COLUMN ruled_at timestamptz,
      ADD CONSTRAINT deal_milestones_returned CHECK (returned_amount >= 0 AND returned_amount <= payout_amount),
      ADD CONSTRAINT deal_milestones_refunded CHECK (refunded_amount >= 0 AND refunded_amount <= amount),
      ADD CONSTRAINT deal_milestones_ruling CHECK (ruling IS NULL OR ruling IN ('release', 'refund', 'split'));

    CREATE TABLE milestone_approvals (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      milestone_id uuid NOT NULL REFERENCES deal_milestones (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      round integer NOT NULL,
      slot integer NOT NULL,
      status text NOT NULL DEFAULT 'pending',
      approver_id uuid REFERENCES users (id),
      note text,
      decided_at timestamptz,
      created_at timestamptz NOT NULL,
      CONSTRAINT milestone_approvals_status CHECK (status IN ('pending', 'approved')),
      CONSTRAINT milestone_approvals_whole CHECK ((status = 'pending' AND approver_id IS NULL AND decided_at IS NULL) OR (status = 'approved' AND approver_id IS NOT NULL AND decided_at IS NOT NULL)),
      CONSTRAINT milestone_approvals_slot UNIQUE (milestone_id, round, slot),
      CONSTRAINT milestone_approvals_once UNIQUE (milestone_id, round, approver_id)
    );

    CREATE TABLE milestone_decisions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      milestone_id uuid NOT NULL REFERENCES deal_milestones (id) ON DELETE CASCADE,
      deal_id uuid NOT NULL REFERENCES deals (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      round integer NOT NULL,
      decision text NOT NULL,
      decided_by uuid NOT NULL REFERENCES users (id),
      note text,
      decided_at timestamptz NOT NULL,
      CONSTRAINT milestone_decisions_decision CHECK (decision IN ('approve', 'reject', 'revision')),
      CONSTRAINT milestone_decisions_once UNIQUE (milestone_id, round, decided_by)
    );
    CREATE INDEX milestone_decisions_workspace ON milestone_decisions (workspace_id, decided_at DESC);

    CREATE TABLE payout_instructions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      counterparty_id uuid NOT NULL REFERENCES counterparties (id),
      label text NOT NULL,
      bank_name text NOT NULL,
      account_holder text NOT NULL,
      account_number_sealed text NOT NULL,
      account_number_last4 text NOT NULL,
      status text NOT NULL DEFAULT 'pending_verification',
      verified_at timestamptz,
      verified_by uuid REFERENCES users (id),
      verification_signature text,
      created_by uuid NOT NULL REFERENCES users (id),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz,
      CONSTRAINT payout_instructions_status CHECK (status IN ('pending_verification', 'verified')),
      CONSTRAINT payout_instructions_verified_whole CHECK (
        (status = 'pending_verification' AND verification_signature IS NULL AND verified_at IS NULL)
        OR (status = 'verified' AND verification_signature IS NOT NULL AND verified_at IS NOT NULL))
    );
    CREATE INDEX payout_instructions_workspace ON payout_instructions (workspace_id, created_at DESC) WHERE deleted_at IS NULL;
    CREATE INDEX payout_instructions_pending ON payout_instructions (created_at) WHERE status = 'pending_verification' AND deleted_at IS NULL;

    CREATE TABLE disbursements (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      deal_id uuid NOT NULL REFERENCES deals (id) ON DELETE CASCADE,
      milestone_id uuid NOT NULL REFERENCES deal_milestones (id) ON DELETE CASCADE,
      payout_instruction_id uuid NOT NULL REFERENCES payout_instructions (id),
      instruction_label text NOT NULL,
      amount bigint NOT NULL,
      currency char(3) NOT NULL,
      is_test boolean NOT NULL,
      release_no integer NOT NULL,
      split_no integer NOT NULL,
      signature text,
      status text NOT NULL DEFAULT 'queued',
      attempts integer NOT NULL DEFAULT 0,
      lease_until timestamptz,
      provider_reference text,
      failure_reason text,
      settled_at timestamptz,
      failed_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT disbursements_amount CHECK (amount >= 1),
      CONSTRAINT disbursements_split_unique UNIQUE (milestone_id, release_no, split_no),
      CONSTRAINT disbursements_split_range CHECK (split_no BETWEEN 1 AND 5),
      CONSTRAINT disbursements_status CHECK (status IN ('queued', 'processing', 'settled', 'failed')),
      CONSTRAINT disbursements_settled_whole CHECK ((status = 'settled') = (settled_at IS NOT NULL)),
      CONSTRAINT disbursements_failed_whole CHECK ((status = 'failed') = (failed_at IS NOT NULL))
    );
    CREATE INDEX disbursements_workspace ON disbursements (workspace_id, created_at DESC);
    CREATE INDEX disbursements_milestone ON disbursements (milestone_id);
    CREATE INDEX disbursements_open ON disbursements (created_at) WHERE status IN ('queued', 'processing');
    CREATE INDEX disbursements_instruction_open ON disbursements (payout_instruction_id) WHERE status IN ('queued', 'processing');

    CREATE TABLE deal_documents (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      deal_id uuid REFERENCES deals (id) ON DELETE CASCADE,
      milestone_id uuid REFERENCES deal_milestones (id) ON DELETE CASCADE,
      document_type text NOT NULL,
      title text NOT NULL,
      file_url text NOT NULL,
      upload_id uuid REFERENCES uploads (id),
      checksum_sha256 char(64),
      visibility text NOT NULL DEFAULT 'account',
      uploaded_by uuid NOT NULL REFERENCES users (id),
      created_at timestamptz NOT NULL,
      CONSTRAINT deal_documents_type CHECK (document_type IN ('contract', 'invoice', 'purchase_order', 'shipping', 'inspection', 'payout', 'other')),
      CONSTRAINT deal_documents_visibility CHECK (visibility IN ('account', 'counterparty')),
      CONSTRAINT deal_documents_checksum CHECK (checksum_sha256 IS NULL OR checksum_sha256 ~ '^[0-9a-f]{64}$'),
      CONSTRAINT deal_documents_milestone_has_deal CHECK (milestone_id IS NULL OR deal_id IS NOT NULL)
    );
    CREATE INDEX deal_documents_workspace ON deal_documents (workspace_id, created_at DESC);
    CREATE INDEX deal_documents_deal ON deal_documents (deal_id, created_at DESC) WHERE deal_id IS NOT NULL;
    CREATE INDEX deal_documents_milestone ON deal_documents (milestone_id) WHERE milestone_id IS NOT NULL;

    CREATE TABLE deal_notes (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      deal_id uuid NOT NULL REFERENCES deals (id) ON DELETE CASCADE,
      body text NOT NULL,
      author_id uuid NOT NULL REFERENCES users (id),
      created_at timestamptz NOT NULL
    );
    CREATE INDEX deal_notes_deal ON deal_notes (deal_id, created_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE deal_notes;
    DROP TABLE deal_documents;
    DROP TABLE disbursements;
    DROP TABLE payout_instructions;
    DROP TABLE milestone_decisions;
    DROP TABLE milestone_approvals;
    ALTER TABLE deal_milestones
      DROP CONSTRAINT deal_milestones_returned, DROP CONSTRAINT deal_milestones_refunded, DROP CONSTRAINT deal_milestones_ruling,
      DROP COLUMN approval_round, DROP COLUMN returned_amount, DROP COLUMN refunded_amount, DROP COLUMN ruling, DROP COLUMN ruled_at;
  `);
}
