import { clock } from '../clock.js';
import type { Db } from '../db.js';

export interface StaffAction {
  actorId: string;
  action: string;
  targetType: string;
  targetId: string;
  note?: string | null;
  details?: Record<string, unknown>;
  ip?: string;
}

/** Records a staff action in the caller's transaction (append-only table). */
export async function recordStaffAction(trx: Db, a: StaffAction): Promise<void> {
  await trx('staff_audit').insert({
    actor_id: a.actorId,
    action: a.action,
    target_type: a.targetType,
    target_id: a.targetId,
    note: a.note ?? null,
    details: JSON.stringify(a.details ?? {}),
    ip: a.ip ?? null,
    created_at: clock.now(),
  });
}
