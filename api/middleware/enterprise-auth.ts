/**
 * "Who is calling and may they, in which workspace?" for every /v1/enterprise route
 * (enterprise spec section 5, decision 0011): `enterpriseAuth(rule)` is the enterprise
 * `auth()`. In this order:
 *
 *  1. the caller: sessions and personal keys through the shared `auth('both')`, `rpe_`
 *     workspace keys through shared/enterprise/access.ts (one query; a dead key counts as
 *     a failed credential and answers 401 INVALID_TOKEN; the creator's account must be
 *     able to act), then the shared per-user limit;
 *  2. the access decision of `resolveAccess` for the route's rule (KEY_NOT_ALLOWED,
 *     SCOPE_REQUIRED, INVALID_ACCOUNT, NO_WORKSPACE, FORBIDDEN), kept in
 *     `ctx.state.enterprise`;
 *  3. after the route: a successful write clears the caller's cached overview of the
 *     workspace (overview-cache.ts).
 *
 * The route's own limits, validation and `enterpriseIdempotent` follow it in the chain:
 * access before limits, so a refused credential spends no quota. `Cache-Control: private,
 * no-store` is not set here: the request frame sets it on every path under /v1/enterprise
 * and /v1/kyb before the body is read (api/middleware/security-headers.ts).
 */
import { actorIn, isWorkspaceKey, resolveAccess, workspaceKeyCaller, type Access, type Caller, type RouteRule, type SignedIn, type WorkspaceActor } from '../../shared/enterprise/access.js';
import { enterpriseErrors } from '../../shared/enterprise/errors.js';
import type { WorkspaceRow } from '../../shared/enterprise/repo.js';
import type { Ctx, Middleware } from '../context.js';
import { AUTHENTICATED_LIMIT, auth } from './auth.js';
import { idempotent } from './idempotency.js';
import { clearOwnOverview } from './overview-cache.js';
import { consumeAuthenticated, countAuthFailure } from './rate-limit.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const personalOrSession = auth('both');

/** The `rpe_` caller: sets the principal as `auth()` does for keys, and applies the per-user limit. */
async function workspaceKeyPrincipal(ctx: Ctx, token: string): Promise<Caller> {
  const caller = await workspaceKeyCaller(token);
  if (!caller) {
    await countAuthFailure(ctx, token);
    throw enterpriseErrors.invalidKey();
  }
  const key = caller.key!;
  ctx.state.principal = { userId: key.user.id, role: key.user.role, via: 'api_key', apiKeyId: key.keyId };
  await consumeAuthenticated(ctx, key.user.id, AUTHENTICATED_LIMIT.points);
  return caller;
}

/** The caller `auth('both')` found (a session or a personal key). */
function sharedCaller(ctx: Ctx): Caller {
  const p = ctx.state.principal!;
  return { credential: p.via === 'session' ? 'session' : 'personal_key', userId: p.userId, userName: p.user?.full_name ?? '' };
}

/** The enterprise `auth()` of a route, with its rule from the spec's tables (lowest role, dashboard only). */
export function enterpriseAuth(rule: RouteRule): Middleware {
  return async (ctx, next) => {
    const decide = async (caller: Caller) => {
      ctx.state.enterprise = await resolveAccess(caller, rule, ctx.method, ctx.get('X-Enterprise-Account'));
      await next();
      await clearOwnOverview(ctx);
    };
    const token = BEARER.exec(ctx.get('Authorization'))?.[1];
    if (token && isWorkspaceKey(token)) await decide(await workspaceKeyPrincipal(ctx, token));
    else await personalOrSession(ctx, () => decide(sharedCaller(ctx)));
  };
}

/** The access decision of the request (after `enterpriseAuth`). */
export const accessOf = (ctx: Ctx): Access => ctx.state.enterprise!;

/** The signed-in person (routes whose rule is `signed_in`). */
export function signedInOf(ctx: Ctx): SignedIn {
  const a = accessOf(ctx);
  return { userId: a.userId, userName: a.userName };
}

/** The caller acting in the selected workspace (routes whose rule names a role). */
export const workspaceActorOf = (ctx: Ctx): WorkspaceActor => actorIn(accessOf(ctx));

/** The selected workspace as the access decision read it (routes whose rule names a role). */
export const workspaceOf = (ctx: Ctx): WorkspaceRow => accessOf(ctx).workspace!;

/** The Idempotency-Key's scope on enterprise routes: the workspace and the credential (a workspace key's replays are its own, not its creator's). */
export const enterpriseScope = (ctx: Ctx): string => {
  const a = accessOf(ctx);
  return `ent:${a.workspace?.id ?? '-'}:${a.workspaceKeyId ? `k:${a.workspaceKeyId}` : `u:${a.userId}`}`;
};

/**
 * Enterprise idempotency (section 5 rule 6): the shared store, scoped by `enterpriseScope`.
 * One instance for every enterprise route but the deal writes that send read-aheads with
 * the key's statement (api/routes/deals.ts `dealWrite`, the same scope).
 */
export const enterpriseIdempotent = idempotent({ scope: enterpriseScope });
