/**
 * The workspace overview and its reconciliation (enterprise spec 4.9; section 8 limits;
 * decision 0020 "Overview and reconciliation"). The overview is cached 15 seconds per
 * workspace and user (shared/overview/cache.ts); the caller's own writes clear it
 * (api/middleware/overview-cache.ts, run by enterpriseAuth after every enterprise write).
 * The reconciliation reads every milestone of the workspace with its ledger lines on each
 * request, so it is limited as the other whole-workspace reads are (the exports: 5 per
 * minute per user; decision 0018 "Issue 42").
 */
import * as overview from '../../shared/overview/service.js';
import * as recon from '../../shared/reconciliation/service.js';
import { serializeReconciliation } from '../../shared/reconciliation/serialize.js';
import { ok, createRouter } from '../context.js';
import { enterpriseAuth, workspaceActorOf, workspaceOf } from '../middleware/enterprise-auth.js';
import { rateLimit, type RateLimitRule } from '../middleware/rate-limit.js';

export const overviewRouter = createRouter();

/** Section 8: the overview 60 per minute; the reconciliation (a whole-workspace read, spec silent) 5 per minute, as the exports. */
export const LIMITS: { overview: RateLimitRule; reconciliation: RateLimitRule } = {
  overview: { name: 'ent-overview', points: 60, durationSeconds: 60, by: 'user' },
  reconciliation: { name: 'ent-reconciliation', points: 5, durationSeconds: 60, by: 'user' },
};

const P = '/v1/enterprise';

overviewRouter.get(`${P}/overview`, enterpriseAuth({ role: 'viewer' }), rateLimit(LIMITS.overview), async (ctx) => {
  ok(ctx, await overview.overview(ctx.redis, workspaceActorOf(ctx), workspaceOf(ctx)));
});

overviewRouter.get(`${P}/reconciliation`, enterpriseAuth({ role: 'viewer' }), rateLimit(LIMITS.reconciliation), async (ctx) => {
  ok(ctx, serializeReconciliation(await recon.reconciliationFor(workspaceActorOf(ctx))));
});
