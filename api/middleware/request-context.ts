import { randomUUID } from 'node:crypto';
import { accessLogger, logger, type Logger } from '../../shared/logger.js';
import { httpDuration, httpRequests } from '../../shared/metrics.js';
import type { Middleware } from '../context.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request id (X-Request-Id, generated when absent or unsafe), a child logger carrying it,
 * one access-log line per request (path only: query strings may carry signatures) and
 * the HTTP metrics.
 */
export function requestContext(): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const given = ctx.get('X-Request-Id');
    const requestId = SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    ctx.state.requestId = requestId;
    // The request's logger is made on first use (most requests never log anything else).
    let child: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', {
      get: () => (child ??= logger.child({ request_id: requestId })),
      configurable: true,
      enumerable: true,
    });
    ctx.state.input = {};
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = ctx._matchedRoute ? String(ctx._matchedRoute) : 'unmatched';
      httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      httpDuration.observe({ method: ctx.method, route }, seconds);
      accessLogger.info(
        {
          request_id: requestId,
          method: ctx.method,
          path: ctx.path,
          route,
          status: ctx.status,
          ms: Math.round(seconds * 1000 * 10) / 10,
          ip: ctx.ip,
          user_id: ctx.state.principal?.userId,
        },
        'request',
      );
    }
  };
}
