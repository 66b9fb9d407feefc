/**
 * Enterprise workspaces and access (enterprise spec 4.1, 4.9, 4.10, sections 5-8;
 * decision 0011). Each route is declared with its rule from the spec's tables (lowest
 * role, dashboard only) and its limits; `chain()` turns that into the middleware chain:
 * `Cache-Control: private, no-store` first (errors included), the caller (session,
 * personal key or `rpe_` workspace key), the access decision of shared/enterprise/access.ts,
 * the route's limits, validation, enterprise idempotency, the handler.
 */
import { db } from '../../shared/db.js';
import { AppError } from '../../shared/errors.js';
import { turnstileEnabled, verifyTurnstile } from '../../shared/auth/turnstile.js';
import { isWorkspaceKey, loadWorkspaceKey, resolveAccess, type Access, type Caller, type RouteRule } from '../../shared/enterprise/access.js';
import { readFeed, type FeedQuery } from '../../shared/enterprise/events.js';
import { dateString, exportOf, parseRange, requestAuditExport, type ExportRow } from '../../shared/enterprise/exports.js';
import { createKey, KEYS_PER_WORKSPACE, listKeys, revokeKey } from '../../shared/enterprise/keys.js';
import * as S from '../../shared/enterprise/schemas.js';
import * as ent from '../../shared/enterprise/service.js';
import * as out from '../../shared/enterprise/serialize.js';
import type { Role } from '../../shared/enterprise/repo.js';
import { ok, createRouter, type Ctx, type Middleware } from '../context.js';
import { AUTHENTICATED_LIMIT, auth } from '../middleware/auth.js';
import { idempotent as idempotentMiddleware, txOf } from '../middleware/idempotency.js';
import { consume, consumeAuthenticated, countAuthFailure, type RateLimitRule } from '../middleware/rate-limit.js';
import { bodyOf, paramsOf, queryOf, validate, type Schemas } from '../middleware/validate.js';

export const enterpriseRouter = createRouter();

// ---------------------------------------------------------------------------------------
// Limits of section 8 (the shared 300 per minute per user is applied by the caller step).

const perMinute = (name: string, points: number): RateLimitRule => ({ name, points, durationSeconds: 60, by: 'user' });
export const LIMITS = {
  registerUser: { name: 'ent-register-user', points: 5, durationSeconds: 3600, by: 'user' } as RateLimitRule,
  registerIp: { name: 'ent-register-ip', points: 10, durationSeconds: 3600, by: 'ip' } as RateLimitRule,
  memberWrites: perMinute('ent-member-writes', 30),
  apiKeys: perMinute('ent-api-keys', 60),
  auditExport: perMinute('ent-audit-export', 5),
};

// ---------------------------------------------------------------------------------------
// The caller and the access decision, kept per request.

const callers = new WeakMap<object, Caller>();
const decisions = new WeakMap<object, Access>();
const BEARER = /^Bearer\s+(\S+)\s*$/i;

const personalOrSession = auth('both');

/** Session or personal key through the shared `auth()`; `rpe_` workspace keys here (one query). */
const caller: Middleware = async (ctx, next) => {
  const token = BEARER.exec(ctx.get('Authorization'))?.[1];
  if (token && isWorkspaceKey(token)) {
    const key = await loadWorkspaceKey(token);
    if (!key) {
      await countAuthFailure(ctx, token);
      throw AppError.legacy(401, 'INVALID_TOKEN', 'The API key is wrong, revoked, or its creator left the workspace');
    }
    if (key.user.status === 'suspended') throw AppError.legacy(403, 'SUSPENDED', 'The account behind this key is suspended; contact support');
    if (key.user.status !== 'active') throw AppError.legacy(403, 'ACCOUNT_INACTIVE', 'The account behind this key is closed or being deleted');
    ctx.state.principal = { userId: key.user.id, role: key.user.role, via: 'api_key', apiKeyId: key.keyId };
    callers.set(ctx, { credential: 'workspace_key', userId: key.user.id, userName: key.user.full_name, key });
    await consumeAuthenticated(ctx, key.user.id, AUTHENTICATED_LIMIT.points);
    await next();
    return;
  }
  await personalOrSession(ctx, async () => {
    const p = ctx.state.principal!;
    callers.set(ctx, { credential: p.via === 'session' ? 'session' : 'personal_key', userId: p.userId, userName: p.user?.full_name ?? '' });
    await next();
  });
};

function access(rule: RouteRule): Middleware {
  return async (ctx, next) => {
    decisions.set(ctx, await resolveAccess(callers.get(ctx)!, rule, ctx.method, ctx.get('X-Enterprise-Account')));
    await next();
  };
}

const noStore: Middleware = async (ctx, next) => {
  ctx.set('Cache-Control', 'private, no-store');
  await next();
};

function limits(rules: RateLimitRule[]): Middleware {
  return async (ctx, next) => {
    for (const rule of rules) await consume(ctx, rule);
    await next();
  };
}

const decisionOf = (ctx: Ctx): Access => decisions.get(ctx)!;

/** The caller acting in the selected workspace (routes that need one). */
function actorOf(ctx: Ctx): ent.Actor {
  const a = decisionOf(ctx);
  return { workspaceId: a.workspace!.id, memberId: a.member!.id, userId: a.userId, userName: a.userName, role: a.role! };
}

// ---------------------------------------------------------------------------------------
// Enterprise idempotency (section 5 rule 6): the shared store, scoped to the workspace and
// the credential (a workspace key's replays are its own, not its creator's).

const idempotent = idempotentMiddleware({
  scope: (ctx) => {
    const a = decisionOf(ctx);
    return `ent:${a.workspace?.id ?? '-'}:${a.workspaceKeyId ? `k:${a.workspaceKeyId}` : `u:${a.userId}`}`;
  },
});

// ---------------------------------------------------------------------------------------
// Route declarations.

interface RouteSpec {
  role: Role | 'signed_in';
  dashboardOnly?: boolean;
  limits?: RateLimitRule[];
  schemas?: Schemas;
  /** Enterprise idempotency (every write but register and key creation). */
  idempotent?: boolean;
}

/** Every enterprise route with its rule, for the access matrix test and the docs. */
export const ENTERPRISE_ROUTES: { method: string; path: string; rule: RouteRule }[] = [];

function chain(method: string, path: string, spec: RouteSpec): Middleware[] {
  const rule: RouteRule = { role: spec.role, dashboardOnly: spec.dashboardOnly ?? false };
  ENTERPRISE_ROUTES.push({ method, path, rule });
  // Access before the route's own limits: a refused credential spends no registration quota.
  const mws: Middleware[] = [noStore, caller, access(rule)];
  if (spec.limits) mws.push(limits(spec.limits));
  if (spec.schemas) mws.push(validate(spec.schemas));
  if (spec.idempotent) mws.push(idempotent);
  return mws;
}

const P = '/v1/enterprise';
const paginated = (ctx: Ctx, data: unknown[], page: number, limit: number, total: number, extra: Record<string, unknown> = {}) => {
  ctx.body = { success: true, data, pagination: { page, limit, total, total_pages: Math.ceil(total / limit) }, ...extra };
};

// 4.1 Workspace, members, settings, notifications, counterparties -----------------------

enterpriseRouter.post(
  `${P}/register`,
  ...chain('POST', `${P}/register`, { role: 'signed_in', dashboardOnly: true, limits: [LIMITS.registerUser, LIMITS.registerIp], schemas: { body: S.register } }),
  async (ctx) => {
    const body = bodyOf<ent.RegisterInput & { turnstile_token?: string }>(ctx);
    if (turnstileEnabled()) {
      if (!body.turnstile_token) {
        throw AppError.legacy(400, 'INVALID_BODY', 'Request body is invalid', {
          details: { formErrors: [], fieldErrors: { turnstile_token: ['is required'] } },
        });
      }
      if (!(await verifyTurnstile(body.turnstile_token, ctx.ip))) throw AppError.legacy(403, 'TURNSTILE_FAILED', 'The bot check failed; try it again');
    }
    const a = decisionOf(ctx);
    const made = await ent.register({ id: a.userId, full_name: a.userName }, body);
    ok(
      ctx,
      {
        account: out.serializeAccount(made.workspace),
        membership: out.serializeMembership(made.membership),
        kyb_application: out.serializeKybDraft(made.application),
      },
      201,
    );
  },
);

enterpriseRouter.get(`${P}/me`, ...chain('GET', `${P}/me`, { role: 'signed_in', dashboardOnly: true }), async (ctx) => {
  const a = decisionOf(ctx);
  const selected = a.workspace && a.member ? { workspace: a.workspace, member: a.member } : null;
  const { current, memberships, invites } = await ent.me(a.userId, selected);
  ok(ctx, {
    account: current ? out.serializeAccount(current.workspace) : null,
    membership: current ? out.serializeMembership(current.member) : null,
    memberships: memberships.map((m) => ({ account_id: m.workspace_id, display_name: m.display_name, role: m.role })),
    invites: invites.map((i) => ({ member_id: i.id, display_name: i.display_name, role: i.role, invited_by_name: i.invited_by_name })),
  });
});

enterpriseRouter.post(
  `${P}/invites/:memberId/accept`,
  ...chain('POST', `${P}/invites/:memberId/accept`, { role: 'signed_in', dashboardOnly: true, schemas: { params: S.memberIdParams, body: S.empty }, idempotent: true }),
  async (ctx) => {
    const a = decisionOf(ctx);
    const m = await ent.acceptInvite(txOf(ctx), { id: a.userId, full_name: a.userName }, paramsOf<{ memberId: string }>(ctx).memberId);
    ok(ctx, { member_id: m.id, account_id: m.workspace_id, role: m.role });
  },
);

enterpriseRouter.get(`${P}/members`, ...chain('GET', `${P}/members`, { role: 'viewer', schemas: { query: S.page } }), async (ctx) => {
  const q = queryOf<{ page: number; limit: number }>(ctx);
  const { rows, total } = await ent.listMembers(actorOf(ctx).workspaceId, q.page, q.limit);
  paginated(ctx, rows.map(out.serializeMember), q.page, q.limit, total);
});

enterpriseRouter.post(
  `${P}/members`,
  ...chain('POST', `${P}/members`, { role: 'admin', dashboardOnly: true, limits: [LIMITS.memberWrites], schemas: { body: S.invite }, idempotent: true }),
  async (ctx) => {
    ok(ctx, out.serializeMember(await ent.inviteMember(txOf(ctx), actorOf(ctx), bodyOf<{ email: string; role: Role }>(ctx))), 201);
  },
);

enterpriseRouter.patch(
  `${P}/members/me/preferences`,
  ...chain('PATCH', `${P}/members/me/preferences`, { role: 'viewer', dashboardOnly: true, schemas: { body: S.preferences }, idempotent: true }),
  async (ctx) => {
    ok(ctx, out.serializeMembership(await ent.updatePreferences(txOf(ctx), actorOf(ctx), bodyOf(ctx))));
  },
);

enterpriseRouter.patch(
  `${P}/members/:id`,
  ...chain('PATCH', `${P}/members/:id`, {
    role: 'admin',
    dashboardOnly: true,
    limits: [LIMITS.memberWrites],
    schemas: { params: S.idParams, body: S.roleChange },
    idempotent: true,
  }),
  async (ctx) => {
    const m = await ent.changeRole(txOf(ctx), actorOf(ctx), paramsOf<{ id: string }>(ctx).id, bodyOf<{ role: Role }>(ctx).role);
    ok(ctx, out.serializeMember(m));
  },
);

enterpriseRouter.delete(
  `${P}/members/:id`,
  ...chain('DELETE', `${P}/members/:id`, { role: 'admin', dashboardOnly: true, limits: [LIMITS.memberWrites], schemas: { params: S.idParams }, idempotent: true }),
  async (ctx) => {
    ok(ctx, await ent.removeMember(txOf(ctx), actorOf(ctx), paramsOf<{ id: string }>(ctx).id));
  },
);

enterpriseRouter.get(`${P}/settings`, ...chain('GET', `${P}/settings`, { role: 'viewer' }), (ctx) => {
  ok(ctx, out.serializeSettings(decisionOf(ctx).workspace!));
});

enterpriseRouter.patch(
  `${P}/settings`,
  ...chain('PATCH', `${P}/settings`, { role: 'admin', dashboardOnly: true, schemas: { body: S.settings }, idempotent: true }),
  async (ctx) => {
    ok(ctx, out.serializeSettings(await ent.updateSettings(txOf(ctx), actorOf(ctx), bodyOf(ctx))));
  },
);

enterpriseRouter.get(
  `${P}/notifications`,
  ...chain('GET', `${P}/notifications`, { role: 'viewer', dashboardOnly: true, schemas: { query: S.page } }),
  async (ctx) => {
    const q = queryOf<{ page: number; limit: number }>(ctx);
    const { rows, total, unread } = await ent.listNotifications(actorOf(ctx), q.page, q.limit);
    paginated(ctx, rows.map(out.serializeNotification), q.page, q.limit, total, { unread_count: unread });
  },
);

enterpriseRouter.post(
  `${P}/notifications/read`,
  ...chain('POST', `${P}/notifications/read`, { role: 'viewer', dashboardOnly: true, schemas: { body: S.notificationsRead }, idempotent: true }),
  async (ctx) => {
    ok(ctx, { updated: await ent.markNotificationsRead(txOf(ctx), actorOf(ctx), bodyOf<{ ids?: string[] }>(ctx).ids) });
  },
);

enterpriseRouter.get(`${P}/counterparties`, ...chain('GET', `${P}/counterparties`, { role: 'viewer', schemas: { query: S.page } }), async (ctx) => {
  const q = queryOf<{ page: number; limit: number }>(ctx);
  const { rows, total } = await ent.listCounterparties(actorOf(ctx).workspaceId, q.page, q.limit);
  paginated(ctx, rows.map(out.serializeCounterparty), q.page, q.limit, total);
});

enterpriseRouter.post(
  `${P}/counterparties`,
  ...chain('POST', `${P}/counterparties`, { role: 'operator', schemas: { body: S.counterpartyCreate }, idempotent: true }),
  async (ctx) => {
    ok(ctx, out.serializeCounterparty(await ent.createCounterparty(txOf(ctx), actorOf(ctx), bodyOf(ctx))), 201);
  },
);

enterpriseRouter.patch(
  `${P}/counterparties/:id`,
  ...chain('PATCH', `${P}/counterparties/:id`, { role: 'operator', schemas: { params: S.idParams, body: S.counterpartyUpdate }, idempotent: true }),
  async (ctx) => {
    ok(ctx, out.serializeCounterparty(await ent.updateCounterparty(txOf(ctx), actorOf(ctx), paramsOf<{ id: string }>(ctx).id, bodyOf(ctx))));
  },
);

// 4.9 Events -------------------------------------------------------------------------------

enterpriseRouter.get(`${P}/events`, ...chain('GET', `${P}/events`, { role: 'viewer', schemas: { query: S.events } }), async (ctx) => {
  const page = await readFeed(db, actorOf(ctx).workspaceId, queryOf<FeedQuery>(ctx));
  ctx.body = {
    success: true,
    data: page.items.map(out.serializeEvent),
    next_after: page.next_after,
    ...(page.next_before !== undefined ? { next_before: page.next_before } : {}),
  };
});

// 4.9 Audit export (finance; 5 per minute; built by the exports worker) --------------------

const exportPending = (ctx: Ctx, row: ExportRow) => {
  ctx.set('Retry-After', '2');
  ctx.set('Location', `${P}/audit/export.csv?export_id=${row.id}`);
  ok(ctx, { export_id: row.id, status: row.status, from: dateString(row.range_from), to: dateString(row.range_to) }, 202);
};

enterpriseRouter.get(
  `${P}/audit/export.csv`,
  ...chain('GET', `${P}/audit/export.csv`, { role: 'finance', schemas: { query: S.auditExport } }),
  async (ctx) => {
    const q = queryOf<{ from?: string; to?: string; export_id?: string }>(ctx);
    const actor = actorOf(ctx);
    if (q.export_id === undefined) {
      // Only a new export spends the 5 per minute; fetching one that is being built does not.
      await consume(ctx, LIMITS.auditExport);
      exportPending(ctx, await requestAuditExport(actor, parseRange(q)));
      return;
    }
    const row = await exportOf(actor.workspaceId, q.export_id);
    if (row.status !== 'ready') {
      exportPending(ctx, row);
      return;
    }
    ctx.set('Content-Type', 'text/csv; charset=utf-8');
    ctx.set('Content-Disposition', `attachment; filename="audit-${row.id}.csv"`);
    if (row.truncated) ctx.set('X-Export-Truncated', 'true');
    ctx.status = 200;
    ctx.body = row.csv;
  },
);

// 4.10 Workspace API keys (dashboard session only; admin; 60 per minute) --------------------

enterpriseRouter.get(
  `${P}/api-keys`,
  ...chain('GET', `${P}/api-keys`, { role: 'admin', dashboardOnly: true, limits: [LIMITS.apiKeys] }),
  async (ctx) => {
    ok(ctx, { items: (await listKeys(actorOf(ctx).workspaceId)).map(out.serializeKey), limit: KEYS_PER_WORKSPACE });
  },
);

// No idempotency on purpose: the plaintext is never stored, so it can never be replayed.
enterpriseRouter.post(
  `${P}/api-keys`,
  ...chain('POST', `${P}/api-keys`, { role: 'admin', dashboardOnly: true, limits: [LIMITS.apiKeys], schemas: { body: S.keyCreate } }),
  async (ctx) => {
    const { row, plaintext } = await createKey(actorOf(ctx), bodyOf<{ label: string; scopes: string[] }>(ctx));
    ok(ctx, { ...out.serializeKey(row), key: plaintext }, 201);
  },
);

enterpriseRouter.delete(
  `${P}/api-keys/:id`,
  ...chain('DELETE', `${P}/api-keys/:id`, { role: 'admin', dashboardOnly: true, limits: [LIMITS.apiKeys], schemas: { params: S.idParams }, idempotent: true }),
  async (ctx) => {
    ok(ctx, await revokeKey(txOf(ctx), actorOf(ctx), paramsOf<{ id: string }>(ctx).id));
  },
);
