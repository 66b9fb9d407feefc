import type { Knex } from 'knex';

/**
 * The public_profiles counters (escrows, completed escrows, received ratings) were updated by
 * AFTER ROW triggers the moment an escrow or rating row was written, so a busy seller's
 * profile row stayed locked for the rest of every creating transaction (event and outbox
 * inserts, commit), and that seller's escrows were created one at a time. The same functions
 * now run as constraint triggers deferred to commit: the row is locked for the commit only.
 * A counter update that fails fails the COMMIT, which `commitTransaction` reports.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER escrows_public_profile ON escrows;
    CREATE CONSTRAINT TRIGGER escrows_public_profile AFTER INSERT OR UPDATE OF status ON escrows
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public_profiles_from_escrow();
    DROP TRIGGER ratings_public_profile ON ratings;
    CREATE CONSTRAINT TRIGGER ratings_public_profile AFTER INSERT ON ratings
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public_profiles_from_rating();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER escrows_public_profile ON escrows;
    CREATE TRIGGER escrows_public_profile AFTER INSERT OR UPDATE OF status ON escrows
      FOR EACH ROW EXECUTE FUNCTION public_profiles_from_escrow();
    DROP TRIGGER ratings_public_profile ON ratings;
    CREATE TRIGGER ratings_public_profile AFTER INSERT ON ratings
      FOR EACH ROW EXECUTE FUNCTION public_profiles_from_rating();
  `);
}
