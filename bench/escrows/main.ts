/**
 * `npm run bench:escrows` (bench/run.sh: Postgres, Redis, the migrated bench database and
 * a fresh dist/ build): the escrow routes of issue 6 on the compiled API, each measured
 * against `GET /v1/auth/me` with the same keys in the same run (the floor every
 * authenticated product route pays), and the get, the list and the keyed creation against
 * floors of their own (issue 29: bench/auth-read/floor-server.ts, Koa + pg + ioredis, the
 * same durable work by hand).
 *
 * seed.ts makes readers with escrows (through the service) and writers; the API and the
 * floor server start (each pinned to core 1, as bench/auth-read/main.ts starts them, with
 * the same env); verify.ts checks every route's answers for a spread of callers, and that
 * the floor answers and writes as the API does; load.ts runs the rounds (me, get,
 * get-floor, list, list-floor, create, create-floor, create-one-seller, preview;
 * BENCH_ESCROW_SCENARIOS picks a subset); report.ts writes each route's median round, its
 * ratio to `/v1/auth/me` and to its floor, to bench/escrows/README.md and the table of
 * bench/README.md when every scenario ran. A round with more than 1% non-2xx answers or
 * errors stops the run. Tunables: see load.ts and bench/escrows/README.md.
 */
import { closeBenchDb } from '../lib/db.js';
import { requireStores, LOG_LEVEL, SERVICE_ENV } from '../lib/env.js';
import { freePort, HOST, pinLoadGenerator, startChild, startFloorSide, runMain, waitFor } from '../lib/procs.js';
import { publish, warnIfDirty } from '../lib/report.js';
import { loadavg } from '../lib/sample.js';
import { ALL_SCENARIOS, ME, runPacedCreate, runRounds, settings } from './load.js';
import { report } from './report.js';
import { seedEscrows } from './seed.js';
import { checkFloor, checkLean, checkRoutes, countRows } from './verify.js';

async function main(): Promise<void> {
  requireStores('npm run bench:escrows');
  warnIfDirty('bench');
  pinLoadGenerator();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST,
    ...SERVICE_ENV,
    AUTH_RATE_LIMIT_PER_MINUTE: String(settings.authLimit),
    PUBLIC_RATE_LIMIT_PER_MINUTE: String(settings.publicLimit),
  };
  console.log(`bench: escrow scenarios ${settings.scenarios.join(', ')} (against ${ME}); load average ${loadavg()}`);
  const seed = await seedEscrows(env, settings.readers, settings.perReader, settings.writers);

  const [port, floorPort] = [await freePort(), await freePort()];
  const base = `http://${HOST}:${port}`;
  const child = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], { ...env, PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL });
  // The floor answers escrow_url from the API's PUBLIC_BASE_URL, so both answer the same JSON.
  const floorChild = startFloorSide({
    ...env,
    PORT: String(floorPort),
    PUBLIC_BASE_URL: base,
  });
  const floor = { base: `http://${HOST}:${floorPort}`, child: floorChild };
  await Promise.all([waitFor(`${base}/readyz`, child, 30_000), waitFor(`${floor.base}/readyz`, floorChild, 30_000)]);
  console.log(`bench: API on ${base}, floor server on ${floor.base}`);
  const listTotals = await checkRoutes(base, seed);
  await checkFloor(base, floor.base, seed);
  // A floor at least as lean as its route, or no ratio (issue 43): the keyed creation.
  const lean = settings.scenarios.includes('create') ? await checkLean({ ...env, PUBLIC_BASE_URL: base, LOG_LEVEL }, seed) : undefined;

  const rowsBefore = await countRows();
  const loadStart = loadavg();
  const at = new Date();
  const results = await runRounds({ api: { base, child }, floor }, seed);
  const paced = settings.scenarios.includes('create') && settings.pacedRounds > 0 ? await runPacedCreate({ api: { base, child }, floor }, seed) : undefined;
  const seconds = (Date.now() - at.getTime()) / 1000;
  const loadEnd = loadavg();
  const rowsAfter = await countRows();

  const { markdown, headlines } = report(results, { seed, listTotals, loadStart, loadEnd, rowsBefore, rowsAfter, at, seconds, paced, lean });
  console.log(`\n${markdown}\n`);
  if (settings.scenarios.length === ALL_SCENARIOS.length) {
    await publish({ page: 'escrows', marker: 'results', markdown, headlines, at, tag: 'bench' });
  } else {
    console.log(`bench: only ${settings.scenarios.join(', ')} ran (BENCH_ESCROW_SCENARIOS); nothing written`);
  }
}

await runMain('bench', main, closeBenchDb);
