import type { Knex } from 'knex';

/**
 * The escrow trigger of public_profiles updates both parties' counter rows. One UPDATE
 * ... WHERE user_id IN (buyer, seller) locks them in whatever order the scan meets them,
 * so two escrows between the same people created at once could lock them in opposite
 * orders and deadlock (npm run chaos -- --overload: 61 of 400 creations answered 500).
 * The rows are now updated one at a time in user id order, as every other path locks rows.
 */
const fn = (ordered: boolean) =>
  ordered
    ? `
    CREATE OR REPLACE FUNCTION public_profiles_from_escrow() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      delta_escrows integer := 0;
      delta_completed integer := 0;
    BEGIN
      IF TG_OP = 'INSERT' THEN
        delta_escrows := 1;
        delta_completed := CASE WHEN NEW.status = 'released' THEN 1 ELSE 0 END;
      ELSIF NEW.status IS DISTINCT FROM OLD.status AND (NEW.status = 'released') <> (OLD.status = 'released') THEN
        delta_completed := CASE WHEN NEW.status = 'released' THEN 1 ELSE -1 END;
      ELSE
        RETURN NULL;
      END IF;
      UPDATE public_profiles SET escrows_count = escrows_count + delta_escrows, completed_count = completed_count + delta_completed
        WHERE user_id = LEAST(NEW.buyer_id, NEW.seller_id);
      IF NEW.buyer_id <> NEW.seller_id THEN
        UPDATE public_profiles SET escrows_count = escrows_count + delta_escrows, completed_count = completed_count + delta_completed
          WHERE user_id = GREATEST(NEW.buyer_id, NEW.seller_id);
      END IF;
      RETURN NULL;
    END $$;`
    : `
    CREATE OR REPLACE FUNCTION public_profiles_from_escrow() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        UPDATE public_profiles SET escrows_count = escrows_count + 1,
          completed_count = completed_count + CASE WHEN NEW.status = 'released' THEN 1 ELSE 0 END
        WHERE user_id IN (NEW.buyer_id, NEW.seller_id);
      ELSIF NEW.status IS DISTINCT FROM OLD.status AND (NEW.status = 'released') <> (OLD.status = 'released') THEN
        UPDATE public_profiles SET completed_count = completed_count + CASE WHEN NEW.status = 'released' THEN 1 ELSE -1 END
        WHERE user_id IN (NEW.buyer_id, NEW.seller_id);
      END IF;
      RETURN NULL;
    END $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(fn(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(fn(false));
}
