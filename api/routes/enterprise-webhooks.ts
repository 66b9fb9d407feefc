/**
 * Outbound webhook management (enterprise spec 4.11, section 8 "webhooks": 60 per minute;
 * D8; decision 0020 "Webhooks"). Viewers list endpoints and deliveries; every change is an
 * admin's, from the dashboard only (API keys of both kinds: 403 KEY_NOT_ALLOWED, section 5
 * rule 2). The eight routes share one 60-per-minute budget per user, spent before
 * validation. Writes honour Idempotency-Key, except create and rotate-secret: their answer
 * carries the plaintext signing secret, which must never be stored in the idempotency
 * table (as API key creation, 4.10). A keyed write passes `txOf(ctx)` to the service.
 */
import * as S from '../../shared/enterprise/schemas.js';
import * as W from '../../shared/webhooks/schemas.js';
import * as out from '../../shared/webhooks/serialize.js';
import * as webhooks from '../../shared/webhooks/service.js';
import type { DeliveryStatus } from '../../shared/webhooks/states.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { idOf, paginated } from '../kit.js';
import { enterpriseAuth, enterpriseIdempotent as idempotent, workspaceActorOf } from '../middleware/enterprise-auth.js';
import { txOf } from '../middleware/idempotency.js';
import { rateLimit, type RateLimitRule } from '../middleware/rate-limit.js';
import { bodyOf, paramsOf, queryOf, validate } from '../middleware/validate.js';

export const enterpriseWebhooksRouter = createRouter();

export const LIMITS = { webhooks: { name: 'ent-webhooks', points: 60, durationSeconds: 60, by: 'user' } as RateLimitRule };

const P = '/v1/enterprise/webhooks';
const viewer = enterpriseAuth({ role: 'viewer' });
const admin = enterpriseAuth({ role: 'admin', dashboardOnly: true });
const limit = rateLimit(LIMITS.webhooks);
const didOf = (ctx: Ctx): string => paramsOf<{ did: string }>(ctx).did;

enterpriseWebhooksRouter.get(P, viewer, limit, validate({ query: S.page }), async (ctx) => {
  const q = queryOf<{ page: number; limit: number }>(ctx);
  const { rows, total } = await webhooks.listEndpoints(workspaceActorOf(ctx), q.page, q.limit);
  paginated(ctx, rows.map(out.serializeEndpoint), { page: q.page, limit: q.limit, total });
});

// No idempotency on purpose: the answer carries the secret, which is never stored in plaintext.
enterpriseWebhooksRouter.post(P, admin, limit, validate({ body: W.create }), async (ctx) => {
  ok(ctx, out.serializeWithSecret(await webhooks.createEndpoint(workspaceActorOf(ctx), bodyOf<webhooks.EndpointInput>(ctx))), 201);
});

enterpriseWebhooksRouter.patch(`${P}/:id`, admin, limit, validate({ params: S.idParams, body: W.update }), idempotent, async (ctx) => {
  ok(ctx, out.serializeEndpoint(await webhooks.updateEndpoint(txOf(ctx), workspaceActorOf(ctx), idOf(ctx), bodyOf<webhooks.EndpointPatch>(ctx))));
});

enterpriseWebhooksRouter.delete(`${P}/:id`, admin, limit, validate({ params: S.idParams }), idempotent, async (ctx) => {
  ok(ctx, await webhooks.deleteEndpoint(txOf(ctx), workspaceActorOf(ctx), idOf(ctx)));
});

// No idempotency on purpose (as create).
enterpriseWebhooksRouter.post(`${P}/:id/rotate-secret`, admin, limit, validate({ params: S.idParams, body: S.empty }), async (ctx) => {
  ok(ctx, out.serializeWithSecret(await webhooks.rotateSecret(workspaceActorOf(ctx), idOf(ctx))));
});

// 202: the test message is queued; its record (pending, then succeeded or failed) is in the deliveries list.
enterpriseWebhooksRouter.post(`${P}/:id/test`, admin, limit, validate({ params: S.idParams, body: S.empty }), idempotent, async (ctx) => {
  ok(ctx, out.serializeDelivery(await webhooks.sendTest(txOf(ctx), workspaceActorOf(ctx), idOf(ctx))), 202);
});

enterpriseWebhooksRouter.get(`${P}/:id/deliveries`, viewer, limit, validate({ params: S.idParams, query: W.deliveries }), async (ctx) => {
  const q = queryOf<{ page: number; limit: number; status?: DeliveryStatus }>(ctx);
  const { rows, total } = await webhooks.listDeliveries(workspaceActorOf(ctx), idOf(ctx), q);
  paginated(ctx, rows.map(out.serializeDelivery), { page: q.page, limit: q.limit, total });
});

enterpriseWebhooksRouter.post(`${P}/:id/deliveries/:did/redeliver`, admin, limit, validate({ params: W.deliveryParams, body: S.empty }), idempotent, async (ctx) => {
  ok(ctx, out.serializeDelivery(await webhooks.redeliver(txOf(ctx), workspaceActorOf(ctx), idOf(ctx), didOf(ctx))), 202);
});
