/**
 * Password hashing with argon2id at OWASP's minimum (19 MiB, 2 passes, 1 lane) or
 * stronger per configuration. Unknown e-mails are checked against a dummy hash with the
 * same parameters, so both failures take the same code path and about the same time.
 */
import argon2, { type HashOptions } from 'argon2';
import { config } from '../config.js';
import { authErrors } from './errors.js';

const options = (): HashOptions => ({
  type: argon2.argon2id,
  memoryCost: config.argon2MemoryKib,
  timeCost: config.argon2Passes,
  parallelism: 1,
});

export async function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, options());
}

let dummyHash: Promise<string> | null = null;

/** Verifies `password` against `hash`, or against a dummy hash when there is no account. */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  dummyHash ??= argon2.hash('dummy password for timing equality', options());
  const target = hash ?? (await dummyHash);
  let ok: boolean;
  try {
    ok = await argon2.verify(target, password);
  } catch {
    ok = false;
  }
  return ok && hash !== null && hash !== undefined;
}

/** WEAK_PASSWORD rule of the spec: 8+ characters, mixed case, a digit (at most 128). */
export function assertStrongPassword(password: string): void {
  const strong =
    password.length >= 8 && password.length <= 128 && /[a-z]/.test(password) && /[A-Z]/.test(password) && /[0-9]/.test(password);
  if (!strong) throw authErrors.weakPassword();
}

export const USERNAME_PATTERN = /^[a-z0-9_.]{3,30}$/;

/** INVALID_USERNAME rule: stored lower-case, `^[a-z0-9_.]{3,30}$`. Returns the normalised name. */
export function normaliseUsername(username: string): string {
  const lower = username.trim().toLowerCase();
  if (!USERNAME_PATTERN.test(lower)) throw authErrors.invalidUsername();
  return lower;
}
