/** Public endpoints (consumer spec 4.7): no credentials, any origin, cached up to 60 s. */
import { config } from '../../shared/config.js';
import { turnstileEnabled } from '../../shared/auth/turnstile.js';
import { ok, createRouter, type Ctx, type Middleware } from '../context.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { paramsOf, queryOf, validate } from '../middleware/validate.js';
import { publicRatings, publicRatingsQuery, serializePublicRating } from '../../shared/ratings/service.js';
import Joi from 'joi';
import { cached, listUsers, profileOf, publicSettings, usersQuery, type UsersQuery } from '../../shared/public/service.js';

export const publicRouter = createRouter();

const publicAnswer = (): Middleware => async (ctx, next) => {
  ctx.set('Access-Control-Allow-Origin', '*');
  await next();
  if (ctx.status < 300 && !ctx.response.get('Cache-Control')) ctx.set('Cache-Control', `public, max-age=${publicSettings.cacheSeconds}`);
};
/** An answer from the Redis cache may be browser-cached only for what is left of its 60 s. */
const cachedAnswer = <T>(ctx: Ctx, answer: { value: T; maxAge: number }) => {
  ctx.set('Cache-Control', `public, max-age=${answer.maxAge}`);
  ok(ctx, answer.value);
};

/**
 * CORS preflight for every public path: any origin, GET only, no credentials. A browser
 * sends one before a GET carrying a header of its own (X-Service-Lang, X-Request-Id).
 */
const preflight: Middleware = (ctx) => {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS');
  const asked = ctx.get('Access-Control-Request-Headers');
  if (/^[A-Za-z0-9-]+(\s*,\s*[A-Za-z0-9-]+)*$/.test(asked) && asked.length <= 1000) ctx.set('Access-Control-Allow-Headers', asked);
  ctx.set('Access-Control-Max-Age', '600');
  ctx.status = 204;
};
/** Registers a public GET route together with its CORS preflight. */
function publicGet(path: string, ...handlers: Middleware[]): void {
  publicRouter.get(path, ...handlers);
  publicRouter.options(path, preflight);
}

const publicLimit = rateLimit({ name: 'public', points: config.publicRateLimitPerMinute, durationSeconds: 60, by: 'ip' });

publicGet('/v1/public/auth-config', publicAnswer(), publicLimit, (ctx) => {
  ok(ctx, {
    turnstile: { enabled: turnstileEnabled(), site_key: config.turnstileSiteKey },
    // Federated sign-in is not built yet, so it is never reported available.
    google: { enabled: false },
  });
});

// Published ratings of a user (also under /api/public). A malformed username is 404 USER_NOT_FOUND.
const ratingsRoute = [
  publicAnswer(),
  publicLimit,
  validate({ params: Joi.object({ username: Joi.string().required() }), query: publicRatingsQuery }),
  async (ctx: Ctx) => {
    const { page, limit } = queryOf<{ page: number; limit: number }>(ctx);
    const { total, items } = await publicRatings(paramsOf<{ username: string }>(ctx).username, page, limit);
    ok(ctx, { page, limit, total, items: items.map(serializePublicRating) });
  },
] as const;
publicGet('/v1/public/users/:username/ratings', ...ratingsRoute);
publicGet('/api/public/users/:username/ratings', ...ratingsRoute);

// The public user listing and one profile (issue 9), also under /api/public.
const usersRoute = [
  publicAnswer(),
  publicLimit,
  validate({ query: usersQuery }),
  async (ctx: Ctx) => {
    const q = queryOf<UsersQuery>(ctx);
    const verified = q.verified === '1' || q.verified === 'true';
    const sort = q.sort === 'top' ? 'top' : 'new';
    const key = `users:${sort}:${verified ? 1 : 0}:${q.page}:${q.limit}:${encodeURIComponent(q.search.toLowerCase())}`;
    cachedAnswer(ctx, await cached(ctx.redis, key, () => listUsers(q)));
  },
] as const;
publicGet('/v1/public/users', ...usersRoute);
publicGet('/api/public/users', ...usersRoute);

const profileRoute = [
  publicAnswer(),
  publicLimit,
  validate({ params: Joi.object({ username: Joi.string().required() }) }),
  async (ctx: Ctx) => {
    const username = paramsOf<{ username: string }>(ctx).username.toLowerCase();
    cachedAnswer(ctx, await cached(ctx.redis, `user:${encodeURIComponent(username)}`, () => profileOf(username)));
  },
] as const;
publicGet('/v1/public/users/:username', ...profileRoute);
publicGet('/api/public/users/:username', ...profileRoute);
