/**
 * "Who is calling": one indexed query per request loads the credential (personal key or
 * session) together with its user, through a prepared statement (bench/: this runs on
 * every authenticated request; the SQL is in repo.ts). Nothing is cached: a revoked key,
 * a suspended account or an ended session stops working on the very next request, on
 * every API copy.
 */
import { clock } from '../clock.js';
import { config } from '../config.js';
import { sha256Hex } from '../crypto.js';
import type { UserRow } from '../users/repo.js';
import { looksLikePersonalKey } from './api-keys.js';
import * as repo from './repo.js';

/**
 * Use is recorded at most once a minute per key or session (no write on every request),
 * without waiting for the disk (bench/: an fsync per key per minute was the p99).
 */
export const TOUCH_INTERVAL_MS = 60_000;

/** Splits a joined row into the user (every users column) and the credential's columns. */
function userOf(row: object, prefix: string): UserRow {
  const user: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(row as Record<string, unknown>)) if (!name.startsWith(prefix)) user[name] = value;
  return user as unknown as UserRow;
}

export interface KeyPrincipal {
  user: UserRow;
  keyId: string;
}

/** A live personal key (rpk_ or legacy) and its user, or undefined. */
export async function loadKeyPrincipal(token: string): Promise<KeyPrincipal | undefined> {
  if (!looksLikePersonalKey(token)) return undefined;
  const row = await repo.keyWithUser(sha256Hex(token));
  if (!row) return undefined;
  const now = clock.now();
  if (!row.k_last_used_at || now.getTime() - row.k_last_used_at.getTime() >= TOUCH_INTERVAL_MS) {
    await repo.touchKey(row.k_id, now);
  }
  return { user: userOf(row, 'k_'), keyId: row.k_id };
}

export type SessionCheck =
  | { kind: 'ok'; user: UserRow; sessionId: string; csrfToken: string }
  | { kind: 'ended'; user: UserRow }
  | { kind: 'unknown' };

/**
 * A session token's state: ok, ended (signed out, revoked, past its lifetime or idle for
 * SESSION_IDLE_MINUTES), or unknown (no such token: a guess or garbage).
 */
export async function loadSessionPrincipal(token: string): Promise<SessionCheck> {
  const row = await repo.sessionWithUser(sha256Hex(token));
  if (!row) return { kind: 'unknown' };
  const user = userOf(row, 's_');
  const now = clock.now();
  const idleSince = now.getTime() - row.s_last_seen_at.getTime();
  if (row.s_revoked_at || row.s_expires_at <= now || idleSince >= config.sessionIdleMinutes * 60_000) {
    return { kind: 'ended', user };
  }
  if (idleSince >= TOUCH_INTERVAL_MS) await repo.touchSession(row.s_id, now);
  return { kind: 'ok', user, sessionId: row.s_id, csrfToken: row.s_csrf_token };
}
