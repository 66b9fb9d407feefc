/**
 * A guard for every route (issue 16): every route the routers register (read from
 * `routers` in api/app.ts, plus the queue dashboard, so a new route is covered without
 * editing this file) is sent property-based bodies, headers and path spellings.
 *
 *  1. No request, whatever its body, headers, credentials or path spelling, is answered 5xx
 *     (first a fixed sweep of known-dangerous inputs on every route, then random ones).
 *  2. Every route under /v1/admin and the queue dashboard refuses an ordinary user (valid
 *     session + CSRF token, or valid personal key) however the path is spelled: 401, 403
 *     or 404 (429 counts as a refusal too), never 2xx, never 5xx, and nothing changes.
 *
 * The default run is small so `npm test` stays fast (about 5 s for this file). For a longer run:
 *   FUZZ_RUNS=300 npm test -- test/integration/platform/route-fuzz.test.ts
 * FUZZ_RUNS sets the random runs per route of both properties (default 6 and 25) and
 * prints how each route answered (status counts), to show how deep the inputs reached.
 * A failure names its fast-check seed; FUZZ_SEED=<seed> replays with it (the server's
 * state, e.g. rate limits, may still differ).
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { redis } from '../../../shared/redis.js';
import {
  bodyArbitrary,
  bodyBytes,
  headersArbitrary,
  paramValue,
  pathArbitrary,
  PROTOTYPE_KEYS,
  type FuzzBody,
} from '../../helpers/fuzz-arbitraries.js';
import { CALLER_KINDS, FuzzCallers, type CallerKind } from '../../helpers/fuzz-callers.js';
import {
  describeExchange,
  isAdminRoute,
  routeTable,
  startFuzzServer,
  type FuzzRoute,
  type FuzzServer,
  type RawRequest,
  type RawResponse,
} from '../../helpers/fuzz-http.js';

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS) || 0;
const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
/** Runs per route when FUZZ_RUNS is not set. */
const ANY_ROUTE_RUNS = FUZZ_RUNS || 6;
const ADMIN_ROUTE_RUNS = FUZZ_RUNS || 25;

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** Refusals of a non-admin on a staff route. */
const REFUSED = [401, 403, 404, 429];

/** The route's own method mostly; sometimes another one on the same path. */
const methodFor = (route: FuzzRoute) =>
  fc.oneof({ weight: 5, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) });

function request(
  callers: FuzzCallers,
  input: { method: string; path: string; caller: CallerKind; headers: [string, string][]; body: FuzzBody; compress: boolean },
): RawRequest {
  const headers: [string, string][] = [...callers.headersOf(input.caller)];
  if (input.body.contentType !== null) headers.push(['Content-Type', input.body.contentType]);
  if (input.body.contentEncoding !== null) headers.push(['Content-Encoding', input.body.contentEncoding]);
  headers.push(...input.headers);
  const compressed = input.body.contentEncoding === 'gzip' && input.compress ? ', gzipped' : '';
  return { method: input.method, path: input.path, headers, body: bodyBytes(input.body, input.compress), label: `caller: ${input.caller}${compressed}` };
}

async function exchange(server: FuzzServer, req: RawRequest): Promise<RawResponse> {
  try {
    return await server.send(req);
  } catch (err) {
    throw new Error(describeExchange(req, err instanceof Error ? err : new Error(String(err))), { cause: err });
  }
}

/** Runs `property` for one route; returns a failure report, or null. */
async function checkRoute<T>(route: FuzzRoute, property: fc.IAsyncProperty<T>, numRuns: number): Promise<string | null> {
  const details = await fc.check(property, { numRuns, seed: FUZZ_SEED, endOnFailure: true });
  if (!details.failed) return null;
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return `${route.method} ${route.template} (after ${details.numRuns} runs; replay with FUZZ_SEED=${details.seed}):\n${error}`;
}

function count(statuses: Map<string, Map<number, number>>, route: string, status: number): void {
  const perRoute = statuses.get(route) ?? new Map<number, number>();
  perRoute.set(status, (perRoute.get(status) ?? 0) + 1);
  statuses.set(route, perRoute);
}

/** Long runs (FUZZ_RUNS) print how each route answered, to show how deep the inputs reached. */
function printStatuses(statuses: Map<string, Map<number, number>>): void {
  for (const [route, perRoute] of statuses) {
    const line = [...perRoute].sort(([a], [b]) => a - b).map(([status, n]) => `${status}x${n}`).join(' ');
    console.error(`    ${route.padEnd(44)} ${line}`);
  }
}

describe('platform: route-table fuzz (every registered route)', () => {
  let server: FuzzServer;
  const routes = routeTable();

  before(async () => {
    server = await startFuzzServer();
  });

  after(async () => {
    await server.close();
  });

  it('reads the routes from the routers (admin routes and the queue dashboard included)', () => {
    expect(routes.filter((r) => r.source === 'router').length).to.be.greaterThan(10);
    expect(routes.some((r) => r.template.startsWith('/v1/admin/'))).to.equal(true);
    expect(routes.some((r) => r.source === 'dashboard')).to.equal(true);
  });

  it('answers no 5xx to the fixed edge cases on every route (each caller, prototype-named parameters, unparsable Origin)', async function () {
    this.timeout(20_000 + routes.length * 2_000);
    const callers = await FuzzCallers.create(server);
    const failures: string[] = [];
    for (const route of routes) {
      await redis.flushdb();
      await callers.refresh();
      const hasParams = /[:*][A-Za-z0-9_]/.test(route.template);
      const fill = (value: string) => route.template.replace(/[:*][A-Za-z0-9_]+/g, value);
      const cases: { caller: CallerKind; path: string; headers: [string, string][] }[] = [];
      for (const caller of CALLER_KINDS) {
        // `Origin: null` is what browsers send from sandboxed frames and after some redirects.
        cases.push({ caller, path: fill(callers.bystanderId), headers: [['Origin', 'null']] });
      }
      if (hasParams) {
        for (const caller of ['anonymous', 'user-key', 'admin-session'] as const) {
          for (const name of PROTOTYPE_KEYS) cases.push({ caller, path: fill(name), headers: [] });
        }
      }
      let failed = 0;
      for (const c of cases) {
        const req = request(callers, {
          method: route.method,
          path: c.path,
          caller: c.caller,
          headers: c.headers,
          body: { text: '{}', contentType: 'application/json', contentEncoding: null },
          compress: false,
        });
        const res = await exchange(server, req);
        if (res.status >= 500 && ++failed <= 2) failures.push(describeExchange(req, res));
      }
      if (failed > 2) failures.push(`... and ${failed - 2} more 5xx on ${route.method} ${route.template}`);
    }
    if (failures.length) expect.fail(`some requests answered 5xx (at most two shown per route):\n\n${failures.join('\n\n')}\n`);
  });

  it('answers no request 5xx, whatever its body, headers, credentials or path spelling', async function () {
    this.timeout(20_000 + routes.length * ANY_ROUTE_RUNS * 200);
    const callers = await FuzzCallers.create(server);
    const failures: string[] = [];
    const statuses = new Map<string, Map<number, number>>();
    for (const route of routes) {
      // Each route starts with fresh rate-limit counters and working credentials.
      await redis.flushdb();
      await callers.refresh();
      const known = callers.knownStrings();
      const input = fc.record({
        method: methodFor(route),
        path: pathArbitrary(route.template, paramValue(callers.knownIds()), known),
        caller: fc.constantFrom(...CALLER_KINDS),
        headers: headersArbitrary(config.sessionCookieName, known),
        body: bodyArbitrary(route.method, route.template, known),
        compress: fc.boolean(),
      });
      const property = fc.asyncProperty(input, async (generated) => {
        const req = request(callers, generated);
        const res = await exchange(server, req);
        count(statuses, `${route.method} ${route.template}`, res.status);
        if (res.status >= 500) throw new Error(describeExchange(req, res));
      });
      const failure = await checkRoute(route, property, ANY_ROUTE_RUNS);
      if (failure) failures.push(failure);
    }
    if (FUZZ_RUNS) printStatuses(statuses);
    if (failures.length) expect.fail(`${failures.length} route(s) answered 5xx:\n\n${failures.join('\n\n')}\n`);
  });

  it('refuses an ordinary user on every /v1/admin route and the queue dashboard, however the path is spelled', async function () {
    const adminRoutes = routes.filter(isAdminRoute);
    this.timeout(20_000 + adminRoutes.length * ADMIN_ROUTE_RUNS * 200);
    expect(adminRoutes.length).to.be.greaterThan(0);
    const callers = await FuzzCallers.create(server);
    const failures: string[] = [];
    let answered = 0;
    let rateLimited = 0;
    for (const route of adminRoutes) {
      await redis.flushdb();
      await callers.refresh();
      const known = callers.knownStrings();
      const ids = [callers.bystanderId, callers.user.userId];
      const userCallers: CallerKind[] = ['user-session', 'user-key'];

      // The canonical spelling reaches the guard itself: refused as a caller, not as a path.
      for (const caller of userCallers) {
        const path = route.template.replace(/:[A-Za-z0-9_]+/g, callers.bystanderId).replace(/\*[A-Za-z0-9_]+/, 'api/queues');
        const req = request(callers, {
          method: route.method,
          path,
          caller,
          headers: [],
          body: { text: '{"note":"fuzz"}', contentType: 'application/json', contentEncoding: null },
          compress: false,
        });
        const res = await exchange(server, req);
        if (![401, 403].includes(res.status)) failures.push(`canonical path not refused by the guard:\n${describeExchange(req, res)}`);
      }

      const input = fc.record({
        method: fc.oneof({ weight: 4, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        path: pathArbitrary(route.template, paramValue(ids), known),
        caller: fc.constantFrom(...userCallers),
        // Well-formed bodies only: a 400 here would mean validation ran, i.e. the guard was passed.
        body: fc.constantFrom<FuzzBody>(
          { text: '{}', contentType: 'application/json', contentEncoding: null },
          { text: '{"note":"fuzz"}', contentType: 'application/json', contentEncoding: null },
          { text: null, contentType: null, contentEncoding: null },
        ),
      });
      const property = fc.asyncProperty(input, async (generated) => {
        const req = request(callers, { ...generated, headers: [], compress: false });
        const res = await exchange(server, req);
        answered += 1;
        if (res.status === 429) rateLimited += 1;
        if (!REFUSED.includes(res.status)) throw new Error(`a non-admin was not refused:\n${describeExchange(req, res)}`);
      });
      const failure = await checkRoute(route, property, ADMIN_ROUTE_RUNS);
      if (failure) failures.push(failure);
    }
    // Nothing a refused request could have done happened.
    const changed = (await db('users').whereNot({ status: 'active' }).count<{ n: string }[]>({ n: '*' }))[0]!;
    expect(Number(changed.n), 'an account was suspended or changed by a non-admin').to.equal(0);
    const audit = (await db('staff_audit').count<{ n: string }[]>({ n: '*' }))[0]!;
    expect(Number(audit.n), 'a staff action was recorded for a non-admin').to.equal(0);
    if (failures.length) expect.fail(`${failures.length} staff route(s) let a non-admin through:\n\n${failures.join('\n\n')}\n`);
    // Meaningful coverage: rate limits must not have answered most of the requests.
    expect(rateLimited, `${rateLimited} of ${answered} answered 429`).to.be.below(answered / 2);
  });
});
