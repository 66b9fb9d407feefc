/**
 * Personal API keys: `rpk_` + 32 random bytes (base64url). Only the SHA-256 hash and a
 * masked preview are stored; the plaintext is returned once. Legacy 43-character keys
 * without the prefix are looked up the same way and keep working until rotated.
 */
import { clock } from '../clock.js';
import { randomToken, sha256Hex } from '../crypto.js';
import type { Db } from '../db.js';

export const PERSONAL_KEY_PREFIX = 'rpk_';
export const WORKSPACE_KEY_PREFIX = 'rpe_';
export const LEGACY_KEY_PATTERN = /^[A-Za-z0-9_-]{43}$/;
export const ROTATIONS_PER_HOUR = 5;

export interface ApiKeyRow {
  id: string;
  user_id: string;
  key_hash: string;
  preview: string;
  label: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export function maskKey(key: string): string {
  const head = key.startsWith(PERSONAL_KEY_PREFIX) ? key.slice(0, PERSONAL_KEY_PREFIX.length + 4) : key.slice(0, 4);
  return `${head}…${key.slice(-4)}`;
}

export function looksLikePersonalKey(token: string): boolean {
  return token.startsWith(PERSONAL_KEY_PREFIX) || LEGACY_KEY_PATTERN.test(token);
}

export async function findLiveKeyOfUser(trx: Db, userId: string): Promise<ApiKeyRow | undefined> {
  return (await trx('api_keys').where({ user_id: userId }).whereNull('revoked_at').first()) as ApiKeyRow | undefined;
}

export async function revokeUserKeys(trx: Db, userId: string, reason: string): Promise<number> {
  return trx('api_keys').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: clock.now(), revoked_reason: reason });
}

/** Keys created by the user since `since` (the rotation window). */
export async function keysCreatedSince(trx: Db, userId: string, since: Date): Promise<Date[]> {
  const rows = (await trx('api_keys')
    .where({ user_id: userId })
    .where('created_at', '>', since)
    .orderBy('created_at', 'asc')
    .select<{ created_at: Date }[]>('created_at'));
  return rows.map((r) => r.created_at);
}

export async function insertKey(
  trx: Db,
  userId: string,
  label: string | null,
  ip: string,
): Promise<{ row: ApiKeyRow; plaintext: string }> {
  const plaintext = `${PERSONAL_KEY_PREFIX}${randomToken(32)}`;
  const [row] = (await trx('api_keys')
    .insert({
      user_id: userId,
      key_hash: sha256Hex(plaintext),
      preview: maskKey(plaintext),
      label,
      created_at: clock.now(),
      created_ip: ip,
    })
    .returning('*')) as ApiKeyRow[];
  return { row: row!, plaintext };
}
