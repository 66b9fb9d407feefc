/**
 * How a payout ends (decision 0019), for the payout worker and for staff alike: settled
 * (the money left: in flight -> sent) or failed (the money comes back to the milestone's
 * held balance, `returned_amount`, for a re-release). Each is a compare-and-set from the
 * state table with its posting and its event in the caller's transaction. The caller has
 * locked the workspace row first (the order every deal write takes: the event needs it).
 */
import { clock } from '../clock.js';
import type { Db } from '../db.js';
import { dealEvent } from '../deals/events.js';
import { mailPayoutFailed } from '../deals/mail.js';
import type { DealRow } from '../deals/repo.js';
import { postFailed, postSettled } from './postings.js';
import * as repo from './repo.js';
import type { DisbursementRow } from './repo.js';
import { DISBURSEMENT_TRANSITIONS, type DisbursementMove } from './states.js';

type Narrow = Parameters<typeof repo.move>[4];

type DealBrief = Pick<DealRow, 'id' | 'reference' | 'title' | 'currency' | 'workspace_id' | 'is_test'>;

async function dealOf(trx: Db, d: DisbursementRow): Promise<DealBrief> {
  const deal = await trx('deals').where({ id: d.deal_id }).first<DealBrief | undefined>('id', 'reference', 'title', 'currency', 'workspace_id', 'is_test');
  if (!deal) throw new Error(`disbursement ${d.id} names no deal`);
  return deal;
}

export interface Outcome {
  /** The operator label for staff moves (D9); absent for the worker. */
  actorLabel?: string;
  narrow?: Narrow;
}

/** queued | processing -> settled: the posting in flight -> sent, event disbursement.settled. Undefined when it is no longer open as `move` requires. */
export async function settleIn(trx: Db, d: DisbursementRow, move: Extract<DisbursementMove, 'sent' | 'settle'>, providerReference: string | null, o: Outcome = {}): Promise<DisbursementRow | undefined> {
  const now = clock.now();
  const moved = await repo.move(trx, d.id, DISBURSEMENT_TRANSITIONS[move], { settled_at: now, lease_until: null, provider_reference: providerReference, updated_at: now }, o.narrow);
  if (!moved) return undefined;
  if (!moved.is_test) await postSettled(trx, moved);
  await dealEvent(trx, null, await dealOf(trx, moved), 'disbursement.settled', `Payout of ${moved.amount} to "${moved.instruction_label}" settled`, {
    entityType: 'disbursement',
    entityId: moved.id,
    amount: moved.amount,
    actorLabel: o.actorLabel,
  });
  return moved;
}

/** queued | processing -> failed: the money back to the milestone (returned_amount and its account), event disbursement.failed. */
export async function failIn(trx: Db, d: DisbursementRow, move: Extract<DisbursementMove, 'refused' | 'fail'>, reason: string, o: Outcome = {}): Promise<DisbursementRow | undefined> {
  const now = clock.now();
  const moved = await repo.move(trx, d.id, DISBURSEMENT_TRANSITIONS[move], { failed_at: now, lease_until: null, failure_reason: reason.slice(0, 1000), updated_at: now }, o.narrow);
  if (!moved) return undefined;
  await trx('deal_milestones').where({ id: moved.milestone_id }).update({ returned_amount: trx.raw('returned_amount + ?', [moved.amount]), updated_at: now });
  if (!moved.is_test) await postFailed(trx, moved);
  const deal = await dealOf(trx, moved);
  await mailPayoutFailed(trx, deal, moved, reason);
  await dealEvent(trx, null, deal, 'disbursement.failed', `Payout of ${moved.amount} to "${moved.instruction_label}" failed: ${reason.slice(0, 200)}`, {
    entityType: 'disbursement',
    entityId: moved.id,
    amount: moved.amount,
    actorLabel: o.actorLabel,
  });
  return moved;
}
