/** Staff routes (decisions D2 and D10): an admin session or an admin's personal key. */
import * as S from '../../shared/auth/schemas.js';
import { serializeUser } from '../../shared/users/serialize.js';
import { reactivateUser, suspendUser, type StaffContext } from '../../shared/users/service.js';
import * as disputeSchemas from '../../shared/disputes/schemas.js';
import { resolveDispute, type RulingInput } from '../../shared/disputes/service.js';
import { serializeDisputeView } from '../../shared/disputes/serialize.js';
import * as escrowSchemas from '../../shared/escrows/schemas.js';
import { staffCancel } from '../../shared/escrows/service.js';
import { serializeEscrow } from '../../shared/escrows/serialize.js';
import { recordStaffAction } from '../../shared/staff/audit.js';
import { inTransaction } from '../../shared/db.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { idempotent, txOf } from '../middleware/idempotency.js';
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

// Staff rulings move escrow money: one transaction with the idempotency record when a key is sent.
adminRouter.post(
  '/disputes/:id/resolve',
  ...staffOnly,
  validate({ params: disputeSchemas.idParams, body: disputeSchemas.resolve }),
  idempotent(),
  async (ctx) => {
    const body = bodyOf<RulingInput>(ctx);
    const dispute = await resolveDispute(txOf(ctx), { actorId: ctx.state.principal!.userId, ip: ctx.ip }, paramsOf<{ id: string }>(ctx).id, {
      outcome: body.outcome,
      note: body.note || null,
    });
    // The ruling answer adds the outcome (release, refund or hold) to the extended Dispute.
    ok(ctx, { dispute: { ...serializeDisputeView(dispute), outcome: dispute.outcome } });
  },
);

// The "admin" cancel of section 3 (before payment only); the reason is required (MISSING_FIELDS, REASON_TOO_LONG).
adminRouter.post(
  '/escrows/:id/cancel',
  ...staffOnly,
  validate({ params: escrowSchemas.idParams, body: escrowSchemas.staffCancel }),
  idempotent(),
  async (ctx) => {
    const { reason, note } = bodyOf<{ reason?: string; note?: string }>(ctx);
    const id = paramsOf<{ id: string }>(ctx).id;
    const escrow = await inTransaction(txOf(ctx), async (trx) => {
      const cancelled = await staffCancel(trx, ctx.state.principal!.userId, id, reason);
      await recordStaffAction(trx, { actorId: ctx.state.principal!.userId, action: 'escrow.cancel', targetType: 'escrow', targetId: id, note: reason ?? null, details: note ? { note } : {}, ip: ctx.ip });
      return cancelled;
    });
    ok(ctx, { escrow: serializeEscrow(escrow) });
  },
);
