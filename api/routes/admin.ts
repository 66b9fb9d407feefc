/** Staff routes (decisions D2 and D10): an admin session or an admin's personal key. */
import * as S from '../../shared/auth/schemas.js';
import { serializeUser } from '../../shared/users/serialize.js';
import { reactivateUser, suspendUser } from '../../shared/users/service.js';
import * as disputeSchemas from '../../shared/disputes/schemas.js';
import { resolveDispute, type RulingInput } from '../../shared/disputes/service.js';
import { serializeRuling } from '../../shared/disputes/serialize.js';
import * as escrowSchemas from '../../shared/escrows/schemas.js';
import { staffCancel, type StaffCancelInput } from '../../shared/escrows/service.js';
import { serializeEscrow } from '../../shared/escrows/serialize.js';
import { ok, createRouter } from '../context.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { idempotent, txOf } from '../middleware/idempotency.js';
import { idOf, staffOf } from '../kit.js';
import { bodyOf, validate } from '../middleware/validate.js';

export const adminRouter = createRouter('/v1/admin');
/** On every route (never on the prefix): a signed-in admin, CSRF-checked for sessions. */
const staffOnly = [auth(), requireAdmin()] as const;

adminRouter.post('/users/:id/suspend', ...staffOnly, validate({ params: S.userIdParams, body: S.staffNote }), async (ctx) => {
  ok(ctx, { user: serializeUser(await suspendUser(staffOf(ctx), idOf(ctx))) });
});

adminRouter.post('/users/:id/reactivate', ...staffOnly, validate({ params: S.userIdParams, body: S.staffNote }), async (ctx) => {
  ok(ctx, { user: serializeUser(await reactivateUser(staffOf(ctx), idOf(ctx))) });
});

// Staff rulings move escrow money: one transaction with the idempotency record when a key is sent.
adminRouter.post(
  '/disputes/:id/resolve',
  ...staffOnly,
  validate({ params: disputeSchemas.idParams, body: disputeSchemas.resolve }),
  idempotent(),
  async (ctx) => {
    ok(ctx, serializeRuling(await resolveDispute(txOf(ctx), staffOf(ctx), idOf(ctx), bodyOf<RulingInput>(ctx))));
  },
);

// The "admin" cancel of section 3 (before payment only); the reason is required (MISSING_FIELDS, REASON_TOO_LONG).
adminRouter.post(
  '/escrows/:id/cancel',
  ...staffOnly,
  validate({ params: escrowSchemas.idParams, body: escrowSchemas.staffCancel }),
  idempotent(),
  async (ctx) => {
    ok(ctx, { escrow: serializeEscrow(await staffCancel(txOf(ctx), staffOf(ctx), idOf(ctx), bodyOf<StaffCancelInput>(ctx))) });
  },
);
