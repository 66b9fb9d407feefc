/**
 * Escrow tracking (consumer spec 4.2): GET /api/escrows/:id/tracking and the forced refresh.
 * Buyer, seller or staff; 404 NOT_FOUND, 403 FORBIDDEN, 400 NO_TRACKING, 429 RATE_LIMITED.
 */
import { refreshTracking, trackingOf } from '../../shared/tracking/service.js';
import { ok, createRouter } from '../context.js';
import { actorOf, byId, idOf } from '../kit.js';
import { auth } from '../middleware/auth.js';

export const trackingRouter = createRouter();

trackingRouter.get('/api/escrows/:id/tracking', auth(), byId, async (ctx) => {
  ctx.set('Cache-Control', 'no-store');
  ok(ctx, await trackingOf(actorOf(ctx), idOf(ctx), ctx.redis));
});

trackingRouter.post('/api/escrows/:id/tracking/refresh', auth(), byId, async (ctx) => {
  ctx.set('Cache-Control', 'no-store');
  ok(ctx, await refreshTracking(actorOf(ctx), idOf(ctx), ctx.redis));
});
