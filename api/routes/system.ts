import { config } from '../../shared/config.js';
import { db } from '../../shared/db.js';
import { errors, fail } from '../../shared/errors.js';
import { safeEqual } from '../../shared/crypto.js';
import { registry } from '../../shared/metrics.js';
import { ok, createRouter } from '../context.js';

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

systemRouter.get('/healthz', (ctx) => {
  ok(ctx, { status: 'ok' });
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
