/**
 * Enterprise payouts as the workspace reads them (spec 4.6 `GET /v1/enterprise/payouts`,
 * viewer): every disbursement of the workspace, newest first. Releasing is in release.ts,
 * the worker's side in worker.ts, staff moves in staff.ts, payout instructions in
 * instructions.ts.
 */
import { db } from '../db.js';
import type { WorkspaceActor } from '../enterprise/access.js';
import * as repo from './repo.js';
import type { PayoutFilter, PayoutListRow } from './repo.js';

export async function listPayouts(actor: WorkspaceActor, q: PayoutFilter & { page: number; limit: number }): Promise<{ rows: PayoutListRow[]; total: number }> {
  return repo.listForWorkspace(db, actor.workspaceId, q, q.page, q.limit);
}
