/**
 * Members, invites and roles (enterprise spec 4.1, decision D7). Member writes lock the
 * workspace row first and re-read the acting member under it, so rules that count ("the
 * last owner cannot leave") hold under concurrent requests: two owners removing each
 * other at once leave one owner. Status moves are the compare-and-sets of states.ts.
 */
import { clock } from '../clock.js';
import { plainName } from '../mail/plain.js';
import { config } from '../config.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import * as users from '../users/repo.js';
import { byOf, type SignedIn, type WorkspaceActor } from './access.js';
import { enterpriseErrors } from './errors.js';
import { appendEvent } from './events.js';
import { revokeKeysWhere } from './keys.js';
import { mailUser, type MemberMail } from './mail.js';
import { notify } from './notifications.js';
import * as repo from './repo.js';
import type { MemberRow, MemberWithUser } from './repo.js';
import { canGrant, INVITE_TTL_MS, MEMBER_TRANSITIONS, rankOf, type MemberTransitionName, type Role } from './states.js';

export interface Preferences {
  email?: boolean;
  approvals?: boolean;
  money?: boolean;
  reminders?: boolean;
}

/** The compare-and-set of a member status move; undefined when another request moved the member first. */
async function transitionMember(t: Db, member: MemberRow, name: MemberTransitionName, changes: Partial<MemberRow>): Promise<MemberRow | undefined> {
  return repo.moveMember(t, member.id, MEMBER_TRANSITIONS[name], { ...changes, updated_at: changes.updated_at ?? clock.now() });
}

/**
 * Re-reads the acting member under the workspace lock: a request that passed the access
 * check just before its caller was removed or demoted must not act on the old rights.
 */
async function lockAsActor(t: Db, actor: WorkspaceActor, needed: Role): Promise<WorkspaceActor> {
  await repo.lockWorkspace(t, actor.workspaceId);
  const me = await repo.memberRow(t, actor.memberId);
  if (!me || me.status !== 'active') throw enterpriseErrors.noWorkspace();
  if (rankOf(me.role) < rankOf(needed)) throw enterpriseErrors.roleTooLow(needed);
  return { ...actor, role: me.role };
}

/** Only an owner grants, changes or removes the owner role (decision D7). */
function assertOwnerMoves(actor: WorkspaceActor, roles: Role[]): void {
  if (roles.includes('owner') && actor.role !== 'owner') throw enterpriseErrors.ownerMovesOwnerOnly();
}

async function lastOwnerGuard(t: Db, workspaceId: string, target: MemberRow): Promise<void> {
  if (target.role === 'owner' && target.status === 'active' && (await repo.countActiveOwners(t, workspaceId)) <= 1) {
    throw enterpriseErrors.lastOwner();
  }
}

/** The target member of an admin's write, under the lock: 404 NOT_FOUND unless it is in the workspace. */
async function targetOf(t: Db, actor: WorkspaceActor, memberId: string): Promise<MemberRow> {
  const target = await repo.memberById(t, actor.workspaceId, memberId);
  if (!target) throw enterpriseErrors.memberNotFound();
  return target;
}

/** Invites made at or before this instant have expired (INVITE_TTL_MS). */
export function inviteCutoff(): Date {
  return new Date(clock.now().getTime() - INVITE_TTL_MS);
}

/**
 * Withdraws the pending invites `inviterUserId` issued that `newRole` (undefined: no longer a
 * member) may not grant, in the caller's transaction (the removal or demotion): a departing
 * admin leaves no invite behind that would let a second account back in.
 */
async function withdrawInvitesOf(t: Db, actor: WorkspaceActor, inviterUserId: string, newRole: Role | undefined): Promise<void> {
  const now = clock.now();
  for (const invite of await repo.invitesIssuedBy(t, actor.workspaceId, inviterUserId)) {
    if (newRole && canGrant(newRole, invite.role)) continue;
    if (!(await transitionMember(t, invite, 'remove', { removed_at: now, updated_at: now }))) continue;
    await appendEvent(t, actor.workspaceId, {
      event: 'member.removed',
      entityType: 'member',
      entityId: invite.id,
      actor: byOf(actor),
      summary: 'An invite was withdrawn: its inviter no longer grants this role',
    });
  }
}

export async function listMembers(actor: WorkspaceActor, page: number, limit: number) {
  return repo.listMembers(db, actor.workspaceId, page, limit);
}

export async function acceptInvite(trx: Db | undefined, user: SignedIn, memberId: string): Promise<MemberRow> {
  if (!isUuid(memberId)) throw enterpriseErrors.inviteNotFound();
  return inTransaction(trx, async (t) => {
    const pending = await repo.pendingInvite(t, memberId, user.userId, inviteCutoff());
    if (!pending) throw enterpriseErrors.inviteNotFound();
    await repo.lockWorkspace(t, pending.workspace_id);
    // The inviter, re-read under the lock, must still be an active member who may grant the role.
    const inviter = pending.invited_by ? await repo.liveMembership(t, pending.workspace_id, pending.invited_by) : undefined;
    if (!inviter || inviter.status !== 'active' || !canGrant(inviter.role, pending.role)) throw enterpriseErrors.inviteNotFound();
    const now = clock.now();
    const moved = await transitionMember(t, pending, 'accept', { joined_at: now, updated_at: now });
    if (!moved) throw enterpriseErrors.inviteNotFound();
    await appendEvent(t, moved.workspace_id, {
      event: 'member.joined',
      entityType: 'member',
      entityId: moved.id,
      actor: byOf(user),
      summary: `${user.userName} joined as ${moved.role}`,
    });
    if (moved.invited_by) {
      await notify(t, moved.workspace_id, moved.invited_by, 'member.joined', 'Invite accepted', `${user.userName} joined the workspace as ${moved.role}`);
    }
    return moved;
  });
}

/**
 * The invitee's e-mail (Indonesian, then English): the workspace, the role, who invited
 * them and how to accept, in the platform's own words. The invitee is not a member yet, so
 * no preference applies. The workspace's display name and the inviter's name are text other
 * people chose, set in as plain names (shared/mail/plain.ts: no URL, address or line break;
 * review R1), as the KYB link's mail does.
 */
export function inviteMail(invite: { memberId: string; workspaceName: string; role: Role; inviterName: string; inviteeName: string }): MemberMail {
  const { memberId, role } = invite;
  const workspaceName = plainName(invite.workspaceName) || 'Workspace';
  const inviterName = plainName(invite.inviterName) || 'A member';
  const inviteeName = plainName(invite.inviteeName) || 'there';
  const accept = `POST ${config.publicBaseUrl}/v1/enterprise/invites/${memberId}/accept`;
  return {
    template: 'enterprise.member-invited',
    subject: `Undangan ke ${workspaceName} / You are invited to ${workspaceName}`,
    text:
      `Halo ${inviteeName},\n\n` +
      `${inviterName} mengundang Anda bergabung ke workspace "${workspaceName}" sebagai ${role}.\n` +
      `Untuk menerima undangan, masuk ke dasbor di ${config.publicBaseUrl} dan terima undangan yang menunggu,\n` +
      `atau kirim ${accept} dari sesi dasbor Anda.\n` +
      `Jika Anda tidak mengenal undangan ini, abaikan pesan ini.\n\n` +
      `---\n\n` +
      `Hello ${inviteeName},\n\n` +
      `${inviterName} invited you to join the workspace "${workspaceName}" as ${role}.\n` +
      `To accept, sign in to the dashboard at ${config.publicBaseUrl} and accept the pending invite,\n` +
      `or send ${accept} from your dashboard session.\n` +
      `If you do not expect this invite, you can ignore this message.\n`,
  };
}

/**
 * The answer of an invite (review R1): the same whether or not an account uses the address
 * and whether or not it already has a pending invite here, so the invite is no account
 * oracle. The invitee finds the invite in GET /me; the admin sees it in GET /members.
 */
export interface InviteReceipt {
  email: string;
  role: Role;
  status: 'invited';
}

/**
 * Invites an address. When an active account uses it, a pending invite is stored and the
 * invitee e-mailed, in the same transaction; when none does, or a live invite to it is
 * already pending here, nothing is stored or sent. All three answer the same receipt. A
 * current (active or suspended) member is 409 INVALID_STATE: the admin sees them in the
 * list already. The daily caps (per workspace, per recipient) are the route's.
 */
export async function inviteMember(trx: Db | undefined, caller: WorkspaceActor, input: { email: string; role: Role }): Promise<InviteReceipt> {
  assertOwnerMoves(caller, [input.role]);
  const receipt: InviteReceipt = { email: input.email.trim().toLowerCase(), role: input.role, status: 'invited' };
  return inTransaction(trx, async (t) => {
    const actor = await lockAsActor(t, caller, 'admin');
    assertOwnerMoves(actor, [input.role]);
    const invitee = await users.findByEmail(t, input.email);
    if (!invitee || invitee.status !== 'active') return receipt;
    const live = await repo.liveMembership(t, actor.workspaceId, invitee.id);
    const expired = live?.status === 'invited' && live.created_at <= inviteCutoff();
    if (live && live.status === 'invited' && !expired) return receipt;
    if (live && !expired) throw enterpriseErrors.alreadyMember();
    // An expired invite gives way to the new one.
    if (live && !(await transitionMember(t, live, 'remove', { removed_at: clock.now() }))) throw enterpriseErrors.alreadyMember();
    const member = await repo.insertMember(
      t,
      { workspace_id: actor.workspaceId, user_id: invitee.id, role: input.role, status: 'invited', invited_by: actor.userId },
      clock.now(),
    );
    await appendEvent(t, actor.workspaceId, {
      event: 'member.invited',
      entityType: 'member',
      entityId: member.id,
      actor: byOf(actor),
      summary: `${invitee.full_name} invited as ${input.role}`,
    });
    const workspace = await repo.workspaceById(t, actor.workspaceId); // locked by lockAsActor
    if (!workspace) throw enterpriseErrors.noWorkspace();
    await mailUser(
      t,
      invitee.id,
      inviteMail({ memberId: member.id, workspaceName: workspace.display_name, role: input.role, inviterName: actor.userName, inviteeName: invitee.full_name }),
    );
    return receipt;
  });
}

export async function changeRole(trx: Db | undefined, caller: WorkspaceActor, memberId: string, role: Role): Promise<MemberWithUser> {
  if (!isUuid(memberId)) throw enterpriseErrors.memberNotFound();
  return inTransaction(trx, async (t) => {
    const actor = await lockAsActor(t, caller, 'admin');
    const target = await targetOf(t, actor, memberId);
    assertOwnerMoves(actor, [target.role, role]);
    if (target.role === role) return repo.memberWithUser(t, target.id);
    if (target.role === 'owner') await lastOwnerGuard(t, actor.workspaceId, target);
    await repo.updateMember(t, target.id, { role, updated_at: clock.now() });
    await withdrawInvitesOf(t, actor, target.user_id, target.status === 'active' ? role : undefined);
    await appendEvent(t, actor.workspaceId, {
      event: 'member.role_changed',
      entityType: 'member',
      entityId: target.id,
      actor: byOf(actor),
      summary: `Role changed from ${target.role} to ${role}`,
    });
    if (target.status === 'active') {
      await notify(t, actor.workspaceId, target.user_id, 'member.role_changed', 'Your role changed', `You are now ${role} (was ${target.role})`);
    }
    return repo.memberWithUser(t, target.id);
  });
}

/** Removes a member (or withdraws an invite); their workspace keys are revoked with them. */
export async function removeMember(trx: Db | undefined, caller: WorkspaceActor, memberId: string): Promise<{ id: string; removed: true }> {
  if (!isUuid(memberId)) throw enterpriseErrors.memberNotFound();
  return inTransaction(trx, async (t) => {
    const actor = await lockAsActor(t, caller, 'admin');
    const target = await targetOf(t, actor, memberId);
    assertOwnerMoves(actor, [target.role]);
    await lastOwnerGuard(t, actor.workspaceId, target);
    const now = clock.now();
    if (!(await transitionMember(t, target, 'remove', { removed_at: now, updated_at: now }))) throw enterpriseErrors.memberNotFound();
    const by = byOf(actor);
    await appendEvent(t, actor.workspaceId, {
      event: 'member.removed',
      entityType: 'member',
      entityId: target.id,
      actor: by,
      summary: target.user_id === actor.userId ? 'A member left the workspace' : 'A member was removed from the workspace',
    });
    await revokeKeysWhere(t, actor.workspaceId, { created_by_member: target.id }, by, 'its creator left the workspace');
    await withdrawInvitesOf(t, actor, target.user_id, undefined);
    return { id: target.id, removed: true as const };
  });
}

/** The caller's own notification preferences in the workspace (any role; dashboard only). */
export async function updatePreferences(trx: Db, actor: WorkspaceActor, input: Preferences): Promise<MemberRow> {
  const patch: Partial<MemberRow> = { updated_at: clock.now() };
  if (input.email !== undefined) patch.notify_email = input.email;
  if (input.approvals !== undefined) patch.notify_approvals = input.approvals;
  if (input.money !== undefined) patch.notify_money = input.money;
  if (input.reminders !== undefined) patch.notify_reminders = input.reminders;
  const row = await repo.updateActiveMember(trx, actor.memberId, patch);
  if (!row) throw enterpriseErrors.noWorkspace();
  return row;
}
