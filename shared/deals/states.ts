/**
 * Milestone statuses and their one table of moves (enterprise spec section 3; D7, D10),
 * and the deal status computed from its milestones. A move not in this table does not
 * exist; each is a compare-and-set on the milestone's status (ARCHITECTURE rule 3).
 *
 *   draft --activate (operator; the deal's fee freezes)--> awaiting_funding
 *   awaiting_funding --fund (finance, sandbox) | confirm_funding (staff, live)--> funded
 *   funded | revision_requested --submit_evidence (operator)--> evidence_submitted
 *   evidence_submitted --approve (last approval of the round)--> approved
 *   evidence_submitted --reject | revision--> revision_requested
 *   approved --release (finance; 1 to 5 verified payout instructions)--> released
 *   funded | evidence_submitted | approved --dispute (operator)--> disputed
 *   disputed --rule_release | rule_split (staff ruling; a split refunds part first)--> approved
 *   disputed --rule_refund (staff ruling: everything back to the workspace)--> cancelled
 *   draft | awaiting_funding --cancel (the deal, while no milestone is funded)--> cancelled
 *   unfinished milestones of a sandbox deal --sandbox_closed (the workspace went live)--> cancelled
 */
export const MILESTONE_STATUSES = [
  'draft',
  'awaiting_funding',
  'funded',
  'evidence_submitted',
  'revision_requested',
  'approved',
  'released',
  'disputed',
  'cancelled',
] as const;
export type MilestoneStatus = (typeof MILESTONE_STATUSES)[number];

export interface MilestoneTransition {
  from: readonly MilestoneStatus[];
  to: MilestoneStatus;
}

export const MILESTONE_TRANSITIONS = {
  activate: { from: ['draft'], to: 'awaiting_funding' },
  fund: { from: ['awaiting_funding'], to: 'funded' },
  confirm_funding: { from: ['awaiting_funding'], to: 'funded' },
  submit_evidence: { from: ['funded', 'revision_requested'], to: 'evidence_submitted' },
  approve: { from: ['evidence_submitted'], to: 'approved' },
  request_revision: { from: ['evidence_submitted'], to: 'revision_requested' },
  release: { from: ['approved'], to: 'released' },
  dispute: { from: ['funded', 'evidence_submitted', 'approved'], to: 'disputed' },
  rule_release: { from: ['disputed'], to: 'approved' },
  rule_split: { from: ['disputed'], to: 'approved' },
  rule_refund: { from: ['disputed'], to: 'cancelled' },
  cancel: { from: ['draft', 'awaiting_funding'], to: 'cancelled' },
  sandbox_closed: { from: ['draft', 'awaiting_funding', 'funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed'], to: 'cancelled' },
} as const satisfies Record<string, MilestoneTransition>;

export type MilestoneTransitionName = keyof typeof MILESTONE_TRANSITIONS;

/** True when the table has this move from this status. */
export const canMove = (status: MilestoneStatus, move: MilestoneTransitionName): boolean => (MILESTONE_TRANSITIONS[move].from as readonly MilestoneStatus[]).includes(status);

/** Money is held for these (funded and not yet released or returned). */
export const HELD: readonly MilestoneStatus[] = ['funded', 'evidence_submitted', 'revision_requested', 'approved', 'disputed'];

export const DEAL_STATUSES = ['draft', 'terms_review', 'awaiting_funding', 'funded', 'in_progress', 'disputed', 'completed', 'cancelled'] as const;
export type DealStatus = (typeof DEAL_STATUSES)[number];

/**
 * The deal's status from its milestones (section 3: computed, never set by callers), in
 * this order: cancelled (the deal was cancelled, or every milestone is); disputed (any
 * milestone disputed); completed (every live milestone released); in_progress (at least
 * one released); funded (money held for at least one); awaiting_funding (at least one
 * waits for funding); terms_review (activated on a live workspace whose counterparty is not
 * verified yet); draft. "Live" milestones are those not cancelled.
 */
export function dealStatus(deal: { cancelled_at: Date | null; terms_review: boolean }, milestones: readonly { status: MilestoneStatus }[]): DealStatus {
  const live = milestones.filter((m) => m.status !== 'cancelled');
  if (deal.cancelled_at !== null || live.length === 0) return 'cancelled';
  if (live.some((m) => m.status === 'disputed')) return 'disputed';
  if (live.every((m) => m.status === 'released')) return 'completed';
  if (live.some((m) => m.status === 'released')) return 'in_progress';
  if (live.some((m) => HELD.includes(m.status))) return 'funded';
  if (live.some((m) => m.status === 'awaiting_funding')) return 'awaiting_funding';
  return deal.terms_review ? 'terms_review' : 'draft';
}
