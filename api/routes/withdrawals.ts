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
import type { ListFilter } from '../../shared/withdrawals/repo.js';
import { ok, createRouter } from '../context.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { databaseErrorAnswer } from '../middleware/db-error.js';
import { idempotent, txOf } from '../middleware/idempotency.js';
import { actorOf, byId, idOf, paginated, staffOf } from '../kit.js';
import { bodyOf, queryOf, validate } from '../middleware/validate.js';

export const withdrawalsRouter = createRouter();

type ListQuery = Omit<ListFilter, 'userId' | 'oldestFirst'>;
type StaffNote = { note?: string | null };

withdrawalsRouter.get('/v1/user/balance', auth(), async (ctx) => {
  ok(ctx, await balanceFor(actorOf(ctx).userId));
});

withdrawalsRouter.get('/v1/withdrawals/config', auth(), async (ctx) => {
  const c = await withdrawals.configFor(actorOf(ctx).userId);
  ok(ctx, serializeConfig(c.limits, c.fee, c.vouchers, c.loyal));
});

// A database failure answers 500 DB_ERROR, "retry with the same key" (spec 4.4).
withdrawalsRouter.post('/v1/withdrawals', auth(), validate({ body: S.create }), databaseErrorAnswer(), idempotent(), async (ctx) => {
  ok(ctx, serializeWithdrawal(await withdrawals.requestWithdrawal(txOf(ctx), actorOf(ctx).userId, bodyOf<withdrawals.RequestInput>(ctx))), 201);
});

withdrawalsRouter.get('/v1/withdrawals', auth(), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<ListQuery>(ctx);
  const { rows, total } = await withdrawals.listForUser(actorOf(ctx).userId, q);
  paginated(ctx, rows.map(serializeWithdrawal), { page: q.page, limit: q.limit, total });
});

// ---- Staff (D10) ---------------------------------------------------------------------------

withdrawalsRouter.get('/v1/admin/withdrawals', auth(), requireAdmin(), validate({ query: S.staffList }), async (ctx) => {
  const q = queryOf<ListQuery>(ctx);
  const { rows, total } = await withdrawals.listForStaff(q);
  paginated(ctx, rows.map((r) => serializeStaffWithdrawal(r.row, r.user)), { page: q.page, limit: q.limit, total });
});

withdrawalsRouter.post('/v1/admin/withdrawals/:id/approve', auth(), requireAdmin(), byId, validate({ body: S.staffNote }), idempotent(), async (ctx) => {
  ok(ctx, { withdrawal: serializeStaffWithdrawal(await withdrawals.approve(txOf(ctx), staffOf(ctx), idOf(ctx), bodyOf<StaffNote>(ctx))) });
});

withdrawalsRouter.post('/v1/admin/withdrawals/:id/mark-paid', auth(), requireAdmin(), byId, validate({ body: S.staffMarkPaid }), idempotent(), async (ctx) => {
  const input = bodyOf<StaffNote & { reference?: string | null }>(ctx);
  ok(ctx, { withdrawal: serializeStaffWithdrawal(await withdrawals.markPaid(txOf(ctx), staffOf(ctx), idOf(ctx), input)) });
});

withdrawalsRouter.post('/v1/admin/withdrawals/:id/reject', auth(), requireAdmin(), byId, validate({ body: S.staffNote }), idempotent(), async (ctx) => {
  ok(ctx, { withdrawal: serializeStaffWithdrawal(await withdrawals.reject(txOf(ctx), staffOf(ctx), idOf(ctx), bodyOf<StaffNote>(ctx))) });
});
