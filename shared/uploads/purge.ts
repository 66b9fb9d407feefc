/** Upkeep of the upload store (the `uploads.purge-unbound` job). */
import { clock } from '../clock.js';
import { db } from '../db.js';
import * as repo from './repo.js';
import { UNBOUND_TTL_MS } from './rules.js';
import { storage } from './storage/index.js';

/**
 * `uploads.purge-unbound`: deletes uploads left unbound for a day (file, then row, each
 * row only if still unbound), quarantined files older than a day, and stored files that
 * have no row (an answer that was rolled back after the worker stored the file).
 */
export async function purgeUnbound(batch = 500): Promise<{ rows: number; quarantine: number; orphans: number }> {
  const cutoff = clock.nowMs() - UNBOUND_TTL_MS;
  let rows = 0;
  for (;;) {
    const stale = await repo.unboundBefore(db, new Date(cutoff), batch);
    for (const row of stale) {
      // Row first (only if still unbound: a binding that wins the race keeps its file).
      if (!(await repo.deleteIfUnbound(db, row.id))) continue;
      rows++;
      await storage().delete(row.storage_key);
    }
    if (stale.length < batch) break;
  }
  let quarantine = 0;
  for (const o of await storage().list('quarantine/')) {
    if (o.modifiedMs < cutoff) {
      await storage().delete(o.key);
      quarantine++;
    }
  }
  let orphans = 0;
  const old = (await storage().list('files/')).filter((o) => o.modifiedMs < cutoff);
  for (let i = 0; i < old.length; i += batch) {
    const slice = old.slice(i, i + batch);
    const known = await repo.existingNames(db, slice.map((o) => o.key.slice('files/'.length)));
    for (const o of slice) {
      if (!known.has(o.key.slice('files/'.length))) {
        await storage().delete(o.key);
        orphans++;
      }
    }
  }
  return { rows, quarantine, orphans };
}
