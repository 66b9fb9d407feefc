/**
 * What other features ask of deals: a workspace going live cancels the unfinished
 * milestones of its sandbox deals (spec 3; called by KYB approval, shared/kyb/live.ts),
 * and a counterparty becoming verified lets its deals waiting in terms_review await
 * funding (D7). Both run in the caller's transaction and write their events there.
 */
import { clock } from '../clock.js';
import type { Db } from '../db.js';
import { dealEvent } from './events.js';
import * as repo from './repo.js';
import { MILESTONE_TRANSITIONS } from './states.js';

export async function closeSandboxDeals(trx: Db, workspaceId: string, operatorLabel: string): Promise<number> {
  const deals = await repo.openSandboxDeals(trx, workspaceId);
  for (const d of deals) {
    const n = await repo.moveDealMilestones(trx, d.id, MILESTONE_TRANSITIONS.sandbox_closed, { updated_at: clock.now() });
    await dealEvent(trx, null, { id: d.id, reference: d.reference, workspace_id: workspaceId, is_test: true }, 'deal.sandbox_closed', `Sandbox deal ${d.reference} closed: the workspace is live (${n} unfinished milestones cancelled)`, {
      actorLabel: operatorLabel,
    });
  }
  return deals.length;
}

export async function releaseTermsReview(trx: Db, counterpartyId: string, operatorLabel: string): Promise<number> {
  const deals = await repo.dealsInTermsReview(trx, counterpartyId);
  for (const d of deals) {
    const now = clock.now();
    await repo.updateDeal(trx, d.id, { terms_review: false, updated_at: now });
    await repo.moveDealMilestones(trx, d.id, MILESTONE_TRANSITIONS.activate, { updated_at: now });
    await dealEvent(trx, null, { id: d.id, reference: d.reference, workspace_id: d.workspace_id, is_test: false }, 'deal.updated', `Deal ${d.reference}: the counterparty is verified; milestones await funding`, {
      actorLabel: operatorLabel,
    });
  }
  return deals.length;
}
