import type Koa from 'koa';
import type { Knex } from 'knex';
import { Router, type RouterContext, type RouterMiddleware } from '@koa/router';
import type { Redis } from 'ioredis';
import type { Logger } from '../shared/logger.js';
import type { Access } from '../shared/enterprise/access.js';
import type { KybCaller, KybSubject } from '../shared/kyb/service.js';
import type { UserRow } from '../shared/users/repo.js';

/** Who is calling (set by the auth middleware; absent on anonymous requests). */
export interface Principal {
  userId: string;
  role: 'user' | 'admin';
  via: 'session' | 'api_key';
  sessionId?: string;
  apiKeyId?: string;
  /** The session's CSRF token (session callers only). */
  csrfToken?: string;
  /** The caller's users row as loaded by `auth()` this request (absent for probes). */
  user?: UserRow;
}

export interface AppState {
  requestId: string;
  log: Logger;
  principal?: Principal;
  /** The request's transaction when `idempotent()` opened one (read it with `txOf`). */
  trx?: Knex.Transaction;
  /** Validated input, set by `validate()`. */
  input: { body?: unknown; query?: unknown; params?: unknown };
  /** What `idempotent({ prepare })` made before the key's transaction opened (read it with `preparedOf`). */
  prepared?: unknown;
  /** The enterprise access decision (set by `enterpriseAuth(rule)`; read it with `accessOf`). */
  enterprise?: Access;
  /** The KYB subject and caller of an invite route (set when its link is opened). */
  kyb?: { subject: KybSubject; caller: KybCaller };
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

/**
 * Every router of the API is made here: routing is case-sensitive and strict (no
 * trailing-slash variants), so a path matches exactly one spelling. Any other spelling
 * (`/v1/ADMIN/...`, `//v1/...`, `/v1/admin/`, percent-encoded letters) reaches no route
 * and answers 404. Guards are attached to each route, never mounted on a prefix.
 */
export function createRouter(prefix?: string): AppRouter {
  return new Router<AppState, AppContext>({ prefix, sensitive: true, strict: true });
}
