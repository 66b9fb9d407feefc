/** Browser sessions: opaque random token in a cookie, SHA-256 in the database, CSRF token per session. */
import { clock } from '../clock.js';
import { config } from '../config.js';
import { randomToken, sha256Hex } from '../crypto.js';
import type { Db } from '../db.js';

export interface SessionRow {
  id: string;
  user_id: string;
  token_hash: string;
  csrf_token: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

export interface NewSession {
  id: string;
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

export async function createSession(trx: Db, userId: string, meta: { ip: string; userAgent: string }): Promise<NewSession> {
  const token = randomToken(32);
  const csrfToken = randomToken(24);
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + config.sessionTtlHours * 3600_000);
  const [row] = (await trx('sessions')
    .insert({
      user_id: userId,
      token_hash: sha256Hex(token),
      csrf_token: csrfToken,
      ip: meta.ip,
      user_agent: meta.userAgent.slice(0, 512),
      created_at: now,
      last_seen_at: now,
      expires_at: expiresAt,
    })
    .returning<{ id: string }[]>('id'));
  return { id: row!.id, token, csrfToken, expiresAt };
}

export async function revokeSession(trx: Db, sessionId: string): Promise<void> {
  await trx('sessions').where({ id: sessionId }).whereNull('revoked_at').update({ revoked_at: clock.now() });
}

/** Revokes every live session of a user except `keepSessionId`. */
export async function revokeUserSessions(trx: Db, userId: string, keepSessionId?: string): Promise<number> {
  const q = trx('sessions').where({ user_id: userId }).whereNull('revoked_at');
  if (keepSessionId) void q.whereNot({ id: keepSessionId });
  return q.update({ revoked_at: clock.now() });
}
