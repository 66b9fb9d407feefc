/**
 * `tsx test/helpers/shard-dbs.ts <template-url> <n>`: (re)creates the databases
 * <template>_1 .. <template>_n as copies of the migrated template database, for the
 * parallel test workers, and prints their URLs, one a line. All of them (the template too)
 * commit without waiting for the WAL flush (synchronous_commit off): a crash of the
 * machine may lose the last commits of a test run, which nothing needs, and commits stop
 * waiting on a disk the whole machine shares.
 */
import pg from 'pg';

const [url, count] = process.argv.slice(2);
const n = Number(count);
if (!url || !Number.isInteger(n) || n < 0) {
  console.error('usage: shard-dbs.ts <template-database-url> <n>');
  process.exit(2);
}
const template = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
if (!/^[A-Za-z0-9_-]+$/.test(template) || !template.includes('_test')) {
  console.error(`refusing database name "${template}" (a test database's name contains _test)`);
  process.exit(2);
}
const admin = new URL(url);
admin.pathname = '/postgres';
const client = new pg.Client({ connectionString: admin.toString() });
await client.connect();
const urls: string[] = [];
try {
  await client.query(`ALTER DATABASE "${template}" SET synchronous_commit = off`);
  for (let i = 1; i <= n; i++) {
    const name = `${template}_${i}`;
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
    await client.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`);
    const shard = new URL(url);
    shard.pathname = `/${name}`;
    urls.push(shard.toString());
  }
} finally {
  await client.end();
}
process.stdout.write(`${urls.join('\n')}\n`);
