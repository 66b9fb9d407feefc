/**
 * Who may do what in a workspace (enterprise spec section 5), in one place: the
 * workspace-key caller and the access decision. The HTTP side
 * (api/middleware/enterprise-auth.ts) finds the caller (sessions and personal keys through
 * the shared `auth()`, `rpe_` keys through `workspaceKeyCaller`) and calls `resolveAccess`
 * once per request with the route's rule; everything the spec says about credentials,
 * workspace selection, scopes and role ranks is decided here.
 *
 * Check order: the credential may use the route at all (KEY_NOT_ALLOWED), a read key may
 * not write (SCOPE_REQUIRED), the workspace header is well formed (INVALID_ACCOUNT) and
 * names a workspace of the caller (NO_WORKSPACE), the role is high enough (FORBIDDEN).
 */
import { clock } from '../clock.js';
import { sha256Hex } from '../crypto.js';
import { isUuid } from '../ids.js';
import { assertCanAct } from '../auth/account-state.js';
import { TOUCH_INTERVAL_MS } from '../auth/principal.js';
import { WORKSPACE_KEY_PREFIX } from '../auth/api-keys.js';
import { enterpriseErrors } from './errors.js';
import { keyWithCreator, touchKey, type KeyWithCreator } from './keys-repo.js';
import type { Db, ReadAhead } from '../db.js';
import { activeMembership, actorNow, actorNowReadAhead, type MemberRow, type WorkspaceRow } from './repo.js';
import { rankOf, type Role } from './states.js';

export type Credential = 'session' | 'personal_key' | 'workspace_key';

/** What a route needs, as the spec's route tables say it. */
export interface RouteRule {
  /** Lowest role, or 'signed_in' for routes that need no workspace (/me, /register, invite accept). */
  role: Role | 'signed_in';
  /** API keys of either kind answer 403 KEY_NOT_ALLOWED (default false). */
  dashboardOnly?: boolean;
}

/** A signed-in person, on routes that need no workspace (register, /me, invite accept). */
export interface SignedIn {
  userId: string;
  userName: string;
}

/** The caller acting in the selected workspace, with the role they act with there. */
export interface WorkspaceActor extends SignedIn {
  workspaceId: string;
  memberId: string;
  role: Role;
  /** Set when the caller is a workspace key (its creator is `memberId`): money moves re-check it (`actorUnderLock`). */
  keyId?: string;
}

/** The person behind an actor, as events record them. */
export const byOf = (who: SignedIn): { id: string; name: string } => ({ id: who.userId, name: who.userName });

/** A workspace key's caller: the key and its creator (whose membership gives its role). */
export type WorkspaceKeyPrincipal = KeyWithCreator;

export interface Caller extends SignedIn {
  credential: Credential;
  /** Set for workspace keys. */
  key?: WorkspaceKeyPrincipal;
}

/** The decision for one request. */
export interface Access extends SignedIn {
  credential: Credential;
  workspace: WorkspaceRow | null;
  member: MemberRow | null;
  /** The role the caller acts with in this workspace (a read key: viewer). */
  role: Role | null;
  workspaceKeyId?: string;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

// ---- Workspace keys (section 5 rule 3) -------------------------------------------------------

export function isWorkspaceKey(token: string): boolean {
  return token.startsWith(WORKSPACE_KEY_PREFIX);
}

/**
 * A live workspace key with its creator, in one query. Undefined when the key is unknown
 * or revoked, or when its creator is no longer an active member (the key is inactive:
 * 401 INVALID_TOKEN). Use is recorded at most once a minute.
 */
export async function loadWorkspaceKey(token: string): Promise<WorkspaceKeyPrincipal | undefined> {
  if (!isWorkspaceKey(token)) return undefined;
  const key = await keyWithCreator(sha256Hex(token));
  if (!key || key.member.status !== 'active') return undefined;
  const now = clock.now();
  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() >= TOUCH_INTERVAL_MS) await touchKey(key.keyId, now);
  return key;
}

/**
 * The caller behind a workspace key, or undefined when the key is not live (the HTTP side
 * counts the failed credential and answers 401 INVALID_TOKEN). The creator's account must
 * be able to act: the consumer check (403 SUSPENDED / ACCOUNT_INACTIVE), worded for a key.
 */
export async function workspaceKeyCaller(token: string): Promise<Caller | undefined> {
  const key = await loadWorkspaceKey(token);
  if (!key) return undefined;
  assertCanAct(key.user, { suspended: enterpriseErrors.keyOwnerSuspended, inactive: enterpriseErrors.keyOwnerInactive });
  return { credential: 'workspace_key', userId: key.user.id, userName: key.user.full_name, key };
}

// ---- The decision ------------------------------------------------------------------------

/** The role a workspace key acts with: read keys are viewers, read+write keys act as their creator. */
export function keyRole(scopes: string[], creatorRole: Role): Role {
  return scopes.includes('write') ? creatorRole : 'viewer';
}

/** Refusals that depend only on the credential and the method (before any workspace lookup). */
export function checkCredential(rule: RouteRule, credential: Credential, method: string, scopes: string[] | null): void {
  if (credential !== 'session' && rule.dashboardOnly === true) throw enterpriseErrors.keyNotAllowed();
  if (credential === 'workspace_key' && WRITE_METHODS.has(method) && !(scopes ?? []).includes('write')) {
    throw enterpriseErrors.scopeRequired();
  }
}

export function checkRole(role: Role, needed: Role): void {
  if (rankOf(role) < rankOf(needed)) throw enterpriseErrors.roleTooLow(needed);
}

/** 400 INVALID_ACCOUNT for a malformed X-Enterprise-Account; undefined when absent. */
export function parseAccountHeader(value: string): string | undefined {
  if (value === '') return undefined;
  if (!isUuid(value)) throw enterpriseErrors.invalidAccount();
  return value.toLowerCase();
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
    if (wanted !== undefined && wanted !== caller.key.workspaceId) throw enterpriseErrors.noWorkspace();
    const role = keyRole(caller.key.scopes, caller.key.member.role);
    if (rule.role !== 'signed_in') checkRole(role, rule.role);
    return { ...base, workspace: caller.key.workspace, member: caller.key.member, role, workspaceKeyId: caller.key.keyId };
  }
  if (rule.role === 'signed_in' && wanted === undefined) return { ...base, workspace: null, member: null, role: null };
  const found = await activeMembership(caller.userId, wanted);
  if (!found) throw enterpriseErrors.noWorkspace();
  if (rule.role !== 'signed_in') checkRole(found.member.role, rule.role);
  return { ...base, workspace: found.workspace, member: found.member, role: found.member.role };
}

/** The caller acting in the selected workspace (routes whose rule names a role). */
export function actorIn(access: Access): WorkspaceActor {
  if (!access.workspace || !access.member || !access.role) throw enterpriseErrors.noWorkspace();
  const actor: WorkspaceActor = { workspaceId: access.workspace.id, memberId: access.member.id, userId: access.userId, userName: access.userName, role: access.role };
  if (access.workspaceKeyId !== undefined) actor.keyId = access.workspaceKeyId;
  return actor;
}

// ---- Authority when the money moves (issue 42 point 5) ------------------------------------------

/**
 * The access decision again, inside the caller's transaction and after it took the
 * workspace row's lock (`lockWorkspace`): the acting member's role and status, the
 * account's status and, for a workspace key, that the key is unrevoked and its creator
 * still an active member. Member writes (role change, removal, key revocation) take that
 * lock first too (members.ts, keys.ts), so one of them either committed before this read
 * (it is seen: the request is refused) or waits until this transaction ends (the request
 * acted on rights that were still true). Answers the codes the auth layer would give now:
 * 401 INVALID_TOKEN (key revoked, or its creator removed or suspended), 403 SUSPENDED /
 * ACCOUNT_INACTIVE (the account), 403 NO_WORKSPACE (member removed or suspended), 403
 * FORBIDDEN (role now below `needed`). One read (`actorNow`), sent ahead with a keyed
 * release's first statement (`actorUnderLockReadAhead`). Decide, release and payout
 * instruction writes call it (decision 0019, "Issue 42: authority when money moves").
 */
export async function actorUnderLock(trx: Db, actor: WorkspaceActor, needed: Role): Promise<WorkspaceActor> {
  const now = await actorNow(trx, actor.workspaceId, actor.memberId, actor.keyId ?? null);
  let role: Role;
  if (actor.keyId !== undefined) {
    if (!now || now.status !== 'active' || now.key_scopes === null) throw enterpriseErrors.invalidKey();
    assertCanAct({ status: now.user_status }, { suspended: enterpriseErrors.keyOwnerSuspended, inactive: enterpriseErrors.keyOwnerInactive });
    role = keyRole(now.key_scopes, now.role);
  } else {
    if (now) assertCanAct({ status: now.user_status });
    if (!now || now.status !== 'active') throw enterpriseErrors.noWorkspace();
    role = now.role;
  }
  checkRole(role, needed);
  return { ...actor, role };
}

/** `actorUnderLock`'s read, ahead of time: send it after the workspace row's lock (a keyed release's read-aheads). */
export function actorUnderLockReadAhead(actor: WorkspaceActor): ReadAhead {
  return actorNowReadAhead(actor.workspaceId, actor.memberId, actor.keyId ?? null);
}

