/**
 * Escrows (consumer spec 4.2 without payments, section 3; decisions D3, D6). Every
 * mutation accepts an Idempotency-Key: the service joins the request's transaction, so
 * the change and the stored answer commit together.
 */
import * as S from '../../shared/escrows/schemas.js';
import * as escrows from '../../shared/escrows/service.js';
import { serializeEscrow, serializePreview } from '../../shared/escrows/serialize.js';
import type { ListFilter } from '../../shared/escrows/repo.js';
import * as ratingSchemas from '../../shared/ratings/schemas.js';
import { serializeRating } from '../../shared/ratings/serialize.js';
import { rate, ratingsOfEscrow, type RateInput } from '../../shared/ratings/service.js';
import { ok, createRouter } from '../context.js';
import { auth } from '../middleware/auth.js';
import { idempotent, txOf } from '../middleware/idempotency.js';
import { actorOf, byId, idOf, paginated, publicGet } from '../kit.js';
import { bodyOf, queryOf, validate } from '../middleware/validate.js';

export const escrowsRouter = createRouter();

escrowsRouter.post('/api/escrows/from-link', auth(), validate({ body: S.fromLink }), idempotent(), async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.createFromLink(txOf(ctx), actorOf(ctx).userId, bodyOf<escrows.FromLinkInput>(ctx))), 201);
});

const createAhead = idempotent({ readAhead: (ctx) => escrows.createReadAhead(bodyOf<escrows.DirectInput>(ctx)) });
const moveAhead = idempotent({ readAhead: (ctx) => escrows.moveReadAhead(idOf(ctx)) });
const releaseAhead = idempotent({ readAhead: (ctx) => escrows.releaseReadAhead(idOf(ctx)) });

escrowsRouter.post('/api/escrows', auth(), validate({ body: S.createDirect }), createAhead, async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.createDirect(txOf(ctx), actorOf(ctx), bodyOf<escrows.DirectInput>(ctx))), 201);
});

escrowsRouter.get('/api/escrows', auth(), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<Omit<ListFilter, 'userId'>>(ctx);
  const { rows, total } = await escrows.listForUser(actorOf(ctx).userId, q);
  paginated(ctx, rows.map(serializeEscrow), { page: q.page, limit: q.limit, total });
});

publicGet(escrowsRouter, '/api/escrows/:id/preview', {}, byId, async (ctx) => {
  const { escrow, seller } = await escrows.preview(idOf(ctx));
  ok(ctx, serializePreview(escrow, seller));
});

escrowsRouter.get('/api/escrows/:id', auth(), byId, async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.getForParty(actorOf(ctx), idOf(ctx))));
});

escrowsRouter.post('/api/escrows/:id/send', auth(), byId, validate({ body: S.send }), moveAhead, async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.send(txOf(ctx), actorOf(ctx), idOf(ctx), bodyOf<escrows.SendInput>(ctx))));
});

escrowsRouter.post('/api/escrows/:id/confirm-received', auth(), byId, validate({ body: S.empty }), moveAhead, async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.confirmReceived(txOf(ctx), actorOf(ctx), idOf(ctx))));
});

escrowsRouter.post('/api/escrows/:id/release', auth(), byId, validate({ body: S.empty }), releaseAhead, async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.release(txOf(ctx), actorOf(ctx), idOf(ctx))));
});

escrowsRouter.post('/api/escrows/:id/cancel', auth(), byId, validate({ body: S.cancel }), moveAhead, async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.cancel(txOf(ctx), actorOf(ctx), idOf(ctx), bodyOf<escrows.CancelInput>(ctx))));
});

escrowsRouter.post('/api/escrows/:id/extend', auth(), byId, validate({ body: S.empty }), idempotent(), async (ctx) => {
  ok(ctx, serializeEscrow(await escrows.extend(txOf(ctx), actorOf(ctx), idOf(ctx))));
});

// Ratings take no idempotency key (spec section 8): a second rating answers 409 ALREADY_RATED.
escrowsRouter.post('/api/escrows/:id/rating', auth(), byId, validate({ body: ratingSchemas.rate }), async (ctx) => {
  ok(ctx, serializeRating(await rate(actorOf(ctx), idOf(ctx), bodyOf<RateInput>(ctx))), 201);
});

escrowsRouter.get('/api/escrows/:id/ratings', auth(), byId, async (ctx) => {
  ok(ctx, (await ratingsOfEscrow(actorOf(ctx), idOf(ctx))).map((r) => serializeRating(r)));
});
