/**
 * Risk checks of a withdrawal request (issue 10, decision 0008). Each check adds a flag;
 * the flags decide the action: `allow`, `review` (stored, held for a staff member who must
 * give a note to approve it) or `block` (403 RISK_BLOCKED, nothing stored). The result is
 * recorded on the withdrawal as `risk` { action, flags }.
 *
 * Runs inside the request's transaction with the user's row locked, so the user's own
 * counts cannot change under it; the destination is locked with a transaction advisory
 * lock, so two accounts using one destination at once see each other.
 */
import type { Db } from '../db.js';
import * as repo from './repo.js';
import type { RiskAction } from './states.js';

export const RISK = {
  /** An amount above this multiple of the user's largest paid withdrawal is "far above". */
  historyMultiple: 5,
  /** With no paid withdrawal yet, an amount from here on is "far above" (no history to go by). */
  noHistoryAmount: 10_000_000,
  /** A new or changed destination with an amount from here on is held for review. */
  newDestinationReviewAmount: 5_000_000,
  /** Window of the velocity check. */
  recentWindowMs: 24 * 3600_000,
  /** Earlier withdrawals in the window from which the request is held for review... */
  recentReview: 3,
  /** ...and from which it is refused. */
  recentBlock: 10,
  /** Other accounts using the same destination from which it is held for review... */
  sharedReview: 1,
  /** ...and from which it is refused. */
  sharedBlock: 3,
} as const;

export type RiskFlag =
  | 'first_withdrawal'
  | 'new_destination'
  | 'changed_destination'
  | 'amount_above_history'
  | 'many_recent_withdrawals'
  | 'shared_destination';

export interface RiskResult {
  action: RiskAction;
  flags: RiskFlag[];
}

export interface RiskInput {
  userId: string;
  amount: number;
  destinationKey: string;
  now: Date;
}

export interface RiskFacts {
  /** The user's earlier withdrawals, any status. */
  earlierCount: number;
  /** Earlier withdrawals created within the velocity window. */
  recentCount: number;
  /** Largest paid withdrawal (0 when none). */
  largestPaid: number;
  /** Paid withdrawals to this destination. */
  paidToDestination: number;
  /** Destination of the latest paid withdrawal (null when none). */
  lastPaidDestination: string | null;
  /** Other accounts with a withdrawal (any status) to this destination. */
  otherAccounts: number;
}

/** The decision from the facts (pure; unit-tested on its own). */
export function assessRisk(amount: number, destinationKey: string, f: RiskFacts): RiskResult {
  const flags: RiskFlag[] = [];
  let review = false;
  let block = false;
  if (f.earlierCount === 0) flags.push('first_withdrawal');
  const isNew = f.paidToDestination === 0;
  const changed = f.lastPaidDestination !== null && f.lastPaidDestination !== destinationKey;
  if (isNew) flags.push('new_destination');
  if (changed) flags.push('changed_destination');
  if ((isNew || changed) && amount >= RISK.newDestinationReviewAmount) review = true;
  const far = f.largestPaid > 0 ? amount > f.largestPaid * RISK.historyMultiple : amount >= RISK.noHistoryAmount;
  if (far) {
    flags.push('amount_above_history');
    review = true;
  }
  if (f.recentCount >= RISK.recentReview) {
    flags.push('many_recent_withdrawals');
    review = true;
    if (f.recentCount >= RISK.recentBlock) block = true;
  }
  if (f.otherAccounts >= RISK.sharedReview) {
    flags.push('shared_destination');
    review = true;
    if (f.otherAccounts >= RISK.sharedBlock) block = true;
  }
  return { action: block ? 'block' : review ? 'review' : 'allow', flags };
}

/** Reads the facts and decides. Call with the user's row locked. */
export async function checkRisk(trx: Db, input: RiskInput): Promise<RiskResult> {
  await repo.lockDestination(trx, input.destinationKey);
  const since = new Date(input.now.getTime() - RISK.recentWindowMs);
  return assessRisk(input.amount, input.destinationKey, await repo.riskFacts(trx, input.userId, input.destinationKey, since));
}
