/**
 * Who may do what in a workspace (enterprise spec section 5), in one place. The HTTP
 * side (api/routes/enterprise.ts `access()`) calls `resolveAccess` once per request with
 * the route's rule; everything the spec says about credentials, workspace selection,
 * scopes and role ranks is decided here.
 *
 * Check order: the credential may use the route at all (KEY_NOT_ALLOWED), a read key may
 * not write (SCOPE_REQUIRED), the workspace header is well formed (INVALID_ACCOUNT) and
 * names a workspace of the caller (NO_WORKSPACE), the role is high enough (FORBIDDEN).
 */
import { clock } from '../clock.js';
import { sha256Hex } from '../crypto.js';
import { bookkeepingWrite, prepared } from '../db.js';
import { AppError } from '../errors.js';
import { isUuid } from '../ids.js';
import { TOUCH_INTERVAL_MS } from '../auth/principal.js';
import { WORKSPACE_KEY_PREFIX } from '../auth/api-keys.js';
import { rankOf, type MemberRow, type Role, type WorkspaceRow } from './repo.js';

export type Credential = 'session' | 'personal_key' | 'workspace_key';

/** What a route needs, as the spec's route tables say it. */
export interface RouteRule {
  /** Lowest role, or 'signed_in' for routes that need no workspace (/me, /register, invite accept). */
  role: Role | 'signed_in';
  /** API keys of either kind answer 403 KEY_NOT_ALLOWED. */
  dashboardOnly: boolean;
}

export interface WorkspaceKeyPrincipal {
  keyId: string;
  workspaceId: string;
  scopes: string[];
  /** The creator's membership: its role is the key's role (read+write keys). */
  member: MemberRow;
  workspace: WorkspaceRow;
  user: { id: string; email: string; full_name: string; status: string; role: 'user' | 'admin' };
}

export interface Access {
  credential: Credential;
  userId: string;
  userName: string;
  workspace: WorkspaceRow | null;
  member: MemberRow | null;
  /** The role the caller acts with in this workspace (a read key: viewer). */
  role: Role | null;
  workspaceKeyId?: string;
}

/** A row read back through to_jsonb (one query joins several tables): dates arrive as strings. */
type Jsonified<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

const MEMBER_DATES: (keyof MemberRow)[] = ['joined_at', 'removed_at', 'created_at', 'updated_at'];
const WORKSPACE_DATES: (keyof WorkspaceRow)[] = ['created_at', 'updated_at'];

function revive<T extends object>(row: Jsonified<T>, fields: (keyof T)[]): T {
  const out = { ...row } as Record<string, unknown>;
  for (const f of fields) {
    const v = out[f as string];
    if (typeof v === 'string') out[f as string] = new Date(v);
  }
  return out as T;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const KEY_SQL = `
  SELECT k.id AS key_id, k.workspace_id, k.scopes, k.last_used_at,
         to_jsonb(m) AS member, to_jsonb(w) AS workspace,
         u.id AS user_id, u.email, u.full_name, u.status AS user_status, u.role AS user_role
    FROM workspace_api_keys k
    JOIN workspace_members m ON m.id = k.created_by_member
    JOIN workspaces w ON w.id = k.workspace_id
    JOIN users u ON u.id = m.user_id
   WHERE k.key_hash = $1 AND k.revoked_at IS NULL`;

interface KeyJoinRow {
  key_id: string;
  workspace_id: string;
  scopes: string[];
  last_used_at: Date | null;
  member: Jsonified<MemberRow>;
  workspace: Jsonified<WorkspaceRow>;
  user_id: string;
  email: string;
  full_name: string;
  user_status: string;
  user_role: 'user' | 'admin';
}

export function isWorkspaceKey(token: string): boolean {
  return token.startsWith(WORKSPACE_KEY_PREFIX);
}

/**
 * A live workspace key with its creator, in one query. Undefined when the key is unknown
 * or revoked, or when its creator is no longer an active member (the key is inactive:
 * 401 INVALID_TOKEN, spec section 5 rule 3). Use is recorded at most once a minute.
 */
export async function loadWorkspaceKey(token: string): Promise<WorkspaceKeyPrincipal | undefined> {
  if (!isWorkspaceKey(token)) return undefined;
  const [row] = await prepared<KeyJoinRow>('enterprise_workspace_key', KEY_SQL, [sha256Hex(token)]);
  if (!row || row.member.status !== 'active') return undefined;
  const now = clock.now();
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= TOUCH_INTERVAL_MS) {
    await bookkeepingWrite('UPDATE workspace_api_keys SET last_used_at = $2 WHERE id = $1', [row.key_id, now]);
  }
  return {
    keyId: row.key_id,
    workspaceId: row.workspace_id,
    scopes: row.scopes,
    member: revive<MemberRow>(row.member, MEMBER_DATES),
    workspace: revive<WorkspaceRow>(row.workspace, WORKSPACE_DATES),
    user: { id: row.user_id, email: row.email, full_name: row.full_name, status: row.user_status, role: row.user_role },
  };
}

/** The role a workspace key acts with: read keys are viewers, read+write keys act as their creator. */
export function keyRole(scopes: string[], creatorRole: Role): Role {
  return scopes.includes('write') ? creatorRole : 'viewer';
}

/** Refusals that depend only on the credential and the method (before any workspace lookup). */
export function checkCredential(rule: RouteRule, credential: Credential, method: string, scopes: string[] | null): void {
  if (credential !== 'session' && rule.dashboardOnly) {
    throw AppError.legacy(403, 'KEY_NOT_ALLOWED', 'This route is for the dashboard only; API keys cannot use it');
  }
  if (credential === 'workspace_key' && WRITE_METHODS.has(method) && !(scopes ?? []).includes('write')) {
    throw AppError.legacy(403, 'SCOPE_REQUIRED', 'This key is read-only; use a key with the write scope');
  }
}

export function checkRole(role: Role, needed: Role): void {
  if (rankOf(role) < rankOf(needed)) {
    throw AppError.legacy(403, 'FORBIDDEN', `This needs the ${needed} role or higher in the workspace`);
  }
}

/** 400 INVALID_ACCOUNT for a malformed X-Enterprise-Account; undefined when absent. */
export function parseAccountHeader(value: string): string | undefined {
  if (value === '') return undefined;
  if (!isUuid(value)) throw AppError.legacy(400, 'INVALID_ACCOUNT', 'X-Enterprise-Account must be a workspace id');
  return value.toLowerCase();
}

const noWorkspace = () => AppError.legacy(403, 'NO_WORKSPACE', 'You are not an active member of this workspace');

const MEMBERSHIP_SQL = `
  SELECT to_jsonb(m) AS member, to_jsonb(w) AS workspace
    FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
   WHERE m.user_id = $1 AND m.status = 'active' AND ($2::uuid IS NULL OR m.workspace_id = $2::uuid)
   ORDER BY m.joined_at ASC, m.id ASC
   LIMIT 1`;


/**
 * The caller's active membership: in the workspace the header names, or without a
 * header the first workspace joined. One query. Undefined when there is none.
 */
export async function findMembership(
  userId: string,
  workspaceId: string | undefined,
): Promise<{ member: MemberRow; workspace: WorkspaceRow } | undefined> {
  const [row] = await prepared<{ member: Jsonified<MemberRow>; workspace: Jsonified<WorkspaceRow> }>('enterprise_membership', MEMBERSHIP_SQL, [
    userId,
    workspaceId ?? null,
  ]);
  if (!row) return undefined;
  return { member: revive<MemberRow>(row.member, MEMBER_DATES), workspace: revive<WorkspaceRow>(row.workspace, WORKSPACE_DATES) };
}

export interface Caller {
  credential: Credential;
  userId: string;
  userName: string;
  /** Set for workspace keys. */
  key?: WorkspaceKeyPrincipal;
}

/**
 * Decides the request: refuses it with the spec's code or returns the workspace, the
 * membership and the role the caller acts with. `signed_in` routes get the workspace
 * only when the header names one (they never need it).
 */
export async function resolveAccess(caller: Caller, rule: RouteRule, method: string, accountHeader: string): Promise<Access> {
  checkCredential(rule, caller.credential, method, caller.key?.scopes ?? null);
  const wanted = parseAccountHeader(accountHeader);
  const base = { credential: caller.credential, userId: caller.userId, userName: caller.userName };
  if (caller.key) {
    if (wanted !== undefined && wanted !== caller.key.workspaceId) throw noWorkspace();
    const role = keyRole(caller.key.scopes, caller.key.member.role);
    if (rule.role !== 'signed_in') checkRole(role, rule.role);
    return { ...base, workspace: caller.key.workspace, member: caller.key.member, role, workspaceKeyId: caller.key.keyId };
  }
  if (rule.role === 'signed_in') {
    if (wanted === undefined) return { ...base, workspace: null, member: null, role: null };
    const found = await findMembership(caller.userId, wanted);
    if (!found) throw noWorkspace();
    return { ...base, workspace: found.workspace, member: found.member, role: found.member.role };
  }
  const found = await findMembership(caller.userId, wanted);
  if (!found) throw noWorkspace();
  checkRole(found.member.role, rule.role);
  return { ...base, workspace: found.workspace, member: found.member, role: found.member.role };
}
