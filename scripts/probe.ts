/**
 * `tsx scripts/probe.ts pg <url>` / `redis <url>`: exit 0 when the server answers within
 * two seconds (for Postgres, its maintenance database is tried, so a missing database
 * still counts as an answering server).
 */
import pg from 'pg';
import { Redis } from 'ioredis';

const [kind, url] = process.argv.slice(2);

async function probePg(u: string): Promise<void> {
  const target = new URL(u);
  target.pathname = '/postgres';
  const client = new pg.Client({ connectionString: target.toString(), connectionTimeoutMillis: 2000 });
  await client.connect();
  await client.query('select 1');
  await client.end();
}

async function probeRedis(u: string): Promise<void> {
  const r = new Redis(u, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  await r.connect();
  await r.ping();
  r.disconnect();
}

try {
  if (!url) throw new Error('usage: probe.ts pg|redis <url>');
  if (kind === 'pg') await probePg(url);
  else if (kind === 'redis') await probeRedis(url);
  else throw new Error(`unknown kind ${kind}`);
  process.exit(0);
} catch {
  process.exit(1);
}
