/**
 * `npm run bench:profile` (through `bench/run.sh bench/auth-read/profile.ts`, which provides
 * Postgres, Redis, the migrated bench database and a fresh dist/ build): where the API's
 * time goes on the authenticated read.
 *
 * Seeds the bench callers (seed.ts), starts the compiled API under
 * `node --cpu-prof --cpu-prof-dir=<dir> dist/api/server.js` (pinned to core 1 like the
 * bench), checks that a key answers 200, loads `GET /v1/auth/me` with a different user's
 * key per request for BENCH_PROFILE_DURATION seconds (50 connections), stops the API with
 * SIGTERM so V8 writes the profile, and prints the top functions by self time over the
 * load window (lib/cpu-profile.ts). The summary also goes to bench/auth-read/README.md
 * between the `profile` markers (not from a dirty tree; BENCH_README=0 or
 * BENCH_PROFILE_README=0 leaves the file alone); the
 * `.cpuprofile` stays in the printed directory for DevTools (Performance → Load profile).
 *
 * BENCH_PROFILE_ROUTE picks another route (issue 29): `get`, `list`, `create` or `preview`
 * load the escrow route of that bench/escrows scenario with its seed and requests (a
 * different party per request, creations keyed); their summaries are printed, never written.
 *
 * Tunables: BENCH_PROFILE_ROUTE (me), BENCH_PROFILE_DURATION (10), BENCH_PROFILE_WARMUP (2),
 * BENCH_PROFILE_TOP (20), BENCH_PROFILE_DIR (a new temporary directory), BENCH_CONNECTIONS
 * (50), BENCH_USERS (600), BENCH_AUTH_LIMIT (1000000), BENCH_LOG_LEVEL (info), BENCH_PIN.
 */
import { mkdir, mkdtemp, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cyclingHeader, runAutocannon } from '../lib/autocannon.js';
import { formatSummary, readProfile, summarize } from '../lib/cpu-profile.js';
import { intFromEnv, LOG_LEVEL, requireStores, SERVICE_ENV } from '../lib/env.js';
import { fmtInt, fmtNum } from '../lib/format.js';
import { describeExit, freePort, HOST, isPinned, pinLoadGenerator, startChild, runMain, stopChild, waitFor, type Child } from '../lib/procs.js';
import { measuredLine, publish, warnIfDirty } from '../lib/report.js';
import { ME } from './load.js';
import { requestsFor, type Scenario } from '../escrows/load.js';
import { seedEscrows } from '../escrows/seed.js';
import type { AutocannonRequestSpec } from '../lib/autocannon.js';
import { seedCallers } from './seed.js';

const ESCROW_ROUTES = ['get', 'list', 'create', 'preview'] as const satisfies readonly Scenario[];
const ROUTE = process.env.BENCH_PROFILE_ROUTE ?? 'me';
if (ROUTE !== 'me' && !(ESCROW_ROUTES as readonly string[]).includes(ROUTE)) {
  console.error(`profile: BENCH_PROFILE_ROUTE must be me or one of ${ESCROW_ROUTES.join(', ')}`);
  process.exit(2);
}
const escrowRoute = ROUTE === 'me' ? undefined : (ROUTE as (typeof ESCROW_ROUTES)[number]);

const DURATION = intFromEnv('BENCH_PROFILE_DURATION', 10, 1, 120);
const WARMUP = intFromEnv('BENCH_PROFILE_WARMUP', 2, 0, 30);
const TOP = intFromEnv('BENCH_PROFILE_TOP', 20, 1, 200);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000);
const USERS = intFromEnv('BENCH_USERS', 600, 1, 9999);
const AUTH_LIMIT = intFromEnv('BENCH_AUTH_LIMIT', 1_000_000, 1, 1_000_000_000);

async function main(): Promise<void> {
  requireStores('npm run bench:profile');
  const writeReadme = process.env.BENCH_PROFILE_README !== '0' && !escrowRoute;
  if (writeReadme) warnIfDirty('profile');
  pinLoadGenerator();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST,
    ...SERVICE_ENV,
    AUTH_RATE_LIMIT_PER_MINUTE: String(AUTH_LIMIT),
    PUBLIC_RATE_LIMIT_PER_MINUTE: String(1_000_000_000),
  };
  let requests: () => AutocannonRequestSpec[];
  let probePath: string;
  let probeKey: string;
  let what: string;
  if (escrowRoute) {
    const escrowSeed = await seedEscrows(env, 300, 10, 300);
    requests = requestsFor(escrowRoute, escrowSeed);
    probePath = '/api/escrows?limit=1';
    probeKey = escrowSeed.readers[0]!.key;
    const first = requests()[0]!;
    what = `${first.method ?? 'GET'} ${first.path ?? '/'} (bench/escrows scenario \`${escrowRoute}\`)`;
  } else {
    const seed = await seedCallers(env, USERS);
    requests = () => cyclingHeader(ME, 'Authorization', seed.keys.map((k) => `Bearer ${k}`));
    probePath = ME;
    probeKey = seed.keys[0]!;
    what = `GET ${ME} with ${USERS} users' personal keys in turn`;
  }

  const dir = process.env.BENCH_PROFILE_DIR
    ? path.resolve(process.env.BENCH_PROFILE_DIR)
    : await mkdtemp(path.join(os.tmpdir(), 'escrow-cpuprofile-'));
  await mkdir(dir, { recursive: true });
  const before = new Set(await readdir(dir));

  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const spawnedAt = Date.now();
  const api = startChild('API (node --cpu-prof dist/api/server.js)', ['--cpu-prof', `--cpu-prof-dir=${dir}`, 'dist/api/server.js'], {
    ...env,
    PORT: String(port),
    PUBLIC_BASE_URL: base,
    LOG_LEVEL,
  });
  await waitFor(`${base}/readyz`, api, 30_000);
  const probe = await fetch(`${base}${probePath}`, { headers: { Authorization: `Bearer ${probeKey}` } });
  const text = await probe.text();
  if (probe.status !== 200) throw new Error(`API: GET ${probePath} with a seeded key answered ${probe.status} ${text.slice(0, 300)}`);
  const url = `${base}${requests()[0]!.path ?? '/'}`;
  if (WARMUP > 0) {
    console.log(`profile: warming up (${WARMUP} s)`);
    await runAutocannon({ url, connections: CONNECTIONS, pipelining: 1, duration: WARMUP, requests: requests() });
  }
  console.log(`profile: loading ${what} for ${DURATION} s (${CONNECTIONS} connections)`);
  const at = new Date();
  const loadFrom = Date.now() - spawnedAt;
  const r = await runAutocannon({ url, connections: CONNECTIONS, pipelining: 1, duration: DURATION, requests: requests() });
  const loadTo = Date.now() - spawnedAt;
  if (api.exit) throw new Error(describeExit(api));
  const bad = r.errors + r.timeouts + r.non2xx;
  console.log(`profile: ${fmtInt(r.requests.average)} req/s, p99 ${fmtNum(r.latency.p99)} ms${bad ? `, ${bad} errors/non-2xx` : ''} (slowed by the profiler)`);

  await stopChild(api, 30_000);
  // (TypeScript narrowed `api.exit` to null above; stopChild has set it since.)
  const exit = api.exit as Child['exit'];
  if (exit?.code !== 0) throw new Error(`the API did not stop cleanly on SIGTERM, so no profile was written: ${describeExit(api)}`);
  const written = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
  if (written.length !== 1) throw new Error(`expected one new .cpuprofile in ${dir}, found ${written.length}`);
  const file = path.join(dir, written[0]!);

  // The window of the measured load only (the profile starts at process start, a few
  // tens of ms after spawn; that slack is well inside the 1 s trimmed at each end).
  const summary = summarize(await readProfile(file), { fromMs: loadFrom + 1000, toMs: loadTo - 500 });
  const table = formatSummary(summary, TOP);
  const section = [
    `${measuredLine(at, 'Profiled').replace(/\.$/, '')}: \`node --cpu-prof dist/api/server.js\` ` +
      `(the compiled build, \`LOG_LEVEL=${LOG_LEVEL}\`), ${what.replace(/^(\S+ \S+)/, '`$1`')}, ` +
      `${CONNECTIONS} connections for ${DURATION} s${isPinned() ? ' (API pinned to core 1, load generator to core 0)' : ''}; ` +
      `${fmtInt(r.requests.average)} requests/s under the profiler. Self time over the load window ` +
      `(the first second and the last half second cut), top ${TOP}; lines are of the compiled \`dist/\` JavaScript.`,
    '',
    table,
  ].join('\n');
  console.log(`\n${section}\n`);
  console.log(`profile: ${file}`);
  if (writeReadme) await publish({ page: 'auth-read', marker: 'profile', markdown: section, headlines: [], at, tag: 'profile' });
}

await runMain('profile', main);
