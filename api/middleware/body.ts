import { koaBody } from 'koa-body';
import { QUEUE_DASHBOARD_PATH } from '../routes/admin-queues.js';
import type { Ctx } from '../context.js';

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

const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS']);
const done = async (): Promise<void> => {};

/**
 * Reads a JSON request body into ctx.request.body (at most 1 MiB: 413
 * FST_ERR_CTP_BODY_TOO_LARGE; malformed: 400 INVALID_BODY, both mapped by errors.ts).
 * Called by the request frame; skipped for methods without bodies and for the queue
 * dashboard, which parses its own.
 */
export async function readJsonBody(ctx: Ctx): Promise<void> {
  if (BODYLESS.has(ctx.method) || ctx.path.startsWith(QUEUE_DASHBOARD_PATH)) return;
  await parser(ctx, done);
}
