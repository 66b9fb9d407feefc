import type { Knex } from 'knex';

/**
 * Disputes on escrows (consumer spec 4.3, decision D10) and their messages. At most one
 * unresolved dispute per escrow is a unique index, so two parties opening one at the
 * same moment cannot both succeed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE disputes (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      escrow_id uuid NOT NULL REFERENCES escrows (id) ON DELETE RESTRICT,
      initiator_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      reason_category text NOT NULL,
      description text NOT NULL,
      status text NOT NULL DEFAULT 'open',
      outcome text,
      priority text NOT NULL DEFAULT 'normal',
      escrow_status_before text NOT NULL,
      resolution_note text,
      resolved_by uuid REFERENCES users (id) ON DELETE RESTRICT,
      resolved_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT disputes_reason_known CHECK (reason_category IN
        ('item_not_received', 'item_not_as_described', 'seller_unresponsive', 'other')),
      CONSTRAINT disputes_status_known CHECK (status IN ('open', 'on_hold', 'resolved')),
      CONSTRAINT disputes_outcome_known CHECK (outcome IS NULL OR outcome IN ('release', 'refund', 'hold')),
      CONSTRAINT disputes_outcome_matches_status CHECK (
        (status = 'open' AND outcome IS NULL) OR (status = 'on_hold' AND outcome = 'hold')
        OR (status = 'resolved' AND outcome IN ('release', 'refund'))),
      CONSTRAINT disputes_ruling_recorded CHECK ((status = 'open') = (resolved_by IS NULL AND resolved_at IS NULL)),
      CONSTRAINT disputes_priority_known CHECK (priority IN ('low', 'normal', 'high')),
      CONSTRAINT disputes_description_length CHECK (char_length(description) BETWEEN 1 AND 3000),
      CONSTRAINT disputes_note_length CHECK (resolution_note IS NULL OR char_length(resolution_note) <= 2000)
    );
    CREATE UNIQUE INDEX disputes_one_active_per_escrow ON disputes (escrow_id) WHERE status <> 'resolved';
    CREATE INDEX disputes_escrow ON disputes (escrow_id, created_at DESC);
    CREATE INDEX disputes_status ON disputes (status, created_at DESC);

    CREATE TABLE dispute_messages (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      dispute_id uuid NOT NULL REFERENCES disputes (id) ON DELETE RESTRICT,
      sender_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      sender_role text NOT NULL,
      message text NOT NULL,
      evidence_urls jsonb NOT NULL DEFAULT '[]'::jsonb,
      created_at timestamptz NOT NULL,
      CONSTRAINT dispute_messages_sender_role_known CHECK (sender_role IN ('buyer', 'seller', 'admin')),
      CONSTRAINT dispute_messages_message_length CHECK (char_length(message) BETWEEN 1 AND 3000),
      CONSTRAINT dispute_messages_evidence_array CHECK (jsonb_typeof(evidence_urls) = 'array' AND jsonb_array_length(evidence_urls) <= 5)
    );
    CREATE INDEX dispute_messages_dispute ON dispute_messages (dispute_id, created_at, id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('dispute_messages');
  await knex.schema.dropTable('disputes');
}
