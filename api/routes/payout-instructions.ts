/**
 * Payout instructions (enterprise spec 4.6, 8; D7, D10). Each route states its spec rule in
 * `enterpriseAuth(rule)` (viewers read, finance writes), then the section 8 limit "payout
 * instruction writes 30 per minute" (one counter for the three writes, before validation
 * so invalid bodies count), validation and `enterpriseIdempotent`; a keyed write passes
 * `txOf(ctx)` so its change and the stored answer commit together. The staff routes of
 * D10 are at the end: reveal (issue 42: the full account number, written to the staff
 * audit; no idempotency, so the number is never stored in an answer cache; never cached)
 * and verify (names the `destination_version` the reveal showed); review R4: the queue of
 * instructions awaiting verification (live workspaces first, oldest pending first, keyset
 * pages) and decline (the version shown and a reason the workspace sees).
 */
import { instructionsToVerify } from '../../shared/checkout/console.js';
import * as S from '../../shared/payouts/instruction-schemas.js';
import * as out from '../../shared/payouts/instruction-serialize.js';
import * as instructions from '../../shared/payouts/instructions.js';
import { ok, createRouter } from '../context.js';
import { idOf, paginated, staffOf } from '../kit.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { enterpriseAuth, enterpriseIdempotent as idempotent, workspaceActorOf } from '../middleware/enterprise-auth.js';
import { idempotent as staffIdempotent, txOf } from '../middleware/idempotency.js';
import { rateLimit, type RateLimitRule } from '../middleware/rate-limit.js';
import { bodyOf, queryOf, validate } from '../middleware/validate.js';

export const payoutInstructionsRouter = createRouter();

/** Section 8: payout instruction writes (create, change, delete together), 30 per minute per user. */
export const LIMITS = {
  write: { name: 'ent-payout-instruction', points: 30, durationSeconds: 60, by: 'user' } satisfies RateLimitRule,
  /** Staff reveals of full account numbers: 60 per minute per staff member (a scraping brake; each is audited anyway). */
  reveal: { name: 'staff-payout-instruction-reveal', points: 60, durationSeconds: 60, by: 'user' } satisfies RateLimitRule,
};
const writeLimit = rateLimit(LIMITS.write);

const P = '/v1/enterprise/payout-instructions';

payoutInstructionsRouter.get(P, enterpriseAuth({ role: 'viewer' }), validate({ query: S.list }), async (ctx) => {
  const q = queryOf<S.InstructionQuery>(ctx);
  const { rows, total } = await instructions.listInstructions(workspaceActorOf(ctx), q);
  paginated(ctx, rows.map(out.serializeInstruction), { page: q.page, limit: q.limit, total });
});

payoutInstructionsRouter.get(`${P}/:id`, enterpriseAuth({ role: 'viewer' }), validate({ params: S.params }), async (ctx) => {
  ok(ctx, out.serializeInstruction(await instructions.getInstruction(workspaceActorOf(ctx), idOf(ctx))));
});

payoutInstructionsRouter.post(P, enterpriseAuth({ role: 'finance' }), writeLimit, validate({ body: S.create }), idempotent, async (ctx) => {
  ok(ctx, out.serializeInstruction(await instructions.createInstruction(txOf(ctx), workspaceActorOf(ctx), bodyOf<S.InstructionInput>(ctx))), 201);
});

payoutInstructionsRouter.patch(`${P}/:id`, enterpriseAuth({ role: 'finance' }), writeLimit, validate({ params: S.params, body: S.update }), idempotent, async (ctx) => {
  ok(ctx, out.serializeInstruction(await instructions.updateInstruction(txOf(ctx), workspaceActorOf(ctx), idOf(ctx), bodyOf<S.InstructionPatch>(ctx))));
});

payoutInstructionsRouter.delete(`${P}/:id`, enterpriseAuth({ role: 'finance' }), writeLimit, validate({ params: S.params }), idempotent, async (ctx) => {
  ok(ctx, await instructions.deleteInstruction(txOf(ctx), workspaceActorOf(ctx), idOf(ctx)));
});

// ---- Staff (D9, D10: an admin session or an admin's personal key) -----------------------------

payoutInstructionsRouter.post(
  '/v1/admin/enterprise/payout-instructions/:id/reveal',
  async (ctx, next) => {
    // Set first, so refusals carry it too: a full account number is never kept by a cache.
    ctx.set('Cache-Control', 'private, no-store');
    await next();
  },
  auth(),
  requireAdmin(),
  rateLimit(LIMITS.reveal),
  validate({ params: S.params, body: S.reveal }),
  async (ctx) => {
    const { instruction, accountNumber } = await instructions.revealInstruction(undefined, staffOf(ctx), idOf(ctx));
    ok(ctx, out.serializeRevealed(instruction, accountNumber));
  },
);

payoutInstructionsRouter.post(
  '/v1/admin/enterprise/payout-instructions/:id/verify',
  auth(),
  requireAdmin(),
  validate({ params: S.params, body: S.verify }),
  staffIdempotent(),
  async (ctx) => {
    const { destination_version } = bodyOf<{ destination_version: number }>(ctx);
    ok(ctx, out.serializeInstruction(await instructions.verifyInstruction(txOf(ctx), staffOf(ctx), idOf(ctx), destination_version)));
  },
);

/** Review R4: the staff queue, live workspaces first, oldest pending first; `next_cursor` reads the next page (null on the last). */
payoutInstructionsRouter.get('/v1/admin/enterprise/payout-instructions', auth(), requireAdmin(), validate({ query: S.staffQueue }), async (ctx) => {
  const q = queryOf<{ cursor?: string; limit: number }>(ctx);
  const page = await instructionsToVerify({ cursor: q.cursor ?? null, limit: q.limit });
  ok(ctx, { items: page.rows.map(out.serializeQueued), next_cursor: page.next });
});

/** Review R4: staff decline a pending instruction (the version they were shown, a reason the workspace sees). */
payoutInstructionsRouter.post(
  '/v1/admin/enterprise/payout-instructions/:id/decline',
  auth(),
  requireAdmin(),
  validate({ params: S.params, body: S.decline }),
  staffIdempotent(),
  async (ctx) => {
    const { destination_version, reason } = bodyOf<{ destination_version: number; reason: string }>(ctx);
    ok(ctx, out.serializeInstruction(await instructions.declineInstruction(txOf(ctx), staffOf(ctx), idOf(ctx), destination_version, reason)));
  },
);
