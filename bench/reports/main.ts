/**
 * `npm run bench:reports` (bench/run.sh: Postgres, Redis, the migrated bench database and a
 * fresh dist/ build): the summary report and the cached overview of issue 28 on a live
 * workspace with 100,000 deals and their feed, on the compiled API.
 *
 * seed.ts makes the workspace (through `register`, then live) and its deals, milestones,
 * feed, decisions and payouts in bulk by SQL (skipped when already there), and sessions for
 * its owner and many viewers; the API starts (`node dist/api/server.js`, pinned to core 1);
 * verify.ts checks the seed and that the summary answers what the rows say; load.ts runs
 * the rounds (summary over the default 90 days and over 366 days, the cached overview);
 * report.ts writes each route's median round by p95 against its goal to
 * bench/reports/README.md and the table of bench/README.md. A round with more than 1%
 * non-2xx answers or errors stops the run. Tunables: see load.ts and bench/reports/README.md.
 * The deal list of issue 42 (`GET /v1/enterprise/deals`, one request at a time) is checked
 * against the rows (verify.ts checkList), measured in the same rounds and written to a block
 * of its own; `BENCH_REPORT_ONLY=list` (or `=reports`) runs one part alone.
 */
import { closeBenchDb } from '../lib/db.js';
import { requireStores, LOG_LEVEL, SERVICE_ENV } from '../lib/env.js';
import { freePort, HOST, pinLoadGenerator, startChild, runMain, waitFor } from '../lib/procs.js';
import { publish, warnIfDirty } from '../lib/report.js';
import { loadavg } from '../lib/sample.js';
import { measureCatchUp } from './catchup.js';
import { routes, runRounds, settings, type Run } from './load.js';
import { report, reportList } from './report.js';
import { seedReports } from './seed.js';
import { checkList, checkRoutes, checkSeed } from './verify.js';

async function main(): Promise<void> {
  requireStores('npm run bench:reports');
  warnIfDirty('bench');
  const env: NodeJS.ProcessEnv = { ...process.env, HOST, ...SERVICE_ENV, AUTH_RATE_LIMIT_PER_MINUTE: String(settings.authLimit) };
  console.log(`bench: reports summary and overview on ${settings.deals} deals; load average ${loadavg()}`);
  const seed = await seedReports(env, settings.deals, settings.members);
  await checkSeed(seed);
  pinLoadGenerator();

  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const child = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], { ...env, PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL });
  await waitFor(`${base}/readyz`, child, 30_000);
  console.log(`bench: API on ${base}`);
  const all = routes();
  const reports = all.some((d) => d.kind !== 'list');
  const lists = all.some((d) => d.kind === 'list');
  const { overview } = reports ? await checkRoutes(base, seed) : { overview: true };
  const checked = lists ? await checkList(base, seed) : [];

  const notMeasured = new Map<string, string>();
  if (!overview) notMeasured.set('overview-cached', 'route not built yet');
  const defs = all.filter((d) => !notMeasured.has(d.key));

  const loadStart = loadavg();
  const at = new Date();
  const results: Map<string, Run[]> = await runRounds({ base, child }, seed, defs);
  const seconds = (Date.now() - at.getTime()) / 1000;
  const loadEnd = loadavg();

  const webhooks = ['- Webhook delivery throughput: `npm run bench:webhooks` (bench/webhooks/README.md).'];
  // After the rounds: it writes marks and kept figures, and costs CPU the rounds must not share.
  const catchUp = defs.some((d) => d.key === 'reconciliation') ? await measureCatchUp(env, seed.workspaceId) : undefined;
  const info = { seed, loadStart, loadEnd, at, seconds, notMeasured, webhooks, catchUp };
  if (reports) {
    const { markdown, headlines } = report(all, results, info);
    console.log(`\n${markdown}\n`);
    await publish({ page: 'reports', marker: 'results', markdown, headlines, at, tag: 'bench' });
  }
  if (lists) {
    const { markdown, headlines } = reportList(all, results, { ...info, checked });
    console.log(`\n${markdown}\n`);
    await publish({ page: 'reports', marker: 'list-results', markdown, headlines, at, tag: 'bench' });
  }
}

await runMain('bench', main, closeBenchDb);
