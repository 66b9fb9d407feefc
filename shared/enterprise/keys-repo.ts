/**
 * SQL of workspace API keys: the per-request lookup of a key with its creator (one
 * prepared statement), its use, the list, the count under the workspace lock, creation
 * and revocation. Callers pass the transaction, except for the per-request reads and the
 * bookkeeping write, which run on the pool before any transaction.
 */
import { bookkeepingWrite, prepared, type Db } from '../db.js';
import type { UserStatus } from '../users/repo.js';
import { reviveMember, reviveWorkspace, type Jsonified, type MemberRow, type WorkspaceRow } from './repo.js';
import type { MemberStatus } from './states.js';

export interface KeyListRow {
  id: string;
  workspace_id: string;
  label: string;
  scopes: string[];
  key_preview: string;
  created_at: Date;
  last_used_at: Date | null;
  creator_id: string;
  creator_name: string;
  member_status: MemberStatus;
}

/** A live key with its creator's membership, its workspace and its creator's account. */
export interface KeyWithCreator {
  keyId: string;
  workspaceId: string;
  scopes: string[];
  lastUsedAt: Date | null;
  member: MemberRow;
  workspace: WorkspaceRow;
  user: { id: string; email: string; full_name: string; status: UserStatus; role: 'user' | 'admin' };
}

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
  user_status: UserStatus;
  user_role: 'user' | 'admin';
}

/** An unrevoked key by its hash, joined with its creator's membership, workspace and user: one query. */
export async function keyWithCreator(keyHash: string): Promise<KeyWithCreator | undefined> {
  const [row] = await prepared<KeyJoinRow>('enterprise_workspace_key', KEY_SQL, [keyHash]);
  if (!row) return undefined;
  return {
    keyId: row.key_id,
    workspaceId: row.workspace_id,
    scopes: row.scopes,
    lastUsedAt: row.last_used_at,
    member: reviveMember(row.member),
    workspace: reviveWorkspace(row.workspace),
    user: { id: row.user_id, email: row.email, full_name: row.full_name, status: row.user_status, role: row.user_role },
  };
}

/** Records a key's use without waiting for the disk (bookkeeping, as personal keys). */
export async function touchKey(id: string, now: Date): Promise<void> {
  await bookkeepingWrite('UPDATE workspace_api_keys SET last_used_at = $2 WHERE id = $1', [id, now]);
}

/** A key is active while its creator is an active member (spec section 3, "Other statuses"); otherwise inactive. */
export const isActiveKey = (k: Pick<KeyListRow, 'member_status'>): boolean => k.member_status === 'active';

function listQuery(trx: Db, workspaceId: string) {
  return trx('workspace_api_keys as k')
    .join('workspace_members as m', 'm.id', 'k.created_by_member')
    .join('users as u', 'u.id', 'm.user_id')
    .where('k.workspace_id', workspaceId)
    .whereNull('k.revoked_at')
    .select('k.*', 'u.id as creator_id', 'u.full_name as creator_name', 'm.status as member_status');
}

/** Unrevoked keys (active, or inactive since their creator left), newest first. */
export async function listKeys(trx: Db, workspaceId: string): Promise<KeyListRow[]> {
  return (await listQuery(trx, workspaceId).orderBy([{ column: 'k.created_at', order: 'desc' }, { column: 'k.id', order: 'desc' }])) as KeyListRow[];
}

export async function keyListRow(trx: Db, workspaceId: string, id: string): Promise<KeyListRow> {
  return (await listQuery(trx, workspaceId).where('k.id', id).first()) as KeyListRow;
}

/** Unrevoked keys of the workspace (inactive ones included: they keep their slot). */
export async function countUnrevoked(trx: Db, workspaceId: string): Promise<number> {
  const [count] = await trx('workspace_api_keys').where({ workspace_id: workspaceId }).whereNull('revoked_at').count<{ count: string }[]>('* as count');
  return Number(count?.count ?? 0);
}

export async function insertKey(
  trx: Db,
  input: { workspace_id: string; created_by_member: string; label: string; scopes: string[]; key_hash: string; key_preview: string; created_at: Date },
): Promise<string> {
  const [inserted] = await trx('workspace_api_keys').insert(input).returning<{ id: string }[]>('id');
  return inserted!.id;
}

/** Revokes the unrevoked keys of the workspace that match `where`; answers those revoked. */
export async function revokeWhere(
  trx: Db,
  workspaceId: string,
  where: { id?: string; created_by_member?: string },
  now: Date,
): Promise<{ id: string; label: string }[]> {
  return trx('workspace_api_keys')
    .where({ workspace_id: workspaceId, ...where })
    .whereNull('revoked_at')
    .update({ revoked_at: now })
    .returning<{ id: string; label: string }[]>(['id', 'label']);
}
