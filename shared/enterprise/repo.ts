/**
 * SQL of workspaces and their members (with the KYB draft a registration opens and the
 * operator settings they read). Callers pass the connection or transaction; the
 * per-request membership lookup is a prepared statement on the pool (it runs on every
 * enterprise request, before any transaction).
 */
import { db, prepared, readAheadOf, takeReadAhead, type Db, type ReadAhead } from '../db.js';
import type { Allocation } from '../deals/fees.js';
import type { KybApplicationRow } from '../kyb/repo.js';
import type { UserStatus } from '../users/repo.js';
import type { EntityType, KybStatus, MemberStatus, MemberTransition, Role } from './states.js';

export interface WorkspaceRow {
  id: string;
  display_name: string;
  legal_name: string;
  country_code: string;
  entity_type: EntityType;
  kyb_status: KybStatus;
  risk_tier: string;
  is_sandbox: boolean;
  four_eyes_threshold: string | number;
  dispute_sla_hours: number;
  watchlist: string[];
  account_manager_name: string | null;
  account_manager_email: string | null;
  created_by: string;
  last_event_seq: string | number;
  /** Deals (enterprise spec 2 "Fee terms"): operator pricing (NULL: the platform's) and the default split. */
  fee_rate_bp: number | null;
  fee_min: string | number | null;
  fee_tiers: { min_volume: number; rate_bp: number }[];
  fee_pricing_set_by: string | null;
  fee_default_allocation: Allocation;
  fee_default_buyer_percent: number;
  last_deal_number: number;
  created_at: Date;
  updated_at: Date;
}

export interface MemberRow {
  id: string;
  workspace_id: string;
  user_id: string;
  role: Role;
  status: MemberStatus;
  invited_by: string | null;
  notify_email: boolean;
  notify_approvals: boolean;
  notify_money: boolean;
  notify_reminders: boolean;
  joined_at: Date | null;
  removed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The KYB application row (shared/kyb owns the table; registration opens version 1 here). */
export type { KybApplicationRow };

/** A member with the user fields the member list shows. */
export interface MemberWithUser extends MemberRow {
  email: string;
  full_name: string;
}

/** An active membership with its workspace's name (GET /me). */
export type MembershipWithName = MemberRow & { display_name: string };
export type InviteWithNames = MemberRow & { display_name: string; invited_by_name: string | null };

// ---- Rows read back through to_jsonb (one query joins several tables) ----------------------

/** A row read back through to_jsonb: dates arrive as strings. */
export type Jsonified<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

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

export const reviveMember = (row: Jsonified<MemberRow>): MemberRow => revive<MemberRow>(row, MEMBER_DATES);
export const reviveWorkspace = (row: Jsonified<WorkspaceRow>): WorkspaceRow => revive<WorkspaceRow>(row, WORKSPACE_DATES);

// ---- Workspaces ---------------------------------------------------------------------------

export async function workspaceById(trx: Db, id: string): Promise<WorkspaceRow | undefined> {
  return (await trx('workspaces').where({ id }).first()) as WorkspaceRow | undefined;
}

/** Locks the workspace row: member, key and settings writes of one workspace run one at a time. */
export async function lockWorkspace(trx: Db, id: string): Promise<WorkspaceRow | undefined> {
  // A keyed deal write sent this lock with its key's statement (lockedWorkspaceReadAhead): taken once.
  const ahead = takeReadAhead<WorkspaceRow>(trx, `workspace-locked:${id}`);
  if (ahead) return ahead[0];
  return (await trx('workspaces').where({ id }).forUpdate().first()) as WorkspaceRow | undefined;
}

/** `lockWorkspace(trx, id)` ahead of time (shared/deals/lock.ts `lockDealReadAhead`). */
export function lockedWorkspaceReadAhead(id: string): ReadAhead {
  return { key: `workspace-locked:${id}`, sql: 'SELECT * FROM workspaces WHERE id = $1 LIMIT 1 FOR UPDATE', bindings: [id] };
}

export async function updateWorkspace(trx: Db, id: string, patch: Record<string, unknown>): Promise<void> {
  await trx('workspaces').where({ id }).update(patch);
}

/** An operator setting's JSON value (undefined when unset). */
export async function setting(trx: Db, key: string): Promise<unknown> {
  const row = (await trx('settings').select('value').where({ key }).first()) as { value: unknown } | undefined;
  return row?.value;
}

/**
 * The per-user registration lock (transaction-level advisory lock): false when another
 * registration of the same user holds it.
 */
export async function tryRegistrationLock(trx: Db, userId: string): Promise<boolean> {
  const lock = await trx.raw<{ rows: { locked: boolean }[] }>('SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0)) AS locked', [
    `enterprise-register:${userId}`,
  ]);
  return lock.rows[0]?.locked === true;
}

export interface NewWorkspace {
  display_name: string;
  legal_name: string;
  country_code: string;
  entity_type: EntityType;
  created_by: string;
}

/** A sandbox workspace (kyb not_started). */
export async function insertWorkspace(trx: Db, input: NewWorkspace, now: Date): Promise<WorkspaceRow> {
  const [row] = (await trx('workspaces')
    .insert({ ...input, kyb_status: 'not_started', is_sandbox: true, created_at: now, updated_at: now })
    .returning('*')) as WorkspaceRow[];
  return row!;
}

/** The draft KYB application (version 1) a registration opens. */
export async function insertKybDraft(
  trx: Db,
  workspaceId: string,
  input: { entity_type: EntityType; legal_name: string; country_code: string; nib: string },
  now: Date,
): Promise<KybApplicationRow> {
  const [row] = (await trx('kyb_applications')
    .insert({ workspace_id: workspaceId, version: 1, status: 'draft', ...input, created_at: now, updated_at: now })
    .returning('*')) as KybApplicationRow[];
  return row!;
}

// ---- Members ------------------------------------------------------------------------------

export async function insertMember(
  trx: Db,
  input: { workspace_id: string; user_id: string; role: Role; status: MemberStatus; invited_by?: string; joined_at?: Date },
  now: Date,
): Promise<MemberRow> {
  const [row] = (await trx('workspace_members')
    .insert({ ...input, created_at: now, updated_at: now })
    .returning('*')) as MemberRow[];
  return row!;
}

/** A member by id, whatever the workspace (the acting member's re-read under the lock). */
export async function memberRow(trx: Db, id: string): Promise<MemberRow | undefined> {
  return (await trx('workspace_members').where({ id }).first()) as MemberRow | undefined;
}

/** A member of the workspace that is not removed. */
export async function memberById(trx: Db, workspaceId: string, id: string): Promise<MemberRow | undefined> {
  return (await trx('workspace_members').where({ workspace_id: workspaceId, id }).whereNot({ status: 'removed' }).first()) as
    | MemberRow
    | undefined;
}

/** The caller's own pending invite, unless it was made before `since` (expired). */
export async function pendingInvite(trx: Db, id: string, userId: string, since: Date): Promise<MemberRow | undefined> {
  return (await trx('workspace_members').where({ id, user_id: userId, status: 'invited' }).where('created_at', '>', since).first()) as
    | MemberRow
    | undefined;
}

/** The pending invites a user issued in a workspace (to withdraw those their new role no longer grants). */
export async function invitesIssuedBy(trx: Db, workspaceId: string, userId: string): Promise<MemberRow[]> {
  return (await trx('workspace_members').where({ workspace_id: workspaceId, invited_by: userId, status: 'invited' })) as MemberRow[];
}

export async function liveMembership(trx: Db, workspaceId: string, userId: string): Promise<MemberRow | undefined> {
  return (await trx('workspace_members')
    .where({ workspace_id: workspaceId, user_id: userId })
    .whereNot({ status: 'removed' })
    .first()) as MemberRow | undefined;
}

/** The compare-and-set of a member status move: undefined when the member is no longer in a `from` status. */
export async function moveMember(trx: Db, id: string, move: MemberTransition, changes: Partial<MemberRow>): Promise<MemberRow | undefined> {
  const [row] = (await trx('workspace_members')
    .where({ id })
    .whereIn('status', move.from)
    .update({ ...changes, status: move.to })
    .returning('*')) as MemberRow[];
  return row;
}

export async function updateMember(trx: Db, id: string, patch: Partial<MemberRow>): Promise<void> {
  await trx('workspace_members').where({ id }).update(patch);
}

/** Changes an active member's own row (preferences); undefined when they are no longer active. */
export async function updateActiveMember(trx: Db, id: string, patch: Partial<MemberRow>): Promise<MemberRow | undefined> {
  const [row] = (await trx('workspace_members').where({ id, status: 'active' }).update(patch).returning('*')) as MemberRow[];
  return row;
}

/** Workspaces where the user is an active member, first joined first. */
export async function activeMemberships(trx: Db, userId: string): Promise<MembershipWithName[]> {
  return trx('workspace_members as m')
    .join('workspaces as w', 'w.id', 'm.workspace_id')
    .where({ 'm.user_id': userId, 'm.status': 'active' })
    .orderBy([{ column: 'm.joined_at', order: 'asc' }, { column: 'm.id', order: 'asc' }])
    .select<MembershipWithName[]>('m.*', 'w.display_name');
}

export async function pendingInvites(trx: Db, userId: string, since: Date): Promise<InviteWithNames[]> {
  return trx('workspace_members as m')
    .join('workspaces as w', 'w.id', 'm.workspace_id')
    .leftJoin('users as u', 'u.id', 'm.invited_by')
    .where({ 'm.user_id': userId, 'm.status': 'invited' })
    .where('m.created_at', '>', since)
    .orderBy('m.created_at', 'asc')
    .select<InviteWithNames[]>('m.*', 'w.display_name', 'u.full_name as invited_by_name');
}

export async function countOwnedWorkspaces(trx: Db, userId: string): Promise<number> {
  const row = (await trx('workspace_members')
    .where({ user_id: userId, role: 'owner' })
    .whereIn('status', ['active', 'suspended'])
    .count<{ count: string }[]>('* as count'))[0];
  return Number(row?.count ?? 0);
}

export async function countActiveOwners(trx: Db, workspaceId: string): Promise<number> {
  const row = (await trx('workspace_members')
    .where({ workspace_id: workspaceId, role: 'owner', status: 'active' })
    .count<{ count: string }[]>('* as count'))[0];
  return Number(row?.count ?? 0);
}

export async function listMembers(
  trx: Db,
  workspaceId: string,
  page: number,
  limit: number,
): Promise<{ rows: MemberWithUser[]; total: number }> {
  const base = trx('workspace_members as m').where('m.workspace_id', workspaceId).whereNot('m.status', 'removed');
  const [countRow] = await base.clone().count<{ count: string }[]>('* as count');
  const rows = await base
    .clone()
    .join('users as u', 'u.id', 'm.user_id')
    .orderByRaw(`CASE WHEN m.role = 'owner' THEN 0 ELSE 1 END, m.created_at ASC, m.id ASC`)
    .limit(limit)
    .offset((page - 1) * limit)
    .select<MemberWithUser[]>('m.*', 'u.email', 'u.full_name');
  return { rows, total: Number(countRow?.count ?? 0) };
}

export async function memberWithUser(trx: Db, memberId: string): Promise<MemberWithUser> {
  return trx('workspace_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.id', memberId)
    .first<MemberWithUser>('m.*', 'u.email', 'u.full_name');
}

// ---- The membership of a request (access.ts) ------------------------------------------------

const MEMBERSHIP_SQL = `
  SELECT to_jsonb(m) AS member, to_jsonb(w) AS workspace
    FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
   WHERE m.user_id = $1 AND m.status = 'active' AND ($2::uuid IS NULL OR m.workspace_id = $2::uuid)
   ORDER BY m.joined_at ASC, m.id ASC
   LIMIT 1`;

/**
 * The user's active membership: in the workspace named, or with none named the first
 * workspace joined. One query. Undefined when there is none.
 */
export async function activeMembership(
  userId: string,
  workspaceId: string | undefined,
): Promise<{ member: MemberRow; workspace: WorkspaceRow } | undefined> {
  const [row] = await prepared<{ member: Jsonified<MemberRow>; workspace: Jsonified<WorkspaceRow> }>('enterprise_membership', MEMBERSHIP_SQL, [
    userId,
    workspaceId ?? null,
  ]);
  if (!row) return undefined;
  return { member: reviveMember(row.member), workspace: reviveWorkspace(row.workspace) };
}

// ---- The acting member again, under the workspace lock (access.ts `actorUnderLock`) ------------

/** The acting member as it stands now: role, status, its account's status and, for a workspace key, the key's scopes (null when revoked or not this member's). */
export interface ActorNow {
  role: Role;
  status: MemberStatus;
  user_status: UserStatus;
  key_scopes: string[] | null;
}

const actorNowKey = (workspaceId: string, memberId: string, keyId: string | null) => `actor-now:${workspaceId}:${memberId}:${keyId ?? '-'}`;

/** One query on primary keys: the member of this workspace, its user and (with `keyId`) the unrevoked key it created. */
function actorNowQuery(trx: Db, workspaceId: string, memberId: string, keyId: string | null) {
  const q = trx('workspace_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where({ 'm.id': memberId, 'm.workspace_id': workspaceId })
    .first('m.role', 'm.status', 'u.status as user_status');
  if (keyId === null) return q.select(trx.raw('NULL::text[] AS key_scopes'));
  return q
    .leftJoin('workspace_api_keys as k', (j) => {
      j.on('k.created_by_member', '=', 'm.id').andOnVal('k.id', '=', keyId).andOnNull('k.revoked_at');
    })
    .select('k.scopes as key_scopes');
}

/**
 * The acting member read again (run it after `lockWorkspace`, in a statement of its own: a
 * statement's snapshot is taken when it starts, so a read in the locking statement would not
 * see a member write that committed while the lock was awaited). Undefined when the member
 * is not of this workspace.
 */
export async function actorNow(trx: Db, workspaceId: string, memberId: string, keyId: string | null): Promise<ActorNow | undefined> {
  const ahead = takeReadAhead<ActorNow>(trx, actorNowKey(workspaceId, memberId, keyId));
  if (ahead) return ahead[0];
  return (await actorNowQuery(trx, workspaceId, memberId, keyId)) as ActorNow | undefined;
}

/** `actorNow` ahead of time: a keyed request sends it after `lockedWorkspaceReadAhead` (its own statement, so its own snapshot). */
export function actorNowReadAhead(workspaceId: string, memberId: string, keyId: string | null): ReadAhead {
  return readAheadOf(actorNowKey(workspaceId, memberId, keyId), actorNowQuery(db, workspaceId, memberId, keyId));
}
