import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';

const here = path.dirname(fileURLToPath(import.meta.url));
// Runs from sources (tsx: .ts files) and from the build (dist: .js files).
const compiled = import.meta.url.endsWith('.js');

export const migrationConfig: Knex.MigratorConfig = {
  directory: path.resolve(here, '..', 'migrations'),
  loadExtensions: compiled ? ['.js'] : ['.ts'],
  tableName: 'knex_migrations',
};

export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest(migrationConfig)) as [number, string[]];
  return applied;
}
