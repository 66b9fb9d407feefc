/**
 * Payments (consumer spec 4.2 pay, payment-status, claim-payment, available-methods;
 * decisions D4, D10) and the staff moves on manual transfers under /v1/admin.
 */
import * as S from '../../shared/payments/schemas.js';
import * as payments from '../../shared/payments/service.js';
import { serializeGateway, serializeInitiation, serializePaymentRecord } from '../../shared/payments/serialize.js';
import type { Actor } from '../../shared/escrows/service.js';
import { config } from '../../shared/config.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { idempotent, txOf } from '../middleware/idempotency.js';
import { rateLimit } from '../middleware/rate-limit.js';
import { bodyOf, paramsOf, validate } from '../middleware/validate.js';

export const paymentsRouter = createRouter();

const actor = (ctx: Ctx): Actor => ({ userId: ctx.state.principal!.userId, role: ctx.state.principal!.role });
const idOf = (ctx: Ctx) => paramsOf<{ id: string }>(ctx).id;
const byId = validate({ params: S.idParams });
const staffOnly = [auth(), requireAdmin()] as const;
const staff = (ctx: Ctx): payments.StaffContext => ({
  actorId: ctx.state.principal!.userId,
  ip: ctx.ip,
  note: bodyOf<{ note?: string | null }>(ctx).note || null,
});

paymentsRouter.get(
  '/api/gateways/available-methods',
  rateLimit({ name: 'public', points: config.publicRateLimitPerMinute, durationSeconds: 60, by: 'ip' }),
  async (ctx) => {
    ctx.set('Access-Control-Allow-Origin', '*');
    ok(ctx, (await payments.availableGateways()).map(serializeGateway));
  },
);

paymentsRouter.post('/api/escrows/:id/pay', auth(), byId, validate({ body: S.pay }), idempotent(), async (ctx) => {
  ok(ctx, serializeInitiation(await payments.pay(txOf(ctx), actor(ctx), idOf(ctx), bodyOf<payments.PayInput>(ctx))), 201);
});

paymentsRouter.get('/api/escrows/:id/payment-status', auth(), byId, async (ctx) => {
  ctx.set('Cache-Control', 'no-store');
  ok(ctx, serializePaymentRecord(await payments.paymentStatus(actor(ctx), idOf(ctx))));
});

paymentsRouter.post('/api/escrows/:id/claim-payment', auth(), byId, validate({ body: S.claim }), idempotent(), async (ctx) => {
  ok(ctx, serializePaymentRecord(await payments.claimPayment(txOf(ctx), actor(ctx), idOf(ctx), bodyOf<payments.ClaimInput>(ctx))));
});

paymentsRouter.post('/v1/admin/payments/:id/confirm', ...staffOnly, byId, validate({ body: S.staffNote }), idempotent(), async (ctx) => {
  ok(ctx, { payment: serializePaymentRecord(await payments.staffConfirm(txOf(ctx), staff(ctx), idOf(ctx))) });
});

paymentsRouter.post('/v1/admin/payments/:id/reject', ...staffOnly, byId, validate({ body: S.staffNote }), idempotent(), async (ctx) => {
  ok(ctx, { payment: serializePaymentRecord(await payments.staffReject(txOf(ctx), staff(ctx), idOf(ctx))) });
});
