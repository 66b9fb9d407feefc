import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { config } from '../../shared/config.js';
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

/** Route middleware: `rateLimit({ name: 'public', points: 100, durationSeconds: 60, by: 'ip' })`. */
export function rateLimit(rule: RateLimitRule): Middleware {
  return async (ctx, next) => {
    await consume(ctx, rule);
    await next();
  };
}
