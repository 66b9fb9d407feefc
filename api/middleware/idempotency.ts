import { db } from '../../shared/db.js';
import { AppError } from '../../shared/errors.js';
import { claim, complete, IdempotencyStoreError, release, requestHash, type ClaimResult, type KeyRef } from '../../shared/idempotency.js';
import type { Middleware } from '../context.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * Opt-in idempotency for a mutation: `router.post(path, auth, validate(S), idempotent(), handler)`.
 * The first 2xx (status and body) is replayed for 24 hours with `Idempotent-Replay: true`;
 * 4xx and 5xx release the key; the same key with another body is 422; a key whose first
 * call still runs is 409.
 */
export function idempotent(): Middleware {
  return async (ctx, next) => {
    const key = ctx.get('Idempotency-Key');
    if (!key || ctx.method === 'GET' || ctx.method === 'HEAD') {
      await next();
      return;
    }
    if (!UUID_V4.test(key)) {
      throw new AppError(400, 'IDEMPOTENCY_KEY_INVALID', 'Idempotency-Key must be a UUID v4');
    }
    const principal = ctx.state.principal;
    const ref: KeyRef = {
      scope: principal ? `user:${principal.userId}` : `ip:${ctx.ip}`,
      endpoint: `${ctx.method} ${ctx.path}`,
      key: key.toLowerCase(),
    };
    let result: ClaimResult;
    try {
      result = await claim(db, ref, requestHash(ctx.request.body));
    } catch (err) {
      ctx.state.log.error({ err }, 'idempotency claim failed');
      if (err instanceof IdempotencyStoreError && err.step === 'insert') {
        throw new AppError(500, 'IDEMPOTENCY_INSERT_FAILED', 'Could not record the idempotency key; retry with the same key');
      }
      throw new AppError(500, 'IDEMPOTENCY_LOOKUP_FAILED', 'Could not check the idempotency key; retry with the same key');
    }
    switch (result.kind) {
      case 'conflict':
        throw new AppError(422, 'IDEMPOTENCY_KEY_CONFLICT', 'This Idempotency-Key was used with a different request body');
      case 'in_flight':
        throw new AppError(409, 'IDEMPOTENCY_KEY_IN_FLIGHT', 'A request with this Idempotency-Key is still running; retry the same key shortly');
      case 'replay':
        ctx.status = result.response.status;
        ctx.body = result.response.body;
        ctx.set('Idempotent-Replay', 'true');
        return;
      case 'claimed':
        break;
    }
    try {
      await next();
    } catch (err) {
      await release(db, ref).catch((e: unknown) => ctx.state.log.error({ err: e }, 'idempotency release failed'));
      throw err;
    }
    if (ctx.status >= 200 && ctx.status < 300) {
      try {
        await complete(db, ref, { status: ctx.status, body: ctx.body });
      } catch (err) {
        // The change itself is committed; keep the answer and let the key's lock expire.
        ctx.state.log.error({ err }, 'idempotency store failed');
      }
    } else {
      await release(db, ref);
    }
  };
}
