/**
 * The idioms every route file shares: the acting user and staff actor, the paginated
 * answer, and public GET routes with their rate limit and CORS preflight. A route file
 * reads like the spec; what it repeats lives here.
 */
import Joi from 'joi';
import type { Actor, StaffActor } from '../shared/actors.js';
import { config } from '../shared/config.js';
import { exportFile, type ExportRow } from '../shared/enterprise/exports.js';
import { serializeExportPending } from '../shared/enterprise/serialize.js';
import { ok, type AppRouter, type Ctx, type Middleware } from './context.js';
import { consume, rateLimit, type RateLimitRule } from './middleware/rate-limit.js';
import { paramsOf, queryOf, validate } from './middleware/validate.js';

/** The signed-in caller of a consumer route (after `auth()`). */
export function actorOf(ctx: Ctx): Actor {
  const p = ctx.state.principal!;
  return { userId: p.userId, role: p.role };
}

/** The staff member on an operator route (after `auth(), requireAdmin()`), with the body's `note` if any. */
export function staffOf(ctx: Ctx): StaffActor {
  const body = ctx.state.input.body as { note?: unknown } | undefined;
  const note = typeof body?.note === 'string' && body.note !== '' ? body.note : null;
  return { actorId: ctx.state.principal!.userId, ip: ctx.ip, note };
}

/** `:id` of the path (validated by `byId`). */
export const idOf = (ctx: Ctx): string => paramsOf<{ id: string }>(ctx).id;
/** Validates `:id` as a string; services answer their own NOT_FOUND for ids that name nothing. */
export const byId = validate({ params: Joi.object({ id: Joi.string().required() }) });

export interface Page {
  page: number;
  limit: number;
  total: number;
}

/** The list answer of the spec: `{ success, data, pagination: { page, limit, total, total_pages } }`. */
export function paginated(ctx: Ctx, data: unknown[], p: Page, extra: Record<string, unknown> = {}): void {
  ctx.status = 200;
  ctx.body = { success: true, data, pagination: { page: p.page, limit: p.limit, total: p.total, total_pages: Math.ceil(p.total / p.limit) }, ...extra };
}

/** The per-address limit every public route shares (spec section 7). */
export const publicLimit = rateLimit({ name: 'public', points: config.publicRateLimitPerMinute, durationSeconds: 60, by: 'ip' });

/**
 * CORS preflight for a public path: any origin, GET only, no credentials. A browser sends
 * one before a GET carrying a header of its own (X-Service-Lang, X-Request-Id).
 */
const preflight: Middleware = (ctx) => {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS');
  const asked = ctx.get('Access-Control-Request-Headers');
  if (/^[A-Za-z0-9-]+(\s*,\s*[A-Za-z0-9-]+)*$/.test(asked) && asked.length <= 1000) ctx.set('Access-Control-Allow-Headers', asked);
  ctx.set('Access-Control-Max-Age', '600');
  ctx.status = 204;
};

export interface PublicOptions {
  /** Browser-cache a 2xx answer for this many seconds unless the handler set Cache-Control. */
  cacheSeconds?: number;
}

const PUBLIC_ANSWER = Symbol('publicAnswer');

/** Any origin may read the answer (errors included, 429 too); optionally browser-cached. */
function publicAnswer(options: PublicOptions): Middleware {
  const mw: Middleware = async (ctx, next) => {
    ctx.set('Access-Control-Allow-Origin', '*');
    await next();
    if (options.cacheSeconds !== undefined && ctx.status < 300 && !ctx.response.get('Cache-Control')) {
      ctx.set('Cache-Control', `public, max-age=${options.cacheSeconds}`);
    }
  };
  return Object.assign(mw, { [PUBLIC_ANSWER]: true });
}

/** True for the middleware `publicGet` puts first on a public route (the route table test finds them by it). */
export const isPublicAnswer = (fn: unknown): boolean => typeof fn === 'function' && PUBLIC_ANSWER in fn;

/**
 * Registers a public GET route: no credentials, any origin, the public rate limit, and
 * its CORS preflight (OPTIONS on the same path).
 */
export function publicGet(router: AppRouter, path: string, options: PublicOptions, ...handlers: Middleware[]): void {
  router.get(path, publicAnswer(options), publicLimit, ...handlers);
  router.options(path, preflight);
}

// ---------------------------------------------------------------------------------------
// CSV exports built by the exports worker (the audit export, the reports' deals.csv and
// disbursements.csv: decisions 0011, 0020).

/** Only a new export (no `export_id`) spends the route's limit; polling one being built does not (its download does: EXPORT_DOWNLOAD_LIMIT). */
export function newExportLimit(rule: RateLimitRule): Middleware {
  return async (ctx, next) => {
    if (queryOf<{ export_id?: string }>(ctx).export_id === undefined) await consume(ctx, rule);
    await next();
  };
}

/**
 * Downloads of a ready export by `export_id`, per user, across the three CSV routes (issue 42,
 * review R13): each streams up to a few MB out of the shared Postgres, so only the poll of a
 * pending export is free. A new export answered ready in its own request is covered by the
 * route's export limit instead.
 */
export const EXPORT_DOWNLOAD_LIMIT: RateLimitRule = { name: 'ent-export-download', points: 10, durationSeconds: 60, by: 'user' };

/**
 * An export's answer: 202 `{ export_id, status, from, to }` with `Location` (the path with
 * the export id) and `Retry-After` while the worker builds it; then the CSV as an
 * attachment named `<name>-<id>.csv`, streamed from its stored parts, with
 * `X-Export-Truncated: true` when more rows existed than the file holds.
 */
export async function answerExport(ctx: Ctx, row: ExportRow, path: string, name: string): Promise<void> {
  if (row.status !== 'ready') {
    ctx.set('Retry-After', '2');
    ctx.set('Location', `${path}?export_id=${row.id}`);
    ok(ctx, serializeExportPending(row), 202);
    return;
  }
  if (queryOf<{ export_id?: string }>(ctx).export_id !== undefined) await consume(ctx, EXPORT_DOWNLOAD_LIMIT);
  ctx.set('Content-Type', 'text/csv; charset=utf-8');
  ctx.set('Content-Disposition', `attachment; filename="${name}-${row.id}.csv"`);
  if (row.truncated) ctx.set('X-Export-Truncated', 'true');
  ctx.status = 200;
  ctx.body = exportFile(row);
}
