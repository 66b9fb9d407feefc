import type { Knex } from 'knex';

/**
 * Uploads (consumer spec 4.5, issue 7): one row per sanitised, stored file. The row is
 * written only once the worker has cleaned the file, so `size` and `sha256` are those of
 * the stored bytes. A binding (escrow, chat message or dispute) is set once by the
 * uploader with a compare-and-set on `bound_at IS NULL`; the three binding columns are
 * all set or all empty.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE uploads (
      id uuid PRIMARY KEY,
      stored_name text NOT NULL,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
      purpose text NOT NULL,
      mime text NOT NULL,
      size bigint NOT NULL,
      sha256 char(64) NOT NULL,
      storage_key text NOT NULL,
      created_at timestamptz NOT NULL,
      bound_kind text,
      bound_id uuid,
      bound_at timestamptz,
      CONSTRAINT uploads_stored_name_unique UNIQUE (stored_name),
      CONSTRAINT uploads_purpose_known CHECK (purpose IN ('escrow', 'chat', 'kyc')),
      CONSTRAINT uploads_mime_known CHECK (mime IN ('image/jpeg', 'image/png', 'image/webp', 'application/pdf')),
      CONSTRAINT uploads_size_positive CHECK (size > 0 AND size <= 10485760),
      CONSTRAINT uploads_sha256_hex CHECK (sha256 ~ '^[0-9a-f]{64}$'),
      CONSTRAINT uploads_bound_kind_known CHECK (bound_kind IS NULL OR bound_kind IN ('escrow', 'chat', 'dispute')),
      CONSTRAINT uploads_binding_whole CHECK (
        (bound_kind IS NULL AND bound_id IS NULL AND bound_at IS NULL)
        OR (bound_kind IS NOT NULL AND bound_id IS NOT NULL AND bound_at IS NOT NULL))
    );
    CREATE INDEX uploads_user_created ON uploads (user_id, created_at DESC);
    CREATE INDEX uploads_unbound_created ON uploads (created_at) WHERE bound_at IS NULL;
    CREATE INDEX uploads_bound_to ON uploads (bound_kind, bound_id) WHERE bound_at IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE uploads');
}
