import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { accessLog, logger, type Logger } from '../../shared/logger.js';
import { recordRequest } from '../../shared/metrics.js';
import type { AppState, Middleware, Principal } from '../context.js';
import { hasJsonBody, readJsonBody } from './body.js';
import { handleError, renderNotFoundIfUnanswered } from './errors.js';
import { isEnterprisePath, setDefaultCacheControl, setEnterpriseCacheControl, setSecurityHeaders } from './security-headers.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Per-request state; the request's logger is made on first use (most requests never log). */
class RequestState implements AppState {
  principal?: Principal;
  trx?: AppState['trx'];
  input: AppState['input'] = {};
  private child: Logger | undefined;

  constructor(readonly requestId: string) {}

  get log(): Logger {
    return (this.child ??= logger.child({ request_id: this.requestId }));
  }
}

/**
 * The request frame, first on every request, in one layer because it runs on every
 * request (bench/): the request id (X-Request-Id, generated when absent or unsafe),
 * security headers (on /v1/enterprise and /v1/kyb `Cache-Control: private, no-store` before
 * anything can refuse the request, and again after the error renderer), the JSON body
 * (body.ts), the one error renderer (errors.ts) and JSON 404s, then one access-log line (path only: query strings may carry signatures) and
 * the HTTP metrics.
 */
export function requestContext(): Middleware {
  // Named: a trace shows each middleware by its function's name.
  return async function requestContext(ctx, next) {
    const started = performance.now();
    const given = ctx.get('X-Request-Id');
    const requestId = SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    ctx.state = new RequestState(requestId);
    ctx.res.setHeader('X-Request-Id', requestId);
    setSecurityHeaders(ctx);
    const enterprise = isEnterprisePath(ctx.path);
    if (enterprise) setEnterpriseCacheControl(ctx);
    try {
      if (hasJsonBody(ctx)) await readJsonBody(ctx);
      await next();
      renderNotFoundIfUnanswered(ctx);
    } catch (err) {
      handleError(ctx, err);
    }
    if (enterprise) setEnterpriseCacheControl(ctx);
    else setDefaultCacheControl(ctx);
    const ms = performance.now() - started;
    const route = ctx._matchedRoute ? String(ctx._matchedRoute) : 'unmatched';
    recordRequest(ctx.method, route, ctx.status, ms / 1000);
    accessLog({
      requestId,
      method: ctx.method,
      path: ctx.path,
      route,
      status: ctx.status,
      ms: Math.round(ms * 10) / 10,
      ip: ctx.ip,
      userId: ctx.state.principal?.userId,
    });
  };
}
