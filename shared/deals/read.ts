/** A deal as its answers show it: the deal, its milestones, the computed status, its last 100 events. */
import { readTogether, shaped, type Db } from '../db.js';
import { feedPageQuery, type EventRow } from '../enterprise/events-repo.js';
import type { WorkspaceRow } from '../enterprise/repo.js';
import { extrasOf, extrasReads, type MilestoneExtras } from './extras.js';
import * as repo from './repo.js';
import type { DealWithNames, MilestoneRow } from './repo.js';
import { dealStatus, type DealStatus } from './states.js';

/** A deal as GET /deals/:id answers it (serialize.ts shapes it). */
export interface DealDetail {
  deal: DealWithNames;
  milestones: MilestoneRow[];
  status: DealStatus;
  workspaceCountry: string;
  events: EventRow[];
  /** Approval slots, documents and payouts of each milestone. */
  extras: MilestoneExtras;
  /** Approve decisions saved on the deal's milestones (outcome.approvals_by_people). */
  approvalsByPeople: number;
}

/** The deal's answer, read in the caller's transaction (after a write, it shows the write). */
export async function detail(trx: Db, workspace: WorkspaceRow, dealId: string): Promise<DealDetail> {
  const deal = (await repo.dealById(trx, workspace.id, dealId))!;
  return detailOf(trx, workspace, deal, await repo.milestonesOf(trx, dealId));
}

/** The deal's last 100 events, newest first. */
const recentEventsRead = shaped((k, workspaceId: string, dealId: string) => feedPageQuery(k, workspaceId, { after: 0, order: 'desc', limit: 100, deal_id: dealId }));
/** How many approve decisions were saved on the deal's milestones. */
const approveDecisionsRead = shaped((k, dealId: string) => repo.approveDecisionsQuery(k, dealId));

/**
 * `detail` for a write that holds the deal locked and knows its milestones as it left them
 * (a release: the moved milestone's row as its compare-and-set returned it): the rest read
 * in the same transaction, the deal and its milestones not read again.
 */
export async function detailOf(trx: Db, workspace: WorkspaceRow, deal: DealWithNames, milestones: MilestoneRow[]): Promise<DealDetail> {
  // Five reads in one round trip (after a keyed write, with the writes it held for COMMIT).
  const [events, decisions, ...extraRows] = await readTogether(trx, [
    recentEventsRead(workspace.id, deal.id),
    approveDecisionsRead(deal.id),
    ...extrasReads(milestones),
  ]);
  return {
    deal,
    milestones,
    status: dealStatus(deal, milestones),
    workspaceCountry: workspace.country_code,
    events: events as EventRow[],
    extras: extrasOf(milestones, extraRows),
    approvalsByPeople: repo.approveDecisionsOf(decisions!),
  };
}
