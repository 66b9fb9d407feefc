/**
 * "Who is calling and may they?" One middleware for every authenticated route:
 * `auth('both')` accepts a session cookie or a personal API key, `auth('optional')` lets
 * anonymous callers through. Session writes need a matching X-CSRF-Token. Suspended and
 * inactive accounts are refused everywhere. The shared per-user limit applies here.
 */
import { config } from '../../shared/config.js';
import { safeEqual } from '../../shared/crypto.js';
import { WORKSPACE_KEY_PREFIX } from '../../shared/auth/api-keys.js';
import { loadKeyPrincipal, loadSessionPrincipal, type SessionCheck } from '../../shared/auth/principal.js';
import { assertCanAct } from '../../shared/auth/account-state.js';
import { authErrors } from '../../shared/auth/errors.js';
import type { NewSession, RequestMeta } from '../../shared/auth/sessions.js';
import type { Ctx, Middleware } from '../context.js';
import { consumeAuthenticated, countAuthFailure, type RateLimitRule } from './rate-limit.js';

export type AuthMode = 'both' | 'optional';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The shared per-user limit of every authenticated route (applied in one script, rate-limit.ts). */
export const AUTHENTICATED_LIMIT: RateLimitRule = {
  name: 'authenticated',
  points: config.authRateLimitPerMinute,
  durationSeconds: 60,
  by: 'user',
};

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The session behind the cookie; an unknown token counts as a failed credential. */
async function checkSession(ctx: Ctx, cookie: string): Promise<SessionCheck> {
  const check = await loadSessionPrincipal(cookie);
  if (check.kind === 'unknown') await countAuthFailure(ctx, cookie);
  // Staff suspension ends the account's sessions; their holder still hears why
  // (403 SUSPENDED / ACCOUNT_INACTIVE, spec section 5 rule 2), not 401 SESSION_EXPIRED.
  if (check.kind !== 'unknown') assertCanAct(check.user);
  return check;
}

/** Resolves the caller into ctx.state.principal; returns false when there are no credentials. */
async function identify(ctx: Ctx, mode: AuthMode): Promise<boolean> {
  const header = ctx.get('Authorization');
  if (header) {
    const token = BEARER.exec(header)?.[1];
    if (!token) {
      await countAuthFailure(ctx, '');
      throw authErrors.malformedAuthorization();
    }
    if (token.startsWith(WORKSPACE_KEY_PREFIX) && !ctx.path.startsWith('/v1/enterprise')) {
      throw authErrors.workspaceKeyOnly();
    }
    const found = await loadKeyPrincipal(token);
    if (!found) {
      await countAuthFailure(ctx, token);
      throw authErrors.invalidKey();
    }
    assertCanAct(found.user);
    ctx.state.principal = { userId: found.user.id, role: found.user.role, via: 'api_key', apiKeyId: found.keyId, user: found.user };
    return true;
  }
  // No Cookie header: no session (and no cookie jar made for the request).
  const cookie = ctx.get('Cookie') ? ctx.cookies.get(config.sessionCookieName) : undefined;
  if (!cookie) return false;
  const check = await checkSession(ctx, cookie);
  if (check.kind !== 'ok') {
    clearSessionCookie(ctx);
    if (mode === 'optional') return false;
    if (check.kind === 'ended') throw authErrors.sessionExpired();
    throw authErrors.invalidSession();
  }
  if (UNSAFE.has(ctx.method) && !safeEqual(ctx.get('X-CSRF-Token'), check.csrfToken)) {
    throw authErrors.csrfFailed();
  }
  ctx.state.principal = {
    userId: check.user.id,
    role: check.user.role,
    via: 'session',
    sessionId: check.sessionId,
    csrfToken: check.csrfToken,
    user: check.user,
  };
  return true;
}

/**
 * `auth('both')`: a session cookie or a personal API key; `auth('optional')` lets
 * anonymous callers through. One query loads the credential and its user
 * (shared/auth/principal.ts) and one Redis round trip applies the per-user limit; the
 * handler reads the user from `ctx.state.principal.user` instead of loading it again.
 */
export function auth(mode: AuthMode = 'both'): Middleware {
  return async (ctx, next) => {
    const known = await identify(ctx, mode);
    if (!known && mode !== 'optional') throw authErrors.unauthorized();
    if (known) await consumeAuthenticated(ctx, ctx.state.principal!.userId, AUTHENTICATED_LIMIT.points);
    await next();
  };
}

const adminGuards = new WeakSet<object>();

/** True for the middleware `requireAdmin()` makes (the route-table tests look for it). */
export function isAdminGuard(mw: unknown): boolean {
  return typeof mw === 'function' && adminGuards.has(mw);
}

/** Staff only (after `auth`): 403 FORBIDDEN for everyone else. */
export function requireAdmin(): Middleware {
  const guard: Middleware = async (ctx, next) => {
    if (ctx.state.principal?.role !== 'admin') throw authErrors.staffOnly();
    await next();
  };
  adminGuards.add(guard);
  return guard;
}

/**
 * The queue dashboard: an admin session only (no keys). Its own UI cannot send the CSRF
 * header, so its writes must come from our own origin (and the cookie is SameSite=Lax).
 */
export function adminSessionOnly(): Middleware {
  return async (ctx, next) => {
    const cookie = ctx.cookies.get(config.sessionCookieName);
    const check = cookie ? await checkSession(ctx, cookie) : null;
    if (!check || check.kind !== 'ok') throw authErrors.staffSignInRequired();
    if (check.user.role !== 'admin') throw authErrors.staffOnly();
    if (UNSAFE.has(ctx.method)) {
      const origin = ctx.get('Origin');
      if (!origin || !URL.canParse(origin) || new URL(origin).host !== ctx.host) throw authErrors.crossOriginWrite();
    }
    ctx.state.principal = { userId: check.user.id, role: 'admin', via: 'session', sessionId: check.sessionId, user: check.user };
    await next();
  };
}

export function setSessionCookie(ctx: Ctx, session: NewSession): void {
  // Behind a TLS-terminating router Koa cannot see HTTPS; the configuration says it is there.
  if (config.sessionCookieSecure) ctx.cookies.secure = true;
  ctx.cookies.set(config.sessionCookieName, session.token, {
    httpOnly: true,
    secure: config.sessionCookieSecure,
    sameSite: 'lax',
    path: '/',
    expires: session.expiresAt,
    overwrite: true,
  });
}

export function clearSessionCookie(ctx: Ctx): void {
  if (config.sessionCookieSecure) ctx.cookies.secure = true;
  ctx.cookies.set(config.sessionCookieName, '', {
    httpOnly: true,
    secure: config.sessionCookieSecure,
    sameSite: 'lax',
    path: '/',
    expires: new Date(0),
    overwrite: true,
  });
}

/** Request facts the services need (no ctx in services). */
export function requestMeta(ctx: Ctx): RequestMeta {
  return { ip: ctx.ip, userAgent: ctx.get('User-Agent') };
}
