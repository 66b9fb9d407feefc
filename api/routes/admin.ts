/** Staff routes (decisions D2 and D10): an admin session or an admin's personal key. */
import * as S from '../../shared/auth/schemas.js';
import { serializeUser } from '../../shared/users/serialize.js';
import { reactivateUser, suspendUser, type StaffContext } from '../../shared/users/service.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { bodyOf, paramsOf, validate } from '../middleware/validate.js';

export const adminRouter = createRouter('/v1/admin');
/** On every route (never on the prefix): a signed-in admin, CSRF-checked for sessions. */
const staffOnly = [auth(), requireAdmin()] as const;

function staff(ctx: Ctx): StaffContext {
  return { actorId: ctx.state.principal!.userId, ip: ctx.ip, note: bodyOf<{ note?: string }>(ctx).note ?? null };
}

adminRouter.post('/users/:id/suspend', ...staffOnly, validate({ params: S.userIdParams, body: S.staffNote }), async (ctx) => {
  ok(ctx, { user: serializeUser(await suspendUser(staff(ctx), paramsOf<{ id: string }>(ctx).id)) });
});

adminRouter.post('/users/:id/reactivate', ...staffOnly, validate({ params: S.userIdParams, body: S.staffNote }), async (ctx) => {
  ok(ctx, { user: serializeUser(await reactivateUser(staff(ctx), paramsOf<{ id: string }>(ctx).id)) });
});
