/** The deal a write works on: found in the caller's workspace and locked, with its milestones. */
import type { Db, ReadAhead } from '../db.js';
import { isUuid } from '../ids.js';
import type { WorkspaceActor } from '../enterprise/access.js';
import { lockedWorkspaceReadAhead, lockWorkspace } from '../enterprise/repo.js';
import { dealErrors } from './errors.js';
import * as repo from './repo.js';
import type { DealWithNames, MilestoneRow } from './repo.js';

/**
 * The deal with its milestones, locked, or 404 NOT_FOUND (another workspace's deal is not
 * found). The workspace row is locked first, then the deal: the order the KYB approval
 * takes too when it closes sandbox deals (and every deal write ends by taking the
 * workspace row for its event's seq anyway).
 */
export async function lockDeal(trx: Db, actor: WorkspaceActor, dealId: string): Promise<{ deal: DealWithNames; milestones: MilestoneRow[] }> {
  if (!isUuid(dealId)) throw dealErrors.dealNotFound();
  await lockWorkspace(trx, actor.workspaceId);
  const deal = await repo.dealById(trx, actor.workspaceId, dealId, true);
  if (!deal) throw dealErrors.dealNotFound();
  return { deal, milestones: await repo.milestonesOf(trx, deal.id) };
}

/**
 * What `lockDeal` reads, ahead of time: a keyed deal write (api/routes/deals.ts `dealWrite`)
 * sends these with its key's statement, after the key's lock and in lockDeal's order (the
 * workspace row, the deal, its milestones), so the three cost no round trip of their own.
 * A replay takes the locks for that round trip only. Nothing for a deal id that is not a
 * UUID (lockDeal answers 404 before reading).
 */
export function lockDealReadAhead(workspaceId: string, dealId: string): ReadAhead[] {
  if (!isUuid(dealId)) return [];
  return [lockedWorkspaceReadAhead(workspaceId), repo.lockedDealReadAhead(workspaceId, dealId), repo.lockedMilestonesReadAhead(workspaceId, dealId)];
}
