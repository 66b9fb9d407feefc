import type { Db } from '../db.js';

/**
 * The platform's active staff (users with role admin, active), with their e-mail addresses:
 * whom the service's own checks e-mail (the nightly reconciliation, the daily ledger check).
 */
export async function activeStaff(trx: Db): Promise<{ id: string; email: string }[]> {
  return trx('users').where({ role: 'admin', status: 'active' }).orderBy('id').select<{ id: string; email: string }[]>('id', 'email');
}
