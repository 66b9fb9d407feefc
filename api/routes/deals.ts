/**
 * Deals and milestones (enterprise spec 4.4; D7; section 8 limits). Each route states its
 * spec rule in `enterpriseAuth(rule)`, then its limits, validation and
 * `enterpriseIdempotent` (every write honours Idempotency-Key); a keyed write passes
 * `txOf(ctx)` so its change and the stored answer commit together. Release (4.6) sends an
 * approved milestone to payout instructions (shared/payouts/release.ts). The staff moves of
 * D10 (live funding confirmation, the fee-allocation override, dispute rulings) are at the end.
 */
import { config } from '../../shared/config.js';
import * as S from '../../shared/deals/schemas.js';
import * as deals from '../../shared/deals/service.js';
import * as staff from '../../shared/deals/staff.js';
import * as rulings from '../../shared/deals/rulings.js';
import * as PS from '../../shared/payouts/schemas.js';
import * as payouts from '../../shared/payouts/release.js';
import * as out from '../../shared/deals/serialize.js';
import type { DealStatus } from '../../shared/deals/states.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { idOf, paginated, staffOf } from '../kit.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { enterpriseAuth, enterpriseIdempotent as idempotent, enterpriseScope, workspaceActorOf, workspaceOf } from '../middleware/enterprise-auth.js';
import { idempotent as keyed, txOf } from '../middleware/idempotency.js';
import { lockDealReadAhead } from '../../shared/deals/lock.js';
import { rateLimit, type RateLimitRule } from '../middleware/rate-limit.js';
import { bodyOf, paramsOf, queryOf, validate } from '../middleware/validate.js';

export const dealsRouter = createRouter();

/** Section 8: fund, submit evidence, dispute and release 30 per minute each (ENTERPRISE_MONEY_LIMIT_PER_MINUTE). */
const perMinute = (name: string): RateLimitRule => ({ name, points: config.enterpriseMoneyLimitPerMinute, durationSeconds: 60, by: 'user' });
export const LIMITS = { fund: perMinute('ent-fund'), evidence: perMinute('ent-evidence'), dispute: perMinute('ent-dispute'), release: perMinute('ent-release') };

const P = '/v1/enterprise/deals';
const midOf = (ctx: Ctx): string => paramsOf<{ mid: string }>(ctx).mid;
const dealParams = validate({ params: S.dealParams });
/** A deal answer for this caller: stored uploads among its documents are links signed for them. */
const detailFor = (ctx: Ctx, d: deals.DealDetail) => out.serializeDetail(d, ctx.state.principal!.userId);
// A deal write whose service starts with lockDeal: the workspace row, the deal and its
// milestones are read (and locked) with the key's statement (decision 0022's read-aheads).
const dealWrite = keyed({ scope: enterpriseScope, readAhead: (ctx) => lockDealReadAhead(workspaceActorOf(ctx).workspaceId, idOf(ctx)) });
// A release reads the same, then the named instructions, the last release number and the mail's recipients.
const releaseWrite = keyed({ scope: enterpriseScope, readAhead: (ctx) => payouts.releaseReadAhead(workspaceActorOf(ctx), idOf(ctx), midOf(ctx), bodyOf<payouts.ReleaseInput>(ctx)) });

dealsRouter.get(P, enterpriseAuth({ role: 'viewer' }), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<{ status?: DealStatus; q?: string; page: number; limit: number }>(ctx);
  const { items, total } = await deals.listDeals(workspaceActorOf(ctx), q);
  paginated(
    ctx,
    items.map((i) => out.serializeListItem(i, workspaceOf(ctx).country_code)),
    { page: q.page, limit: q.limit, total },
  );
});

dealsRouter.get(`${P}/:id`, enterpriseAuth({ role: 'viewer' }), dealParams, async (ctx) => {
  ok(ctx, detailFor(ctx, await deals.getDeal(workspaceActorOf(ctx), workspaceOf(ctx), idOf(ctx))));
});

dealsRouter.post(P, enterpriseAuth({ role: 'operator' }), validate({ body: S.create }), idempotent, async (ctx) => {
  ok(ctx, detailFor(ctx, await deals.createDeal(txOf(ctx), workspaceActorOf(ctx), workspaceOf(ctx), bodyOf<deals.DealInput>(ctx))), 201);
});

dealsRouter.patch(`${P}/:id`, enterpriseAuth({ role: 'operator' }), validate({ params: S.dealParams, body: S.update }), idempotent, async (ctx) => {
  ok(ctx, detailFor(ctx, await deals.updateDeal(txOf(ctx), workspaceActorOf(ctx), workspaceOf(ctx), idOf(ctx), bodyOf<deals.DealPatch>(ctx))));
});

dealsRouter.post(`${P}/:id/milestones`, enterpriseAuth({ role: 'operator' }), validate({ params: S.dealParams, body: S.addMilestone }), idempotent, async (ctx) => {
  ok(ctx, detailFor(ctx, await deals.addMilestone(txOf(ctx), workspaceActorOf(ctx), workspaceOf(ctx), idOf(ctx), bodyOf<deals.MilestoneInput>(ctx))), 201);
});

dealsRouter.patch(
  `${P}/:id/milestones/:mid`,
  enterpriseAuth({ role: 'operator' }),
  validate({ params: S.milestoneParams, body: S.updateMilestone }),
  idempotent,
  async (ctx) => {
    const patch = bodyOf<Partial<deals.MilestoneInput>>(ctx);
    ok(ctx, detailFor(ctx, await deals.updateMilestone(txOf(ctx), workspaceActorOf(ctx), workspaceOf(ctx), idOf(ctx), midOf(ctx), patch)));
  },
);

dealsRouter.post(`${P}/:id/activate`, enterpriseAuth({ role: 'operator' }), validate({ params: S.dealParams, body: S.empty }), dealWrite, async (ctx) => {
  ok(ctx, detailFor(ctx, await deals.activateDeal(txOf(ctx), workspaceActorOf(ctx), workspaceOf(ctx), idOf(ctx))));
});

dealsRouter.post(`${P}/:id/cancel`, enterpriseAuth({ role: 'operator' }), validate({ params: S.dealParams, body: S.empty }), dealWrite, async (ctx) => {
  ok(ctx, detailFor(ctx, await deals.cancelDeal(txOf(ctx), workspaceActorOf(ctx), workspaceOf(ctx), idOf(ctx))));
});

dealsRouter.post(
  `${P}/:id/milestones/:mid/fund`,
  enterpriseAuth({ role: 'finance' }),
  rateLimit(LIMITS.fund),
  validate({ params: S.milestoneParams, body: S.fund }),
  dealWrite,
  async (ctx) => {
    ok(ctx, out.serializeFunded(await deals.fundMilestone(txOf(ctx), workspaceActorOf(ctx), workspaceOf(ctx), idOf(ctx), midOf(ctx), bodyOf<deals.FundInput>(ctx))));
  },
);

dealsRouter.post(
  `${P}/:id/milestones/:mid/submit-evidence`,
  enterpriseAuth({ role: 'operator' }),
  rateLimit(LIMITS.evidence),
  validate({ params: S.milestoneParams, body: S.evidence }),
  dealWrite,
  async (ctx) => {
    ok(ctx, detailFor(ctx, await deals.submitEvidence(txOf(ctx), workspaceActorOf(ctx), workspaceOf(ctx), idOf(ctx), midOf(ctx), bodyOf<deals.EvidenceInput>(ctx))));
  },
);

dealsRouter.post(
  `${P}/:id/milestones/:mid/dispute`,
  enterpriseAuth({ role: 'operator' }),
  rateLimit(LIMITS.dispute),
  validate({ params: S.milestoneParams, body: S.dispute }),
  dealWrite,
  async (ctx) => {
    ok(ctx, detailFor(ctx, await deals.disputeMilestone(txOf(ctx), workspaceActorOf(ctx), workspaceOf(ctx), idOf(ctx), midOf(ctx), bodyOf<deals.DisputeInput>(ctx))));
  },
);

dealsRouter.post(
  `${P}/:id/milestones/:mid/release`,
  enterpriseAuth({ role: 'finance' }),
  rateLimit(LIMITS.release),
  validate({ params: S.milestoneParams, body: PS.release }),
  releaseWrite,
  async (ctx) => {
    ok(ctx, detailFor(ctx, await payouts.releaseMilestone(txOf(ctx), workspaceActorOf(ctx), workspaceOf(ctx), idOf(ctx), midOf(ctx), bodyOf<payouts.ReleaseInput>(ctx))));
  },
);

// ---- Staff moves (D9, D10: an admin session or an admin's personal key) -----------------------

const staffOnly = [auth(), requireAdmin()] as const;

dealsRouter.post(
  '/v1/admin/enterprise/milestones/:id/confirm-funding',
  ...staffOnly,
  validate({ params: S.dealParams, body: S.confirmFunding }),
  keyed(),
  async (ctx) => {
    ok(ctx, out.serializeFunded(await staff.confirmFunding(txOf(ctx), staffOf(ctx), idOf(ctx))));
  },
);

dealsRouter.post('/v1/admin/enterprise/deals/:id/fee-allocation', ...staffOnly, validate({ params: S.dealParams, body: S.feeOverride }), keyed(), async (ctx) => {
  ok(ctx, detailFor(ctx, await staff.overrideFeeAllocation(txOf(ctx), staffOf(ctx), idOf(ctx), bodyOf<staff.OverrideInput>(ctx))));
});

dealsRouter.post(
  '/v1/admin/enterprise/milestones/:id/resolve-dispute',
  ...staffOnly,
  validate({ params: S.dealParams, body: S.resolveDispute }),
  keyed(),
  async (ctx) => {
    ok(ctx, out.serializeRuled(await rulings.resolveDispute(txOf(ctx), staffOf(ctx), idOf(ctx), bodyOf<rulings.RulingInput>(ctx)), ctx.state.principal!.userId));
  },
);
