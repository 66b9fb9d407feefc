import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';

const here = path.dirname(fileURLToPath(import.meta.url));
const directory = path.resolve(here, '..', 'migrations');
// Runs from sources (tsx: .ts files) and from the build (dist/: .js files).
const extension = import.meta.url.endsWith('.js') ? '.js' : '.ts';

/**
 * Migrations are recorded by name without extension, so a database migrated from the
 * sources (`npm start`, tests) and one migrated by the build (`Procfile` release) agree.
 */
class MigrationDirectory implements Knex.MigrationSource<string> {
  async getMigrations(): Promise<string[]> {
    const files = await readdir(directory);
    return files.filter((f) => f.endsWith(extension) && !f.endsWith('.d.ts')).sort();
  }

  getMigrationName(file: string): string {
    return file.slice(0, -extension.length);
  }

  async getMigration(file: string): Promise<Knex.Migration> {
    return (await import(pathToFileURL(path.join(directory, file)).href)) as Knex.Migration;
  }
}

export const migrationConfig: Knex.MigratorConfig = {
  migrationSource: new MigrationDirectory(),
  tableName: 'knex_migrations',
};

export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest(migrationConfig)) as [number, string[]];
  return applied;
}
