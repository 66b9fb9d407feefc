/**
 * `tsx scripts/ensure-db.ts <url> [--recreate]`: creates the database named in the URL
 * when it is missing (or drops and recreates it with --recreate, for the test database).
 */
import pg from 'pg';

const [url, flag] = process.argv.slice(2);
if (!url) {
  console.error('usage: ensure-db.ts <database-url> [--recreate]');
  process.exit(2);
}
const target = new URL(url);
const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
if (!/^[A-Za-z0-9_-]+$/.test(name)) {
  console.error(`refusing unusual database name "${name}"`);
  process.exit(2);
}
const admin = new URL(url);
admin.pathname = '/postgres';
const client = new pg.Client({ connectionString: admin.toString() });
await client.connect();
try {
  if (flag === '--recreate') await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (found.rowCount === 0) {
    await client.query(`CREATE DATABASE "${name}"`);
    console.log(`database ${name} created`);
  }
} finally {
  await client.end();
}
