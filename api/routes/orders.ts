/**
 * Payment-service orders, "jasabayar" (consumer spec 4.8; issue 11; decision 0012) and the
 * operator's moves under /v1/admin. Every mutation accepts an Idempotency-Key: the service
 * joins the request's transaction, so the change and the stored answer commit together.
 */
import * as S from '../../shared/orders/schemas.js';
import * as orders from '../../shared/orders/service.js';
import { serializeConfig, serializeOrder, serializeOrderDetail } from '../../shared/orders/serialize.js';
import type { OrderStatus } from '../../shared/orders/states.js';
import { serializeClaim, serializeInitiation, serializePaymentRecord } from '../../shared/payments/serialize.js';
import { abandonLink, recordLink, type PreparedLink } from '../../shared/payments/service.js';
import { ok, createRouter } from '../context.js';
import { actorOf, byId, idOf, paginated, staffOf } from '../kit.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { databaseErrorAnswer } from '../middleware/db-error.js';
import { idempotent, preparedOf, txOf } from '../middleware/idempotency.js';
import { bodyOf, queryOf, validate } from '../middleware/validate.js';

export const ordersRouter = createRouter();

ordersRouter.get('/api/jasabayar/config', auth(), async (ctx) => {
  ok(ctx, serializeConfig(await orders.getConfig()));
});

ordersRouter.post('/api/jasabayar/quote', auth(), validate({ body: S.quote }), idempotent(), async (ctx) => {
  ok(ctx, await orders.quoteFor(txOf(ctx), bodyOf<{ item_price: number }>(ctx).item_price));
});

// A database failure answers 500 DB_ERROR: nothing was taken, retry with the same key (spec 4.8).
ordersRouter.post('/api/jasabayar', auth(), validate({ body: S.create }), databaseErrorAnswer(), idempotent(), async (ctx) => {
  ok(ctx, serializeOrder(await orders.create(txOf(ctx), actorOf(ctx), bodyOf<orders.CreateInput>(ctx))), 201);
});

ordersRouter.get('/api/jasabayar', auth(), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<{ status?: OrderStatus; page: number; limit: number }>(ctx);
  const { rows, total } = await orders.list(actorOf(ctx), q);
  paginated(ctx, rows.map(serializeOrder), { page: q.page, limit: q.limit, total });
});

ordersRouter.get('/api/jasabayar/:id', auth(), byId, async (ctx) => {
  ctx.set('Cache-Control', 'no-store');
  const view = await orders.getForReader(actorOf(ctx), idOf(ctx));
  ok(ctx, serializeOrderDetail(view.order, view.credentials, view.events));
});

ordersRouter.post('/api/jasabayar/:id/cancel', auth(), byId, validate({ body: S.empty }), idempotent(), async (ctx) => {
  await orders.cancel(txOf(ctx), actorOf(ctx), idOf(ctx));
  ctx.body = { success: true };
});

// Balance payments run in the key's transaction; a gateway link is opened before it
// (rule 7: no transaction open while the gateway is called), as for escrows.
const openedLink = idempotent({
  prepare: async (ctx) => {
    const input = bodyOf<orders.PayInput>(ctx);
    if (input.method === 'balance') return undefined;
    const link = await orders.prepareLink(actorOf(ctx), idOf(ctx), input);
    ctx.state.prepared = link;
    return () => abandonLink(link);
  },
});

ordersRouter.post('/api/jasabayar/:id/pay', auth(), byId, validate({ body: S.pay }), openedLink, async (ctx) => {
  if (bodyOf<orders.PayInput>(ctx).method === 'balance') {
    ok(ctx, { method: 'balance', order: serializeOrder(await orders.payByBalance(txOf(ctx), actorOf(ctx), idOf(ctx))) });
    return;
  }
  ok(ctx, serializeInitiation(await recordLink(txOf(ctx), preparedOf<PreparedLink>(ctx))), 201);
});

// As the escrow claim: 200 waiting for the operator; 202 recorded late (the order was
// cancelled or paid another way), `next_step` says what follows.
ordersRouter.post('/api/jasabayar/:id/claim-payment', auth(), byId, validate({ body: S.claim }), idempotent(), async (ctx) => {
  const claimed = await orders.claimPayment(txOf(ctx), actorOf(ctx), idOf(ctx), bodyOf<{ reference?: string }>(ctx));
  ok(ctx, serializeClaim(claimed), claimed.late ? 202 : 200);
});

ordersRouter.get('/api/jasabayar/:id/payment-status', auth(), byId, async (ctx) => {
  ctx.set('Cache-Control', 'no-store');
  ok(ctx, serializePaymentRecord(await orders.paymentStatus(actorOf(ctx), idOf(ctx))));
});

// ---- Operator moves ---------------------------------------------------------------------

ordersRouter.get('/v1/admin/jasabayar', auth(), requireAdmin(), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<{ status?: OrderStatus; page: number; limit: number }>(ctx);
  const { rows, total } = await orders.listForStaff(q);
  paginated(ctx, rows.map((o) => ({ ...serializeOrder(o), buyer_id: o.buyer_id })), { page: q.page, limit: q.limit, total });
});

// Each operator move answers the moved order under `order` (D10: "answers return the moved
// resource"), as every other /v1/admin move answers its resource under its own name.

ordersRouter.post('/v1/admin/jasabayar/:id/confirm-payment', auth(), requireAdmin(), byId, validate({ body: S.staffNote }), idempotent(), async (ctx) => {
  ok(ctx, { order: serializeOrder(await orders.confirmPayment(txOf(ctx), staffOf(ctx), idOf(ctx))) });
});

// D10 names the move `start`; `process` (its first name here) stays as an alias.
for (const move of ['start', 'process']) {
  ordersRouter.post(`/v1/admin/jasabayar/:id/${move}`, auth(), requireAdmin(), byId, validate({ body: S.staffNote }), idempotent(), async (ctx) => {
    ok(ctx, { order: serializeOrder(await orders.startProcessing(txOf(ctx), staffOf(ctx), idOf(ctx))) });
  });
}

ordersRouter.post('/v1/admin/jasabayar/:id/deliver', auth(), requireAdmin(), byId, validate({ body: S.deliver }), idempotent(), async (ctx) => {
  ok(ctx, { order: serializeOrder(await orders.deliver(txOf(ctx), staffOf(ctx), idOf(ctx), bodyOf<orders.DeliverInput>(ctx))) });
});

ordersRouter.post('/v1/admin/jasabayar/:id/refund', auth(), requireAdmin(), byId, validate({ body: S.refund }), idempotent(), async (ctx) => {
  ok(ctx, { order: serializeOrder(await orders.refund(txOf(ctx), staffOf(ctx), idOf(ctx), bodyOf<{ reason?: string | null }>(ctx))) });
});
