import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import { allQueues } from '../../shared/queues.js';
import type { Middleware } from '../context.js';
import { setHtmlSecurityHeaders } from '../middleware/security-headers.js';

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * Bull Board at /admin/queues, behind `guard` (the admin-only check). The dashboard is
 * its own Koa app; it is mounted only under its path so it never sees other requests.
 */
export function queueDashboard(guard: Middleware): Middleware {
  const adapter = new KoaAdapter();
  adapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({ queues: allQueues().map((q) => new BullMQAdapter(q)), serverAdapter: adapter });
  const board = adapter.registerPlugin() as unknown as Middleware;
  return async (ctx, next) => {
    if (ctx.path !== QUEUE_DASHBOARD_PATH && !ctx.path.startsWith(`${QUEUE_DASHBOARD_PATH}/`)) {
      await next();
      return;
    }
    setHtmlSecurityHeaders(ctx);
    await guard(ctx, async () => {
      await board(ctx, next);
    });
  };
}

