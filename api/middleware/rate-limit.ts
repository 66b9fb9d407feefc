import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { config } from '../../shared/config.js';
import { authErrors } from '../../shared/auth/errors.js';
import { errors } from '../../shared/errors.js';
import type { Ctx, Middleware } from '../context.js';

export interface RateLimitRule {
  /** Unique name of the counter (shared by every route that uses the same rule). */
  name: string;
  points: number;
  durationSeconds: number;
  /** Count per client IP, per signed-in user (IP when anonymous), or both separately. */
  by: 'ip' | 'user';
}

const limiters = new WeakMap<Redis, Map<string, RateLimiterRedis>>();

function limiterFor(redis: Redis, rule: RateLimitRule): RateLimiterRedis {
  let byName = limiters.get(redis);
  if (!byName) {
    byName = new Map();
    limiters.set(redis, byName);
  }
  const id = `${rule.name}:${rule.points}:${rule.durationSeconds}`;
  let limiter = byName.get(id);
  if (!limiter) {
    limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${config.queuePrefix}:rl:${rule.name}`,
      points: rule.points,
      duration: rule.durationSeconds,
    });
    byName.set(id, limiter);
  }
  return limiter;
}

function subject(ctx: Ctx, by: RateLimitRule['by']): string {
  if (by === 'user' && ctx.state.principal) return `u:${ctx.state.principal.userId}`;
  return `ip:${ctx.ip}`;
}

/** Consumes one point; throws 429 with Retry-After (seconds) when the rule is exhausted. */
export async function consume(ctx: Ctx, rule: RateLimitRule, code = 'RATE_LIMITED'): Promise<void> {
  try {
    await limiterFor(ctx.redis, rule).consume(subject(ctx, rule.by));
  } catch (err) {
    if (err instanceof RateLimiterRes) {
      throw errors.rateLimited(Math.max(1, Math.ceil(err.msBeforeNext / 1000)), code);
    }
    throw err;
  }
}

/**
 * Consumes one point of `rule` for an explicit key (a workspace, a hashed recipient) rather
 * than the caller: 429 `code` with Retry-After and `text` when the key is exhausted.
 */
export async function consumeFor(ctx: Ctx, rule: RateLimitRule, key: string, code: string, text: { en: string; id: string }): Promise<void> {
  try {
    await limiterFor(ctx.redis, rule).consume(key);
  } catch (err) {
    if (err instanceof RateLimiterRes) {
      throw errors.rateLimited(Math.max(1, Math.ceil(err.msBeforeNext / 1000)), code, text);
    }
    throw err;
  }
}

/** Route middleware: `rateLimit({ name: 'public', points: 100, durationSeconds: 60, by: 'ip' })`. */
export function rateLimit(rule: RateLimitRule): Middleware {
  return async (ctx, next) => {
    await consume(ctx, rule);
    await next();
  };
}

// ---------------------------------------------------------------------------------------
// The authenticated path: one Redis round trip per request, and failed credentials.

/** Failed credentials are counted over this window, per address and per key prefix. */
export const AUTH_FAILURE_WINDOW_SECONDS = 15 * 60;
/** Failures with one key prefix (`rpk_` + 4 characters) from anywhere in the window. */
export const KEY_PREFIX_FAILURE_LIMIT = 50;

// KEYS: the user's counter, the address's failure counter. ARGV: user limit, window ms,
// address failure limit. Answers {0, ms} address blocked, {1, ms} user over the limit,
// {2, ms} allowed (ms = time until the counter that decided resets).
const CONSUME_SCRIPT = `
local fails = tonumber(redis.call('GET', KEYS[2]) or '0')
if fails >= tonumber(ARGV[3]) then return {0, redis.call('PTTL', KEYS[2])} end
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]); ttl = tonumber(ARGV[2]) end
if n > tonumber(ARGV[1]) then return {1, ttl} end
return {2, ttl}`;

// KEYS: the address's failure counter, the key prefix's. ARGV: window ms, address limit,
// prefix limit. Answers {1, ms} when either is now over its limit, else {0, 0}.
const FAILURE_SCRIPT = `
local a = redis.call('INCR', KEYS[1])
if a == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local b = 0
if KEYS[2] ~= KEYS[1] then
  b = redis.call('INCR', KEYS[2])
  if b == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
end
if a > tonumber(ARGV[2]) then return {1, redis.call('PTTL', KEYS[1])} end
if b > tonumber(ARGV[3]) then return {1, redis.call('PTTL', KEYS[2])} end
return {0, 0}`;

interface AuthScripts {
  escrowAuthConsume(userKey: string, failKey: string, limit: number, windowMs: number, failLimit: number): Promise<[number, number]>;
  escrowAuthFailure(failKey: string, prefixKey: string, windowMs: number, failLimit: number, prefixLimit: number): Promise<[number, number]>;
}

const scripted = new WeakSet<Redis>();

function authScripts(redis: Redis): AuthScripts {
  if (!scripted.has(redis)) {
    // defineCommand sends EVALSHA and falls back to EVAL once per connection.
    redis.defineCommand('escrowAuthConsume', { numberOfKeys: 2, lua: CONSUME_SCRIPT });
    redis.defineCommand('escrowAuthFailure', { numberOfKeys: 2, lua: FAILURE_SCRIPT });
    scripted.add(redis);
  }
  return redis as unknown as AuthScripts;
}

const failKey = (ip: string) => `${config.queuePrefix}:authfail:ip:${ip}`;
const retrySeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * For a caller whose credentials are valid: refuses an address that sent too many failed
 * credentials (429 RATE_LIMITED), then consumes one point of the shared per-user limit
 * (AUTH_RATE_LIMIT_PER_MINUTE), both in one round trip.
 */
export async function consumeAuthenticated(ctx: Ctx, userId: string, perMinute: number): Promise<void> {
  const [verdict, ms] = await authScripts(ctx.redis).escrowAuthConsume(
    `${config.queuePrefix}:rl:authenticated:u:${userId}`,
    failKey(ctx.ip),
    perMinute,
    60_000,
    config.authFailureLimit,
  );
  if (verdict === 0) {
    throw authErrors.addressBlocked(retrySeconds(ms));
  }
  if (verdict === 1) throw errors.rateLimited(retrySeconds(ms));
}

/**
 * Counts one failed credential (an unknown key or session cookie, a malformed
 * Authorization header) against the address and the key's prefix. Beyond
 * AUTH_FAILURE_LIMIT per address, or KEY_PREFIX_FAILURE_LIMIT per prefix, in 15 minutes
 * the answer is 429 RATE_LIMITED with Retry-After instead of 401; a blocked address is
 * refused even with valid credentials until its window ends.
 */
export async function countAuthFailure(ctx: Ctx, token: string): Promise<void> {
  const prefix = token.length >= 8 ? `${config.queuePrefix}:authfail:key:${token.slice(0, 8)}` : failKey(ctx.ip);
  const [over, ms] = await authScripts(ctx.redis).escrowAuthFailure(
    failKey(ctx.ip),
    prefix,
    AUTH_FAILURE_WINDOW_SECONDS * 1000,
    config.authFailureLimit,
    KEY_PREFIX_FAILURE_LIMIT,
  );
  if (over === 1) {
    throw authErrors.tooManyFailedCredentials(retrySeconds(ms));
  }
}
