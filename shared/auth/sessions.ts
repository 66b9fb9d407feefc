/** Browser sessions: opaque random token in a cookie, SHA-256 in the database, CSRF token per session. */
import { clock } from '../clock.js';
import { config } from '../config.js';
import { randomToken, sha256Hex } from '../crypto.js';
import type { Db } from '../db.js';
import * as repo from './repo.js';

export type { SessionRow } from './repo.js';

/** Request facts a new session records (routes read them with `requestMeta`). */
export interface RequestMeta {
  ip: string;
  userAgent: string;
}

export interface NewSession {
  id: string;
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

export async function createSession(trx: Db, userId: string, meta: RequestMeta): Promise<NewSession> {
  const token = randomToken(32);
  const csrfToken = randomToken(24);
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + config.sessionTtlHours * 3600_000);
  const id = await repo.insertSession(trx, {
    user_id: userId,
    token_hash: sha256Hex(token),
    csrf_token: csrfToken,
    ip: meta.ip,
    user_agent: meta.userAgent.slice(0, 512),
    created_at: now,
    last_seen_at: now,
    expires_at: expiresAt,
  });
  return { id, token, csrfToken, expiresAt };
}

export async function revokeSession(trx: Db, sessionId: string): Promise<void> {
  await repo.revokeSession(trx, sessionId, clock.now());
}

/** Revokes every live session of a user except `keepSessionId`. */
export async function revokeUserSessions(trx: Db, userId: string, keepSessionId?: string): Promise<number> {
  return repo.revokeUserSessions(trx, userId, clock.now(), keepSessionId);
}
