/** Factories for accounts, sessions and keys (real services, real database). */
import { randomUUID } from 'node:crypto';
import type { Agent } from 'supertest';
import { clock } from '../../shared/clock.js';
import { config } from '../../shared/config.js';
import { sha256Hex, randomToken } from '../../shared/crypto.js';
import { db } from '../../shared/db.js';
import { hashPassword } from '../../shared/auth/passwords.js';
import { maskKey } from '../../shared/auth/api-keys.js';
import * as users from '../../shared/users/repo.js';
import type { UserRow, UserStatus, TwoFactorMethod, UserRole } from '../../shared/users/repo.js';

export const DEFAULT_PASSWORD = 'Correct1Horse';

export interface UserOptions {
  email?: string;
  username?: string;
  password?: string;
  role?: UserRole;
  status?: UserStatus;
  verified?: boolean;
  twoFactor?: TwoFactorMethod;
  fullName?: string;
}

let seq = 0;

/**
 * One argon2 hash per password and parameters for the whole process: a hash takes tens of
 * milliseconds of CPU and factory accounts need a valid one, not a fresh salt each. Tests of
 * hashing itself go through the API (sign-up, password change), which hashes for real.
 */
const hashes = new Map<string, Promise<string>>();
function hashFor(password: string): Promise<string> {
  const key = `${config.argon2MemoryKib}:${config.argon2Passes}:${password}`;
  let hash = hashes.get(key);
  if (!hash) {
    hash = hashPassword(password);
    hash.catch(() => hashes.delete(key));
    hashes.set(key, hash);
  }
  return hash;
}

export async function createUser(options: UserOptions = {}): Promise<{ user: UserRow; password: string }> {
  seq += 1;
  const tag = `${seq}${randomUUID().slice(0, 6)}`;
  const password = options.password ?? DEFAULT_PASSWORD;
  const now = clock.now();
  const user = await users.insert(db, {
    email: (options.email ?? `user${tag}@example.com`).toLowerCase(),
    username: options.username ?? `user_${tag}`,
    full_name: options.fullName ?? `Test User ${seq}`,
    password_hash: await hashFor(password),
    role: options.role ?? 'user',
    status: options.status ?? 'active',
    email_verified_at: options.verified === false ? null : now,
    two_factor_method: options.twoFactor ?? 'none',
    created_at: now,
    updated_at: now,
  });
  return { user, password };
}

/** Signs in through the API with a cookie-keeping agent; returns the CSRF token. */
export async function signIn(agent: Agent, email: string, password = DEFAULT_PASSWORD): Promise<string> {
  const res = await agent.post('/v1/auth/login').send({ email, password });
  if (res.status !== 200 || !res.body.data?.csrf_token) {
    throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data.csrf_token as string;
}

/** A legacy 43-character key without prefix, stored the way old keys are (hash only). */
export async function createLegacyKey(userId: string): Promise<string> {
  const key = randomToken(32); // 43 base64url characters
  await db('api_keys').insert({
    user_id: userId,
    key_hash: sha256Hex(key),
    preview: maskKey(key),
    label: 'legacy',
    created_at: clock.now(),
  });
  return key;
}
