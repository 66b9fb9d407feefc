/**
 * Escrow tracking (consumer spec 4.2): GET /api/escrows/:id/tracking and the forced refresh.
 * Buyer, seller or staff; 404 NOT_FOUND, 403 FORBIDDEN, 400 NO_TRACKING, 429 RATE_LIMITED.
 */
import Joi from 'joi';
import { refreshTracking, trackingOf } from '../../shared/tracking/service.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { auth } from '../middleware/auth.js';
import { paramsOf, validate } from '../middleware/validate.js';

export const trackingRouter = createRouter();

const viewer = (ctx: Ctx) => ({ userId: ctx.state.principal!.userId, role: ctx.state.principal!.role });
const byId = validate({ params: Joi.object({ id: Joi.string().required() }) });
const idOf = (ctx: Ctx) => paramsOf<{ id: string }>(ctx).id;

trackingRouter.get('/api/escrows/:id/tracking', auth(), byId, async (ctx) => {
  ctx.set('Cache-Control', 'no-store');
  ok(ctx, await trackingOf(viewer(ctx), idOf(ctx), ctx.redis));
});

trackingRouter.post('/api/escrows/:id/tracking/refresh', auth(), byId, async (ctx) => {
  ctx.set('Cache-Control', 'no-store');
  ok(ctx, await refreshTracking(viewer(ctx), idOf(ctx), ctx.redis));
});
