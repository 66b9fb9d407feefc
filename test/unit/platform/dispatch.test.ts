/**
 * One dispatch for every route (api/middleware/dispatch.ts): for every route of the API,
 * and for spellings around it that must not reach it, the dispatch chooses exactly what
 * @koa/router chose when each router was mounted on its own: the first router (in mounting
 * order) with a route matching path and method, and all of that router's matching routes.
 * The reference is @koa/router's own public `router.match(path, method)`.
 */
import { expect } from 'chai';
import Koa from 'koa';
import request from 'supertest';
import { pageRouters, routers } from '../../../api/app.js';
import { createRouter, type AppRouter } from '../../../api/context.js';
import { dispatchRoutes, routeIndex } from '../../../api/middleware/dispatch.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const all = [...routers, ...pageRouters];

/** What mounting each router's own middleware in order chose (the router index and its layers). */
function reference(list: readonly AppRouter[], path: string, method: string): { router: number; layers: unknown[] } | undefined {
  for (const [index, router] of list.entries()) {
    const found = router.match(path, method);
    if (found.route) return { router: index, layers: found.pathAndMethod };
  }
  return undefined;
}

function chosen(list: readonly AppRouter[], path: string, method: string): { router: number; layers: unknown[] } | undefined {
  const routes = routeIndex(list).choose(path, method);
  return routes.length === 0 ? undefined : { router: routes[0]!.router, layers: routes.map((r) => r.layer) };
}

/** A concrete path for a route, and spellings around it. */
function pathsFor(router: AppRouter): string[] {
  const out: string[] = [];
  for (const layer of router.stack) {
    if (typeof layer.path !== 'string') continue;
    const params = Object.fromEntries(layer.paramNames.map((k, i) => [k.name, `v${i}-0b9f`]));
    const path = layer.url(params);
    out.push(path, `${path}/`, path.toUpperCase(), `/${path}`, `${path}/extra`, path.replace(/\/([a-z])/, (_, c: string) => `/%${c.charCodeAt(0).toString(16)}`));
    out.push(path.split('/').slice(0, -1).join('/') || '/');
  }
  return out;
}

describe('one dispatch for every route (api/middleware/dispatch.ts)', () => {
  it('chooses what the routers chose, for every route, method and nearby spelling', () => {
    const paths = [...new Set([...all.flatMap(pathsFor), '/', '/v1', '/v1/', '/nothing', '/v1/enterprise', '/kyb/invite/x%2Fy'])];
    expect(paths.length).to.be.greaterThan(500);
    let matched = 0;
    for (const path of paths) {
      for (const method of METHODS) {
        const want = reference(all, path, method);
        expect(chosen(all, path, method), `${method} ${path}`).to.deep.equal(want);
        if (want) matched += 1;
      }
    }
    expect(matched).to.be.greaterThan(200);
  });

  it('takes the first router with a match, and only its routes, when two routers match a path', () => {
    const a = createRouter();
    const b = createRouter();
    const handler = (): void => undefined;
    b.get('/o/:id', handler);
    a.get('/o/:id', handler);
    a.get('/o/:other', handler);
    b.post('/o/:id', handler);
    for (const [path, method] of [['/o/1', 'GET'], ['/o/1', 'POST'], ['/o/1', 'HEAD'], ['/o', 'GET']] as const) {
      expect(chosen([a, b], path, method), `${method} ${path}`).to.deep.equal(reference([a, b], path, method));
    }
    expect(chosen([a, b], '/o/1', 'GET')!.layers).to.have.length(2);
    expect(chosen([a, b], '/o/1', 'POST')!.router).to.equal(1);
  });

  it('runs later routers when a route calls next(), sets params and the matched route like @koa/router, and 404s the rest', async () => {
    const first = createRouter();
    const second = createRouter('/p');
    const seen: string[] = [];
    first.get('/p/:id/x', async (ctx, next) => {
      seen.push(`first ${ctx.params.id} ${String(ctx._matchedRoute)}`);
      await next();
    });
    first.get('/p/:id/:what', async (ctx, next) => {
      seen.push(`first-b ${ctx.params.what}`);
      await next();
    });
    second.get('/:id/x', (ctx) => {
      seen.push(`second ${ctx.params.id} ${String(ctx._matchedRoute)} ${ctx.routerPath}`);
      ctx.body = { ok: true };
    });
    const app = new Koa();
    app.use(dispatchRoutes([first, second]) as Koa.Middleware);
    const res = await request(app.callback()).get('/p/a%20b/x');
    expect(res.status).to.equal(200);
    expect(seen).to.deep.equal(['first a b /p/:id/x', 'first-b x', 'second a b /p/:id/x /p/:id/x']);
    expect((await request(app.callback()).post('/p/a/x')).status).to.equal(404);
    expect((await request(app.callback()).get('/P/a/x')).status).to.equal(404);
  });

  it('refuses a router with path-less middleware (guards go on each route)', () => {
    const router = createRouter();
    router.use(async (_ctx, next) => {
      await next();
    });
    router.get('/z', (ctx) => {
      ctx.body = 1;
    });
    expect(() => routeIndex([router])).to.throw(/router\.use/);
  });
});
