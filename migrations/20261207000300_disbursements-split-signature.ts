import type { Knex } from 'knex';

/**
 * Disbursements (decision 0019): each payout is one numbered split of a release
 * (`split_no`, 1-5, unique per milestone and release) and carries the signature made at
 * release over what it pays where (`signature`; the payout gate refuses a row that no
 * longer matches it, and a row without one). Existing rows are numbered in the order they
 * were made within their release.
 *
 * Databases made from an earlier working copy of 20261205000100 already have both columns
 * and constraints (that file briefly carried them); every step here is skipped where done.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE disbursements ADD COLUMN IF NOT EXISTS split_no integer, ADD COLUMN IF NOT EXISTS signature text;
    UPDATE disbursements d SET split_no = s.n
      FROM (SELECT id, row_number() OVER (PARTITION BY milestone_id, release_no ORDER BY created_at, id) AS n FROM disbursements) s
     WHERE s.id = d.id AND d.split_no IS NULL;
    ALTER TABLE disbursements ALTER COLUMN split_no SET NOT NULL;
    DO $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'disbursements_split_unique') THEN
        ALTER TABLE disbursements ADD CONSTRAINT disbursements_split_unique UNIQUE (milestone_id, release_no, split_no);
      END IF;
      IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'disbursements_split_range') THEN
        ALTER TABLE disbursements ADD CONSTRAINT disbursements_split_range CHECK (split_no BETWEEN 1 AND 5);
      END IF;
    END $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE disbursements
      DROP CONSTRAINT disbursements_split_range,
      DROP CONSTRAINT disbursements_split_unique,
      DROP COLUMN signature,
      DROP COLUMN split_no;
  `);
}
