import { koaBody } from 'koa-body';
import { errors } from '../../shared/errors.js';
import { QUEUE_DASHBOARD_PATH } from '../routes/admin-queues.js';
import type { Ctx } from '../context.js';
import { eachMember, pathOf } from './validate.js';

export const BODY_LIMIT = '1mb';

const parser = koaBody({
  json: true,
  // JSON only: a form post from another site cannot reach a handler (no login CSRF).
  urlencoded: false,
  text: false,
  multipart: false,
  jsonStrict: true,
  jsonLimit: BODY_LIMIT,
  textLimit: BODY_LIMIT,
});

/**
 * Inbound gateway callbacks are verified on their exact bytes: on those paths the parser also
 * keeps the unparsed text (read it with `rawBodyOf`).
 */
export const RAW_BODY_PREFIX = '/api/webhooks/';
const rawKeepingParser = koaBody({
  json: true,
  urlencoded: false,
  text: false,
  multipart: false,
  jsonStrict: true,
  jsonLimit: BODY_LIMIT,
  includeUnparsed: true,
});
/** The request body exactly as it arrived (webhook paths only; undefined elsewhere or without a JSON body). */
export function rawBodyOf(ctx: Ctx): string | undefined {
  // koa-body (includeUnparsed) puts the text on ctx.request.rawBody.
  const raw = (ctx.request as { rawBody?: unknown }).rawBody;
  return typeof raw === 'string' ? raw : undefined;
}

const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS']);
const done = async (): Promise<void> => {};

const hasOwn = (value: object, key: string): boolean => Object.prototype.hasOwnProperty.call(value, key);

/**
 * The dotted path of the first key through which a parsed body could reach a prototype
 * when code later merges or assigns it: a `__proto__` key, or `prototype` inside
 * `constructor` (`merge({}, body)` walks `{}.constructor.prototype`, i.e. Object.prototype).
 * Null when there is none. Own keys only, at any depth.
 */
export function prototypePathIn(input: unknown): string | null {
  let found: string | null = null;
  eachMember(input, (parent, key, value) => {
    if (key === '__proto__') found = pathOf(parent, key);
    else if (key === 'constructor' && typeof value === 'object' && value !== null && !Array.isArray(value) && hasOwn(value, 'prototype')) {
      found = pathOf(parent, 'constructor.prototype');
    }
    return found !== null;
  });
  return found;
}

function refusePrototypePath(path: string): never {
  throw errors.invalidBody({ formErrors: [], fieldErrors: Object.fromEntries([[path, [`${path} is not allowed`]]]) });
}

/**
 * co-body refuses a `__proto__` key with a bare SyntaxError (status 400, `body` holding the
 * text). The text itself is valid JSON then: parse it again to name the field.
 */
function prototypePathOfParseError(err: unknown): string | null {
  if (!(err instanceof SyntaxError)) return null;
  const text = (err as SyntaxError & { body?: unknown }).body;
  if (typeof text !== 'string') return null;
  try {
    return prototypePathIn(JSON.parse(text));
  } catch {
    return null; // really malformed: errors.ts answers it
  }
}

/**
 * A compressed body that does not inflate: zlib and brotli errors carry a `code`
 * (`Z_DATA_ERROR`, `Z_BUF_ERROR`, `ERR__ERROR_FORMAT_PADDING_2`, ...) but no HTTP status.
 */
function isInflateError(ctx: Ctx, err: unknown): boolean {
  const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return false;
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { status?: unknown; statusCode?: unknown; code?: unknown };
  return e.status === undefined && e.statusCode === undefined && typeof e.code === 'string';
}

/** Whether the frame reads a body for this request (not for GET, HEAD, OPTIONS or the queue dashboard). */
export function hasJsonBody(ctx: Ctx): boolean {
  return !BODYLESS.has(ctx.method) && !ctx.path.startsWith(QUEUE_DASHBOARD_PATH);
}

/**
 * Reads a JSON request body into ctx.request.body (at most 1 MiB: 413
 * FST_ERR_CTP_BODY_TOO_LARGE; malformed: 400 INVALID_BODY, both mapped by errors.ts; a
 * compressed body that does not inflate, gzip or brotli: 400 INVALID_BODY).
 * A body with a `__proto__` key (at any depth) or a `constructor.prototype` path answers
 * 400 INVALID_BODY naming it, on every route, before any handler can merge it somewhere.
 * Called by the request frame when `hasJsonBody(ctx)`: not for methods without bodies, nor
 * for the queue dashboard, which parses its own.
 */
export async function readJsonBody(ctx: Ctx): Promise<void> {
  try {
    await (ctx.path.startsWith(RAW_BODY_PREFIX) ? rawKeepingParser : parser)(ctx, done);
  } catch (err) {
    const path = prototypePathOfParseError(err);
    if (path) refusePrototypePath(path);
    if (isInflateError(ctx, err)) {
      throw errors.invalidBody(
        { formErrors: ['Malformed request body: it does not decompress with its Content-Encoding'], fieldErrors: {} },
        { en: 'Request body is not valid JSON', id: 'Isi permintaan bukan JSON yang valid' },
      );
    }
    throw err;
  }
  const path = prototypePathIn(ctx.request.body);
  if (path) refusePrototypePath(path);
}
