/**
 * All SQL of accounts and access: e-mailed codes (`auth_codes`), sessions, personal API
 * keys, password reset links, and the per-request principal look-ups. Secrets arrive
 * here already hashed; nothing in this file makes or checks one.
 */
import { bookkeepingWrite, prepared, type Db } from '../db.js';
import type { UserRow } from '../users/repo.js';

// ---- E-mailed codes ----------------------------------------------------------------------

export type CodePurpose = 'verify_email' | 'login';

export interface CodeRow {
  id: string;
  user_id: string;
  purpose: CodePurpose;
  code_hash: string;
  attempts: number;
  max_attempts: number;
  code_expires_at: Date;
  ticket_expires_at: Date | null;
  consumed_at: Date | null;
}

export interface NewCode {
  user_id: string;
  purpose: CodePurpose;
  code_hash: string;
  ticket_hash: string | null;
  max_attempts: number;
  created_at: Date;
  code_expires_at: Date;
  ticket_expires_at: Date | null;
}

/** Earlier unused codes of this purpose stop working. */
export async function retireCodes(trx: Db, userId: string, purpose: CodePurpose, now: Date): Promise<void> {
  await trx('auth_codes').where({ user_id: userId, purpose }).whereNull('consumed_at').update({ consumed_at: now });
}

export async function insertCode(trx: Db, row: NewCode): Promise<string> {
  const [created] = (await trx('auth_codes').insert(row).returning<{ id: string }[]>('id'));
  return created!.id;
}

export async function findLoginCodeByTicket(trx: Db, ticketHash: string): Promise<CodeRow | undefined> {
  return (await trx('auth_codes').where({ ticket_hash: ticketHash, purpose: 'login' }).first()) as CodeRow | undefined;
}

/** The newest unused code of a user for a purpose. */
export async function findLiveCode(trx: Db, userId: string, purpose: CodePurpose): Promise<CodeRow | undefined> {
  return (await trx('auth_codes')
    .where({ user_id: userId, purpose })
    .whereNull('consumed_at')
    .orderBy('created_at', 'desc')
    .first()) as CodeRow | undefined;
}

/**
 * Spends one attempt atomically (`attempts = attempts + 1 WHERE attempts < max_attempts`);
 * undefined when none is left or the code was used or replaced.
 */
export async function spendAttempt(trx: Db, id: string): Promise<{ attempts: number; max_attempts: number } | undefined> {
  const [spent] = (await trx('auth_codes')
    .where({ id })
    .whereNull('consumed_at')
    .whereRaw('attempts < max_attempts')
    .increment('attempts', 1)
    .returning<{ attempts: number; max_attempts: number }[]>(['attempts', 'max_attempts']));
  return spent;
}

/** True while the code is unused (it may still be out of attempts). */
export async function codeUnused(trx: Db, id: string): Promise<boolean> {
  const current = await trx<{ id: string; consumed_at: Date | null }>('auth_codes').where({ id }).first('consumed_at');
  return current !== undefined && current.consumed_at === null;
}

/** Compare-and-set: unconsumed, within its attempts and not expired. True when this call consumed it. */
export async function consumeCode(trx: Db, id: string, now: Date): Promise<boolean> {
  const consumed = await trx('auth_codes')
    .where({ id })
    .whereNull('consumed_at')
    .whereRaw('attempts <= max_attempts')
    .where('code_expires_at', '>', now)
    .update({ consumed_at: now });
  return consumed === 1;
}

// ---- Sessions ------------------------------------------------------------------------------

export interface SessionRow {
  id: string;
  user_id: string;
  token_hash: string;
  csrf_token: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

export interface NewSessionRow {
  user_id: string;
  token_hash: string;
  csrf_token: string;
  ip: string;
  user_agent: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

export async function insertSession(trx: Db, row: NewSessionRow): Promise<string> {
  const [created] = (await trx('sessions').insert(row).returning<{ id: string }[]>('id'));
  return created!.id;
}

export async function revokeSession(trx: Db, sessionId: string, now: Date): Promise<void> {
  await trx('sessions').where({ id: sessionId }).whereNull('revoked_at').update({ revoked_at: now });
}

/** Revokes every live session of a user except `keepSessionId`. */
export async function revokeUserSessions(trx: Db, userId: string, now: Date, keepSessionId?: string): Promise<number> {
  const q = trx('sessions').where({ user_id: userId }).whereNull('revoked_at');
  if (keepSessionId) void q.whereNot({ id: keepSessionId });
  return q.update({ revoked_at: now });
}

// ---- Personal API keys ---------------------------------------------------------------------

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

export interface NewApiKey {
  user_id: string;
  key_hash: string;
  preview: string;
  label: string | null;
  created_at: Date;
  created_ip: string;
}

export async function findLiveKeyOfUser(trx: Db, userId: string): Promise<ApiKeyRow | undefined> {
  return (await trx('api_keys').where({ user_id: userId }).whereNull('revoked_at').first()) as ApiKeyRow | undefined;
}

export async function revokeUserKeys(trx: Db, userId: string, reason: string, now: Date): Promise<number> {
  return trx('api_keys').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: now, revoked_reason: reason });
}

/** Creation times of the user's keys since `since`, oldest first (the rotation window). */
export async function keysCreatedSince(trx: Db, userId: string, since: Date): Promise<Date[]> {
  const rows = (await trx('api_keys')
    .where({ user_id: userId })
    .where('created_at', '>', since)
    .orderBy('created_at', 'asc')
    .select<{ created_at: Date }[]>('created_at'));
  return rows.map((r) => r.created_at);
}

export async function insertKey(trx: Db, row: NewApiKey): Promise<ApiKeyRow> {
  const [created] = (await trx('api_keys').insert(row).returning('*')) as ApiKeyRow[];
  return created!;
}

// ---- Password reset links ------------------------------------------------------------------

export interface NewReset {
  user_id: string | null;
  token_hash: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

/** Every live reset link of the user stops working (a newer link, a reset, a change). */
export async function voidResetLinks(trx: Db, userId: string, now: Date): Promise<void> {
  await trx('password_resets').where({ user_id: userId }).whereNull('used_at').update({ used_at: now });
}

export async function insertReset(trx: Db, row: NewReset): Promise<void> {
  await trx('password_resets').insert(row);
}

/** Compare-and-set: uses a live (unused, unexpired) link; the owner's id, or undefined. */
export async function useReset(trx: Db, tokenHash: string, now: Date): Promise<{ user_id: string } | undefined> {
  const [reset] = (await trx('password_resets')
    .where({ token_hash: tokenHash })
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ used_at: now })
    .returning<{ user_id: string }[]>('user_id'));
  return reset;
}

// ---- The principal of a request (one prepared statement each; bench/) ----------------------

type Prefixed<T, P extends string> = { [K in keyof T & string as `${P}${K}`]: T[K] };

export type KeyJoinRow = UserRow & Prefixed<{ id: string; last_used_at: Date | null }, 'k_'>;

export type SessionJoinRow = UserRow &
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

/** A live (unrevoked) key by its hash, joined with its user. */
export async function keyWithUser(keyHash: string): Promise<KeyJoinRow | undefined> {
  const [row] = await prepared<KeyJoinRow>('auth_key_principal', KEY_SQL, [keyHash]);
  return row;
}

/** A session by its token's hash (live or not), joined with its user. */
export async function sessionWithUser(tokenHash: string): Promise<SessionJoinRow | undefined> {
  const [row] = await prepared<SessionJoinRow>('auth_session_principal', SESSION_SQL, [tokenHash]);
  return row;
}

/** Records a key's use without waiting for the disk (bookkeeping; bench/: an fsync per key per minute was the p99). */
export async function touchKey(id: string, now: Date): Promise<void> {
  await bookkeepingWrite('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, now]);
}

export async function touchSession(id: string, now: Date): Promise<void> {
  await bookkeepingWrite('UPDATE sessions SET last_seen_at = $2 WHERE id = $1', [id, now]);
}
