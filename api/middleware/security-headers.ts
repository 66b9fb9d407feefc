import type { Ctx } from '../context.js';

/**
 * Response headers for a JSON API, set by the request frame (not a middleware of its
 * own: one layer less on every request). JSON answers need only `nosniff` and
 * `no-store`; the HTML pages (docs) add the framing and referrer rules themselves.
 */
export function setSecurityHeaders(ctx: Ctx): void {
  ctx.res.setHeader('X-Content-Type-Options', 'nosniff');
}

/** For HTML pages: no framing by other sites, no referrer, own browsing context group. */
export function setHtmlSecurityHeaders(ctx: Ctx): void {
  ctx.res.setHeader('X-Frame-Options', 'DENY');
  ctx.res.setHeader('Referrer-Policy', 'no-referrer');
  ctx.res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
}

/** Answers are not cached unless a route says otherwise. */
export function setDefaultCacheControl(ctx: Ctx): void {
  if (!ctx.res.hasHeader('Cache-Control')) ctx.res.setHeader('Cache-Control', 'no-store');
}

/**
 * The enterprise document's paths: `/v1/enterprise` and `/v1/kyb` and everything under them,
 * whether a route exists there or not (any spelling of the prefix: routing is case-sensitive,
 * so `/V1/Enterprise/...` reaches no route, but its 404 is private too).
 */
const ENTERPRISE_PATH = /^\/v1\/(?:enterprise|kyb)(?:\/|$)/i;

export const isEnterprisePath = (path: string): boolean => ENTERPRISE_PATH.test(path);

/**
 * Enterprise spec section 1: every answer carries `Cache-Control: private, no-store`,
 * errors included. The request frame calls this before anything else can refuse the
 * request (the body parser, routing, credentials, limits) and again after the error
 * renderer, so no answer of those paths leaves with another value.
 */
export const ENTERPRISE_CACHE_CONTROL = 'private, no-store';

export function setEnterpriseCacheControl(ctx: Ctx): void {
  if (!ctx.headerSent) ctx.res.setHeader('Cache-Control', ENTERPRISE_CACHE_CONTROL);
}
