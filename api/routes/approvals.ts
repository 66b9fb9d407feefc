/**
 * Approvals (enterprise spec 2 Approval item, 3, 4.6; D7 Decide; section 8 limits): the
 * open queue and the decided list, one milestone's approval detail, and the decision
 * (finance; 30 per minute per user; Idempotency-Key: a keyed decision passes `txOf(ctx)`
 * so its change and the stored answer commit together).
 */
import { config } from '../../shared/config.js';
import * as S from '../../shared/approvals/schemas.js';
import * as approvals from '../../shared/approvals/service.js';
import * as out from '../../shared/approvals/serialize.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { paginated } from '../kit.js';
import { enterpriseAuth, enterpriseIdempotent as idempotent, workspaceActorOf } from '../middleware/enterprise-auth.js';
import { txOf } from '../middleware/idempotency.js';
import { rateLimit, type RateLimitRule } from '../middleware/rate-limit.js';
import { bodyOf, paramsOf, queryOf, validate } from '../middleware/validate.js';

export const approvalsRouter = createRouter();

/** Section 8: decide 30 per minute (ENTERPRISE_MONEY_LIMIT_PER_MINUTE). */
export const LIMITS: { decide: RateLimitRule } = { decide: { name: 'ent-decide', points: config.enterpriseMoneyLimitPerMinute, durationSeconds: 60, by: 'user' } };

const P = '/v1/enterprise/approvals';
const midOf = (ctx: Ctx): string => paramsOf<{ milestoneId: string }>(ctx).milestoneId;
/** The detail for the caller (evidence files are links signed for them). */
const detailFor = (ctx: Ctx, d: approvals.ApprovalDetail) => out.serializeApprovalDetail(d, workspaceActorOf(ctx).userId);

approvalsRouter.get(P, enterpriseAuth({ role: 'viewer' }), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<S.ListQuery>(ctx);
  const { rows, total } = await approvals.listApprovals(workspaceActorOf(ctx), q);
  paginated(ctx, rows.map(out.serializeItem), { page: q.page, limit: q.limit, total });
});

approvalsRouter.get(`${P}/:milestoneId`, enterpriseAuth({ role: 'viewer' }), validate({ params: S.params }), async (ctx) => {
  ok(ctx, detailFor(ctx, await approvals.getApproval(workspaceActorOf(ctx), midOf(ctx))));
});

approvalsRouter.post(
  `${P}/:milestoneId/decide`,
  enterpriseAuth({ role: 'finance' }),
  rateLimit(LIMITS.decide),
  validate({ params: S.params, body: S.decide }),
  idempotent,
  async (ctx) => {
    ok(ctx, detailFor(ctx, await approvals.decide(txOf(ctx), workspaceActorOf(ctx), midOf(ctx), bodyOf<S.DecideInput>(ctx))));
  },
);
