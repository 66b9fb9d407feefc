/**
 * Payouts (enterprise spec 4.6 `GET /v1/enterprise/payouts`, viewer) and the staff moves of
 * D10 on them: settle or fail a payout by hand (decision 0019). Releasing a milestone is in
 * deals.ts (its path is under the deal); payout instructions in payout-instructions.ts.
 */
import * as S from '../../shared/payouts/schemas.js';
import * as payouts from '../../shared/payouts/service.js';
import * as staff from '../../shared/payouts/staff.js';
import * as out from '../../shared/payouts/serialize.js';
import type { PayoutFilter } from '../../shared/payouts/repo.js';
import { ok, createRouter } from '../context.js';
import { idOf, paginated, staffOf } from '../kit.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { enterpriseAuth, workspaceActorOf } from '../middleware/enterprise-auth.js';
import { idempotent as staffIdempotent, txOf } from '../middleware/idempotency.js';
import { bodyOf, queryOf, validate } from '../middleware/validate.js';

export const payoutsRouter = createRouter();

payoutsRouter.get('/v1/enterprise/payouts', enterpriseAuth({ role: 'viewer' }), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<PayoutFilter & { page: number; limit: number }>(ctx);
  const { rows, total } = await payouts.listPayouts(workspaceActorOf(ctx), q);
  paginated(ctx, rows.map(out.serializePayout), { page: q.page, limit: q.limit, total });
});

// ---- Staff moves (D10: an admin session or an admin's personal key) -------------------------

const staffOnly = [auth(), requireAdmin()] as const;

payoutsRouter.post('/v1/admin/enterprise/disbursements/:id/settle', ...staffOnly, validate({ params: S.params, body: S.settle }), staffIdempotent(), async (ctx) => {
  ok(ctx, out.serializePayout(await staff.settleByStaff(txOf(ctx), staffOf(ctx), idOf(ctx))));
});

payoutsRouter.post('/v1/admin/enterprise/disbursements/:id/fail', ...staffOnly, validate({ params: S.params, body: S.fail }), staffIdempotent(), async (ctx) => {
  ok(ctx, out.serializePayout(await staff.failByStaff(txOf(ctx), staffOf(ctx), idOf(ctx), bodyOf<{ reason: string }>(ctx).reason)));
});
