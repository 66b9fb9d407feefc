/**
 * The floor of the authenticated read: what `GET /v1/auth/me` costs on this machine
 * without our framework. A hand-written Koa app (no router, no other middleware) with
 * node-postgres (a Pool, no knex) and ioredis, on the same database and Redis as the
 * API, doing the minimal equivalent work per request:
 *
 * - `Authorization: Bearer <key>`: SHA-256 of the key, one named (server-side prepared)
 *   statement joining api_keys and users by key_hash (live keys only);
 * - or the session cookie (SESSION_COOKIE_NAME): SHA-256 of the token, one named
 *   statement joining sessions and users, refused when revoked, expired or idle
 *   (SESSION_IDLE_MINUTES);
 * - 403 for a suspended or inactive account, as the API;
 * - one Redis round trip for the per-user counter (INCR, PEXPIRE on the first hit, in
 *   one script) against AUTH_RATE_LIMIT_PER_MINUTE, 429 beyond it;
 * - the same JSON as the API: `{ success: true, data: { user, csrf_token } }`, the user
 *   serialised with the same fields as shared/users/serialize.ts (copied here on purpose:
 *   nothing of the service is imported). Unknown credentials answer 401.
 *
 * The escrow routes of issue 29 (`GET /api/escrows/:id`, `GET /api/escrows`,
 * `POST /api/escrows`) are floor-escrows.ts, behind the same authentication and limit.
 *
 * Not done (the API does them): the once-a-minute `last_used_at`/`last_seen_at` touch,
 * failed-credential counting, request ids, security headers, metrics, access log.
 *
 * Started by bench/auth-read/main.ts as a child process; listens on HOST:PORT (loopback only),
 * answers GET /readyz once Postgres and Redis answered, exits on SIGTERM/SIGINT.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import Koa from 'koa';
import pg from 'pg';
import { fail, type FloorCaller } from './floor-common.js';
import { escrowFloor } from './floor-escrows.js';
import type { FloorModule, FloorRoute } from './floor-routes.js';

/** The money-path floors of issue 29, each a module of routes (floor-routes.ts). */
const FLOOR_MODULES: FloorModule[] = [(await import('./floor-pay.js')).payFloor, (await import('./floor-fund.js')).fundFloor, (await import('./floor-release.js')).releaseFloor];

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? '0');
if (!['127.0.0.1', '::1', 'localhost'].includes(host)) {
  console.error(`floor-server: refusing to listen on non-loopback host "${host}"`);
  process.exit(2);
}
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error('floor-server: PORT must be a port number');
  process.exit(2);
}
const databaseUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL;
if (!databaseUrl || !redisUrl) {
  console.error('floor-server: DATABASE_URL and REDIS_URL must be set');
  process.exit(2);
}
const perMinute = Number(process.env.AUTH_RATE_LIMIT_PER_MINUTE ?? '300');
const poolMax = Number(process.env.DATABASE_POOL_MAX ?? '10');
const cookieName = process.env.SESSION_COOKIE_NAME ?? 'escrow_session';
const idleMs = Number(process.env.SESSION_IDLE_MINUTES ?? '120') * 60_000;
const prefix = process.env.FLOOR_PREFIX ?? 'bench-floor';
// The escrow answers' escrow_url, as shared/config.ts derives it.
const publicBaseUrl = (process.env.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');

// int8 (users.balance) as a number, as the API does.
pg.types.setTypeParser(pg.types.builtins.INT8, Number);

// Pipeline mode (pg 8.23), as the API's keyed transactions: floor-common.ts beginWith / commitWith.
const pool = new pg.Pool({ connectionString: databaseUrl, max: poolMax, application_name: 'bench-floor', pipeline: true });
const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });

const USER_COLUMNS = `
  u.id, u.email, u.role, u.full_name, u.username, u.phone, u.kyc_status, u.balance, u.status,
  u.email_verified_at, u.two_factor_method, u.dashboard_tour_completed_at, u.social_instagram,
  u.social_shopee, u.social_tiktokshop, u.created_at, u.password_hash IS NOT NULL AS has_password`;

const KEY_QUERY = {
  name: 'floor_key_user',
  text: `SELECT ${USER_COLUMNS} FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
};
const SESSION_QUERY = {
  name: 'floor_session_user',
  text: `SELECT ${USER_COLUMNS}, s.csrf_token AS s_csrf_token, s.expires_at AS s_expires_at,
                s.revoked_at AS s_revoked_at, s.last_seen_at AS s_last_seen_at
           FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1`,
};

interface UserRecord {
  id: string;
  email: string;
  role: string;
  full_name: string;
  username: string;
  phone: string | null;
  kyc_status: string;
  balance: number;
  status: string;
  email_verified_at: Date | null;
  two_factor_method: string;
  dashboard_tour_completed_at: Date | null;
  social_instagram: string | null;
  social_shopee: string | null;
  social_tiktokshop: string | null;
  created_at: Date;
  has_password: boolean;
}

interface SessionRecord extends UserRecord {
  s_csrf_token: string;
  s_expires_at: Date;
  s_revoked_at: Date | null;
  s_last_seen_at: Date;
}

/** The field list of shared/users/serialize.ts, inline. */
function serializeUser(u: UserRecord) {
  return {
    id: u.id,
    email: u.email,
    role: u.role,
    full_name: u.full_name,
    username: u.username,
    phone: u.phone,
    kyc_status: u.kyc_status,
    balance: u.balance,
    is_suspended: u.status === 'suspended',
    is_verified: u.email_verified_at !== null,
    two_factor_method: u.two_factor_method,
    dashboard_tour_completed_at: u.dashboard_tour_completed_at?.toISOString() ?? null,
    social_instagram: u.social_instagram,
    social_shopee: u.social_shopee,
    social_tiktokshop: u.social_tiktokshop,
    created_at: u.created_at.toISOString(),
    has_password: u.has_password,
    email_verification_required: u.email_verified_at === null,
  };
}

// KEYS: the user's counter. ARGV: window ms, limit. Answers {count, ms until reset when over}.
const COUNT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if n > tonumber(ARGV[2]) then return {n, redis.call('PTTL', KEYS[1])} end
return {n, 0}`;
redis.defineCommand('floorCount', { numberOfKeys: 1, lua: COUNT_SCRIPT });
const counter = redis as unknown as { floorCount(key: string, windowMs: number, limit: number): Promise<[number, number]> };

const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');
const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The caller behind the credentials, once its account is active and under the per-user
 * limit; otherwise the refusal is answered and undefined returned.
 */
async function authenticate(ctx: Koa.Context): Promise<{ user: UserRecord; csrfToken: string | null } | undefined> {
  let user: UserRecord | undefined;
  let csrfToken: string | null = null;
  const header = ctx.get('Authorization');
  if (header) {
    const key = BEARER.exec(header)?.[1];
    if (key) user = (await pool.query<UserRecord>({ ...KEY_QUERY, values: [sha256Hex(key)] })).rows[0];
    if (!user) return fail(ctx, 401, 'INVALID_TOKEN', 'The API key is wrong or has been revoked');
  } else {
    const token = ctx.cookies.get(cookieName);
    if (!token) return fail(ctx, 401, 'UNAUTHORIZED', 'Sign in or send a personal API key');
    const row = (await pool.query<SessionRecord>({ ...SESSION_QUERY, values: [sha256Hex(token)] })).rows[0];
    const now = Date.now();
    if (!row || row.s_revoked_at || row.s_expires_at.getTime() <= now || now - row.s_last_seen_at.getTime() >= idleMs) {
      return fail(ctx, 401, 'INVALID_TOKEN', 'The session is not valid; sign in again');
    }
    user = row;
    csrfToken = row.s_csrf_token;
  }
  if (user.status !== 'active') return fail(ctx, 403, user.status === 'suspended' ? 'SUSPENDED' : 'ACCOUNT_INACTIVE', 'Account not active');
  const [count, ms] = await counter.floorCount(`${prefix}:u:${user.id}`, 60_000, perMinute);
  if (count > perMinute) {
    ctx.set('Retry-After', String(Math.max(1, Math.ceil(ms / 1000))));
    return fail(ctx, 429, 'RATE_LIMITED', 'Too many requests');
  }
  return { user, csrfToken };
}

async function me(ctx: Koa.Context): Promise<void> {
  const caller = await authenticate(ctx);
  if (!caller) return;
  ctx.status = 200;
  ctx.body = { success: true, data: { user: serializeUser(caller.user), csrf_token: caller.csrfToken } };
}

const escrows = escrowFloor(pool, publicBaseUrl);
const ESCROW_PATH = /^\/api\/escrows\/([^/]+)$/;

/** The escrow routes (floor-escrows.ts) behind the same authentication and limit as `/v1/auth/me`. */
async function escrowRoute(ctx: Koa.Context, handle: (caller: FloorCaller) => Promise<void>): Promise<void> {
  const caller = await authenticate(ctx);
  if (caller) await handle(caller.user);
}

const routes: FloorRoute[] = FLOOR_MODULES.flatMap((m) => m({ pool, redis, publicBaseUrl }));

/** A route of a floor module, authenticated when it asks to be. */
async function moduleRoute(ctx: Koa.Context): Promise<boolean> {
  for (const route of routes) {
    if (route.method !== ctx.method) continue;
    const m = route.path.exec(ctx.path);
    if (!m) continue;
    if (!route.auth) {
      await route.handle(ctx, null, m.slice(1));
      return true;
    }
    const caller = await authenticate(ctx);
    if (caller) await route.handle(ctx, caller.user, m.slice(1));
    return true;
  }
  return false;
}

const app = new Koa();
app.use(async (ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === '/v1/auth/me') return await me(ctx);
  if (ctx.path === '/api/escrows') {
    if (ctx.method === 'GET') return await escrowRoute(ctx, (caller) => escrows.list(ctx, caller));
    if (ctx.method === 'POST') return await escrowRoute(ctx, (caller) => escrows.create(ctx, caller));
  }
  const escrowId = ctx.method === 'GET' ? ESCROW_PATH.exec(ctx.path)?.[1] : undefined;
  if (escrowId) return await escrowRoute(ctx, (caller) => escrows.get(ctx, caller, escrowId));
  if (await moduleRoute(ctx)) return;
  if (ctx.method === 'GET' && ctx.path === '/readyz') {
    ctx.body = { success: true, data: { status: 'ready' } };
    return;
  }
  await next();
});

await pool.query('SELECT 1');
await redis.ping();
const server = app.listen(port, host);

let stopping = false;
function stop(): void {
  if (stopping) return;
  stopping = true;
  server.close(() => {
    void Promise.allSettled([pool.end(), redis.quit()]).then(() => process.exit(0));
  });
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
