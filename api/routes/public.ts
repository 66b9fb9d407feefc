/** Public endpoints (consumer spec 4.7): no credentials, any origin, cached up to 60 s. */
import { config } from '../../shared/config.js';
import { turnstileEnabled } from '../../shared/auth/turnstile.js';
import { ok, createRouter, type Ctx, type Middleware } from '../context.js';
import { publicGet as publicRoute } from '../kit.js';
import { paramsOf, queryOf, validate } from '../middleware/validate.js';
import { publicRatings, publicRatingsQuery, serializePublicRating } from '../../shared/ratings/service.js';
import Joi from 'joi';
import { cached, listUsers, profileOf, publicSettings, usersQuery, type UsersQuery } from '../../shared/public/service.js';

export const publicRouter = createRouter();

/** An answer from the Redis cache may be browser-cached only for what is left of its 60 s. */
const cachedAnswer = <T>(ctx: Ctx, answer: { value: T; maxAge: number }) => {
  ctx.set('Cache-Control', `public, max-age=${answer.maxAge}`);
  ok(ctx, answer.value);
};
const cache = { cacheSeconds: publicSettings.cacheSeconds };
const publicGet = (path: string, ...handlers: Middleware[]) => publicRoute(publicRouter, path, cache, ...handlers);

publicGet('/v1/public/auth-config', (ctx) => {
  ok(ctx, {
    turnstile: { enabled: turnstileEnabled(), site_key: config.turnstileSiteKey },
    // Federated sign-in is not built yet, so it is never reported available.
    google: { enabled: false },
  });
});

// Published ratings of a user (also under /api/public). A malformed username is 404 USER_NOT_FOUND.
const ratingsRoute = [
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
  validate({ params: Joi.object({ username: Joi.string().required() }) }),
  async (ctx: Ctx) => {
    const username = paramsOf<{ username: string }>(ctx).username.toLowerCase();
    cachedAnswer(ctx, await cached(ctx.redis, `user:${encodeURIComponent(username)}`, () => profileOf(username)));
  },
] as const;
publicGet('/v1/public/users/:username', ...profileRoute);
publicGet('/api/public/users/:username', ...profileRoute);
