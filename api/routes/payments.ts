/**
 * Payments (consumer spec 4.2 pay, payment-status, claim-payment, available-methods;
 * decisions D4, D10, 0009) and the staff moves under /v1/admin: manual transfers (confirm,
 * reject) and money that cannot pay its target (credit, mark-returned), with their list.
 */
import * as S from '../../shared/payments/schemas.js';
import * as manual from '../../shared/payments/manual.js';
import type { StaffPaymentFilter } from '../../shared/payments/repo.js';
import * as payments from '../../shared/payments/service.js';
import { serializeClaim, serializeGateway, serializeInitiation, serializePaymentRecord, serializeStaffPayment } from '../../shared/payments/serialize.js';
import { db } from '../../shared/db.js';
import { ok, createRouter } from '../context.js';
import { actorOf, byId, idOf, paginated, publicGet, staffOf } from '../kit.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { idempotent, preparedOf, txOf } from '../middleware/idempotency.js';
import { bodyOf, queryOf, validate } from '../middleware/validate.js';

export const paymentsRouter = createRouter();

const staffOnly = [auth(), requireAdmin()] as const;

publicGet(paymentsRouter, '/api/gateways/available-methods', {}, async (ctx) => {
  ok(ctx, (await payments.availableGateways()).map(serializeGateway));
});

// The gateway is called before the key's transaction opens (rule 7): the link's row is
// committed first, then the gateway's answer is recorded with the stored reply.
// The key's lookup travels with the escrow's lock (prepareAdmitting): a replay is answered
// from that first round trip, before any link is made.
// The payer the charge request names is the users row auth() read for this request.
const openedLink = idempotent({
  prepareAdmitting: async (ctx, gate) => {
    const user = ctx.state.principal?.user;
    const payer = user && { id: user.id, email: user.email, full_name: user.full_name };
    const link = await payments.prepareEscrowLinkAdmitting(actorOf(ctx), idOf(ctx), bodyOf<payments.PayInput>(ctx), gate, payer);
    if (!link) return undefined;
    ctx.state.prepared = link;
    return () => payments.abandonLink(link);
  },
});

paymentsRouter.post('/api/escrows/:id/pay', auth(), byId, validate({ body: S.pay }), openedLink, async (ctx) => {
  ok(ctx, serializeInitiation(await payments.recordLink(txOf(ctx), preparedOf<payments.PreparedLink>(ctx))), 201);
});

paymentsRouter.get('/api/escrows/:id/payment-status', auth(), byId, async (ctx) => {
  ctx.set('Cache-Control', 'no-store');
  ok(ctx, serializePaymentRecord(await payments.paymentStatus(actorOf(ctx), idOf(ctx))));
});

// 200 when the claim waits for staff to confirm it; 202 when it came late (the escrow was
// cancelled, expired or paid another way): recorded for staff, `next_step` says what follows.
paymentsRouter.post('/api/escrows/:id/claim-payment', auth(), byId, validate({ body: S.claim }), idempotent(), async (ctx) => {
  const claimed = await manual.claimPayment(txOf(ctx), actorOf(ctx), idOf(ctx), bodyOf<manual.ClaimInput>(ctx));
  ok(ctx, serializeClaim(claimed), claimed.late ? 202 : 200);
});

paymentsRouter.get('/v1/admin/payments', ...staffOnly, validate({ query: S.staffList }), async (ctx) => {
  const q = queryOf<{ attention: 0 | 1; reason?: StaffPaymentFilter['reason']; page: number; limit: number }>(ctx);
  const { rows, total } = await manual.listForStaff(db, { attention: q.attention === 1, reason: q.reason, page: q.page, limit: q.limit });
  paginated(ctx, rows.map(serializeStaffPayment), { page: q.page, limit: q.limit, total });
});

paymentsRouter.post('/v1/admin/payments/:id/confirm', ...staffOnly, byId, validate({ body: S.staffNote }), idempotent(), async (ctx) => {
  ok(ctx, { payment: serializePaymentRecord(await manual.staffConfirm(txOf(ctx), staffOf(ctx), idOf(ctx))) });
});

paymentsRouter.post('/v1/admin/payments/:id/reject', ...staffOnly, byId, validate({ body: S.staffNote }), idempotent(), async (ctx) => {
  ok(ctx, { payment: serializePaymentRecord(await manual.staffReject(txOf(ctx), staffOf(ctx), idOf(ctx))) });
});

paymentsRouter.post('/v1/admin/payments/:id/credit', ...staffOnly, byId, validate({ body: S.staffNote }), idempotent(), async (ctx) => {
  ok(ctx, { payment: serializeStaffPayment(await manual.staffCredit(txOf(ctx), staffOf(ctx), idOf(ctx))) });
});

paymentsRouter.post('/v1/admin/payments/:id/mark-returned', ...staffOnly, byId, validate({ body: S.staffNoteRequired }), idempotent(), async (ctx) => {
  ok(ctx, { payment: serializeStaffPayment(await manual.staffMarkReturned(txOf(ctx), staffOf(ctx), idOf(ctx))) });
});
