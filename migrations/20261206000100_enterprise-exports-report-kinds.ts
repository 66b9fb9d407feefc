import type { Knex } from 'knex';

/**
 * The reports' CSV exports (enterprise spec 4.8 deals.csv and disbursements.csv; decision
 * 0020 "Reports") beside the audit export, and the file stored in parts: the exports worker
 * writes the CSV as it streams the rows through the CSV writer (about 64 KiB a part, in its
 * build transaction) and the API streams the parts back one at a time, so neither process
 * holds a whole file. An export is ready once finished; its file is its parts, or `csv` for
 * an export built before parts existed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE enterprise_exports
      DROP CONSTRAINT enterprise_exports_kind,
      ADD CONSTRAINT enterprise_exports_kind CHECK (kind IN ('audit', 'deals', 'disbursements')),
      DROP CONSTRAINT enterprise_exports_ready,
      ADD CONSTRAINT enterprise_exports_ready CHECK ((status = 'ready') = (finished_at IS NOT NULL) AND (csv IS NULL OR status = 'ready'));

    CREATE TABLE enterprise_export_parts (
      export_id uuid NOT NULL REFERENCES enterprise_exports (id) ON DELETE CASCADE,
      part_no integer NOT NULL,
      body text NOT NULL,
      CONSTRAINT enterprise_export_parts_pkey PRIMARY KEY (export_id, part_no),
      CONSTRAINT enterprise_export_parts_part_no CHECK (part_no >= 0)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE enterprise_export_parts;
    DELETE FROM enterprise_exports WHERE kind <> 'audit' OR (status = 'ready' AND csv IS NULL);
    ALTER TABLE enterprise_exports
      DROP CONSTRAINT enterprise_exports_kind,
      ADD CONSTRAINT enterprise_exports_kind CHECK (kind IN ('audit')),
      DROP CONSTRAINT enterprise_exports_ready,
      ADD CONSTRAINT enterprise_exports_ready CHECK ((status = 'ready') = (csv IS NOT NULL AND finished_at IS NOT NULL));
  `);
}
