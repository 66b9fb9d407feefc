import type { Knex } from 'knex';

/**
 * Review R4 (staff queues; decision 0019 "Review R4" addendum):
 * - `payout_instructions.pending_since`: when the instruction last became
 *   pending_verification (create, an edit, the workspace going live, a declined one edited):
 *   the staff queue's age. Existing rows take `updated_at` when pending (their last change
 *   is when they became pending: every path to pending wrote updated_at) and `created_at`
 *   otherwise.
 * - status `declined` (staff refused the destination, with a reason): never signed, never
 *   payable; the workspace edits it (back to pending_verification) or deletes it.
 * - The queue's index: pending rows by age, and one per workspace for the pending cap.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payout_instructions
      ADD COLUMN pending_since timestamptz,
      ADD COLUMN declined_at timestamptz,
      ADD COLUMN declined_by uuid REFERENCES users (id),
      ADD COLUMN decline_reason text;
    UPDATE payout_instructions SET pending_since = CASE WHEN status = 'pending_verification' THEN updated_at ELSE created_at END;
    ALTER TABLE payout_instructions
      ALTER COLUMN pending_since SET NOT NULL,
      DROP CONSTRAINT payout_instructions_status,
      DROP CONSTRAINT payout_instructions_verified_whole,
      ADD CONSTRAINT payout_instructions_status CHECK (status IN ('pending_verification', 'verified', 'declined')),
      ADD CONSTRAINT payout_instructions_verified_whole CHECK (
        (status IN ('pending_verification', 'declined') AND verification_signature IS NULL AND verified_at IS NULL)
        OR (status = 'verified' AND verification_signature IS NOT NULL AND verified_at IS NOT NULL)),
      ADD CONSTRAINT payout_instructions_declined_whole CHECK (
        (status = 'declined') = (decline_reason IS NOT NULL AND declined_at IS NOT NULL));
    DROP INDEX payout_instructions_pending;
    CREATE INDEX payout_instructions_pending ON payout_instructions (pending_since, id) WHERE status = 'pending_verification' AND deleted_at IS NULL;
    CREATE INDEX payout_instructions_unverified_of_workspace ON payout_instructions (workspace_id) WHERE status IN ('pending_verification', 'declined') AND deleted_at IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX payout_instructions_unverified_of_workspace;
    DROP INDEX payout_instructions_pending;
    CREATE INDEX payout_instructions_pending ON payout_instructions (created_at) WHERE status = 'pending_verification' AND deleted_at IS NULL;
    UPDATE payout_instructions SET status = 'pending_verification', declined_at = NULL, declined_by = NULL, decline_reason = NULL WHERE status = 'declined';
    ALTER TABLE payout_instructions
      DROP CONSTRAINT payout_instructions_declined_whole,
      DROP CONSTRAINT payout_instructions_verified_whole,
      DROP CONSTRAINT payout_instructions_status,
      ADD CONSTRAINT payout_instructions_status CHECK (status IN ('pending_verification', 'verified')),
      ADD CONSTRAINT payout_instructions_verified_whole CHECK (
        (status = 'pending_verification' AND verification_signature IS NULL AND verified_at IS NULL)
        OR (status = 'verified' AND verification_signature IS NOT NULL AND verified_at IS NOT NULL)),
      DROP COLUMN decline_reason,
      DROP COLUMN declined_by,
      DROP COLUMN declined_at,
      DROP COLUMN pending_since;
  `);
}
