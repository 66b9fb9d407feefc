/**
 * KYB (enterprise spec 4.2; decisions D9, D10, 0017): the workspace's own application
 * under /v1/enterprise/kyb, a counterparty's opened from its verification link under
 * /v1/kyb/invite/:token (signed in with a session or a personal key; the link's first user
 * claims it), and the staff review under /v1/admin/enterprise. Both applicant sides call
 * the same service (shared/kyb/service.ts) with a subject and a caller; each route states
 * its spec rule, its limits of section 8, validation and idempotency.
 */
import { enterpriseErrors } from '../../shared/enterprise/errors.js';
import { rankOf } from '../../shared/enterprise/states.js';
import { createInvite, openInvite } from '../../shared/kyb/invites.js';
import * as review from '../../shared/kyb/review.js';
import * as S from '../../shared/kyb/schemas.js';
import * as out from '../../shared/kyb/serialize.js';
import * as kyb from '../../shared/kyb/service.js';
import { kybErrors } from '../../shared/kyb/errors.js';
import type { IncomingFile } from '../../shared/uploads/service.js';
import { MAX_BYTES } from '../../shared/uploads/rules.js';
import { ok, createRouter, type Ctx, type Middleware } from '../context.js';
import { actorOf, idOf, staffOf } from '../kit.js';
import { auth, requireAdmin } from '../middleware/auth.js';
import { accessOf, enterpriseAuth, enterpriseIdempotent, workspaceActorOf } from '../middleware/enterprise-auth.js';
import { idempotent, txOf } from '../middleware/idempotency.js';
import { readOneFile } from '../middleware/multipart.js';
import { rateLimit, type RateLimitRule } from '../middleware/rate-limit.js';
import { bodyOf, paramsOf, validate } from '../middleware/validate.js';

export const kybRouter = createRouter();

// Limits of section 8 (KYB read 120 per minute: every KYB GET, document links included; upload 30 per user and 60 per IP; attach 30).
export const LIMITS = {
  read: { name: 'kyb-read', points: 120, durationSeconds: 60, by: 'user' } as RateLimitRule,
  uploadUser: { name: 'kyb-upload-user', points: 30, durationSeconds: 60, by: 'user' } as RateLimitRule,
  uploadIp: { name: 'kyb-upload-ip', points: 60, durationSeconds: 60, by: 'ip' } as RateLimitRule,
  attach: { name: 'kyb-attach', points: 30, durationSeconds: 60, by: 'user' } as RateLimitRule,
  invite: { name: 'kyb-invite', points: 30, durationSeconds: 60, by: 'user' } as RateLimitRule,
};

/** One file in field `file`, at most 10 MB (413 FILE_TOO_LARGE); anything else is 400 INVALID_BODY. */
const readKybFile = readOneFile({
  maxBytes: () => MAX_BYTES.kyb,
  tooLarge: (max) => kybErrors.fileTooLarge(max),
  noFile: () => kybErrors.invalidField('file', 'send exactly one file in the "file" field (multipart/form-data)'),
  empty: () => kybErrors.invalidField('file', 'the file is empty'),
});

const fileOf = (ctx: Ctx): IncomingFile => ctx.state.input.body as IncomingFile;

// ---- The workspace's own application (/v1/enterprise/kyb) ------------------------------------

const P = '/v1/enterprise/kyb';

/** The workspace as subject; the full view needs finance or above with a session, editing admin or above with a session. */
function workspaceSide(ctx: Ctx): { subject: kyb.KybSubject; caller: kyb.KybCaller } {
  const a = accessOf(ctx);
  const actor = workspaceActorOf(ctx);
  const session = a.credential === 'session';
  return {
    subject: { type: 'account', workspace: a.workspace!, counterparty: null, invitedBy: null },
    caller: { userId: actor.userId, userName: actor.userName, full: session && rankOf(actor.role) >= rankOf('finance'), mayEdit: session && rankOf(actor.role) >= rankOf('admin') },
  };
}

const admin = enterpriseAuth({ role: 'admin', dashboardOnly: true });

kybRouter.get(P, enterpriseAuth({ role: 'viewer' }), rateLimit(LIMITS.read), async (ctx) => {
  const { subject, caller } = workspaceSide(ctx);
  ok(ctx, out.serializeView(await kyb.viewOf(subject, caller)));
});

kybRouter.patch(P, admin, validate({ body: S.draft }), enterpriseIdempotent, async (ctx) => {
  const { subject, caller } = workspaceSide(ctx);
  ok(ctx, out.serializeView(await kyb.saveDraft(txOf(ctx), caller, subject, bodyOf<kyb.DraftInput>(ctx))));
});

// No idempotency (4.2: "a retry stores another file"); limits before reading the body.
kybRouter.post(`${P}/uploads`, admin, rateLimit(LIMITS.uploadUser), rateLimit(LIMITS.uploadIp), readKybFile, async (ctx) => {
  ok(ctx, out.serializeKybUpload(await kyb.upload(workspaceActorOf(ctx).userId, fileOf(ctx))), 201);
});

kybRouter.post(`${P}/documents`, admin, rateLimit(LIMITS.attach), validate({ body: S.attach }), enterpriseIdempotent, async (ctx) => {
  const { subject, caller } = workspaceSide(ctx);
  ok(ctx, out.serializeView(await kyb.attachDocument(txOf(ctx), caller, subject, bodyOf<kyb.AttachInput>(ctx))), 201);
});

kybRouter.delete(`${P}/documents/:id`, admin, validate({ params: S.idParams }), enterpriseIdempotent, async (ctx) => {
  const { subject, caller } = workspaceSide(ctx);
  ok(ctx, out.serializeView(await kyb.removeDocument(txOf(ctx), caller, subject, idOf(ctx))));
});

kybRouter.get(`${P}/documents/:id/url`, admin, rateLimit(LIMITS.read), validate({ params: S.idParams }), async (ctx) => {
  const { subject, caller } = workspaceSide(ctx);
  ok(ctx, await kyb.documentLink(caller, subject, idOf(ctx)));
});

kybRouter.post(`${P}/submit`, admin, validate({ body: S.empty }), enterpriseIdempotent, async (ctx) => {
  const { subject, caller } = workspaceSide(ctx);
  ok(ctx, out.serializeView(await kyb.submit(txOf(ctx), caller, subject)));
});

kybRouter.post(
  '/v1/enterprise/counterparties/:id/kyb-invite',
  admin,
  rateLimit(LIMITS.invite),
  validate({ params: S.idParams, body: S.invite }),
  enterpriseIdempotent,
  async (ctx) => {
    const body = bodyOf<{ fresh_start: boolean }>(ctx);
    ok(ctx, out.serializeInvite(await createInvite(txOf(ctx), workspaceActorOf(ctx), idOf(ctx), { freshStart: body.fresh_start })), 201);
  },
);

// ---- A counterparty's application, from its verification link (/v1/kyb/invite/:token) --------

const I = '/v1/kyb/invite/:token';

/** Every answer of the enterprise document carries `Cache-Control: private, no-store` (section 1), errors included: set first. */
const privateNoStore: Middleware = async (ctx, next) => {
  ctx.set('Cache-Control', 'private, no-store');
  await next();
};

/** GET and PATCH are dashboard only (4.2): a personal key answers 403 KEY_NOT_ALLOWED. */
const sessionOnly: Middleware = async (ctx, next) => {
  if (ctx.state.principal?.via !== 'session') throw enterpriseErrors.keyNotAllowed();
  await next();
};

/** Opens (and on first use claims) the link for the signed-in user: the counterparty as subject, a caller with the full view. */
const invite: Middleware = async (ctx, next) => {
  const user = ctx.state.principal!;
  ctx.state.kyb = {
    subject: await openInvite(paramsOf<{ token: string }>(ctx).token, { userId: user.userId }),
    caller: { userId: user.userId, userName: user.user?.full_name ?? '', full: true, mayEdit: true },
  };
  await next();
};

const inviteSide = (ctx: Ctx): { subject: kyb.KybSubject; caller: kyb.KybCaller } => ctx.state.kyb!;
const docParams = validate({ params: S.tokenDocParams });
const docIdOf = (ctx: Ctx): string => paramsOf<{ id: string }>(ctx).id;

kybRouter.get(I, privateNoStore, auth(), sessionOnly, rateLimit(LIMITS.read), validate({ params: S.tokenParams }), invite, async (ctx) => {
  const { subject, caller } = inviteSide(ctx);
  ok(ctx, out.serializeView(await kyb.viewOf(subject, caller)));
});

kybRouter.patch(I, privateNoStore, auth(), sessionOnly, validate({ params: S.tokenParams, body: S.draft }), invite, idempotent(), async (ctx) => {
  const { subject, caller } = inviteSide(ctx);
  ok(ctx, out.serializeView(await kyb.saveDraft(txOf(ctx), caller, subject, bodyOf<kyb.DraftInput>(ctx))));
});

kybRouter.post(`${I}/uploads`, privateNoStore, auth(), rateLimit(LIMITS.uploadUser), rateLimit(LIMITS.uploadIp), validate({ params: S.tokenParams }), invite, readKybFile, async (ctx) => {
  ok(ctx, out.serializeKybUpload(await kyb.upload(actorOf(ctx).userId, fileOf(ctx))), 201);
});

kybRouter.post(`${I}/documents`, privateNoStore, auth(), rateLimit(LIMITS.attach), validate({ params: S.tokenParams, body: S.attach }), invite, idempotent(), async (ctx) => {
  const { subject, caller } = inviteSide(ctx);
  ok(ctx, out.serializeView(await kyb.attachDocument(txOf(ctx), caller, subject, bodyOf<kyb.AttachInput>(ctx))), 201);
});

kybRouter.delete(`${I}/documents/:id`, privateNoStore, auth(), docParams, invite, idempotent(), async (ctx) => {
  const { subject, caller } = inviteSide(ctx);
  ok(ctx, out.serializeView(await kyb.removeDocument(txOf(ctx), caller, subject, docIdOf(ctx))));
});

kybRouter.get(`${I}/documents/:id/url`, privateNoStore, auth(), rateLimit(LIMITS.read), docParams, invite, async (ctx) => {
  const { subject, caller } = inviteSide(ctx);
  ok(ctx, await kyb.documentLink(caller, subject, docIdOf(ctx)));
});

kybRouter.post(`${I}/submit`, privateNoStore, auth(), validate({ params: S.tokenParams, body: S.empty }), invite, idempotent(), async (ctx) => {
  const { subject, caller } = inviteSide(ctx);
  ok(ctx, out.serializeView(await kyb.submit(txOf(ctx), caller, subject)));
});

// ---- Staff review (D10: an admin session or an admin's personal key) ----------------------------

const staffOnly = [auth(), requireAdmin()] as const;
const A = '/v1/admin/enterprise';
const applicationIdOf = (ctx: Ctx): string => paramsOf<{ applicationId: string }>(ctx).applicationId;

kybRouter.post(`${A}/kyb/:applicationId/request-changes`, ...staffOnly, validate({ params: S.applicationParams, body: S.requestChanges }), idempotent(), async (ctx) => {
  const body = bodyOf<{ change_requests: { field: string; note: string }[] }>(ctx);
  ok(ctx, out.serializeReviewed(await review.requestChanges(txOf(ctx), staffOf(ctx), applicationIdOf(ctx), body.change_requests)));
});

kybRouter.post(`${A}/kyb/:applicationId/approve`, ...staffOnly, validate({ params: S.applicationParams, body: S.approve }), idempotent(), async (ctx) => {
  ok(ctx, out.serializeReviewed(await review.approve(txOf(ctx), staffOf(ctx), applicationIdOf(ctx), bodyOf<{ risk_tier: review.RiskTier }>(ctx).risk_tier)));
});

kybRouter.post(`${A}/kyb/:applicationId/reject`, ...staffOnly, validate({ params: S.applicationParams, body: S.reject }), idempotent(), async (ctx) => {
  ok(ctx, out.serializeReviewed(await review.reject(txOf(ctx), staffOf(ctx), applicationIdOf(ctx), bodyOf<{ reason: string }>(ctx).reason)));
});

kybRouter.post(`${A}/counterparties/:id/verify`, ...staffOnly, validate({ params: S.idParams, body: S.staffNoteOnly }), idempotent(), async (ctx) => {
  ok(ctx, out.serializeVerifiedCounterparty(await review.verifyCounterparty(txOf(ctx), staffOf(ctx), idOf(ctx))));
});
