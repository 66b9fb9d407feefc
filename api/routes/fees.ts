/**
 * The platform fee of enterprise deals (enterprise spec 4.5, sections 5 and 8; issue 26):
 * the workspace's fee terms, the fee preview (saves nothing, so no Idempotency-Key) and the
 * owner's default allocation. Each route states its spec rule in `enterpriseAuth(rule)`,
 * then its limits of section 8, validation, and `enterpriseIdempotent` for the write; the
 * keyed write passes `txOf(ctx)` to the service (its change and the stored answer commit
 * together on one connection).
 */
import { db } from '../../shared/db.js';
import * as S from '../../shared/deals/fee-schemas.js';
import * as out from '../../shared/deals/fee-serialize.js';
import * as fees from '../../shared/deals/fee-terms.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { accessOf, enterpriseAuth, enterpriseIdempotent as idempotent, workspaceActorOf, workspaceOf } from '../middleware/enterprise-auth.js';
import { txOf } from '../middleware/idempotency.js';
import { rateLimit, type RateLimitRule } from '../middleware/rate-limit.js';
import { bodyOf, validate } from '../middleware/validate.js';

export const feesRouter = createRouter();

// Limits of section 8 (the shared 300 per minute per user is applied by enterpriseAuth).
export const LIMITS = {
  preview: { name: 'ent-fee-preview', points: 60, durationSeconds: 60, by: 'user' } as RateLimitRule,
};

const P = '/v1/enterprise/fees';

/** Who is asking: `can_edit_default_allocation` is true for an owner with a session. */
function viewerOf(ctx: Ctx): fees.FeeViewer {
  const a = accessOf(ctx);
  return { credential: a.credential, role: a.role };
}

feesRouter.get(P, enterpriseAuth({ role: 'viewer' }), async (ctx) => {
  ok(ctx, out.serializeFeeTerms(await fees.feeTerms(db, workspaceOf(ctx), viewerOf(ctx))));
});

// Reads only: no Idempotency-Key. Limits before validation: invalid bodies count.
feesRouter.post(`${P}/preview`, enterpriseAuth({ role: 'viewer' }), rateLimit(LIMITS.preview), validate({ body: S.preview }), async (ctx) => {
  ok(ctx, out.serializePreview(await fees.previewFee(db, workspaceOf(ctx), bodyOf<fees.PreviewInput>(ctx))));
});

feesRouter.put(
  `${P}/default-allocation`,
  enterpriseAuth({ role: 'owner', dashboardOnly: true }),
  validate({ body: S.defaultAllocation }),
  idempotent,
  async (ctx) => {
    const terms = await fees.setDefaultAllocation(txOf(ctx), workspaceActorOf(ctx), viewerOf(ctx), bodyOf<fees.DefaultAllocationInput>(ctx));
    ok(ctx, out.serializeFeeTerms(terms));
  },
);
