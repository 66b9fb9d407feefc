import { config } from '../../shared/config.js';
import { db } from '../../shared/db.js';
import { AppError } from '../../shared/errors.js';
import { safeEqual } from '../../shared/crypto.js';
import { registry } from '../../shared/metrics.js';
import { ok, createRouter } from '../context.js';

/** Process health, readiness and Prometheus metrics. */
export const systemRouter = createRouter();

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

systemRouter.get('/healthz', (ctx) => {
  ok(ctx, { status: 'ok' });
});

systemRouter.get('/readyz', async (ctx) => {
  const [postgres, redis] = await Promise.all([
    within(2000, db.raw('select 1')).then(() => 'ok', () => 'unavailable'),
    within(2000, ctx.redis.ping()).then(() => 'ok', () => 'unavailable'),
  ]);
  if (postgres !== 'ok' || redis !== 'ok') {
    throw AppError.legacy(503, 'NOT_READY', 'A dependency is not answering', { checks: { postgres, redis } });
  }
  ok(ctx, { status: 'ready', checks: { postgres, redis } });
});

systemRouter.get('/metrics', async (ctx) => {
  if (config.metricsToken) {
    const given = ctx.get('Authorization').replace(/^Bearer\s+/i, '');
    if (!safeEqual(given, config.metricsToken)) throw AppError.legacy(401, 'UNAUTHORIZED', 'Metrics need the metrics token');
  }
  ctx.type = registry.contentType;
  ctx.body = await registry.metrics();
});
