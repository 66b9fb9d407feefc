/**
 * Sign-in rate control (spec section 5 rule 3), counted in Redis per IP and per e-mail
 * so every API copy sees the same counts. Every failed or refused attempt counts:
 * - from 3 failures a bot-check token is required (when the bot check is on);
 * - from 6 failures sign-in is locked (423 ACCOUNT_LOCKED) until the window ends;
 * - after 10 failures from one address it gets 429 LOGIN_LOCKED with Retry-After.
 * An attempt is counted *before* the password is checked (and given back if it turns out
 * not to be a failure), so a burst of parallel requests cannot all slip under the lock.
 * A successful sign-in clears the e-mail's count (not the address's).
 */
import type { Redis } from 'ioredis';
import { config } from '../config.js';
import { sha256Hex } from '../crypto.js';

export const LOGIN_LADDER = { captchaFrom: 3, lockFrom: 6, addressLockAfter: 10 } as const;
export const LOGIN_WINDOW_SECONDS = 15 * 60;

export interface LoginCounts {
  ip: number;
  email: number;
  /** Seconds until the address's count resets. */
  ipTtl: number;
}

const ipKey = (ip: string) => `${config.queuePrefix}:login:ip:${ip}`;
// The e-mail is hashed so Redis holds no personal data in clear text.
const emailKey = (email: string) => `${config.queuePrefix}:login:email:${sha256Hex(email.toLowerCase())}`;

export async function readCounts(redis: Redis, ip: string, email: string): Promise<LoginCounts> {
  const [[, ipCount], [, emailCount], [, ttl]] = (await redis
    .multi()
    .get(ipKey(ip))
    .get(emailKey(email))
    .ttl(ipKey(ip))
    .exec()) as [[null, string | null], [null, string | null], [null, number]];
  return { ip: Number(ipCount ?? 0), email: Number(emailCount ?? 0), ipTtl: ttl > 0 ? ttl : LOGIN_WINDOW_SECONDS };
}

/** Counts one attempt (as a failure until given back) against the address and the e-mail. */
export async function recordFailure(redis: Redis, ip: string, email: string): Promise<LoginCounts> {
  const result = (await redis
    .multi()
    .incr(ipKey(ip))
    .expire(ipKey(ip), LOGIN_WINDOW_SECONDS, 'NX')
    .incr(emailKey(email))
    .expire(emailKey(email), LOGIN_WINDOW_SECONDS, 'NX')
    .ttl(ipKey(ip))
    .exec()) as [null, number][];
  const ttl = result[4]?.[1] ?? LOGIN_WINDOW_SECONDS;
  return { ip: result[0]?.[1] ?? 0, email: result[2]?.[1] ?? 0, ipTtl: ttl > 0 ? ttl : LOGIN_WINDOW_SECONDS };
}

/** Gives back an attempt counted by recordFailure (it was not a failure). */
export async function releaseAttempt(redis: Redis, ip: string, email: string): Promise<void> {
  const script = `
    for i = 1, #KEYS do
      if redis.call('DECR', KEYS[i]) <= 0 then redis.call('DEL', KEYS[i]) end
    end
    return 1`;
  await redis.eval(script, 2, ipKey(ip), emailKey(email));
}

/** The counts as they were before this attempt was counted. */
export function priorTo(c: LoginCounts): LoginCounts {
  return { ip: c.ip - 1, email: c.email - 1, ipTtl: c.ipTtl };
}

export async function clearEmail(redis: Redis, email: string): Promise<void> {
  await redis.del(emailKey(email));
}

export const captchaNeeded = (c: LoginCounts) => Math.max(c.ip, c.email) >= LOGIN_LADDER.captchaFrom;
export const accountLocked = (c: LoginCounts) => c.email >= LOGIN_LADDER.lockFrom || c.ip >= LOGIN_LADDER.lockFrom;
export const addressLocked = (c: LoginCounts) => c.ip >= LOGIN_LADDER.addressLockAfter;
