/** Staff routes (decisions D2 and D10): an admin session or an admin's personal key. */
import { Router } from '@koa/router';
import * as S from '../../shared/auth/schemas.js';
import { serializeUser } from '../../shared/users/serialize.js';
import { reactivateUser, suspendUser, type StaffContext } from '../../shared/users/service.js';
import { ok, type AppContext, type AppState, type Ctx } from '../context.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { bodyOf, paramsOf, validate } from '../middleware/validate.js';

export const adminRouter = new Router<AppState, AppContext>({ prefix: '/v1/admin' });
adminRouter.use(auth(), requireAdmin());

function staff(ctx: Ctx): StaffContext {
  return { actorId: ctx.state.principal!.userId, ip: ctx.ip, note: bodyOf<{ note?: string }>(ctx).note ?? null };
}

adminRouter.post('/users/:id/suspend', validate({ params: S.userIdParams, body: S.staffNote }), async (ctx) => {
  ok(ctx, { user: serializeUser(await suspendUser(staff(ctx), paramsOf<{ id: string }>(ctx).id)) });
});

adminRouter.post('/users/:id/reactivate', validate({ params: S.userIdParams, body: S.staffNote }), async (ctx) => {
  ok(ctx, { user: serializeUser(await reactivateUser(staff(ctx), paramsOf<{ id: string }>(ctx).id)) });
});
