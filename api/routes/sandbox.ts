/**
 * Sandbox-only tools for integrators (mounted only when SANDBOX_MODE is on; see app.ts).
 * simulate makes the sandbox gateway send a payment's callback (decision D4).
 * fast-forward brings an escrow's due time to now and queues the real timer job, so the
 * real timer path moves the escrow within the worker's next poll.
 */
import * as S from '../../shared/escrows/schemas.js';
import { fastForward, type FastForwardTimer } from '../../shared/escrows/service.js';
import * as P from '../../shared/payments/schemas.js';
import { simulateSandbox } from '../../shared/payments/service.js';
import { ok, createRouter } from '../context.js';
import { actorOf, idOf } from '../kit.js';
import { auth } from '../middleware/auth.js';
import { bodyOf, paramsOf, validate } from '../middleware/validate.js';

export const sandboxRouter = createRouter('/api/sandbox');

sandboxRouter.post('/escrows/:id/fast-forward', auth(), validate({ params: S.idParams, body: S.fastForward }), async (ctx) => {
  const result = await fastForward(actorOf(ctx), idOf(ctx), bodyOf<{ timer: FastForwardTimer }>(ctx).timer);
  ok(ctx, { ...result, due_at: result.due_at.toISOString() }, 202);
});

// Decision D4: the sandbox gateway sends the callback for this charge through the real pipeline.
sandboxRouter.post('/payments/:gateway_order_id/simulate', auth(), validate({ params: P.orderParams, body: P.simulate }), async (ctx) => {
  const result = await simulateSandbox(actorOf(ctx), paramsOf<{ gateway_order_id: string }>(ctx).gateway_order_id, bodyOf<{ status: 'paid' | 'expired' | 'failed' }>(ctx).status);
  ok(ctx, { sent: true, duplicate: result.duplicate }, 202);
});
