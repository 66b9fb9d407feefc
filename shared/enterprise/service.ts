/**
 * Enterprise workspaces (enterprise spec 4.1, decision D7): registration, the caller's
 * workspaces and invites, members and roles, preferences, settings, notifications and
 * counterparties. Every change appends its event in the same transaction (events.ts).
 * Member, key and settings writes lock the workspace row first, so rules that count
 * ("the last owner cannot leave", "10 keys") hold under concurrent requests.
 */
import { clock } from '../clock.js';
import { db, inTransaction, type Db } from '../db.js';
import { AppError, errors } from '../errors.js';
import { isUuid } from '../ids.js';
import * as users from '../users/repo.js';
import { appendEvent } from './events.js';
import { revokeKeysWhere } from './keys.js';
import * as repo from './repo.js';
import type { CounterpartyRow, EntityType, MemberRow, NotificationRow, Role, WorkspaceRow } from './repo.js';

/** The caller acting in a workspace (resolved by access.ts). */
export interface Actor {
  workspaceId: string;
  memberId: string;
  userId: string;
  userName: string;
  role: Role;
}

const MAX_OWNED_DEFAULT = 3;

/** Owned workspaces per account: the operator setting `enterprise_max_owned_workspaces` (default 3). */
export async function maxOwnedWorkspaces(trx: Db): Promise<number> {
  const row = (await trx('settings').select('value').where({ key: 'enterprise_max_owned_workspaces' }).first()) as
    | { value: unknown }
    | undefined;
  const v = row?.value;
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : MAX_OWNED_DEFAULT;
}

export interface RegisterInput {
  legal_name: string;
  display_name: string;
  entity_type: EntityType;
  nib: string;
  country_code: string;
}

/**
 * Opens a sandbox workspace (kyb not_started), the owner membership and a draft KYB
 * application (version 1, holding legal name, entity type and NIB) in one transaction.
 * A transaction-level advisory lock per user makes a second sign-up of the same user
 * that starts while this one runs answer 409 TRY_AGAIN (and keeps the owned-workspace
 * count exact).
 */
export async function register(user: { id: string; full_name: string }, input: RegisterInput) {
  return db.transaction(async (trx) => {
    const lock = await trx.raw<{ rows: { locked: boolean }[] }>('SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0)) AS locked', [
      `enterprise-register:${user.id}`,
    ]);
    if (!lock.rows[0]?.locked) throw AppError.legacy(409, 'TRY_AGAIN', 'Another workspace sign-up of yours is still running; try again in a moment');
    const max = await maxOwnedWorkspaces(trx);
    if ((await repo.countOwnedWorkspaces(trx, user.id)) >= max) {
      throw AppError.legacy(409, 'WORKSPACE_LIMIT', `One account may own at most ${max} workspaces`);
    }
    const now = clock.now();
    const [workspace] = (await trx('workspaces')
      .insert({
        display_name: input.display_name,
        legal_name: input.legal_name,
        country_code: input.country_code,
        entity_type: input.entity_type,
        kyb_status: 'not_started',
        is_sandbox: true,
        created_by: user.id,
        created_at: now,
        updated_at: now,
      })
      .returning('*')) as WorkspaceRow[];
    const [membership] = (await trx('workspace_members')
      .insert({ workspace_id: workspace!.id, user_id: user.id, role: 'owner', status: 'active', joined_at: now, created_at: now, updated_at: now })
      .returning('*')) as MemberRow[];
    const [application] = (await trx('kyb_applications')
      .insert({
        workspace_id: workspace!.id,
        version: 1,
        status: 'draft',
        entity_type: input.entity_type,
        legal_name: input.legal_name,
        country_code: input.country_code,
        nib: input.nib,
        created_at: now,
        updated_at: now,
      })
      .returning('*')) as repo.KybApplicationRow[];
    await appendEvent(trx, workspace!.id, {
      event: 'workspace.created',
      entityType: 'account',
      entityId: workspace!.id,
      actor: { id: user.id, name: user.full_name },
      summary: `Workspace ${input.display_name} opened in the sandbox`,
    });
    const fresh = (await repo.workspaceById(trx, workspace!.id))!;
    return { workspace: fresh, membership: membership!, application: application! };
  });
}

/** GET /me: the selected workspace (or null), every active membership and pending invites. */
export async function me(userId: string, selected: { workspace: WorkspaceRow; member: MemberRow } | null) {
  const memberships = await repo.activeMemberships(db, userId);
  let current = selected;
  if (!current && memberships[0]) {
    const first = memberships[0];
    current = { workspace: (await repo.workspaceById(db, first.workspace_id))!, member: first };
  }
  const invites = await repo.pendingInvites(db, userId);
  return { current, memberships, invites };
}

export async function acceptInvite(trx: Db | undefined, user: { id: string; full_name: string }, memberId: string) {
  const notFound = () => errors.notFound({ en: 'No pending invite for you with this id', id: 'Tidak ada undangan tertunda untuk Anda dengan id ini' });
  if (!isUuid(memberId)) throw notFound();
  return inTransaction(trx, async (t) => {
    const pending = (await t('workspace_members').where({ id: memberId, user_id: user.id, status: 'invited' }).first()) as MemberRow | undefined;
    if (!pending) throw notFound();
    await repo.lockWorkspace(t, pending.workspace_id);
    const now = clock.now();
    const [moved] = (await t('workspace_members')
      .where({ id: memberId, status: 'invited' })
      .update({ status: 'active', joined_at: now, updated_at: now })
      .returning('*')) as MemberRow[];
    if (!moved) throw notFound();
    await appendEvent(t, moved.workspace_id, {
      event: 'member.joined',
      entityType: 'member',
      entityId: moved.id,
      actor: { id: user.id, name: user.full_name },
      summary: `${user.full_name} joined as ${moved.role}`,
    });
    if (moved.invited_by) {
      await notify(t, moved.workspace_id, moved.invited_by, 'member.joined', 'Invite accepted', `${user.full_name} joined the workspace as ${moved.role}`);
    }
    return moved;
  });
}

export async function listMembers(workspaceId: string, page: number, limit: number) {
  return repo.listMembers(db, workspaceId, page, limit);
}

/** Only an owner grants, changes or removes the owner role (decision D7). */
function assertOwnerMoves(actor: Actor, roles: Role[]): void {
  if (roles.includes('owner') && actor.role !== 'owner') {
    throw AppError.legacy(403, 'FORBIDDEN', 'Only an owner can grant or remove the owner role');
  }
}

export async function inviteMember(trx: Db | undefined, caller: Actor, input: { email: string; role: Role }) {
  assertOwnerMoves(caller, [input.role]);
  return inTransaction(trx, async (t) => {
    const actor = await lockAsActor(t, caller, 'admin');
    assertOwnerMoves(actor, [input.role]);
    const invitee = await users.findByEmail(t, input.email);
    if (!invitee || invitee.status !== 'active') throw errors.notFound({ en: 'No active account uses this e-mail; ask them to sign up first', id: 'Tidak ada akun aktif dengan e-mail ini; minta mereka mendaftar dulu' });
    if (await repo.liveMembership(t, actor.workspaceId, invitee.id)) {
      throw AppError.legacy(409, 'INVALID_STATE', 'This person is already a member or has a pending invite');
    }
    const now = clock.now();
    const [member] = (await t('workspace_members')
      .insert({
        workspace_id: actor.workspaceId,
        user_id: invitee.id,
        role: input.role,
        status: 'invited',
        invited_by: actor.userId,
        created_at: now,
        updated_at: now,
      })
      .returning('*')) as MemberRow[];
    await appendEvent(t, actor.workspaceId, {
      event: 'member.invited',
      entityType: 'member',
      entityId: member!.id,
      actor: { id: actor.userId, name: actor.userName },
      summary: `${invitee.full_name} invited as ${input.role}`,
    });
    return repo.memberWithUser(t, member!.id);
  });
}

/**
 * Re-reads the acting member under the workspace lock: a request that passed the access
 * check just before its caller was removed or demoted must not act on the old rights.
 */
async function lockAsActor(t: Db, actor: Actor, needed: Role): Promise<Actor> {
  await repo.lockWorkspace(t, actor.workspaceId);
  const me = (await t('workspace_members').where({ id: actor.memberId }).first()) as MemberRow | undefined;
  if (!me || me.status !== 'active') throw AppError.legacy(403, 'NO_WORKSPACE', 'You are not an active member of this workspace');
  if (repo.rankOf(me.role) < repo.rankOf(needed)) throw AppError.legacy(403, 'FORBIDDEN', `This needs the ${needed} role or higher in the workspace`);
  return { ...actor, role: me.role };
}

function notMember() {
  return errors.notFound({ en: 'No member with this id in the workspace', id: 'Tidak ada anggota dengan id ini di workspace' });
}

async function lastOwnerGuard(t: Db, workspaceId: string, target: MemberRow): Promise<void> {
  if (target.role === 'owner' && target.status === 'active' && (await repo.countActiveOwners(t, workspaceId)) <= 1) {
    throw AppError.legacy(409, 'INVALID_STATE', 'The last owner cannot leave or step down; make someone else owner first');
  }
}

export async function changeRole(trx: Db | undefined, caller: Actor, memberId: string, role: Role) {
  if (!isUuid(memberId)) throw notMember();
  return inTransaction(trx, async (t) => {
    const actor = await lockAsActor(t, caller, 'admin');
    const target = await repo.memberById(t, actor.workspaceId, memberId);
    if (!target) throw notMember();
    assertOwnerMoves(actor, [target.role, role]);
    if (target.role === role) return repo.memberWithUser(t, target.id);
    if (target.role === 'owner') await lastOwnerGuard(t, actor.workspaceId, target);
    await t('workspace_members').where({ id: target.id }).update({ role, updated_at: clock.now() });
    await appendEvent(t, actor.workspaceId, {
      event: 'member.role_changed',
      entityType: 'member',
      entityId: target.id,
      actor: { id: actor.userId, name: actor.userName },
      summary: `Role changed from ${target.role} to ${role}`,
    });
    if (target.status === 'active') {
      await notify(t, actor.workspaceId, target.user_id, 'member.role_changed', 'Your role changed', `You are now ${role} (was ${target.role})`);
    }
    return repo.memberWithUser(t, target.id);
  });
}

/** Removes a member (or withdraws an invite); their workspace keys are revoked with them. */
export async function removeMember(trx: Db | undefined, caller: Actor, memberId: string) {
  if (!isUuid(memberId)) throw notMember();
  return inTransaction(trx, async (t) => {
    const actor = await lockAsActor(t, caller, 'admin');
    const target = await repo.memberById(t, actor.workspaceId, memberId);
    if (!target) throw notMember();
    assertOwnerMoves(actor, [target.role]);
    await lastOwnerGuard(t, actor.workspaceId, target);
    const now = clock.now();
    await t('workspace_members').where({ id: target.id }).update({ status: 'removed', removed_at: now, updated_at: now });
    const by = { id: actor.userId, name: actor.userName };
    await appendEvent(t, actor.workspaceId, {
      event: 'member.removed',
      entityType: 'member',
      entityId: target.id,
      actor: by,
      summary: target.user_id === actor.userId ? 'A member left the workspace' : 'A member was removed from the workspace',
    });
    await revokeKeysWhere(t, actor.workspaceId, { created_by_member: target.id }, by, 'its creator left the workspace');
    return { id: target.id, removed: true as const };
  });
}

export async function updatePreferences(trx: Db, actor: Actor, input: { email?: boolean; approvals?: boolean; money?: boolean; reminders?: boolean }) {
  const patch: Record<string, boolean | Date> = { updated_at: clock.now() };
  if (input.email !== undefined) patch.notify_email = input.email;
  if (input.approvals !== undefined) patch.notify_approvals = input.approvals;
  if (input.money !== undefined) patch.notify_money = input.money;
  if (input.reminders !== undefined) patch.notify_reminders = input.reminders;
  const [row] = (await trx('workspace_members').where({ id: actor.memberId, status: 'active' }).update(patch).returning('*')) as MemberRow[];
  if (!row) throw AppError.legacy(403, 'NO_WORKSPACE', 'You are not an active member of this workspace');
  return row;
}

export async function updateSettings(
  trx: Db | undefined,
  actor: Actor,
  input: { four_eyes_threshold?: number; dispute_sla_hours?: number; watchlist?: string[] },
) {
  return inTransaction(trx, async (t) => {
    await repo.lockWorkspace(t, actor.workspaceId);
    const patch: Record<string, unknown> = { updated_at: clock.now() };
    if (input.four_eyes_threshold !== undefined) patch.four_eyes_threshold = input.four_eyes_threshold;
    if (input.dispute_sla_hours !== undefined) patch.dispute_sla_hours = input.dispute_sla_hours;
    if (input.watchlist !== undefined) patch.watchlist = JSON.stringify(input.watchlist);
    await t('workspaces').where({ id: actor.workspaceId }).update(patch);
    await appendEvent(t, actor.workspaceId, {
      event: 'settings.updated',
      entityType: 'account',
      entityId: actor.workspaceId,
      actor: { id: actor.userId, name: actor.userName },
      summary: `Settings changed: ${Object.keys(input).sort().join(', ')}`,
    });
    return (await repo.workspaceById(t, actor.workspaceId))!;
  });
}

/** One in-app notification for a member of the workspace (written in the change's transaction). */
export async function notify(t: Db, workspaceId: string, userId: string, type: string, title: string, body: string): Promise<void> {
  await t('enterprise_notifications').insert({ workspace_id: workspaceId, user_id: userId, type, title, body, created_at: clock.now() });
}

export async function listNotifications(actor: Actor, page: number, limit: number) {
  const base = db('enterprise_notifications').where({ workspace_id: actor.workspaceId, user_id: actor.userId });
  const [countRow] = await base.clone().count<{ count: string }[]>('* as count');
  const [unreadRow] = await base.clone().where({ is_read: false }).count<{ count: string }[]>('* as count');
  const rows = (await base
    .clone()
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit)
    .offset((page - 1) * limit)) as NotificationRow[];
  return { rows, total: Number(countRow?.count ?? 0), unread: Number(unreadRow?.count ?? 0) };
}

export async function markNotificationsRead(trx: Db, actor: Actor, ids: string[] | undefined): Promise<number> {
  const q = trx('enterprise_notifications').where({ workspace_id: actor.workspaceId, user_id: actor.userId, is_read: false });
  if (ids) q.whereIn('id', ids);
  return q.update({ is_read: true, read_at: clock.now() });
}

export async function listCounterparties(workspaceId: string, page: number, limit: number) {
  const base = db('counterparties').where({ workspace_id: workspaceId });
  const [countRow] = await base.clone().count<{ count: string }[]>('* as count');
  const rows = (await base
    .clone()
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit)
    .offset((page - 1) * limit)) as CounterpartyRow[];
  return { rows, total: Number(countRow?.count ?? 0) };
}

export async function createCounterparty(
  trx: Db | undefined,
  actor: Actor,
  input: { name: string; country_code: string; relationship: 'seller' | 'buyer'; email?: string },
) {
  return inTransaction(trx, async (t) => {
    const now = clock.now();
    const [row] = (await t('counterparties')
      .insert({
        workspace_id: actor.workspaceId,
        name: input.name,
        country_code: input.country_code,
        relationship: input.relationship,
        email: input.email ?? null,
        kyb_status: 'not_started',
        created_by: actor.userId,
        created_at: now,
        updated_at: now,
      })
      .returning('*')) as CounterpartyRow[];
    await appendEvent(t, actor.workspaceId, {
      event: 'counterparty.created',
      entityType: 'counterparty',
      entityId: row!.id,
      actor: { id: actor.userId, name: actor.userName },
      summary: `Counterparty ${row!.name} added`,
    });
    return row!;
  });
}

export async function updateCounterparty(
  trx: Db | undefined,
  actor: Actor,
  id: string,
  input: { name?: string; country_code?: string; relationship?: 'seller' | 'buyer'; email?: string | null },
) {
  const notFound = () => errors.notFound({ en: 'No counterparty with this id in the workspace', id: 'Tidak ada pihak lawan dengan id ini di workspace' });
  if (!isUuid(id)) throw notFound();
  return inTransaction(trx, async (t) => {
    const [row] = (await t('counterparties')
      .where({ id, workspace_id: actor.workspaceId })
      .update({ ...input, updated_at: clock.now() })
      .returning('*')) as CounterpartyRow[];
    if (!row) throw notFound();
    await appendEvent(t, actor.workspaceId, {
      event: 'counterparty.updated',
      entityType: 'counterparty',
      entityId: row.id,
      actor: { id: actor.userId, name: actor.userName },
      summary: `Counterparty ${row.name} changed: ${Object.keys(input).sort().join(', ')}`,
    });
    return row;
  });
}
