/**
 * `npm run bench` (bench/run.sh: Postgres, Redis, the migrated bench database and a fresh
 * dist/ build): issue 17's figures. Seeds the callers (seed.ts), starts the real API
 * (`node dist/api/server.js`), a bare Koa app (bare-koa.ts) and the floor server
 * (floor-server.ts) on loopback ports, checks that they answer alike (verify.ts), then
 * measures (load.ts) and reports (report.ts):
 *
 * - healthz: GET /healthz, API vs bare Koa, alternating rounds (the API answers it ahead
 *            of the request frame: Koa and the check alone);
 * - frame:   GET /v1/auth/me without credentials, API vs bare Koa: the trivial route
 *            through the whole request frame (issue 43);
 * - auth:    GET /v1/auth/me with a personal key, a different user's key on every request
 *            (BENCH_USERS users), API vs floor server, alternating rounds;
 * - session: the same route with one user's session cookie, API vs floor;
 * - rate:    the authenticated read at a fixed BENCH_RATE requests/s, evenly paced
 *            (lib/paced.ts), API and floor; plus one autocannon `overallRate` round each,
 *            to compare with issue 17's figures (autocannon's rate is bursty: see paced.ts).
 *
 * The figures go to bench/auth-read/README.md and the table of bench/README.md when every
 * scenario ran (BENCH_SCENARIOS). It is a measurement: the exit code is 0 whether or not a
 * goal is met, 1 only when a server does not start or answers wrongly. Tunables: see
 * load.ts and bench/auth-read/README.md.
 */
import { requireStores, LOG_LEVEL, SERVICE_ENV } from '../lib/env.js';
import { freePort, HOST, pinLoadGenerator, startChild, runMain, waitFor } from '../lib/procs.js';
import { publish, warnIfDirty } from '../lib/report.js';
import { alternate, alternatePaced, ALL_SCENARIOS, FRAME, HEALTHZ, keyCycler, keyLoad, ME, runs, settings, type Target } from './load.js';
import { report, type Measured } from './report.js';
import { seedCallers } from './seed.js';
import { checkAuth, checkFrame, checkHealthz } from './verify.js';

async function main(): Promise<void> {
  requireStores('npm run bench');
  warnIfDirty('bench');
  pinLoadGenerator();
  const needsCallers = runs('auth') || runs('session') || runs('rate');
  const cookieName = process.env.SESSION_COOKIE_NAME || 'escrow_session';
  const base: NodeJS.ProcessEnv = { ...process.env, HOST, ...SERVICE_ENV, AUTH_RATE_LIMIT_PER_MINUTE: String(settings.authLimit) };
  console.log(`bench: scenarios ${settings.scenarios.join(', ')}`);
  const seed = needsCallers ? await seedCallers(base, settings.users) : undefined;

  const [barePort, fullPort, floorPort] = [await freePort(), await freePort(), await freePort()];
  const api = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], {
    ...base,
    PORT: String(fullPort),
    PUBLIC_BASE_URL: `http://${HOST}:${fullPort}`,
    LOG_LEVEL,
  });
  const service: Target = { label: 'API', base: `http://${HOST}:${fullPort}`, child: api };
  const ready = [waitFor(`${service.base}/readyz`, api, 30_000)];
  let bare: Target | undefined;
  if (runs('healthz') || runs('frame')) {
    const child = startChild('bare Koa (bench/auth-read/bare-koa.ts)', ['--import', 'tsx', 'bench/auth-read/bare-koa.ts'], { ...base, PORT: String(barePort) });
    bare = { label: 'Bare Koa', base: `http://${HOST}:${barePort}`, child };
    ready.push(waitFor(`${bare.base}${HEALTHZ}`, child, 30_000));
  }
  let floor: Target | undefined;
  if (needsCallers) {
    const child = startChild('floor server (bench/auth-read/floor-server.ts)', ['--import', 'tsx', 'bench/auth-read/floor-server.ts'], {
      ...base,
      PORT: String(floorPort),
      SESSION_COOKIE_NAME: cookieName,
    });
    floor = { label: 'Floor (Koa + pg + ioredis)', base: `http://${HOST}:${floorPort}`, child };
    ready.push(waitFor(`${floor.base}/readyz`, child, 30_000));
  }
  await Promise.all(ready);
  console.log(`bench: API on ${service.base}` + (bare ? `, bare Koa on ${bare.base}` : '') + (floor ? `, floor server on ${floor.base}` : ''));

  if (bare && runs('healthz')) {
    await checkHealthz(bare);
    await checkHealthz(service);
  }
  if (bare && runs('frame')) await checkFrame(bare, service);
  if (seed && floor) await checkAuth(seed, service, floor, cookieName);

  const at = new Date();
  const measured: Measured = {};
  const full: Target = { ...service, label: 'Full stack' };
  const { rounds, duration, warmup } = settings;
  if (bare && runs('healthz')) measured.healthz = await alternate('healthz', bare, full, { path: HEALTHZ }, rounds, duration, warmup);
  if (bare && runs('frame')) measured.frame = await alternate('frame', bare, full, { path: FRAME }, rounds, duration, warmup);
  if (seed && floor) {
    if (runs('auth')) measured.auth = await alternate('auth', floor, service, keyLoad(seed), rounds, duration, warmup);
    if (runs('session') && settings.sessionRounds > 0) {
      const spec = { path: ME, headers: { Cookie: `${cookieName}=${seed.session.token}` } };
      measured.session = await alternate('session', floor, service, spec, settings.sessionRounds, settings.sessionDuration, runs('auth') ? 0 : warmup);
    }
    if (runs('rate') && settings.rateRounds > 0) {
      if (!runs('auth') && warmup > 0) await alternate('rate warm-up', floor, service, keyLoad(seed), 0, duration, warmup);
      measured.rate = await alternatePaced(`paced ${settings.rate}/s`, floor, service, ME, keyCycler(seed.keys));
      if (settings.rateAutocannonRounds > 0) {
        const tag = `autocannon overallRate ${settings.rate}`;
        measured.rateAutocannon = await alternate(tag, floor, service, keyLoad(seed, settings.rate), settings.rateAutocannonRounds, settings.rateDuration, 0);
      }
    }
  }

  const { markdown, headlines } = report(measured, { bare: bare?.label ?? 'Bare Koa', full: full.label, service: service.label, floor: floor?.label ?? 'Floor' }, at);
  console.log(`\n${markdown}\n`);
  for (const h of headlines) console.log(`bench: ${h.figure}: ${h.measured} (goal ${h.goal}: ${h.noisy ? 'noisy' : h.met ? 'met' : 'NOT met'})`);
  if (settings.scenarios.length === ALL_SCENARIOS.length) {
    await publish({ page: 'auth-read', marker: 'results', markdown, headlines, at, tag: 'bench' });
  } else {
    console.log(`bench: only ${settings.scenarios.join(', ')} ran (BENCH_SCENARIOS); nothing written`);
  }
}

await runMain('bench', main);
