import { randomUUID } from 'node:crypto';
import { config } from '../../shared/config.js';
import { db } from '../../shared/db.js';
import { errors, fail } from '../../shared/errors.js';
import { safeEqual } from '../../shared/crypto.js';
import { registry } from '../../shared/metrics.js';
import { ok, createRouter, type Ctx, type Middleware } from '../context.js';

/** Process health, readiness and Prometheus metrics. */
export const systemRouter = createRouter();

type Check = 'ok' | 'unavailable';

/** The platform routes' refusals (errors.notReady carries no extras; this one names each check). */
const systemErrors = {
  notReady: (checks: { postgres: Check; redis: Check }) =>
    fail.unavailable('NOT_READY', { en: 'A dependency is not answering', id: 'Ada dependensi yang tidak menjawab' }, { extras: { checks } }),
  metricsTokenRequired: () => errors.unauthorized({ en: 'Metrics need the metrics token', id: 'Metrik memerlukan token metrik' }),
};

async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const HEALTH_BODY = JSON.stringify({ success: true, data: { status: 'ok' } });
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The liveness answer: the envelope, with the request frame's headers (X-Request-Id, nosniff, no-store). */
function answerHealth(ctx: Ctx): void {
  const given = ctx.get('X-Request-Id');
  const res = ctx.res;
  if (!res.hasHeader('X-Request-Id')) res.setHeader('X-Request-Id', SAFE_REQUEST_ID.test(given) ? given : randomUUID());
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-store');
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = HEALTH_BODY;
}

/**
 * `GET /healthz` (and HEAD) ahead of the request frame, mounted first by createApp: a
 * liveness probe asks every few seconds from every load balancer and checks nothing, so it
 * skips the frame's work (body reading, the routers, the access-log line and the request
 * metrics; issue 29: the frame cost half its throughput). Any other spelling of the path
 * goes on to the routers and is a 404 there. The router's own `/healthz` below answers the
 * same when an app is composed without this.
 */
export function healthCheck(): Middleware {
  return function healthCheck(ctx, next) {
    if (ctx.path !== '/healthz' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    answerHealth(ctx);
    return Promise.resolve();
  };
}

systemRouter.get('/healthz', (ctx) => {
  answerHealth(ctx);
});

systemRouter.get('/readyz', async (ctx) => {
  const [postgres, redis] = await Promise.all([
    within(2000, db.raw('select 1')).then((): Check => 'ok', (): Check => 'unavailable'),
    within(2000, ctx.redis.ping()).then((): Check => 'ok', (): Check => 'unavailable'),
  ]);
  if (postgres !== 'ok' || redis !== 'ok') throw systemErrors.notReady({ postgres, redis });
  ok(ctx, { status: 'ready', checks: { postgres, redis } });
});

systemRouter.get('/metrics', async (ctx) => {
  if (config.metricsToken) {
    const given = ctx.get('Authorization').replace(/^Bearer\s+/i, '');
    if (!safeEqual(given, config.metricsToken)) throw systemErrors.metricsTokenRequired();
  }
  ctx.type = registry.contentType;
  ctx.body = await registry.metrics();
});
