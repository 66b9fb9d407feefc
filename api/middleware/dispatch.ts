/**
 * One dispatch for every route of every router. Mounting each router's own middleware
 * (`app.use(router.routes())`) made a request walk the routers in order, and each router
 * test every one of its routes' expressions, build its chain and compose it anew: a route
 * of the last router paid for the ~250 routes mounted before it, and the cheapest route
 * paid about a quarter of its throughput for routing (bench/auth-read, the frame figure).
 *
 * This builds, once, an index of the routers' routes (@koa/router's public `router.stack`
 * of `Layer`s) by the literal leading segments of their paths, and composes each route's
 * middleware once. A request looks up the routes whose literal segments it starts with and
 * tests only those, with the route's own `layer.match`, in mounting order; so it chooses
 * exactly what the routers chose: the first router with a route matching path and method,
 * all of that router's matching routes in order, `ctx.params`, `ctx.captures`,
 * `ctx.routerPath`, `ctx._matchedRoute` set as @koa/router sets them, and a route that
 * calls `next()` goes on to the later routers (test/unit/platform/dispatch.test.ts checks
 * it against @koa/router's own `router.match` on every route).
 *
 * Routes only: guards are attached to each route (context.ts, createRouter), so a router
 * with path-less middleware (`router.use`) is refused when the app is built.
 */
import compose from 'koa-compose';
import type { Layer } from '@koa/router';
import type { AppContext, AppRouter, AppState, Ctx } from '../context.js';
import { routeMatched } from '../../shared/tracing.js';

type AppLayer = AppRouter['stack'][number];
type Next = () => Promise<unknown>;
type Run = (ctx: Ctx, next: Next) => Promise<unknown>;

interface Route {
  /** The route's position across all routers (mounting order). */
  order: number;
  /** Its router's position in the mounting list. */
  router: number;
  layer: AppLayer;
  methods: ReadonlySet<string>;
  /** The route's middleware, composed once. */
  run: Run;
}

/** How many leading path segments the index keys on. */
const INDEXED_SEGMENTS = 3;
/** A segment with nothing but these is literal in a route path (no parameter, wildcard or group). */
const LITERAL_SEGMENT = /^[A-Za-z0-9._~%-]*$/;

/** `/a/b/c/d` → [`/a`, `/a/b`, `/a/b/c`]: a path's leading keys, shortest first. */
function leadingKeys(path: string): string[] {
  const keys: string[] = [];
  let at = 0;
  while (keys.length < INDEXED_SEGMENTS) {
    const slash = path.indexOf('/', at + 1);
    keys.push(slash === -1 ? path : path.slice(0, slash));
    if (slash === -1) break;
    at = slash;
  }
  return keys;
}

/**
 * The index key of a route: its literal leading segments (up to INDEXED_SEGMENTS), or
 * undefined when its path does not start with one (a parameter first, a regular
 * expression, a router matching case-insensitively): such a route is a candidate for
 * every request.
 */
function keyOf(layer: AppLayer, sensitive: boolean): string | undefined {
  if (!sensitive || typeof layer.path !== 'string' || !layer.path.startsWith('/')) return undefined;
  const segments = layer.path.split('/').slice(1, INDEXED_SEGMENTS + 1);
  const literal: string[] = [];
  for (const segment of segments) {
    if (!LITERAL_SEGMENT.test(segment)) break;
    literal.push(segment);
  }
  return literal.length === 0 ? undefined : `/${literal.join('/')}`;
}

function routesOf(routers: readonly AppRouter[]): Route[] {
  const routes: Route[] = [];
  routers.forEach((router, index) => {
    for (const layer of router.stack) {
      if (layer.methods.length === 0) {
        throw new Error(`dispatch: router middleware on ${String(layer.path)} (router.use) is not supported; attach guards to each route`);
      }
      const run = compose(layer.stack as compose.Middleware<Ctx>[]);
      routes.push({ order: routes.length, router: index, layer, methods: new Set(layer.methods), run });
    }
  });
  return routes;
}

/** The routes chosen for a request, as @koa/router would choose them. */
export interface RouteIndex {
  choose(path: string, method: string, fromRouter?: number): Route[];
}

/**
 * Built once: for each index key, every route a request starting with it may match, in
 * mounting order: the routes of that key and of its shorter keys, and the routes indexed
 * under none. A request's leading keys are all prefixes of its longest one present, so
 * that key's list is its whole candidate list (no merging per request).
 */
export function routeIndex(routers: readonly AppRouter[]): RouteIndex {
  const routes = routesOf(routers);
  const keyed = new Map<string, Route[]>();
  const everywhere: Route[] = [];
  for (const route of routes) {
    const key = keyOf(route.layer, routers[route.router]!.opts.sensitive === true);
    if (key === undefined) everywhere.push(route);
    else if (keyed.has(key)) keyed.get(key)!.push(route);
    else keyed.set(key, [route]);
  }
  const candidatesOf = new Map<string, Route[]>();
  for (const key of keyed.keys()) {
    const lists = leadingKeys(key).map((k) => keyed.get(k) ?? []);
    candidatesOf.set(key, [...everywhere, ...lists.flat()].sort((a, b) => a.order - b.order));
  }

  function candidates(path: string): Route[] {
    const keys = leadingKeys(path);
    for (let i = keys.length - 1; i >= 0; i -= 1) {
      const list = candidatesOf.get(keys[i]!);
      if (list) return list;
    }
    return everywhere;
  }

  const none: Route[] = [];
  function choose(path: string, method: string, fromRouter = 0): Route[] {
    let chosen: Route[] | undefined;
    for (const route of candidates(path)) {
      if (route.router < fromRouter) continue;
      if (chosen && route.router !== chosen[0]!.router) break;
      if (!route.methods.has(method) || !route.layer.match(path)) continue;
      (chosen ??= []).push(route);
    }
    return chosen ?? none;
  }

  return { choose };
}

/** What @koa/router sets on the context before a matched route's middleware runs. */
function enter(ctx: Ctx, layer: Layer<AppState, AppContext>, path: string): void {
  ctx.captures = layer.captures(path);
  ctx.request.params = layer.params(path, ctx.captures, ctx.params);
  ctx.params = ctx.request.params;
  ctx.routerPath = layer.path as string;
  ctx.routerName = layer.name || undefined;
  ctx._matchedRoute = layer.path;
  if (layer.name) ctx._matchedRouteName = layer.name;
  // With tracing on, the request's span is named after the route (`POST /api/escrows/:id/pay`).
  routeMatched(layer.path as string);
}

/** The middleware that dispatches every route of `routers` (in mounting order). */
export function dispatchRoutes(routers: readonly AppRouter[]): (ctx: Ctx, next: Next) => Promise<unknown> {
  const index = routeIndex(routers);

  function from(ctx: Ctx, next: Next, fromRouter: number): Promise<unknown> {
    const path = ctx.path;
    const chosen = index.choose(path, ctx.method, fromRouter);
    if (chosen.length === 0) return next();
    const after = (): Promise<unknown> => from(ctx, next, chosen[0]!.router + 1);
    // Several routes of one router may match: each runs when the one before calls next().
    const step = (i: number): Promise<unknown> => {
      if (i === chosen.length) return after();
      const route = chosen[i]!;
      enter(ctx, route.layer, path);
      return route.run(ctx, () => step(i + 1));
    };
    return step(0);
  }

  return function dispatch(ctx, next) {
    return from(ctx, next, 0);
  };
}
