/**
 * `npm run bench:fund` (bench/run.sh: Postgres, Redis, the migrated bench database and a
 * fresh dist/ build): the enterprise money path of issue 29 — a sandbox milestone funded,
 * then an approved milestone of the same deal released into 2 splits, both keyed — on the
 * compiled API and on its floor (bench/auth-read/floor-server.ts with floor-fund.ts: Koa,
 * node-postgres named statements, ioredis, the same durable work by hand), in the same run.
 *
 * seed.ts makes the workspaces, members, keys, instructions and deals through the service;
 * the API and the floor server start (pinned to core 1 when the load generator is on core 0)
 * with the same environment and the enterprise limits raised; verify.ts runs one flow
 * through each and compares answers and rows; load.ts runs the closed-loop rounds
 * (alternating which side goes first) and the paced runs; verify.ts checks every completed
 * flow and the ledger; report.ts prints the figures and (unless BENCH_README=0, or the tree
 * is dirty) writes them to bench/fund/README.md and the table of bench/README.md.
 * Tunables: see load.ts and bench/fund/README.md.
 */
import { closeBenchDb } from '../lib/db.js';
import { requireStores, LOG_LEVEL, SERVICE_ENV } from '../lib/env.js';
import { freePort, HOST, pinLoadGenerator, runMain, startChild, startFloorSide, waitFor } from '../lib/procs.js';
import { publish, warnIfDirty } from '../lib/report.js';
import { loadavg } from '../lib/sample.js';
import { itemsNeeded, runAll, settings } from './load.js';
import { report } from './report.js';
import { seedFund } from './seed.js';
import { checkAfter, checkFloor, checkLean } from './verify.js';

async function main(): Promise<void> {
  requireStores('npm run bench:fund');
  warnIfDirty('bench');
  pinLoadGenerator();
  const prefix = process.env.QUEUE_PREFIX ?? 'escrow-bench';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST,
    ...SERVICE_ENV,
    AUTH_RATE_LIMIT_PER_MINUTE: String(settings.authLimit),
    ENTERPRISE_MONEY_LIMIT_PER_MINUTE: String(settings.moneyLimit),
    // The floor's own limit counters (the seed clears them with the API's).
    FLOOR_PREFIX: `${prefix}-floor`,
  };
  const needed = itemsNeeded();
  console.log(`bench: fund and release, API against its floor; ${settings.workspaces} workspaces, ${needed} deals needed; load average ${loadavg()}`);
  const seed = await seedFund(env, settings.workspaces, needed);

  const [port, floorPort] = [await freePort(), await freePort()];
  const base = `http://${HOST}:${port}`;
  const child = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], { ...env, PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL });
  const floorChild = startFloorSide({ ...env, PORT: String(floorPort), PUBLIC_BASE_URL: base });
  const targets = { api: { base, child }, floor: { base: `http://${HOST}:${floorPort}`, child: floorChild } };
  await Promise.all([waitFor(`${base}/readyz`, child, 30_000), waitFor(`${targets.floor.base}/readyz`, floorChild, 30_000)]);
  console.log(`bench: API on ${base}, floor server on ${targets.floor.base}`);
  const checked0 = await checkFloor(targets.api, targets.floor, seed, seed.items).catch((err: unknown) => {
    // A 500 is explained on the server's stderr (the API logs it; Koa prints the floor's).
    for (const c of [child, floorChild]) if (c.stderrTail()) console.error(`bench: ${c.name}, last stderr:\n${c.stderrTail()}`);
    throw err;
  });
  // A floor at least as lean as its route, or no ratio (issue 43).
  const { lean, left: items } = await checkLean({ ...env, PUBLIC_BASE_URL: base, LOG_LEVEL }, seed, checked0);

  const loadStart = loadavg();
  const at = new Date();
  const runs = await runAll(targets, seed, items);
  const seconds = (Date.now() - at.getTime()) / 1000;
  const loadEnd = loadavg();
  const checked = await checkAfter([...runs.done.api, ...runs.done.floor], seed.workspaces.map((w) => w.id));

  const { markdown, headlines } = report(runs, { seed, loadStart, loadEnd, at, seconds, checked, lean });
  console.log(`\n${markdown}\n`);
  await publish({ page: 'fund', marker: 'results', markdown, headlines, at, tag: 'bench' });
}

await runMain('bench', main, closeBenchDb);
