import type Koa from 'koa';
import type { Router, RouterContext, RouterMiddleware } from '@koa/router';
import type { Redis } from 'ioredis';
import type { Logger } from '../shared/logger.js';

/** Who is calling (set by the auth middleware; absent on anonymous requests). */
export interface Principal {
  userId: string;
  role: 'user' | 'admin';
  via: 'session' | 'api_key';
  sessionId?: string;
  apiKeyId?: string;
  /** The session's CSRF token (session callers only). */
  csrfToken?: string;
}

export interface AppState {
  requestId: string;
  log: Logger;
  principal?: Principal;
  /** Validated input, set by `validate()`. */
  input: { body?: unknown; query?: unknown; params?: unknown };
}

export interface AppContext {
  /** The Redis client this app instance uses for rate limits and caches. */
  redis: Redis;
}

export type AppKoa = Koa<AppState, AppContext>;
export type Ctx = RouterContext<AppState, AppContext>;
export type Middleware = RouterMiddleware<AppState, AppContext>;
export type AppRouter = Router<AppState, AppContext>;

/** Success envelope. */
export function ok(ctx: Ctx, data: unknown, status = 200): void {
  ctx.status = status;
  ctx.body = { success: true, data };
}
