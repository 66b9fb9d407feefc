import { config } from '../../shared/config.js';
import { safeEqual } from '../../shared/crypto.js';
import { AppError } from '../../shared/errors.js';
import type { Middleware } from '../context.js';

/**
 * Until staff sign-in exists the queue dashboard takes HTTP Basic credentials equal to
 * ADMIN_EMAIL / ADMIN_PASSWORD; with either unset it is closed to everyone.
 */
export function dashboardGuard(): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    const match = /^Basic\s+(.+)$/i.exec(header);
    const [user, ...rest] = match ? Buffer.from(match[1] ?? '', 'base64').toString('utf8').split(':') : [];
    const password = rest.join(':');
    const allowed =
      config.adminEmail !== '' &&
      config.adminPassword !== '' &&
      safeEqual((user ?? '').toLowerCase(), config.adminEmail) &&
      safeEqual(password, config.adminPassword);
    if (!allowed) {
      ctx.set('WWW-Authenticate', 'Basic realm="queues", charset="UTF-8"');
      throw new AppError(401, 'UNAUTHORIZED', 'The queue dashboard needs the operator credentials');
    }
    await next();
  };
}
