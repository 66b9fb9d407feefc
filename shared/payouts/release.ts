/**
 * Releasing a milestone (enterprise spec 3 "approved --release--> released", 4.6; D7
 * "Release"; decision 0019): finance sends the milestone's payout amount to 1 to 5 verified
 * payout instructions of the deal's counterparty. Each split becomes a queued disbursement
 * (the payout worker sends it); events milestone.released, then one disbursement.queued per
 * payout; the ledger moves the held money to payouts in flight and the fee to the platform.
 *
 * A released milestone whose payouts failed holds the failed amounts again
 * (`returned_amount`); releasing it again sends exactly that amount, to instructions that may
 * be new (the usual cause of a failure is a wrong account).
 *
 * Money can only go where staff verified: every instruction is read FOR SHARE in this
 * transaction (an edit or delete waits, and is refused while a payout to it is open), must be
 * verified, belong to the deal's counterparty, and still match its verification signature.
 */
import { randomUUID } from 'node:crypto';
import { clock } from '../clock.js';
import { inTransaction, type Db, type ReadAhead } from '../db.js';
import { isUuid } from '../ids.js';
import { actorUnderLock, actorUnderLockReadAhead, type WorkspaceActor } from '../enterprise/access.js';
import type { WorkspaceRow } from '../enterprise/repo.js';
import { outboxItem } from '../outbox.js';
import { dealErrors } from '../deals/errors.js';
import { dealEvents } from '../deals/events.js';
import { lockDeal, lockDealReadAhead } from '../deals/lock.js';
import { mailReleased, mailReleasedReadAhead } from '../deals/mail.js';
import { transition } from '../deals/moves.js';
import { detail, detailOf, type DealDetail } from '../deals/read.js';
import type { MilestoneRow } from '../deals/repo.js';
import { checkDestinationRow, instructionsForRelease, instructionsForReleaseReadAhead } from './instructions.js';
import { payoutErrors } from './errors.js';
import { postReRelease, postRelease } from './postings.js';
import { signPayout } from './signature.js';
import * as repo from './repo.js';

export interface Split {
  payout_instruction_id: string;
  amount: number;
}

export interface ReleaseInput {
  splits: Split[];
}

/**
 * What a keyed release reads before its checks, sent with its key's statement
 * (api/routes/deals.ts), in the order the release reads it: the deal's locks and milestones
 * (`lockDealReadAhead`), the acting member again (`actorUnderLockReadAhead`), the named instructions `FOR SHARE`, the milestone's last release
 * number, the release mail's recipients. Each is taken once, only by this release.
 */
export function releaseReadAhead(actor: WorkspaceActor, dealId: string, milestoneId: string, input: ReleaseInput): ReadAhead[] {
  const deal = lockDealReadAhead(actor.workspaceId, dealId);
  if (deal.length === 0 || !isUuid(milestoneId)) return deal;
  return [
    ...deal,
    actorUnderLockReadAhead(actor),
    ...instructionsForReleaseReadAhead(actor.workspaceId, input.splits.map((s) => s.payout_instruction_id)),
    repo.nextReleaseNoReadAhead(milestoneId),
    mailReleasedReadAhead(actor.workspaceId, actor.userId),
  ];
}

/** POST /deals/:id/milestones/:mid/release (finance): answers the deal as GET /deals/:id shows it. */
export async function releaseMilestone(trx: Db | undefined, actor: WorkspaceActor, workspace: WorkspaceRow, dealId: string, milestoneId: string, input: ReleaseInput): Promise<DealDetail> {
  return inTransaction(trx, async (t) => {
    const { deal, milestones } = await lockDeal(t, actor, dealId);
    // Issue 42: the caller's authority again, under the workspace lock member writes take (read ahead with a keyed release).
    await actorUnderLock(t, actor, 'finance');
    const m = milestones.find((x) => x.id === milestoneId);
    if (!m) throw dealErrors.milestoneNotFound();
    const retry = m.status === 'released' && m.returned_amount > 0;
    if (m.status !== 'approved' && !retry) throw payoutErrors.notReleasable();
    const due = retry ? m.returned_amount : m.payout_amount - m.refunded_amount;

    const ids = input.splits.map((s) => s.payout_instruction_id);
    if (new Set(ids).size !== ids.length) throw payoutErrors.duplicateInstruction();
    const sum = input.splits.reduce((a, s) => a + s.amount, 0);
    if (sum !== due) throw payoutErrors.splitsSum(due, sum);
    const rows = await instructionsForRelease(t, workspace.id, ids);
    for (const id of ids) {
      const row = rows.find((r) => r.id === id);
      if (!row) throw payoutErrors.unknownInstruction(id);
      if (row.counterparty_id !== deal.counterparty_id) throw payoutErrors.otherCounterparty(id);
      if (row.status !== 'verified') throw payoutErrors.notVerified(row.label);
      // The row is held FOR SHARE since it was read: checked as read, not read again.
      if (!checkDestinationRow(row, !deal.is_test).ok) throw payoutErrors.signatureBroken(row.label);
    }

    const now = clock.now();
    const releaseNo = await repo.nextReleaseNo(t, m.id);
    let after: MilestoneRow | undefined;
    if (retry) {
      // Compare-and-set on the returned amount: a payout failing meanwhile adds to it, and this release sends what it read.
      const n = await t('deal_milestones').where({ id: m.id, status: 'released', returned_amount: due }).update({ returned_amount: 0, updated_at: now });
      if (n !== 1) throw payoutErrors.notReleasable();
      if (!deal.is_test) await postReRelease(t, m, deal.currency, due, releaseNo);
    } else {
      const moved = await transition(t, m, 'release', { released_at: now });
      if (!deal.is_test) await postRelease(t, moved, deal.currency, releaseNo);
      after = moved;
    }
    const splits = input.splits.map((s, i) => {
      const id = randomUUID();
      const instruction = rows.find((r) => r.id === s.payout_instruction_id)!;
      const terms = { disbursementId: id, workspaceId: workspace.id, dealId: deal.id, milestoneId: m.id, instructionId: instruction.id, counterpartyId: instruction.counterparty_id, amount: s.amount, currency: deal.currency, isTest: deal.is_test };
      return {
        id,
        signature: signPayout(terms),
        workspace_id: workspace.id,
        deal_id: deal.id,
        milestone_id: m.id,
        payout_instruction_id: s.payout_instruction_id,
        instruction_label: instruction.label,
        // Where this payout goes, kept on it (issue 42): its record never follows a later edit of the instruction.
        destination_bank_name: instruction.bank_name,
        destination_account_holder: instruction.account_holder,
        destination_account_last4: instruction.account_number_last4,
        amount: s.amount,
        currency: deal.currency,
        is_test: deal.is_test,
        release_no: releaseNo,
        split_no: i + 1,
        created_at: now,
        updated_at: now,
      };
    });
    // The disbursements and their payout jobs (ids made here) in one statement, held for the COMMIT's round trip or the answer's reads.
    await repo.insertMany(
      t,
      splits,
      splits.map((d) => outboxItem('payouts.disburse', { disbursement_id: d.id })),
    );
    // milestone.released (or payouts_retried), then one disbursement.queued per payout: one statement.
    await dealEvents(t, actor, deal, [
      {
        event: retry ? 'milestone.payouts_retried' : 'milestone.released',
        summary: retry
          ? `Failed payouts of milestone ${m.sequence_no} of deal ${deal.reference} sent again (${splits.length})`
          : `Milestone ${m.sequence_no} of deal ${deal.reference} released in ${splits.length} payout${splits.length > 1 ? 's' : ''}`,
        entityType: 'milestone',
        entityId: m.id,
        amount: due,
      },
      ...splits.map((d) => ({
        event: 'disbursement.queued',
        summary: `Payout of ${d.amount} to "${d.instruction_label}" queued`,
        entityType: 'disbursement',
        entityId: d.id,
        amount: d.amount,
      })),
    ]);
    await mailReleased(t, deal, m, due, splits, actor.userId);
    // A first release knows every milestone as it left them; a retry re-reads.
    return after ? detailOf(t, workspace, deal, milestones.map((x) => (x.id === after.id ? after : x))) : detail(t, workspace, deal.id);
  });
}
