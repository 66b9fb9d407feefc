import type { Knex } from 'knex';

/**
 * Issue 42: the destination signature is now version 2 (shared/payouts/signature.ts: it
 * covers the label and live or sandbox, and is stored as `v2.<mac>`). A version 1 signature
 * does not say whether staff verified the destination in the sandbox or for live money, so
 * it is not accepted any more, anywhere: every instruction verified with it goes back to
 * `pending_verification` (fail-safe; decision 0019, "Issue 42" addendum) and staff verify it
 * again. Payouts still open to such an instruction wait at the gate until then (the worker
 * fails an automatic one; staff settling a manual one are refused until it is verified
 * again). No workspace event is written from here (the feed's sequence is the service's).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE payout_instructions
       SET status = 'pending_verification', verification_signature = NULL, verified_at = NULL, verified_by = NULL
     WHERE status = 'verified'
       AND verification_signature NOT LIKE 'v2.%'
  `);
}

export async function down(): Promise<void> {
  // A verification cannot be restored; staff verify again.
}
