/**
 * `npm run bench:deals` (bench/run.sh: Postgres, Redis, the migrated bench database and a
 * fresh dist/ build): deal creation and the fee preview of issue 26 on the compiled API,
 * each measured against `GET /v1/enterprise/me` with the same sessions in the same run.
 *
 * seed.ts makes owners with a sandbox workspace, a counterparty and a session each (through
 * the service); the API starts (`node dist/api/server.js`, pinned to core 1); verify.ts
 * checks the three routes for a spread of owners; load.ts runs the rounds (me, create,
 * preview); verify.ts then checks every bench deal against its milestones and the ledger;
 * report.ts writes each route's median round and its ratios to `GET /v1/enterprise/me`, to
 * bench/deals/README.md and the table of bench/README.md. A round with more than 1% non-2xx
 * answers or errors stops the run. Tunables: see load.ts and bench/deals/README.md.
 */
import { closeBenchDb } from '../lib/db.js';
import { requireStores, LOG_LEVEL, SERVICE_ENV } from '../lib/env.js';
import { freePort, HOST, pinLoadGenerator, startChild, runMain, waitFor } from '../lib/procs.js';
import { publish, warnIfDirty } from '../lib/report.js';
import { loadavg } from '../lib/sample.js';
import { creations, ME, runPaced, runRounds, settings } from './load.js';
import { report } from './report.js';
import { seedDeals } from './seed.js';
import { checkDeals, checkRoutes, countRows } from './verify.js';

async function main(): Promise<void> {
  requireStores('npm run bench:deals');
  warnIfDirty('bench');
  pinLoadGenerator();
  const env: NodeJS.ProcessEnv = { ...process.env, HOST, ...SERVICE_ENV, AUTH_RATE_LIMIT_PER_MINUTE: String(settings.authLimit) };
  console.log(`bench: deal creation and fee preview (against ${ME}); load average ${loadavg()}`);
  const seed = await seedDeals(env, settings.users);

  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const child = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], { ...env, PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL });
  await waitFor(`${base}/readyz`, child, 30_000);
  console.log(`bench: API on ${base}`);
  await checkRoutes(base, seed);

  const rowsBefore = await countRows();
  const loadStart = loadavg();
  const at = new Date();
  const results = await runRounds({ base, child }, seed);
  const paced = await runPaced({ base, child }, seed);
  const seconds = (Date.now() - at.getTime()) / 1000;
  const loadEnd = loadavg();
  const rowsAfter = await countRows();
  const check = await checkDeals(seed, rowsAfter.deals - rowsBefore.deals, creations.answered201, creations.runs, settings.connections);

  const { markdown, headlines } = report(results, { seed, loadStart, loadEnd, rowsBefore, rowsAfter, answered201: creations.answered201, check, at, seconds, paced });
  console.log(`\n${markdown}\n`);
  await publish({ page: 'deals', marker: 'results', markdown, headlines, at, tag: 'bench' });
}

await runMain('bench', main, closeBenchDb);
