/**
 * "Who is calling": one indexed query per request loads the credential (personal key or
 * session) together with its user, through a prepared statement (bench/: this runs on
 * every authenticated request). Nothing is cached: a revoked key, a suspended account or
 * an ended session stops working on the very next request, on every API copy.
 */
import { clock } from '../clock.js';
import { config } from '../config.js';
import { sha256Hex } from '../crypto.js';
import { bookkeepingWrite, prepared } from '../db.js';
import type { UserRow } from '../users/repo.js';
import { looksLikePersonalKey } from './api-keys.js';

/**
 * Use is recorded at most once a minute per key or session (no write on every request),
 * without waiting for the disk (bench/: an fsync per key per minute was the p99).
 */
export const TOUCH_INTERVAL_MS = 60_000;

type Prefixed<T, P extends string> = { [K in keyof T & string as `${P}${K}`]: T[K] };

type KeyJoinRow = UserRow & Prefixed<{ id: string; last_used_at: Date | null }, 'k_'>;

type SessionJoinRow = UserRow &
  Prefixed<{ id: string; csrf_token: string; expires_at: Date; revoked_at: Date | null; last_seen_at: Date }, 's_'>;

/**
 * The users columns, named (not `u.*`): a prepared statement's result shape is fixed, so a
 * migration adding a users column would otherwise make every cached statement fail with
 * "cached plan must not change result type" until its connection is recycled.
 */
const USER_COLUMNS = [
  'id', 'email', 'username', 'full_name', 'phone', 'password_hash', 'role', 'status', 'kyc_status',
  'email_verified_at', 'two_factor_method', 'dashboard_tour_completed_at', 'social_instagram',
  'social_shopee', 'social_tiktokshop', 'balance', 'created_at', 'updated_at',
] as const satisfies readonly (keyof UserRow)[];
// Compile-time check that every UserRow field is selected.
const everyColumn: Exclude<keyof UserRow, (typeof USER_COLUMNS)[number]> extends never ? true : never = true;
void everyColumn;
const U = USER_COLUMNS.map((c) => `u.${c}`).join(', ');

const KEY_SQL = `
  SELECT k.id AS k_id, k.last_used_at AS k_last_used_at, ${U}
    FROM api_keys k JOIN users u ON u.id = k.user_id
   WHERE k.key_hash = $1 AND k.revoked_at IS NULL`;

const SESSION_SQL = `
  SELECT s.id AS s_id, s.csrf_token AS s_csrf_token, s.expires_at AS s_expires_at,
         s.revoked_at AS s_revoked_at, s.last_seen_at AS s_last_seen_at, ${U}
    FROM sessions s JOIN users u ON u.id = s.user_id
   WHERE s.token_hash = $1`;

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
  const [row] = await prepared<KeyJoinRow>('auth_key_principal', KEY_SQL, [sha256Hex(token)]);
  if (!row) return undefined;
  const now = clock.now();
  if (!row.k_last_used_at || now.getTime() - row.k_last_used_at.getTime() >= TOUCH_INTERVAL_MS) {
    await bookkeepingWrite('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [row.k_id, now]);
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
  const [row] = await prepared<SessionJoinRow>('auth_session_principal', SESSION_SQL, [sha256Hex(token)]);
  if (!row) return { kind: 'unknown' };
  const user = userOf(row, 's_');
  const now = clock.now();
  const idleSince = now.getTime() - row.s_last_seen_at.getTime();
  if (row.s_revoked_at || row.s_expires_at <= now || idleSince >= config.sessionIdleMinutes * 60_000) {
    return { kind: 'ended', user };
  }
  if (idleSince >= TOUCH_INTERVAL_MS) {
    await bookkeepingWrite('UPDATE sessions SET last_seen_at = $2 WHERE id = $1', [row.s_id, now]);
  }
  return { kind: 'ok', user, sessionId: row.s_id, csrfToken: row.s_csrf_token };
}
