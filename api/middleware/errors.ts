import { AppError, errors } from '../../shared/errors.js';
import type { Ctx } from '../context.js';

interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  code?: unknown;
}

function asHttpish(err: unknown): HttpishError {
  return typeof err === 'object' && err !== null ? err : {};
}

/** A compressed request body that does not inflate (zlib error while reading the body). */
function isBadCompressedBody(ctx: Ctx, e: HttpishError): boolean {
  const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
  return encoding !== '' && encoding !== 'identity' && typeof e.code === 'string' && e.code.startsWith('Z_');
}

/** Maps errors thrown by the body parser and Koa itself onto the spec's codes. */
function normalise(ctx: Ctx, err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  const e = asHttpish(err);
  const status = e.status ?? e.statusCode;
  if (status === 413 || e.type === 'entity.too.large') {
    return errors.bodyTooLarge();
  }
  // co-body rethrows JSON.parse's SyntaxError with status 400 (no `type`, no `expose`).
  if (
    e.type === 'entity.parse.failed' ||
    (status === 400 && (e.expose || err instanceof SyntaxError)) ||
    isBadCompressedBody(ctx, e)
  ) {
    return errors.malformedBody();
  }
  if (status === 415 || e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
    return errors.unsupportedMediaType();
  }
  return null;
}

export function renderError(ctx: Ctx, err: AppError): void {
  ctx.status = err.status;
  for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
  ctx.body = { success: false, error: { code: err.code, message: err.message, ...err.extras } };
}

/**
 * The one error renderer (called by the request frame in request-context.ts). Known
 * errors become the spec's envelope; anything else is logged with the request id and
 * answered 500 INTERNAL_ERROR with nothing internal.
 */
export function handleError(ctx: Ctx, err: unknown): void {
  const known = normalise(ctx, err);
  if (known) {
    if (known.isServerError) ctx.state.log.error({ err }, 'request failed');
    renderError(ctx, known);
    return;
  }
  ctx.state.log.error({ err }, 'unhandled error');
  renderError(ctx, errors.internal(ctx.state.requestId));
}

/** Unknown routes: 404 NOT_FOUND as JSON. */
export function renderNotFoundIfUnanswered(ctx: Ctx): void {
  if (ctx.status === 404 && ctx.body === undefined) {
    renderError(ctx, errors.noRoute(ctx.method, ctx.path));
  }
}
