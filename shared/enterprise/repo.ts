/** SQL of the enterprise workspace tables (workspaces, members, KYB drafts, counterparties, notifications). */
import type { Db } from '../db.js';

export const ROLES = ['viewer', 'operator', 'finance', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];
export type MemberStatus = 'invited' | 'active' | 'suspended' | 'removed';
export type KybStatus = 'not_started' | 'draft' | 'pending' | 'verified' | 'rejected';
export const ENTITY_TYPES = ['pt', 'pt_perorangan', 'cv', 'firma', 'koperasi', 'ud', 'foreign'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

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

export interface KybApplicationRow {
  id: string;
  workspace_id: string;
  version: number;
  status: 'draft' | 'submitted' | 'changes_requested' | 'approved' | 'rejected';
  entity_type: string | null;
  legal_name: string | null;
  country_code: string | null;
  nib: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface CounterpartyRow {
  id: string;
  workspace_id: string;
  name: string;
  country_code: string;
  relationship: 'seller' | 'buyer';
  email: string | null;
  kyb_status: 'not_started' | 'pending' | 'verified' | 'rejected';
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface NotificationRow {
  id: string;
  workspace_id: string;
  user_id: string;
  type: string;
  title: string;
  body: string;
  is_read: boolean;
  read_at: Date | null;
  created_at: Date;
}

/** A member with the user fields the member list shows. */
export interface MemberWithUser extends MemberRow {
  email: string;
  full_name: string;
}

export function rankOf(role: Role): number {
  return ROLES.indexOf(role);
}

export async function workspaceById(trx: Db, id: string): Promise<WorkspaceRow | undefined> {
  return (await trx('workspaces').where({ id }).first()) as WorkspaceRow | undefined;
}

/** Locks the workspace row: member, key and settings writes of one workspace run one at a time. */
export async function lockWorkspace(trx: Db, id: string): Promise<WorkspaceRow | undefined> {
  return (await trx('workspaces').where({ id }).forUpdate().first()) as WorkspaceRow | undefined;
}

export async function memberById(trx: Db, workspaceId: string, id: string): Promise<MemberRow | undefined> {
  return (await trx('workspace_members').where({ workspace_id: workspaceId, id }).whereNot({ status: 'removed' }).first()) as
    | MemberRow
    | undefined;
}

export async function liveMembership(trx: Db, workspaceId: string, userId: string): Promise<MemberRow | undefined> {
  return (await trx('workspace_members')
    .where({ workspace_id: workspaceId, user_id: userId })
    .whereNot({ status: 'removed' })
    .first()) as MemberRow | undefined;
}

/** Workspaces where the user is an active member, first joined first. */
export async function activeMemberships(trx: Db, userId: string): Promise<(MemberRow & { display_name: string })[]> {
  return trx('workspace_members as m')
    .join('workspaces as w', 'w.id', 'm.workspace_id')
    .where({ 'm.user_id': userId, 'm.status': 'active' })
    .orderBy([{ column: 'm.joined_at', order: 'asc' }, { column: 'm.id', order: 'asc' }])
    .select<(MemberRow & { display_name: string })[]>('m.*', 'w.display_name');
}

export async function pendingInvites(
  trx: Db,
  userId: string,
): Promise<(MemberRow & { display_name: string; invited_by_name: string | null })[]> {
  return trx('workspace_members as m')
    .join('workspaces as w', 'w.id', 'm.workspace_id')
    .leftJoin('users as u', 'u.id', 'm.invited_by')
    .where({ 'm.user_id': userId, 'm.status': 'invited' })
    .orderBy('m.created_at', 'asc')
    .select<(MemberRow & { display_name: string; invited_by_name: string | null })[]>('m.*', 'w.display_name', 'u.full_name as invited_by_name');
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
