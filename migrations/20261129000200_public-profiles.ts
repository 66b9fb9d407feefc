import type { Knex } from 'knex';

/**
 * The public user listing (consumer spec 4.7), kept by triggers so a page of 100,000 users is
 * read from one narrow table through an index: `public_profiles` holds one row per user with
 * what may be shown and the counters the listing rules and the `top` sort need.
 *
 * - `listed`: a user account (not staff), active, with verifiable activity: an escrow as
 *   either party, a received rating, or a verified address.
 * - `completed_count`: released escrows as either party (the `top` sort key).
 * Triggers on users, escrows and ratings keep it in the same transaction as the change.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await knex.raw(`
    CREATE TABLE public_profiles (
      user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      username text NOT NULL,
      full_name text NOT NULL,
      is_verified boolean NOT NULL,
      eligible boolean NOT NULL,
      joined_at timestamptz NOT NULL,
      escrows_count integer NOT NULL DEFAULT 0,
      completed_count integer NOT NULL DEFAULT 0,
      ratings_received integer NOT NULL DEFAULT 0,
      listed boolean GENERATED ALWAYS AS (eligible AND (escrows_count > 0 OR ratings_received > 0 OR is_verified)) STORED
    );
    CREATE INDEX public_profiles_new ON public_profiles (joined_at DESC, user_id DESC) WHERE listed;
    CREATE INDEX public_profiles_top ON public_profiles (completed_count DESC, ratings_received DESC, joined_at, user_id) WHERE listed;
    CREATE INDEX public_profiles_username_trgm ON public_profiles USING gin (username gin_trgm_ops) WHERE listed;
    CREATE INDEX public_profiles_full_name_trgm ON public_profiles USING gin (lower(full_name) gin_trgm_ops) WHERE listed;

    CREATE FUNCTION public_profiles_from_user() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO public_profiles AS p (user_id, username, full_name, is_verified, eligible, joined_at)
      VALUES (NEW.id, NEW.username, NEW.full_name, NEW.email_verified_at IS NOT NULL,
              NEW.role = 'user' AND NEW.status = 'active', NEW.created_at)
      ON CONFLICT (user_id) DO UPDATE SET
        username = EXCLUDED.username, full_name = EXCLUDED.full_name, is_verified = EXCLUDED.is_verified,
        eligible = EXCLUDED.eligible, joined_at = EXCLUDED.joined_at;
      RETURN NULL;
    END $$;
    CREATE TRIGGER users_public_profile AFTER INSERT OR UPDATE OF username, full_name, role, status, email_verified_at, created_at
      ON users FOR EACH ROW EXECUTE FUNCTION public_profiles_from_user();

    CREATE FUNCTION public_profiles_from_escrow() RETURNS trigger LANGUAGE plpgsql AS $$
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
    END $$;
    CREATE TRIGGER escrows_public_profile AFTER INSERT OR UPDATE OF status ON escrows
      FOR EACH ROW EXECUTE FUNCTION public_profiles_from_escrow();

    CREATE FUNCTION public_profiles_from_rating() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE public_profiles SET ratings_received = ratings_received + 1 WHERE user_id = NEW.ratee_id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER ratings_public_profile AFTER INSERT ON ratings
      FOR EACH ROW EXECUTE FUNCTION public_profiles_from_rating();

    INSERT INTO public_profiles (user_id, username, full_name, is_verified, eligible, joined_at, escrows_count, completed_count, ratings_received)
    SELECT u.id, u.username, u.full_name, u.email_verified_at IS NOT NULL, u.role = 'user' AND u.status = 'active', u.created_at,
      (SELECT count(*) FROM escrows e WHERE e.buyer_id = u.id OR e.seller_id = u.id),
      (SELECT count(*) FROM escrows e WHERE (e.buyer_id = u.id OR e.seller_id = u.id) AND e.status = 'released'),
      (SELECT count(*) FROM ratings r WHERE r.ratee_id = u.id)
    FROM users u;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER ratings_public_profile ON ratings;
    DROP TRIGGER escrows_public_profile ON escrows;
    DROP TRIGGER users_public_profile ON users;
    DROP FUNCTION public_profiles_from_rating();
    DROP FUNCTION public_profiles_from_escrow();
    DROP FUNCTION public_profiles_from_user();
    DROP TABLE public_profiles;
  `);
}
