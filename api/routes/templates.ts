/**
 * Deal templates (enterprise spec 4.3, sections 5-8; issue 26). Each route states its spec
 * rule in `enterpriseAuth(rule)` (lowest role), then its limits of section 8 ("Templates
 * ... 60 per minute", per route: the list and each write route count on their own, before validation
 * so invalid bodies count), validation, and `enterpriseIdempotent` for the writes; a keyed
 * write passes `txOf(ctx)` to the service, so its change and the stored answer commit
 * together.
 */
import * as S from '../../shared/enterprise/schemas.js';
import * as T from '../../shared/deals/template-schemas.js';
import * as out from '../../shared/deals/template-serialize.js';
import * as templates from '../../shared/deals/templates.js';
import { ok, createRouter } from '../context.js';
import { idOf, paginated } from '../kit.js';
import { enterpriseAuth, enterpriseIdempotent as idempotent, workspaceActorOf } from '../middleware/enterprise-auth.js';
import { txOf } from '../middleware/idempotency.js';
import { rateLimit, type RateLimitRule } from '../middleware/rate-limit.js';
import { bodyOf, queryOf, validate } from '../middleware/validate.js';

export const templatesRouter = createRouter();

const perMinute = (name: string, points: number): RateLimitRule => ({ name, points, durationSeconds: 60, by: 'user' });
export const LIMITS = {
  list: perMinute('ent-templates-list', 60),
  create: perMinute('ent-templates-create', 60),
  update: perMinute('ent-templates-update', 60),
  remove: perMinute('ent-templates-delete', 60),
};

const P = '/v1/enterprise/templates';

// Lists take page and limit and answer pagination (section 1); sorted by name.
templatesRouter.get(P, enterpriseAuth({ role: 'viewer' }), rateLimit(LIMITS.list), validate({ query: S.page }), async (ctx) => {
  const q = queryOf<{ page: number; limit: number }>(ctx);
  const { rows, total } = await templates.listTemplates(workspaceActorOf(ctx), q.page, q.limit);
  paginated(ctx, rows.map(out.serializeTemplate), { page: q.page, limit: q.limit, total });
});

templatesRouter.post(P, enterpriseAuth({ role: 'operator' }), rateLimit(LIMITS.create), validate({ body: T.templateCreate }), idempotent, async (ctx) => {
  ok(ctx, out.serializeTemplate(await templates.createTemplate(txOf(ctx), workspaceActorOf(ctx), bodyOf<T.TemplateInput>(ctx))), 201);
});

templatesRouter.patch(
  `${P}/:id`,
  enterpriseAuth({ role: 'operator' }),
  rateLimit(LIMITS.update),
  validate({ params: S.idParams, body: T.templateUpdate }),
  idempotent,
  async (ctx) => {
    ok(ctx, out.serializeTemplate(await templates.updateTemplate(txOf(ctx), workspaceActorOf(ctx), idOf(ctx), bodyOf<T.TemplatePatch>(ctx))));
  },
);

templatesRouter.delete(`${P}/:id`, enterpriseAuth({ role: 'operator' }), rateLimit(LIMITS.remove), validate({ params: S.idParams }), idempotent, async (ctx) => {
  ok(ctx, await templates.deleteTemplate(txOf(ctx), workspaceActorOf(ctx), idOf(ctx)));
});
