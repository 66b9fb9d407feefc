/**
 * Disputes (consumer spec 4.3). No idempotency keys here (spec section 8): a second
 * dispute answers 409 NOT_DISPUTABLE. Staff rulings live in routes/admin.ts.
 */
import * as S from '../../shared/disputes/schemas.js';
import * as disputes from '../../shared/disputes/service.js';
import { disputePagination, serializeDispute, serializeDisputeView, serializeMessage } from '../../shared/disputes/serialize.js';
import type { MessageRow } from '../../shared/disputes/repo.js';
import { freshLinks } from '../../shared/uploads/links.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { auth } from '../middleware/auth.js';
import { actorOf, idOf } from '../kit.js';
import { bodyOf, queryOf, validate } from '../middleware/validate.js';

export const disputesRouter = createRouter();

/** Dispute ids are at most 64 characters (a longer one answers the generic NOT_FOUND of validate). */
const byId = validate({ params: S.idParams });

disputesRouter.post('/v1/escrows/:id/dispute', auth(), byId, validate({ body: S.open }), async (ctx) => {
  ok(ctx, serializeDispute(await disputes.openDispute(actorOf(ctx), idOf(ctx), bodyOf<disputes.OpenInput>(ctx))), 201);
});

disputesRouter.get('/v1/disputes', auth(), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<disputes.ListInput>(ctx);
  const { rows, total } = await disputes.listDisputes(actorOf(ctx), q);
  ctx.body = { success: true, data: rows.map(serializeDisputeView), pagination: disputePagination(q.page, q.limit, total) };
});

disputesRouter.get('/v1/disputes/:id', auth(), byId, async (ctx) => {
  ok(ctx, serializeDisputeView(await disputes.getDispute(actorOf(ctx), idOf(ctx))));
});

// Evidence links to uploads are re-signed for the reader (signed links are per user and short-lived).
const forReader = (ctx: Ctx, m: MessageRow) => ({ ...serializeMessage(m), evidence_urls: freshLinks(m.evidence_urls, actorOf(ctx).userId) });

disputesRouter.get('/v1/disputes/:id/messages', auth(), byId, async (ctx) => {
  ok(ctx, (await disputes.listMessages(actorOf(ctx), idOf(ctx))).map((m) => forReader(ctx, m)));
});

disputesRouter.post('/v1/disputes/:id/messages', auth(), byId, validate({ body: S.message }), async (ctx) => {
  ok(ctx, forReader(ctx, await disputes.postMessage(actorOf(ctx), idOf(ctx), bodyOf<disputes.MessageInput>(ctx))), 201);
});
