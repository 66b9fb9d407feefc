/** Public endpoints (consumer spec 4.7): no credentials, any origin, cached up to 60 s. */
import { publicRatings, publicRatingsQuery, serializePublicRating } from '../../shared/ratings/service.js';
import { usernameParams, usersQuery, type UsersQuery } from '../../shared/public/schemas.js';
import { authConfig, publicProfile, publicSettings, publicUsers, type CachedAnswer } from '../../shared/public/service.js';
import { ok, createRouter, type Ctx, type Middleware } from '../context.js';
import { publicGet as publicRoute } from '../kit.js';
import { paramsOf, queryOf, validate } from '../middleware/validate.js';

export const publicRouter = createRouter();

/** An answer from the Redis cache may be browser-cached only for what is left of its 60 s. */
const cachedAnswer = <T>(ctx: Ctx, answer: CachedAnswer<T>) => {
  ctx.set('Cache-Control', `public, max-age=${answer.maxAge}`);
  ok(ctx, answer.value);
};
const cache = { cacheSeconds: publicSettings.cacheSeconds };
const publicGet = (path: string, ...handlers: Middleware[]) => publicRoute(publicRouter, path, cache, ...handlers);
const usernameOf = (ctx: Ctx) => paramsOf<{ username: string }>(ctx).username;

publicGet('/v1/public/auth-config', (ctx) => {
  ok(ctx, authConfig());
});

// Published ratings of a user (also under /api/public). A malformed username is 404 USER_NOT_FOUND.
const ratingsRoute = [
  validate({ params: usernameParams, query: publicRatingsQuery }),
  async (ctx: Ctx) => {
    const { page, limit } = queryOf<{ page: number; limit: number }>(ctx);
    const { total, items } = await publicRatings(usernameOf(ctx), page, limit);
    ok(ctx, { page, limit, total, items: items.map(serializePublicRating) });
  },
] as const;
publicGet('/v1/public/users/:username/ratings', ...ratingsRoute);
publicGet('/api/public/users/:username/ratings', ...ratingsRoute);

// The public user listing and one profile (issue 9), also under /api/public.
const usersRoute = [
  validate({ query: usersQuery }),
  async (ctx: Ctx) => {
    cachedAnswer(ctx, await publicUsers(ctx.redis, queryOf<UsersQuery>(ctx)));
  },
] as const;
publicGet('/v1/public/users', ...usersRoute);
publicGet('/api/public/users', ...usersRoute);

const profileRoute = [
  validate({ params: usernameParams }),
  async (ctx: Ctx) => {
    cachedAnswer(ctx, await publicProfile(ctx.redis, usernameOf(ctx)));
  },
] as const;
publicGet('/v1/public/users/:username', ...profileRoute);
publicGet('/api/public/users/:username', ...profileRoute);
