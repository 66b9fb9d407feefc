/**
 * Enterprise workspaces and access (enterprise spec 4.1, 4.9, 4.10, sections 5-8;
 * decision 0011). Each route states its spec rule in `enterpriseAuth(rule)` (lowest role,
 * dashboard only: api/middleware/enterprise-auth.ts), then its limits of section 8,
 * validation, and `enterpriseIdempotent` for the writes that take an Idempotency-Key
 * (every write but register and key creation). A keyed write passes `txOf(ctx)` to the
 * service: its change and the stored answer commit together on one connection.
 */
import { createHash } from 'node:crypto';
import * as S from '../../shared/enterprise/schemas.js';
import * as ent from '../../shared/enterprise/service.js';
import * as out from '../../shared/enterprise/serialize.js';
import type { Role } from '../../shared/enterprise/states.js';
import { ok, createRouter, type Ctx } from '../context.js';
import { answerExport, idOf, newExportLimit, paginated } from '../kit.js';
import { accessOf, enterpriseAuth, enterpriseIdempotent as idempotent, signedInOf, workspaceActorOf, workspaceOf } from '../middleware/enterprise-auth.js';
import { txOf } from '../middleware/idempotency.js';
import { consumeFor, rateLimit, type RateLimitRule } from '../middleware/rate-limit.js';
import { bodyOf, paramsOf, queryOf, validate } from '../middleware/validate.js';

export const enterpriseRouter = createRouter();

// Limits of section 8 (the shared 300 per minute per user is applied by enterpriseAuth).
const perMinute = (name: string, points: number): RateLimitRule => ({ name, points, durationSeconds: 60, by: 'user' });
export const LIMITS = {
  registerUser: { name: 'ent-register-user', points: 5, durationSeconds: 3600, by: 'user' } as RateLimitRule,
  registerIp: { name: 'ent-register-ip', points: 10, durationSeconds: 3600, by: 'ip' } as RateLimitRule,
  /** Section 8 "member writes": invite, role change, removal and one's own preferences share it. */
  memberWrites: perMinute('ent-member-writes', 30),
  apiKeys: perMinute('ent-api-keys', 60),
  auditExport: perMinute('ent-audit-export', 5),
  /** Member invites a workspace may send in a day, whether or not an account uses the address (review R1). */
  invitesPerWorkspace: { name: 'ent-invites-workspace', points: 20, durationSeconds: 86_400, by: 'user' } as RateLimitRule,
  /** Member invites one address may receive in a day, from all workspaces together (review R1). */
  invitesPerRecipient: { name: 'ent-invites-recipient', points: 5, durationSeconds: 86_400, by: 'user' } as RateLimitRule,
};

/**
 * The daily caps of member invites (review R1), counted for every invite, answered alike
 * whether or not an account uses the address: 429 RATE_LIMITED with Retry-After. The
 * recipient is keyed by a hash of the lower-cased address, not the address.
 */
async function consumeInviteCaps(ctx: Ctx, workspaceId: string, email: string): Promise<void> {
  await consumeFor(ctx, LIMITS.invitesPerWorkspace, `w:${workspaceId}`, 'RATE_LIMITED', {
    en: `A workspace can send at most ${LIMITS.invitesPerWorkspace.points} member invites a day; try again later`,
    id: `Satu workspace paling banyak mengirim ${LIMITS.invitesPerWorkspace.points} undangan anggota sehari; coba lagi nanti`,
  });
  const recipient = createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');
  await consumeFor(ctx, LIMITS.invitesPerRecipient, `r:${recipient}`, 'RATE_LIMITED', {
    en: `One address can receive at most ${LIMITS.invitesPerRecipient.points} member invites a day; try again later`,
    id: `Satu alamat paling banyak menerima ${LIMITS.invitesPerRecipient.points} undangan anggota sehari; coba lagi nanti`,
  });
}

const P = '/v1/enterprise';
const pageOf = (ctx: Ctx) => queryOf<{ page: number; limit: number }>(ctx);

// 4.1 Workspace, members, settings, notifications, counterparties -----------------------

// No idempotency (spec 4.1: a retry creates another workspace). Limits before validation: invalid bodies count.
enterpriseRouter.post(
  `${P}/register`,
  enterpriseAuth({ role: 'signed_in', dashboardOnly: true }),
  rateLimit(LIMITS.registerUser),
  rateLimit(LIMITS.registerIp),
  validate({ body: S.register }),
  async (ctx) => {
    ok(ctx, out.serializeRegistration(await ent.register(signedInOf(ctx), bodyOf<ent.RegisterInput>(ctx), { ip: ctx.ip })), 201);
  },
);

enterpriseRouter.get(`${P}/me`, enterpriseAuth({ role: 'signed_in', dashboardOnly: true }), async (ctx) => {
  ok(ctx, out.serializeMe(await ent.me(accessOf(ctx))));
});

enterpriseRouter.post(
  `${P}/invites/:memberId/accept`,
  enterpriseAuth({ role: 'signed_in', dashboardOnly: true }),
  validate({ params: S.memberIdParams, body: S.empty }),
  idempotent,
  async (ctx) => {
    ok(ctx, out.serializeAcceptedInvite(await ent.acceptInvite(txOf(ctx), signedInOf(ctx), paramsOf<{ memberId: string }>(ctx).memberId)));
  },
);

enterpriseRouter.get(`${P}/members`, enterpriseAuth({ role: 'viewer' }), validate({ query: S.page }), async (ctx) => {
  const q = pageOf(ctx);
  const { rows, total } = await ent.listMembers(workspaceActorOf(ctx), q.page, q.limit);
  paginated(ctx, rows.map(out.serializeMember), { page: q.page, limit: q.limit, total });
});

enterpriseRouter.post(
  `${P}/members`,
  enterpriseAuth({ role: 'admin', dashboardOnly: true }),
  rateLimit(LIMITS.memberWrites),
  validate({ body: S.invite }),
  idempotent,
  async (ctx) => {
    const body = bodyOf<{ email: string; role: Role }>(ctx);
    const actor = workspaceActorOf(ctx);
    await consumeInviteCaps(ctx, actor.workspaceId, body.email);
    ok(ctx, await ent.inviteMember(txOf(ctx), actor, body), 201);
  },
);

enterpriseRouter.patch(
  `${P}/members/me/preferences`,
  enterpriseAuth({ role: 'viewer', dashboardOnly: true }),
  rateLimit(LIMITS.memberWrites),
  validate({ body: S.preferences }),
  idempotent,
  async (ctx) => {
    ok(ctx, out.serializeMembership(await ent.updatePreferences(txOf(ctx), workspaceActorOf(ctx), bodyOf<ent.Preferences>(ctx))));
  },
);

enterpriseRouter.patch(
  `${P}/members/:id`,
  enterpriseAuth({ role: 'admin', dashboardOnly: true }),
  rateLimit(LIMITS.memberWrites),
  validate({ params: S.idParams, body: S.roleChange }),
  idempotent,
  async (ctx) => {
    ok(ctx, out.serializeMember(await ent.changeRole(txOf(ctx), workspaceActorOf(ctx), idOf(ctx), bodyOf<{ role: Role }>(ctx).role)));
  },
);

// Deleting yourself is leaving (decision 0011).
enterpriseRouter.delete(
  `${P}/members/:id`,
  enterpriseAuth({ role: 'admin', dashboardOnly: true }),
  rateLimit(LIMITS.memberWrites),
  validate({ params: S.idParams }),
  idempotent,
  async (ctx) => {
    ok(ctx, await ent.removeMember(txOf(ctx), workspaceActorOf(ctx), idOf(ctx)));
  },
);

// The access decision has already read the workspace row: no second read.
enterpriseRouter.get(`${P}/settings`, enterpriseAuth({ role: 'viewer' }), (ctx) => {
  ok(ctx, out.serializeSettings(workspaceOf(ctx)));
});

enterpriseRouter.patch(
  `${P}/settings`,
  enterpriseAuth({ role: 'admin', dashboardOnly: true }),
  validate({ body: S.settings }),
  idempotent,
  async (ctx) => {
    ok(ctx, out.serializeSettings(await ent.updateSettings(txOf(ctx), workspaceActorOf(ctx), bodyOf<ent.SettingsInput>(ctx))));
  },
);

enterpriseRouter.get(`${P}/notifications`, enterpriseAuth({ role: 'viewer', dashboardOnly: true }), validate({ query: S.page }), async (ctx) => {
  const q = pageOf(ctx);
  const { rows, total, unread } = await ent.listNotifications(workspaceActorOf(ctx), q.page, q.limit);
  paginated(ctx, rows.map(out.serializeNotification), { page: q.page, limit: q.limit, total }, { unread_count: unread });
});

enterpriseRouter.post(
  `${P}/notifications/read`,
  enterpriseAuth({ role: 'viewer', dashboardOnly: true }),
  validate({ body: S.notificationsRead }),
  idempotent,
  async (ctx) => {
    ok(ctx, { updated: await ent.markNotificationsRead(txOf(ctx), workspaceActorOf(ctx), bodyOf<{ ids?: string[] }>(ctx).ids) });
  },
);

enterpriseRouter.get(`${P}/counterparties`, enterpriseAuth({ role: 'viewer' }), validate({ query: S.page }), async (ctx) => {
  const q = pageOf(ctx);
  const { rows, total } = await ent.listCounterparties(workspaceActorOf(ctx), q.page, q.limit);
  paginated(ctx, rows.map(out.serializeCounterparty), { page: q.page, limit: q.limit, total });
});

enterpriseRouter.post(`${P}/counterparties`, enterpriseAuth({ role: 'operator' }), validate({ body: S.counterpartyCreate }), idempotent, async (ctx) => {
  ok(ctx, out.serializeCounterparty(await ent.createCounterparty(txOf(ctx), workspaceActorOf(ctx), bodyOf<ent.CounterpartyInput>(ctx))), 201);
});

enterpriseRouter.patch(
  `${P}/counterparties/:id`,
  enterpriseAuth({ role: 'operator' }),
  validate({ params: S.idParams, body: S.counterpartyUpdate }),
  idempotent,
  async (ctx) => {
    ok(ctx, out.serializeCounterparty(await ent.updateCounterparty(txOf(ctx), workspaceActorOf(ctx), idOf(ctx), bodyOf<ent.CounterpartyPatch>(ctx))));
  },
);

// 4.9 Events -------------------------------------------------------------------------------

enterpriseRouter.get(`${P}/events`, enterpriseAuth({ role: 'viewer' }), validate({ query: S.events }), async (ctx) => {
  ctx.body = { success: true, ...out.serializeFeed(await ent.readFeed(workspaceActorOf(ctx), queryOf<ent.FeedQuery>(ctx))) };
});

// 4.9 Audit export (finance; 5 per minute; built by the exports worker) --------------------

enterpriseRouter.get(`${P}/audit/export.csv`, enterpriseAuth({ role: 'finance' }), validate({ query: S.auditExport }), newExportLimit(LIMITS.auditExport), async (ctx) => {
  await answerExport(ctx, await ent.auditExport(workspaceActorOf(ctx), queryOf<{ from?: string; to?: string; export_id?: string }>(ctx)), `${P}/audit/export.csv`, 'audit');
});

// 4.10 Workspace API keys (dashboard session only; admin; 60 per minute) --------------------

enterpriseRouter.get(`${P}/api-keys`, enterpriseAuth({ role: 'admin', dashboardOnly: true }), rateLimit(LIMITS.apiKeys), async (ctx) => {
  ok(ctx, out.serializeKeyList(await ent.listKeys(workspaceActorOf(ctx)), ent.KEYS_PER_WORKSPACE));
});

// No idempotency on purpose: the plaintext is never stored, so it can never be replayed.
enterpriseRouter.post(
  `${P}/api-keys`,
  enterpriseAuth({ role: 'admin', dashboardOnly: true }),
  rateLimit(LIMITS.apiKeys),
  validate({ body: S.keyCreate }),
  async (ctx) => {
    const { row, plaintext } = await ent.createKey(workspaceActorOf(ctx), bodyOf<{ label: string; scopes: string[] }>(ctx));
    ok(ctx, { ...out.serializeKey(row), key: plaintext }, 201);
  },
);

enterpriseRouter.delete(
  `${P}/api-keys/:id`,
  enterpriseAuth({ role: 'admin', dashboardOnly: true }),
  rateLimit(LIMITS.apiKeys),
  validate({ params: S.idParams }),
  idempotent,
  async (ctx) => {
    ok(ctx, await ent.revokeKey(txOf(ctx), workspaceActorOf(ctx), idOf(ctx)));
  },
);
