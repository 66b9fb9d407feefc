import { isDatabaseFailure } from '../../shared/db.js';
import { AppError, errors } from '../../shared/errors.js';
import type { Middleware } from '../context.js';

/**
 * For the keyed writes whose spec names `500 DB_ERROR (retry with the same key)` (consumer
 * spec 4.4 POST /v1/withdrawals, 4.8 POST /api/jasabayar): a failure of the database under
 * the request (isDatabaseFailure: a refused statement, a timeout, a cancelled or
 * terminated backend, no pooled connection, the connection lost) answers 500 DB_ERROR
 * instead of INTERNAL_ERROR. Put it before `idempotent()`: the key's transaction has been
 * rolled back by then (4xx and 5xx release the key), so the retry with the same key runs
 * the request again, or replays its answer if a lost connection hid a COMMIT that went
 * through. Errors the route already names (AppError) pass unchanged.
 */
export function databaseErrorAnswer(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof AppError || !isDatabaseFailure(err)) throw err;
      ctx.state.log.error({ err }, 'database failure under a keyed write: 500 DB_ERROR');
      throw errors.dbError(ctx.state.requestId);
    }
  };
}
