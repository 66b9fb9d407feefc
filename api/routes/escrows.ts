/**
 * Escrows (consumer spec 4.2 without payments, section 3; decisions D3, D6). Every
 * mutation accepts an Idempotency-Key: the service joins the request's transaction, so
 * the change and the stored answer commit together.
 */
import * as S from '../../shared/escrows/schemas.js';
import * as escrows from '../../shared/escrows/service.js';
import { serializeEscrow, serializePreview } from '../../shared/escrows/serialize.js';
import { rate, rateSchema, ratingsOfEscrow, serializeRating, type RateInput } from '../../shared/ratings/service.js';
import type { EscrowStatus } from '../../shared/escrows/states.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { auth } from '../middleware/auth.js';
import { idempotent, txOf } from '../middleware/idempotency.js';
import { publicGet } from '../kit.js';
import { bodyOf, paramsOf, queryOf, validate } from '../middleware/validate.js';

export const escrowsRouter = createRouter();

const actor = (ctx: Ctx): escrows.Actor => ({ userId: ctx.state.principal!.userId, role: ctx.state.principal!.role });
const idOf = (ctx: Ctx) => paramsOf<{ id: string }>(ctx).id;
const byId = validate({ params: S.idParams });

escrowsRouter.post('/api/escrows/from-link', auth(), validate({ body: S.fromLink }), idempotent(), async (ctx) => {
  const e = await escrows.createFromLink(txOf(ctx), ctx.state.principal!.userId, bodyOf<escrows.FromLinkInput>(ctx));
  ok(ctx, serializeEscrow(e), 201);
});

escrowsRouter.post('/api/escrows', auth(), validate({ body: S.createDirect }), idempotent(), async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.createDirect(txOf(ctx), actor(ctx), bodyOf<escrows.DirectInput>(ctx))), 201);
});

escrowsRouter.get('/api/escrows', auth(), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<{ status?: EscrowStatus; role?: 'buyer' | 'seller'; page: number; limit: number }>(ctx);
  const { rows, total } = await escrows.listForUser(ctx.state.principal!.userId, q);
  ctx.body = {
    success: true,
    data: rows.map(serializeEscrow),
    pagination: { page: q.page, limit: q.limit, total, total_pages: Math.ceil(total / q.limit) },
  };
});

publicGet(escrowsRouter, '/api/escrows/:id/preview', {}, byId, async (ctx) => {
  const { escrow, seller } = await escrows.preview(idOf(ctx));
  ok(ctx, serializePreview(escrow, seller));
});

escrowsRouter.get('/api/escrows/:id', auth(), byId, async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.getForParty(actor(ctx), idOf(ctx))));
});

escrowsRouter.post('/api/escrows/:id/send', auth(), byId, validate({ body: S.send }), idempotent(), async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.send(txOf(ctx), actor(ctx), idOf(ctx), bodyOf<escrows.SendInput>(ctx))));
});

escrowsRouter.post('/api/escrows/:id/confirm-received', auth(), byId, validate({ body: S.empty }), idempotent(), async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.confirmReceived(txOf(ctx), actor(ctx), idOf(ctx))));
});

escrowsRouter.post('/api/escrows/:id/release', auth(), byId, validate({ body: S.empty }), idempotent(), async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.release(txOf(ctx), actor(ctx), idOf(ctx))));
});

escrowsRouter.post('/api/escrows/:id/cancel', auth(), byId, validate({ body: S.cancel }), idempotent(), async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.cancel(txOf(ctx), actor(ctx), idOf(ctx), bodyOf<escrows.CancelInput>(ctx))));
});

escrowsRouter.post('/api/escrows/:id/extend', auth(), byId, validate({ body: S.empty }), idempotent(), async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.extend(txOf(ctx), actor(ctx), idOf(ctx))));
});

// Ratings take no idempotency key (spec section 8): a second rating answers 409 ALREADY_RATED.
escrowsRouter.post('/api/escrows/:id/rating', auth(), byId, validate({ body: rateSchema }), async (ctx) => {
  ok(ctx, serializeRating(await rate(actor(ctx), idOf(ctx), bodyOf<RateInput>(ctx))), 201);
});

escrowsRouter.get('/api/escrows/:id/ratings', auth(), byId, async (ctx) => {
  ok(ctx, (await ratingsOfEscrow(actor(ctx), idOf(ctx))).map((r) => serializeRating(r)));
});
