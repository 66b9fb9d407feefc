import type { Middleware } from '../context.js';

/** Conservative response headers for a JSON API (the docs page and dashboard are same-origin). */
export function securityHeaders(): Middleware {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    await next();
    if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', 'no-store');
  };
}
