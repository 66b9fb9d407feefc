/**
 * The Koa application, composed in one place. `server.ts` only listens; tests build
 * as many apps as they need (e.g. two copies sharing Redis).
 */
import Koa from 'koa';
import type { Redis } from 'ioredis';
import { config } from '../shared/config.js';
import { redis as sharedRedis } from '../shared/redis.js';
import type { AppContext, AppKoa, AppRouter, AppState, Middleware } from './context.js';
import { requestContext } from './middleware/request-context.js';
import { dispatchRoutes } from './middleware/dispatch.js';
import { queueDashboard } from './routes/admin-queues.js';
import { docsRouter } from './routes/docs.js';
import { healthCheck, systemRouter } from './routes/system.js';
import { authRouter } from './routes/auth.js';
import { publicRouter } from './routes/public.js';
import { adminRouter } from './routes/admin.js';
import { escrowsRouter } from './routes/escrows.js';
import { disputesRouter } from './routes/disputes.js';
import { partnerRouter } from './routes/partner.js';
import { sandboxRouter } from './routes/sandbox.js';
import { withdrawalsRouter } from './routes/withdrawals.js';
import { paymentsRouter } from './routes/payments.js';
import { webhooksRouter } from './routes/webhooks.js';
import { uploadsRouter } from './routes/uploads.js';
import { enterpriseRouter } from './routes/enterprise.js';
import { kybRouter } from './routes/kyb.js';
import { dealsRouter } from './routes/deals.js';
import { feesRouter } from './routes/fees.js';
import { templatesRouter } from './routes/templates.js';
import { documentsRouter } from './routes/documents.js';
import { approvalsRouter } from './routes/approvals.js';
import { payoutsRouter } from './routes/payouts.js';
import { payoutInstructionsRouter } from './routes/payout-instructions.js';
import { enterpriseWebhooksRouter } from './routes/enterprise-webhooks.js';
import { overviewRouter } from './routes/overview.js';
import { reportsRouter } from './routes/reports.js';
import { ordersRouter } from './routes/orders.js';
import { notificationsRouter } from './routes/notifications.js';
import { trackingRouter } from './routes/tracking.js';
import { adminSessionOnly } from './middleware/auth.js';
import { checkoutRouter } from './routes/checkout.js';
import { consoleRouter } from './routes/console.js';

export interface AppDeps {
  redis?: Redis;
  /** Extra routers (tests mount probe routes this way). */
  extraRouters?: AppRouter[];
  /** Mount the sandbox-only routes (default: SANDBOX_MODE). */
  sandboxMode?: boolean;
}

/** Every router of the API, in mounting order (the OpenAPI test walks this list). */
export const routers: AppRouter[] = [
  systemRouter,
  docsRouter,
  publicRouter,
  authRouter,
  partnerRouter,
  escrowsRouter,
  paymentsRouter,
  webhooksRouter,
  disputesRouter,
  withdrawalsRouter,
  uploadsRouter,
  enterpriseRouter,
  kybRouter,
  dealsRouter,
  feesRouter,
  templatesRouter,
  documentsRouter,
  approvalsRouter,
  payoutsRouter,
  payoutInstructionsRouter,
  enterpriseWebhooksRouter,
  overviewRouter,
  reportsRouter,
  ordersRouter,
  notificationsRouter,
  trackingRouter,
  adminRouter,
  sandboxRouter,
];

/**
 * Server-rendered pages (hosted checkout, sign-in, operator console; issue 12): not API
 * routes, so not in `routers` (the OpenAPI and route-table tests walk that list).
 */
export const pageRouters: AppRouter[] = [checkoutRouter, consoleRouter];

/** Routers mounted only in sandbox mode (decision D4): never reachable in production. */
export const SANDBOX_ONLY: ReadonlySet<AppRouter> = new Set([sandboxRouter]);

export function createApp(deps: AppDeps = {}): AppKoa {
  const app: AppKoa = new Koa<AppState, AppContext>({ proxy: config.trustProxy });
  // Behind one router: the client address is the last X-Forwarded-For hop it added.
  app.maxIpsCount = 1;
  app.context.redis = deps.redis ?? sharedRedis;
  app.silent = true; // errors are logged by the request frame with the request id

  const use = (mw: Middleware) => app.use(mw as Koa.Middleware<AppState, AppContext>);
  use(healthCheck());
  use(requestContext());
  const sandbox = deps.sandboxMode ?? config.sandboxMode;
  const mounted = [...routers, ...(deps.extraRouters ?? [])].filter((router) => sandbox || !SANDBOX_ONLY.has(router));
  // Every route of every router through one dispatch, in this order (dispatch.ts).
  use(dispatchRoutes([...mounted, ...pageRouters]));
  // Last: only requests no route took get here.
  use(queueDashboard(adminSessionOnly()));
  return app;
}
