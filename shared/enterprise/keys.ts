/**
 * Workspace API keys (enterprise spec 4.10, section 5 rule 3): `rpe_` + 32 random bytes,
 * stored as the SHA-256 hash only, the plaintext answered once. Up to 10 unrevoked keys
 * per workspace (an inactive key still holds its slot); the count runs under the
 * workspace row lock, so two parallel creations cannot both take the tenth slot.
 */
import { clock } from '../clock.js';
import { randomToken, sha256Hex } from '../crypto.js';
import { db, inTransaction, type Db } from '../db.js';
import { AppError, errors } from '../errors.js';
import { isUuid } from '../ids.js';
import { WORKSPACE_KEY_PREFIX } from '../auth/api-keys.js';
import { appendEvent } from './events.js';
import { lockWorkspace, type MemberStatus } from './repo.js';
import type { Actor } from './service.js';

export const KEYS_PER_WORKSPACE = 10;

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

function listQuery(trx: Db, workspaceId: string) {
  return trx('workspace_api_keys as k')
    .join('workspace_members as m', 'm.id', 'k.created_by_member')
    .join('users as u', 'u.id', 'm.user_id')
    .where('k.workspace_id', workspaceId)
    .whereNull('k.revoked_at')
    .select('k.*', 'u.id as creator_id', 'u.full_name as creator_name', 'm.status as member_status');
}

/** Unrevoked keys (active, or inactive since their creator left), newest first. */
export async function listKeys(workspaceId: string): Promise<KeyListRow[]> {
  return (await listQuery(db, workspaceId).orderBy([{ column: 'k.created_at', order: 'desc' }, { column: 'k.id', order: 'desc' }])) as KeyListRow[];
}

/** The short prefix shown in lists (`key_preview`): the key starts with it. */
export function previewOf(plaintext: string): string {
  return plaintext.slice(0, WORKSPACE_KEY_PREFIX.length + 8);
}

export async function createKey(
  actor: Actor,
  input: { label: string; scopes: string[] },
): Promise<{ row: KeyListRow; plaintext: string }> {
  return db.transaction(async (trx) => {
    await lockWorkspace(trx, actor.workspaceId);
    const [count] = await trx('workspace_api_keys')
      .where({ workspace_id: actor.workspaceId })
      .whereNull('revoked_at')
      .count<{ count: string }[]>('* as count');
    if (Number(count?.count ?? 0) >= KEYS_PER_WORKSPACE) {
      throw AppError.legacy(409, 'KEY_LIMIT', `A workspace can have at most ${KEYS_PER_WORKSPACE} keys; revoke one first`);
    }
    const plaintext = `${WORKSPACE_KEY_PREFIX}${randomToken(32)}`;
    const [inserted] = await trx('workspace_api_keys')
      .insert({
        workspace_id: actor.workspaceId,
        created_by_member: actor.memberId,
        label: input.label,
        scopes: input.scopes,
        key_hash: sha256Hex(plaintext),
        key_preview: previewOf(plaintext),
        created_at: clock.now(),
      })
      .returning<{ id: string }[]>('id');
    const row = (await listQuery(trx, actor.workspaceId).where('k.id', inserted!.id).first()) as KeyListRow;
    await appendEvent(trx, actor.workspaceId, {
      event: 'api_key.created',
      entityType: 'api_key',
      entityId: row.id,
      actor: { id: actor.userId, name: actor.userName },
      summary: `API key "${row.label}" created (${row.scopes.join('+')})`,
    });
    return { row, plaintext };
  });
}

/** Revokes keys in the caller's transaction, one api_key.revoked event each. */
export async function revokeKeysWhere(
  trx: Db,
  workspaceId: string,
  where: { id?: string; created_by_member?: string },
  actor: { id: string; name: string } | null,
  why: string,
): Promise<{ id: string; label: string }[]> {
  const revoked = await trx('workspace_api_keys')
    .where({ workspace_id: workspaceId, ...where })
    .whereNull('revoked_at')
    .update({ revoked_at: clock.now() })
    .returning<{ id: string; label: string }[]>(['id', 'label']);
  for (const k of revoked) {
    await appendEvent(trx, workspaceId, {
      event: 'api_key.revoked',
      entityType: 'api_key',
      entityId: k.id,
      actor,
      summary: `API key "${k.label}" revoked${why ? ` (${why})` : ''}`,
    });
  }
  return revoked;
}

/** Revokes one unrevoked key of the workspace; 404 NOT_FOUND otherwise. It stops working at once. */
export async function revokeKey(trx: Db | undefined, actor: Actor, id: string): Promise<{ id: string; revoked: true }> {
  if (!isUuid(id)) throw errors.notFound({ en: 'No active API key with this id', id: 'Tidak ada kunci API aktif dengan id ini' });
  return inTransaction(trx, async (t) => {
    await lockWorkspace(t, actor.workspaceId);
    const done = await revokeKeysWhere(t, actor.workspaceId, { id }, { id: actor.userId, name: actor.userName }, '');
    if (done.length === 0) throw errors.notFound({ en: 'No active API key with this id', id: 'Tidak ada kunci API aktif dengan id ini' });
    return { id, revoked: true as const };
  });
}
