/**
 * Workspace API keys (enterprise spec 4.10, section 5 rule 3): `rpe_` + 32 random bytes,
 * stored as the SHA-256 hash only, the plaintext answered once. Up to 10 unrevoked keys
 * per workspace (an inactive key still holds its slot); the count runs under the
 * workspace row lock, so two parallel creations cannot both take the tenth slot.
 */
import { clock } from '../clock.js';
import { randomToken, sha256Hex } from '../crypto.js';
import { db, inTransaction, type Db } from '../db.js';
import { isUuid } from '../ids.js';
import { WORKSPACE_KEY_PREFIX } from '../auth/api-keys.js';
import { byOf, type WorkspaceActor } from './access.js';
import { enterpriseErrors } from './errors.js';
import { appendEvent } from './events.js';
import * as keysRepo from './keys-repo.js';
import type { KeyListRow } from './keys-repo.js';
import { lockWorkspace } from './repo.js';

export type { KeyListRow } from './keys-repo.js';

export const KEYS_PER_WORKSPACE = 10;

/**
 * GET /api-keys (4.10 "List: active keys newest first"): only active keys; the inactive ones
 * (unrevoked, their creator suspended or gone) are left out but counted, as they still hold
 * a slot of the 10 (and can be revoked by id to free it).
 */
export async function listKeys(actor: WorkspaceActor): Promise<{ rows: KeyListRow[]; inactive: number }> {
  const unrevoked = await keysRepo.listKeys(db, actor.workspaceId); // at most KEYS_PER_WORKSPACE rows
  const rows = unrevoked.filter(keysRepo.isActiveKey);
  return { rows, inactive: unrevoked.length - rows.length };
}

/** The short prefix shown in lists (`key_preview`): the key starts with it. */
export function previewOf(plaintext: string): string {
  return plaintext.slice(0, WORKSPACE_KEY_PREFIX.length + 8);
}

export async function createKey(
  actor: WorkspaceActor,
  input: { label: string; scopes: string[] },
): Promise<{ row: KeyListRow; plaintext: string }> {
  return db.transaction(async (trx) => {
    await lockWorkspace(trx, actor.workspaceId);
    if ((await keysRepo.countUnrevoked(trx, actor.workspaceId)) >= KEYS_PER_WORKSPACE) throw enterpriseErrors.keyLimit(KEYS_PER_WORKSPACE);
    const plaintext = `${WORKSPACE_KEY_PREFIX}${randomToken(32)}`;
    const id = await keysRepo.insertKey(trx, {
      workspace_id: actor.workspaceId,
      created_by_member: actor.memberId,
      label: input.label,
      scopes: input.scopes,
      key_hash: sha256Hex(plaintext),
      key_preview: previewOf(plaintext),
      created_at: clock.now(),
    });
    const row = await keysRepo.keyListRow(trx, actor.workspaceId, id);
    await appendEvent(trx, actor.workspaceId, {
      event: 'api_key.created',
      entityType: 'api_key',
      entityId: row.id,
      actor: byOf(actor),
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
  const revoked = await keysRepo.revokeWhere(trx, workspaceId, where, clock.now());
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
export async function revokeKey(trx: Db | undefined, actor: WorkspaceActor, id: string): Promise<{ id: string; revoked: true }> {
  if (!isUuid(id)) throw enterpriseErrors.keyNotFound();
  return inTransaction(trx, async (t) => {
    await lockWorkspace(t, actor.workspaceId);
    const done = await revokeKeysWhere(t, actor.workspaceId, { id }, byOf(actor), '');
    if (done.length === 0) throw enterpriseErrors.keyNotFound();
    return { id, revoked: true as const };
  });
}
