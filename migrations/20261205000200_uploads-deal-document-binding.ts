import type { Knex } from 'knex';

/**
 * Binding kind `deal_document` for uploads (enterprise spec 4.7): an operator's own upload
 * that becomes a deal document is bound to it with the upload pipeline's compare-and-set
 * bind, so it cannot also be attached elsewhere and the daily purge of unbound uploads
 * leaves it alone. The CHECK of 20261203000100_uploads-kyb-purpose is replaced by a wider one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE uploads
      DROP CONSTRAINT uploads_bound_kind_known,
      ADD CONSTRAINT uploads_bound_kind_known CHECK (bound_kind IS NULL OR bound_kind IN ('escrow', 'chat', 'dispute', 'kyb', 'deal_document'));
  `);
}

/** Restores the narrower constraint; it fails (check violation) while any upload is bound to a deal document. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE uploads
      DROP CONSTRAINT uploads_bound_kind_known,
      ADD CONSTRAINT uploads_bound_kind_known CHECK (bound_kind IS NULL OR bound_kind IN ('escrow', 'chat', 'dispute', 'kyb'));
  `);
}
