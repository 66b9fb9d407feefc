/**
 * "Own writes clear it" (enterprise spec 4.9 overview): after an enterprise write (POST,
 * PUT, PATCH, DELETE) answered 2xx, the caller's cached overview of that workspace is
 * forgotten. Called by `enterpriseAuth` once the route's chain has finished, so a keyed
 * write's transaction has committed by then (api/middleware/idempotency.ts); one place for
 * every enterprise write, no service needs to know about the cache. Another user's write
 * leaves this user's cache to run out (15 seconds). A Redis failure is logged, never turned
 * into an error: the write itself has succeeded.
 */
import { clearCached } from '../../shared/overview/cache.js';
import type { Ctx } from '../context.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export async function clearOwnOverview(ctx: Ctx): Promise<void> {
  if (!WRITES.has(ctx.method) || ctx.status < 200 || ctx.status >= 300) return;
  const access = ctx.state.enterprise;
  if (!access?.workspace) return;
  try {
    await clearCached(ctx.redis, access.workspace.id, access.userId);
  } catch (err) {
    ctx.state.log.warn({ err }, 'overview cache could not be cleared');
  }
}
