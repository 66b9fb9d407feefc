/**
 * Balance and withdrawals (consumer spec 4.4) and their staff moves under /v1/admin
 * (decisions D2, D10; decision 0008). Money-moving writes accept an Idempotency-Key: the
 * service joins the request's transaction, so the change and the stored answer commit
 * together. Every /v1/admin route carries `auth(), requireAdmin()` itself.
 */
import { balanceFor } from '../../shared/balance/service.js';
import * as S from '../../shared/withdrawals/schemas.js';
import * as withdrawals from '../../shared/withdrawals/service.js';
import { serializeConfig, serializeStaffWithdrawal, serializeWithdrawal } from '../../shared/withdrawals/serialize.js';
import type { WithdrawalStatus } from '../../shared/withdrawals/states.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { idempotent, txOf } from '../middleware/idempotency.js';
import { bodyOf, paramsOf, queryOf, validate } from '../middleware/validate.js';

export const withdrawalsRouter = createRouter();

const userIdOf = (ctx: Ctx) => ctx.state.principal!.userId;
const idOf = (ctx: Ctx) => paramsOf<{ id: string }>(ctx).id;
const staff = (ctx: Ctx): withdrawals.StaffActor => ({ actorId: ctx.state.principal!.userId, ip: ctx.ip });

interface ListQuery {
  status?: WithdrawalStatus;
  page: number;
  limit: number;
}

function listed<T>(ctx: Ctx, data: T[], q: ListQuery, total: number): void {
  ctx.body = { success: true, data, pagination: { page: q.page, limit: q.limit, total, total_pages: Math.ceil(total / q.limit) } };
}

withdrawalsRouter.get('/v1/user/balance', auth(), async (ctx) => {
  ok(ctx, await balanceFor(userIdOf(ctx)));
});

withdrawalsRouter.get('/v1/withdrawals/config', auth(), async (ctx) => {
  const c = await withdrawals.configFor(userIdOf(ctx));
  ok(ctx, serializeConfig(c.limits, c.fee, c.vouchers, c.loyal));
});

withdrawalsRouter.post('/v1/withdrawals', auth(), validate({ body: S.create }), idempotent(), async (ctx) => {
  const w = await withdrawals.requestWithdrawal(txOf(ctx), userIdOf(ctx), bodyOf<withdrawals.RequestInput>(ctx));
  ok(ctx, serializeWithdrawal(w), 201);
});

withdrawalsRouter.get('/v1/withdrawals', auth(), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<ListQuery>(ctx);
  const { rows, total } = await withdrawals.listForUser(userIdOf(ctx), q);
  listed(ctx, rows.map(serializeWithdrawal), q, total);
});

// ---- Staff (D10) ---------------------------------------------------------------------------

withdrawalsRouter.get('/v1/admin/withdrawals', auth(), requireAdmin(), validate({ query: S.staffList }), async (ctx) => {
  const q = queryOf<ListQuery>(ctx);
  const { rows, total } = await withdrawals.listForStaff(q);
  listed(ctx, rows.map((r) => serializeStaffWithdrawal(r.row, r.user)), q, total);
});

withdrawalsRouter.post(
  '/v1/admin/withdrawals/:id/approve',
  auth(),
  requireAdmin(),
  validate({ params: S.idParams, body: S.staffNote }),
  idempotent(),
  async (ctx) => {
    const w = await withdrawals.approve(txOf(ctx), staff(ctx), idOf(ctx), bodyOf<{ note?: string | null }>(ctx));
    ok(ctx, { withdrawal: serializeStaffWithdrawal(w) });
  },
);

withdrawalsRouter.post(
  '/v1/admin/withdrawals/:id/mark-paid',
  auth(),
  requireAdmin(),
  validate({ params: S.idParams, body: S.staffMarkPaid }),
  idempotent(),
  async (ctx) => {
    const w = await withdrawals.markPaid(txOf(ctx), staff(ctx), idOf(ctx), bodyOf<{ note?: string | null; reference?: string | null }>(ctx));
    ok(ctx, { withdrawal: serializeStaffWithdrawal(w) });
  },
);

withdrawalsRouter.post(
  '/v1/admin/withdrawals/:id/reject',
  auth(),
  requireAdmin(),
  validate({ params: S.idParams, body: S.staffNote }),
  idempotent(),
  async (ctx) => {
    const w = await withdrawals.reject(txOf(ctx), staff(ctx), idOf(ctx), bodyOf<{ note?: string | null }>(ctx));
    ok(ctx, { withdrawal: serializeStaffWithdrawal(w) });
  },
);
