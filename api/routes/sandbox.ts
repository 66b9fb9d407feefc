/**
 * Sandbox-only tools for integrators (mounted only when SANDBOX_MODE is on; see app.ts).
 * fast-forward brings an escrow's due time to now and queues the real timer job, so the
 * real timer path moves the escrow within the worker's next poll.
 */
import * as S from '../../shared/escrows/schemas.js';
import { fastForward, type FastForwardTimer } from '../../shared/escrows/service.js';
import { ok, createRouter } from '../context.js';
import { auth } from '../middleware/auth.js';
import { bodyOf, paramsOf, validate } from '../middleware/validate.js';

export const sandboxRouter = createRouter('/api/sandbox');

sandboxRouter.post('/escrows/:id/fast-forward', auth(), validate({ params: S.idParams, body: S.fastForward }), async (ctx) => {
  const principal = ctx.state.principal!;
  const result = await fastForward(
    { userId: principal.userId, role: principal.role },
    paramsOf<{ id: string }>(ctx).id,
    bodyOf<{ timer: FastForwardTimer }>(ctx).timer,
  );
  ok(ctx, { ...result, due_at: result.due_at.toISOString() }, 202);
});
