/**
 * `npm run bench:public` (bench/run.sh: Postgres, Redis and the migrated bench database):
 * the public user listing of issue 9 on 100,000 users, through the HTTP API with the
 * answer cache off (every request runs its queries).
 *
 * seed.ts makes the users (once) and draws the search terms; the API runs in this process on
 * loopback (createApp over node:http), which shares core 0 with the client as it always
 * has (BENCH_PIN=0 frees it); verify.ts checks the answers; load.ts sends BENCH_PUBLIC_REQUESTS
 * (400) requests per scenario:
 *
 * - sort-top / sort-new: `?sort=top|new&page=<1..200>&limit=24` (verified filter on every other);
 * - search: `?search=<term>&sort=<top|new>` over the terms; the terms of 1 or 2 characters
 *   (no trigram to use) apart; and the search terms from 8 clients at once (2 cores: the
 *   queue shows).
 *
 * report.ts writes requests/s and p50/p95/max per scenario (goal: p95 under 50 ms, one at a
 * time) to bench/public-users/README.md and the table of bench/README.md.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeBenchDb } from '../lib/db.js';
import { requireStores } from '../lib/env.js';
import { isPinned, pinLoadGenerator } from '../lib/procs.js';
import { publish, warnIfDirty } from '../lib/report.js';
import { loadavg } from '../lib/sample.js';
import { runScenario, scenarios, settings, type ScenarioResult } from './load.js';
import { report } from './report.js';
import { searchTerms, seedUsers, vacuum } from './seed.js';
import { checkListing } from './verify.js';

requireStores('npm run bench:public');
warnIfDirty('[public]');
pinLoadGenerator();
process.env.PUBLIC_RATE_LIMIT_PER_MINUTE = '1000000000';
process.env.PUBLIC_CACHE = '0';
const { createApp } = await import('../../api/app.js');
const { publicSettings } = await import('../../shared/public/service.js');
publicSettings.cache = false;

try {
  await seedUsers(settings.users);
  await vacuum();
  const handle = createApp().callback();
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const words = await searchTerms();
  await checkListing(base, words);

  const before = loadavg();
  const at = new Date();
  const results: ScenarioResult[] = [];
  for (const s of scenarios(words)) results.push(await runScenario(base, s));
  const loads = `${before} / ${loadavg()}`;
  const terms = { all: words.length, short: words.filter((w) => w.length <= 2).length };
  const pinning = isPinned() ? 'this process, the API and its client, pinned to core 0' : 'nothing pinned';
  const { markdown, headlines } = report(at, results, terms, loads, pinning);
  console.log(`\n${markdown}\n`);
  await publish({ page: 'public-users', marker: 'results', markdown, headlines, at, tag: '[public]' });
  server.closeAllConnections();
  server.close();
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
} finally {
  await closeBenchDb();
}
// createApp's stream hub and queues keep their own Redis connections open: end here.
process.exit(process.exitCode ?? 0);
