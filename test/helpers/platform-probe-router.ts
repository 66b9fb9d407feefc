/**
 * Probe routes for the platform tests, mounted with `createApp({ extraRouters: [probeRouter] })`.
 * They exercise the shared middleware (validate, idempotent, rateLimit, the error renderer)
 * the way feature routes will, and count how often each handler body really ran.
 */
import Joi from 'joi';
import { createRouter, ok, type Middleware } from '../../api/context.js';
import { idempotent, txOf } from '../../api/middleware/idempotency.js';
import { post } from '../../shared/ledger/index.js';
import { rateLimit } from '../../api/middleware/rate-limit.js';
import { bodyOf, paramsOf, queryOf, validate } from '../../api/middleware/validate.js';
import { clock } from '../../shared/clock.js';
import { errors, fail, same } from '../../shared/errors.js';
import { api } from './app.js';
import type { AppDeps } from '../../api/app.js';

export interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

export function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** What the next call of POST /test/flaky does (one entry consumed per call; empty = succeed). */
export type FlakyOutcome = 'throw-4xx' | 'set-4xx' | 'throw-plain' | 'rate-limited' | 'ok';

export const PLAIN_ERROR_SECRET = 'pg password hunter2 at /srv/escrow/internal.ts';

/** Mutable probe state; `resetProbe()` before each test. */
export const probe = {
  calls: { echo: 0, echoOther: 0, echoGet: 0, slow: 0, flaky: 0 },
  flakyOutcomes: [] as FlakyOutcome[],
  /** Resolved when POST /test/slow's handler has started. */
  slowEntered: deferred(),
  /** POST /test/slow's handler waits for this before answering. */
  slowGate: deferred(),
};

export function resetProbe(): void {
  probe.calls = { echo: 0, echoOther: 0, echoGet: 0, slow: 0, flaky: 0 };
  probe.flakyOutcomes = [];
  probe.slowGate.resolve(); // never leave an earlier request hanging
  probe.slowEntered = deferred();
  probe.slowGate = deferred();
}

/** Header `X-Probe-User: <uuid>` signs the request in as that user (stands in for auth()). */
export const PROBE_USER_HEADER = 'X-Probe-User';
function probeUser(): Middleware {
  return async (ctx, next) => {
    const userId = ctx.get(PROBE_USER_HEADER);
    if (userId) ctx.state.principal = { userId, role: 'user', via: 'session' };
    await next();
  };
}

export const echoSchema = {
  body: Joi.object({
    note: Joi.string().max(100).required(),
    amount: Joi.number().integer().min(1),
    tags: Joi.array().items(Joi.string()),
    meta: Joi.object({ a: Joi.number(), b: Joi.number() }),
  }),
};

export const validateSchema = {
  body: Joi.object({
    name: Joi.string().min(3).required(),
    amount: Joi.number().integer().min(10_000).required(),
    address: Joi.object({ city: Joi.string().required() }),
    phone: Joi.string(),
    email: Joi.string(),
  }).or('phone', 'email'),
};

export const listSchema = {
  query: Joi.object({
    limit: Joi.number().integer().min(1).max(50).default(20),
    status: Joi.string().valid('open', 'closed'),
  }),
};

export const itemSchema = { params: Joi.object({ id: Joi.string().guid({ version: 'uuidv4' }).required() }) };

export const PROBE_RATE_RULE = { name: 'probe-shared', points: 3, durationSeconds: 60, by: 'ip' } as const;

/** Fixed instants the time probe returns. */
export const PROBE_INSTANT = new Date(Date.UTC(2026, 10, 22, 7, 5, 9, 45));
export const PROBE_WHOLE_SECOND = new Date(Date.UTC(2027, 0, 1, 0, 0, 0, 0));

export const probeRouter = createRouter();

probeRouter.get('/test/envelope', (ctx) => {
  ok(ctx, { hello: 'world' });
});

probeRouter.get('/test/time', (ctx) => {
  ok(ctx, { fixed: PROBE_INSTANT, whole: PROBE_WHOLE_SECOND, now: clock.now(), nested: [{ at: PROBE_INSTANT }] });
});

probeRouter.get('/test/boom', () => {
  throw new Error(PLAIN_ERROR_SECRET);
});

probeRouter.get('/test/ip', (ctx) => {
  ok(ctx, { ip: ctx.ip });
});

probeRouter.get('/test/limited', rateLimit(PROBE_RATE_RULE), (ctx) => {
  ok(ctx, { ip: ctx.ip });
});

probeRouter.post('/test/echo', probeUser(), validate(echoSchema), idempotent(), (ctx) => {
  probe.calls.echo += 1;
  ok(ctx, { n: probe.calls.echo, echo: bodyOf<Record<string, unknown>>(ctx), at: clock.now() }, 201);
});

probeRouter.post('/test/echo-other', probeUser(), validate(echoSchema), idempotent(), (ctx) => {
  probe.calls.echoOther += 1;
  ok(ctx, { n: probe.calls.echoOther, echo: bodyOf<Record<string, unknown>>(ctx) }, 201);
});

probeRouter.get('/test/echo', idempotent(), (ctx) => {
  probe.calls.echoGet += 1;
  ok(ctx, { n: probe.calls.echoGet });
});

probeRouter.post('/test/slow', idempotent(), async (ctx) => {
  probe.calls.slow += 1;
  const n = probe.calls.slow;
  probe.slowEntered.resolve();
  await probe.slowGate.promise;
  ok(ctx, { n }, 201);
});

/** A money move in the request's transaction: the opening balance of `user_id`. */
const moveSchema = { body: Joi.object({ user_id: Joi.string().guid().required(), amount: Joi.number().integer().min(1).required() }) };
probeRouter.post('/test/move', validate(moveSchema), idempotent(), async (ctx) => {
  const { user_id, amount } = bodyOf<{ user_id: string; amount: number }>(ctx);
  const entry = await post(txOf(ctx), {
    kind: 'test.opening_balance',
    lines: [
      { account: { system: 'adjustments' }, amount: -amount },
      { account: { userId: user_id }, amount },
    ],
  });
  ok(ctx, { entry_id: entry.entryId }, 201);
});

probeRouter.post('/test/flaky', idempotent(), (ctx) => {
  probe.calls.flaky += 1;
  const outcome = probe.flakyOutcomes.shift() ?? 'ok';
  switch (outcome) {
    case 'throw-4xx':
      throw fail.conflict('PROBE_REFUSED', same('refused by the probe'));
    case 'set-4xx':
      ctx.status = 422;
      ctx.body = { success: false, error: { code: 'PROBE_UNPROCESSABLE', message: 'set by the probe' } };
      return;
    case 'throw-plain':
      throw new Error('probe failure');
    case 'rate-limited':
      throw errors.rateLimited(7);
    case 'ok':
      ok(ctx, { n: probe.calls.flaky }, 201);
  }
});

probeRouter.post('/test/validate', validate(validateSchema), (ctx) => {
  ok(ctx, { body: bodyOf<Record<string, unknown>>(ctx) });
});

probeRouter.get('/test/list', validate(listSchema), (ctx) => {
  ok(ctx, { query: queryOf<Record<string, unknown>>(ctx) });
});

probeRouter.get('/test/items/:id', validate(itemSchema), (ctx) => {
  ok(ctx, { id: paramsOf<{ id: string }>(ctx).id });
});

probeRouter.post('/test/size', (ctx) => {
  const body = ctx.request.body as { s?: unknown } | undefined;
  ok(ctx, { length: typeof body?.s === 'string' ? body.s.length : null });
});

/** A supertest client over a fresh app with the probe routes mounted. */
export function probeApi(deps: AppDeps = {}) {
  return api({ ...deps, extraRouters: [...(deps.extraRouters ?? []), probeRouter] });
}
