import { clock } from '../clock.js';
import type { Db } from '../db.js';

export interface StaffAction {
  /** Null only for the service's own records (`system.*` actions, e.g. the daily chain heads). */
  actorId: string | null;
  action: string;
  targetType: string;
  targetId: string;
  note?: string | null;
  details?: Record<string, unknown>;
  ip?: string;
}

/**
 * Records a staff action in the caller's transaction (append-only table; the database links
 * the row into its actor's hash chain, decision 0028). Returns the row's id.
 */
export async function recordStaffAction(trx: Db, a: StaffAction): Promise<number> {
  const [row] = await trx('staff_audit').insert({
    actor_id: a.actorId,
    action: a.action,
    target_type: a.targetType,
    target_id: a.targetId,
    note: a.note ?? null,
    details: JSON.stringify(a.details ?? {}),
    ip: a.ip ?? null,
    created_at: clock.now(),
  }).returning<{ id: string }[]>('id');
  return Number(row!.id);
}
