/**
 * Personal API keys: `rpk_` + 32 random bytes (base64url). Only the SHA-256 hash and a
 * masked preview are stored; the plaintext is returned once. Legacy 43-character keys
 * without the prefix are looked up the same way and keep working until rotated.
 */
import { clock } from '../clock.js';
import { randomToken, sha256Hex } from '../crypto.js';
import { db, type Db } from '../db.js';
import { queueMail } from '../mail/service.js';
import * as users from '../users/repo.js';
import { userErrors } from '../users/errors.js';
import { authErrors } from './errors.js';
import * as repo from './repo.js';
import type { ApiKeyRow } from './repo.js';

export type { ApiKeyRow } from './repo.js';

export const PERSONAL_KEY_PREFIX = 'rpk_';
export const WORKSPACE_KEY_PREFIX = 'rpe_';
export const LEGACY_KEY_PATTERN = /^[A-Za-z0-9_-]{43}$/;
export const ROTATIONS_PER_HOUR = 5;
const HOUR_MS = 3600_000;

export function maskKey(key: string): string {
  const head = key.startsWith(PERSONAL_KEY_PREFIX) ? key.slice(0, PERSONAL_KEY_PREFIX.length + 4) : key.slice(0, 4);
  return `${head}…${key.slice(-4)}`;
}

export function looksLikePersonalKey(token: string): boolean {
  return token.startsWith(PERSONAL_KEY_PREFIX) || LEGACY_KEY_PATTERN.test(token);
}

/** Makes a new key for the user; the plaintext is returned once and never stored. */
export async function insertKey(trx: Db, userId: string, label: string | null, ip: string): Promise<{ row: ApiKeyRow; plaintext: string }> {
  const plaintext = `${PERSONAL_KEY_PREFIX}${randomToken(32)}`;
  const row = await repo.insertKey(trx, {
    user_id: userId,
    key_hash: sha256Hex(plaintext),
    preview: maskKey(plaintext),
    label,
    created_at: clock.now(),
    created_ip: ip,
  });
  return { row, plaintext };
}

/** The user's live key (its masked preview only), or undefined. */
export async function liveKeyOf(userId: string): Promise<ApiKeyRow | undefined> {
  return repo.findLiveKeyOfUser(db, userId);
}

/**
 * Creates a new key and revokes the previous one at once. At most 5 per account per
 * hour (429 ROTATE_LIMITED; the current key keeps working). The owner is e-mailed the
 * time and IP, never the key.
 */
export async function rotateApiKey(userId: string, label: string | null, ip: string): Promise<{ row: ApiKeyRow; plaintext: string }> {
  return db.transaction(async (trx) => {
    const user = await users.findByIdForUpdate(trx, userId); // serialises rotations of one account
    if (!user) throw userErrors.notFound();
    const now = clock.now();
    const recent = await repo.keysCreatedSince(trx, userId, new Date(now.getTime() - HOUR_MS));
    if (recent.length >= ROTATIONS_PER_HOUR) {
      const oldest = recent[0]!;
      throw authErrors.rotateLimited(Math.max(1, Math.ceil((oldest.getTime() + HOUR_MS - now.getTime()) / 1000)));
    }
    await repo.revokeUserKeys(trx, userId, 'rotated', now);
    const created = await insertKey(trx, userId, label, ip);
    await queueMail(trx, {
      to: user.email,
      userId,
      template: 'api-key-rotated',
      subject: 'A new personal API key was created',
      text:
        `A new personal API key was created for your account at ${now.toISOString()} from IP address ${ip}.\n` +
        `Your previous key stopped working at that moment.\n` +
        `If this was not you, change your password now: that also revokes the key.\n`,
    });
    return created;
  });
}
