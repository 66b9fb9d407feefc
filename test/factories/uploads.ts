/** Upload rows (and optionally their stored bytes) made directly, for quota, binding and purge tests. */
import { createHash, randomUUID } from 'node:crypto';
import { clock } from '../../shared/clock.js';
import { db } from '../../shared/db.js';
import * as repo from '../../shared/uploads/repo.js';
import type { BoundKind, UploadRow } from '../../shared/uploads/repo.js';
import type { Purpose } from '../../shared/uploads/sanitise/index.js';
import { storage } from '../../shared/uploads/storage/index.js';

export interface UploadOptions {
  /** A fixed id (the stored name is `<id>.jpg`). */
  id?: string;
  purpose?: Purpose;
  createdAt?: Date;
  bound?: { kind: BoundKind; id: string };
  /** Store bytes for the row too (default: no file). */
  bytes?: Buffer;
}

export async function createUploadRow(userId: string, options: UploadOptions = {}): Promise<UploadRow> {
  const id = options.id ?? randomUUID();
  const bytes = options.bytes ?? Buffer.from('stand-in bytes');
  const name = `${id}.jpg`;
  if (options.bytes) await storage().put(`files/${name}`, bytes);
  const row = await repo.insert(db, {
    id,
    stored_name: name,
    user_id: userId,
    purpose: options.purpose ?? 'escrow',
    mime: 'image/jpeg',
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    storage_key: `files/${name}`,
    created_at: options.createdAt ?? clock.now(),
  });
  if (!options.bound) return row;
  return (await repo.bind(db, name, userId, [row.purpose], { ...options.bound, at: clock.now() }))!;
}

/** Many rows at once (quota tests). */
export async function createUploadRows(userId: string, count: number, purpose: Purpose, createdAt = clock.now()): Promise<void> {
  const rows = Array.from({ length: count }, () => {
    const id = randomUUID();
    return {
      id,
      stored_name: `${id}.jpg`,
      user_id: userId,
      purpose,
      mime: 'image/jpeg',
      size: 10,
      sha256: '0'.repeat(64),
      storage_key: `files/${id}.jpg`,
      created_at: createdAt,
    };
  });
  for (let i = 0; i < rows.length; i += 500) await db('uploads').insert(rows.slice(i, i + 500));
}
