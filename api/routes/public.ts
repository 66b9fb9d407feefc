/** Public endpoints (consumer spec 4.7): no credentials, any origin, cached up to 60 s. */
import { config } from '../../shared/config.js';
import { turnstileEnabled } from '../../shared/auth/turnstile.js';
import { ok, createRouter, type Middleware } from '../context.js';
import { rateLimit } from '../middleware/rate-limit.js';

export const publicRouter = createRouter();

const publicAnswer = (): Middleware => async (ctx, next) => {
  ctx.set('Access-Control-Allow-Origin', '*');
  await next();
  if (ctx.status < 300) ctx.set('Cache-Control', 'public, max-age=60');
};
const publicLimit = rateLimit({ name: 'public', points: config.publicRateLimitPerMinute, durationSeconds: 60, by: 'ip' });

publicRouter.get('/v1/public/auth-config', publicAnswer(), publicLimit, (ctx) => {
  ok(ctx, {
    turnstile: { enabled: turnstileEnabled(), site_key: config.turnstileSiteKey },
    // Federated sign-in is not built yet, so it is never reported available.
    google: { enabled: false },
  });
});
