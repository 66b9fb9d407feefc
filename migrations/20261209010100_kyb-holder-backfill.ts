import type { Knex } from 'knex';

/**
 * Data for 20261209010000: each counterparty's applications are held by the user who
 * claimed its newest claimed link (revoked or not: before issue 42 a new link revoked the
 * old one and the next claimant continued the same application), and a live link nobody
 * has claimed yet is bound to that holder, so nobody else can claim it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    WITH holders AS (
      SELECT DISTINCT ON (counterparty_id) counterparty_id, claimed_by
      FROM kyb_invites
      WHERE claimed_by IS NOT NULL
      ORDER BY counterparty_id, claimed_at DESC, created_at DESC
    )
    UPDATE kyb_applications a SET holder_id = h.claimed_by
    FROM holders h
    WHERE a.counterparty_id = h.counterparty_id AND a.holder_id IS NULL;

    UPDATE kyb_invites i SET claimed_by = a.holder_id, claimed_at = i.created_at
    FROM kyb_applications a
    WHERE i.claimed_by IS NULL AND i.revoked_at IS NULL
      AND a.counterparty_id = i.counterparty_id AND a.holder_id IS NOT NULL
      AND a.version = (SELECT max(v.version) FROM kyb_applications v WHERE v.counterparty_id = i.counterparty_id);
  `);
}

/** The holders stay (the column goes with 20261209010000's down); nothing to undo here. */
export async function down(): Promise<void> {}
