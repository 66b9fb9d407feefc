/** The answers of the auth routes (consumer spec 4.1). */
import { serializeUser, type UserView } from '../users/serialize.js';
import type { UserRow } from '../users/repo.js';
import type { ApiKeyRow } from './repo.js';
import type { SignInResult } from './signin.js';

/** A finished sign-in (`{ user, csrf_token }`) or the second step it still needs. */
export function serializeSignIn(result: SignInResult): { requires_2fa: true; method: 'email'; ticket: string } | SessionView {
  if (result.kind === 'two_factor') return { requires_2fa: true, method: 'email', ticket: result.ticket };
  return serializeSession(result.user, result.session.csrfToken);
}

export interface SessionView {
  user: UserView | null;
  csrf_token: string | null;
}

/** The signed-in user and the session's CSRF token (null with an API key, or both null when anonymous). */
export function serializeSession(user: UserRow | null, csrfToken: string | null): SessionView {
  return { user: user ? serializeUser(user) : null, csrf_token: csrfToken };
}

/** GET /me/api-key: the live key's masked preview, or nulls when there is none. */
export function serializeApiKey(key: ApiKeyRow | undefined) {
  return {
    api_key: key?.preview ?? null,
    label: key?.label ?? null,
    created_at: key?.created_at.toISOString() ?? null,
    last_used_at: key?.last_used_at?.toISOString() ?? null,
  };
}

/** POST /me/api-key/rotate: the new key in full, this once. */
export function serializeNewKey(created: { row: ApiKeyRow; plaintext: string }) {
  return { api_key: created.plaintext, label: created.row.label, created_at: created.row.created_at.toISOString() };
}
