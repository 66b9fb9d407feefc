import type { Knex } from 'knex';

/**
 * Money that arrives late, short, long or unannounced is settled by staff (issue "Money at
 * the edges"; decision 0009): a gateway payment flagged `amount_mismatch`, or a manual
 * transfer the buyer claimed after the escrow or order was closed (`late_claim`), is either
 * credited to the buyer's balance or marked returned outside the service. `received_amount`
 * is what staff settled: the amount the gateway reported for a mismatch, the claimed total
 * for a late claim. Constraints keep the flags honest.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payments ADD COLUMN received_amount bigint;
    ALTER TABLE payments ADD CONSTRAINT payments_received_amount_positive CHECK (received_amount IS NULL OR received_amount > 0);
    -- Only a manual transfer is claimed, late or not.
    ALTER TABLE payments ADD CONSTRAINT payments_late_claim_only_manual CHECK (flag IS DISTINCT FROM 'late_claim' OR is_manual);
    -- Money returned outside the service arrived first, and staff say how much.
    ALTER TABLE payments ADD CONSTRAINT payments_returned_outside_settled CHECK (flag IS DISTINCT FROM 'returned_outside' OR (status = 'paid' AND received_amount IS NOT NULL));
    -- The staff attention list: claims awaiting staff and unsettled amount mismatches.
    CREATE INDEX payments_attention ON payments (created_at, id)
      WHERE status = 'awaiting_confirmation' OR (flag = 'amount_mismatch' AND status <> 'paid');
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX payments_attention;
    ALTER TABLE payments DROP CONSTRAINT payments_returned_outside_settled;
    ALTER TABLE payments DROP CONSTRAINT payments_late_claim_only_manual;
    ALTER TABLE payments DROP CONSTRAINT payments_received_amount_positive;
    ALTER TABLE payments DROP COLUMN received_amount;
  `);
}
