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
