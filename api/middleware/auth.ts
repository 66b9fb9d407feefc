/**
 * "Who is calling and may they?" One middleware for every authenticated route:
 * `auth('both')` accepts a session cookie or a personal API key, `auth('optional')` lets
 * anonymous callers through. Session writes need a matching X-CSRF-Token. Suspended and
 * inactive accounts are refused everywhere. The shared per-user limit applies here.
 */
import { config } from '../../shared/config.js';
import { safeEqual } from '../../shared/crypto.js';
import { AppError } from '../../shared/errors.js';
import { WORKSPACE_KEY_PREFIX } from '../../shared/auth/api-keys.js';
import { assertAccountActive, authenticateApiKey, authenticateSession } from '../../shared/auth/service.js';
import type { NewSession } from '../../shared/auth/sessions.js';
import type { Ctx, Middleware } from '../context.js';
import { consume, type RateLimitRule } from './rate-limit.js';

export type AuthMode = 'both' | 'optional';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export const AUTHENTICATED_LIMIT: RateLimitRule = {
  name: 'authenticated',
  points: config.authRateLimitPerMinute,
  durationSeconds: 60,
  by: 'user',
};

function bearerToken(ctx: Ctx): string | null {
  const header = ctx.get('Authorization');
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError(401, 'INVALID_TOKEN', 'Authorization must be "Bearer <API key>"');
  return match[1] ?? null;
}

/** Resolves the caller into ctx.state.principal; returns false when there are no credentials. */
async function identify(ctx: Ctx, mode: AuthMode): Promise<boolean> {
  const token = bearerToken(ctx);
  if (token !== null) {
    if (token.startsWith(WORKSPACE_KEY_PREFIX) && !ctx.path.startsWith('/v1/enterprise')) {
      throw new AppError(401, 'WORKSPACE_KEY_ONLY', 'Workspace keys (rpe_) work only under /v1/enterprise');
    }
    const { user, key } = await authenticateApiKey(token);
    assertAccountActive(user);
    ctx.state.principal = { userId: user.id, role: user.role, via: 'api_key', apiKeyId: key.id };
    return true;
  }
  const cookie = ctx.cookies.get(config.sessionCookieName);
  if (!cookie) return false;
  const check = await authenticateSession(cookie);
  if (check.kind !== 'ok') {
    clearSessionCookie(ctx);
    if (mode === 'optional') return false;
    if (check.kind === 'expired') throw new AppError(401, 'SESSION_EXPIRED', 'Your session has ended; sign in again');
    throw new AppError(401, 'INVALID_TOKEN', 'The session is not valid; sign in again');
  }
  assertAccountActive(check.user);
  if (UNSAFE.has(ctx.method) && !safeEqual(ctx.get('X-CSRF-Token'), check.session.csrf_token)) {
    throw new AppError(403, 'CSRF_FAILED', 'Missing or wrong X-CSRF-Token header');
  }
  ctx.state.principal = {
    userId: check.user.id,
    role: check.user.role,
    via: 'session',
    sessionId: check.session.id,
    csrfToken: check.session.csrf_token,
  };
  return true;
}

export function auth(mode: AuthMode = 'both'): Middleware {
  return async (ctx, next) => {
    const known = await identify(ctx, mode);
    if (!known && mode !== 'optional') throw new AppError(401, 'UNAUTHORIZED', 'Sign in or send a personal API key');
    if (known) await consume(ctx, AUTHENTICATED_LIMIT);
    await next();
  };
}

/** Staff only (after `auth`): 403 FORBIDDEN for everyone else. */
export function requireAdmin(): Middleware {
  return async (ctx, next) => {
    if (ctx.state.principal?.role !== 'admin') throw new AppError(403, 'FORBIDDEN', 'Staff only');
    await next();
  };
}

/**
 * The queue dashboard: an admin session only (no keys). Its own UI cannot send the CSRF
 * header, so its writes must come from our own origin (and the cookie is SameSite=Lax).
 */
export function adminSessionOnly(): Middleware {
  return async (ctx, next) => {
    const cookie = ctx.cookies.get(config.sessionCookieName);
    const check = cookie ? await authenticateSession(cookie) : null;
    if (!check || check.kind !== 'ok') throw new AppError(401, 'UNAUTHORIZED', 'Sign in with a staff account');
    assertAccountActive(check.user);
    if (check.user.role !== 'admin') throw new AppError(403, 'FORBIDDEN', 'Staff only');
    if (UNSAFE.has(ctx.method)) {
      const origin = ctx.get('Origin');
      if (!origin || new URL(origin).host !== ctx.host) throw new AppError(403, 'CSRF_FAILED', 'Cross-origin write refused');
    }
    ctx.state.principal = { userId: check.user.id, role: 'admin', via: 'session', sessionId: check.session.id };
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
export function requestMeta(ctx: Ctx): { ip: string; userAgent: string } {
  return { ip: ctx.ip, userAgent: ctx.get('User-Agent') };
}
