import type { Knex } from 'knex';

/**
 * Uploads for enterprise KYB: purpose `kyb` (documents uploaded through the enterprise KYB
 * route, never POST /v1/upload/:type) and binding kind `kyb` (a KYB application). The two
 * CHECK constraints of 20261126000100_create-uploads are replaced by wider ones; the other
 * constraints (mime, size, binding whole) already fit.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE uploads
      DROP CONSTRAINT uploads_purpose_known,
      DROP CONSTRAINT uploads_bound_kind_known,
      ADD CONSTRAINT uploads_purpose_known CHECK (purpose IN ('escrow', 'chat', 'kyc', 'kyb')),
      ADD CONSTRAINT uploads_bound_kind_known CHECK (bound_kind IS NULL OR bound_kind IN ('escrow', 'chat', 'dispute', 'kyb'));
  `);
}

/** Restores the narrower constraints; it fails (check violation) while any `kyb` upload or binding exists. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE uploads
      DROP CONSTRAINT uploads_purpose_known,
      DROP CONSTRAINT uploads_bound_kind_known,
      ADD CONSTRAINT uploads_purpose_known CHECK (purpose IN ('escrow', 'chat', 'kyc')),
      ADD CONSTRAINT uploads_bound_kind_known CHECK (bound_kind IS NULL OR bound_kind IN ('escrow', 'chat', 'dispute'));
  `);
}
