/** Spec shapes of approvals (enterprise spec 2 Approval item and its detail answer; 4.6). */
import { serializeEvent } from '../enterprise/serialize.js';
import { serializeApprovalSlot } from '../deals/extras.js';
import { serializeDocumentFor } from '../documents/serialize.js';
import { maskAccountNumber } from '../payouts/instruction-serialize.js';
import type { ApprovalItemRow } from './repo.js';
import type { ApprovalDetail } from './service.js';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** What a decision changes on its own: nothing once the money is released (release is a separate finance step). */
export const REVERSIBILITY = 'final_once_released';

/** Approval item (spec 2). */
export function serializeItem(i: ApprovalItemRow) {
  return {
    milestone_id: i.milestone_id,
    deal_id: i.deal_id,
    deal_reference: i.deal_reference,
    deal_title: i.deal_title,
    milestone_title: i.milestone_title,
    status: i.status,
    amount: i.amount,
    currency: i.currency,
    counterparty_name: i.counterparty_name,
    risk_tier: i.risk_tier,
    evidence_summary: i.evidence_summary,
    evidence_submitted_at: iso(i.evidence_submitted_at),
    due_at: iso(i.due_at),
    approvals_required: i.approvals_required,
    approvals_done: i.approvals_done,
    my_decision: i.my_decision,
    submitted_by: i.submitted_by_id ? { id: i.submitted_by_id, name: i.submitted_by_name } : null,
  };
}

/** Whole percent of `part` in `total`, rounded down (0 for an empty deal). */
const percent = (part: number, total: number): number => (total === 0 ? 0 : Math.floor((part * 100) / total));

/**
 * The detail answer (spec 2): `item`, `proposed` (the payout once released and where it
 * goes), `how_we_got_here`, `impact` (of releasing this milestone), `decision`, `evidence`.
 * Progress is the released share of the deal's milestones that are not cancelled. Evidence
 * files stored with the service are answered as links signed for the reader.
 */
export function serializeApprovalDetail(d: ApprovalDetail, readerId: string) {
  const m = d.milestone;
  const live = d.milestones.filter((x) => x.status !== 'cancelled');
  const total = live.reduce((s, x) => s + x.amount, 0);
  const released = live.filter((x) => x.status === 'released').reduce((s, x) => s + x.amount, 0);
  const stillOpen = m.status !== 'released' && m.status !== 'cancelled';
  return {
    item: serializeItem(d.item),
    proposed: {
      amount: m.payout_amount,
      currency: d.item.currency,
      destination: d.destination
        ? { label: d.destination.label, bank_name: d.destination.bank_name, account_number_masked: maskAccountNumber(d.destination.account_number_last4) }
        : null,
      deal_progress_pct: percent(released, total),
    },
    how_we_got_here: d.events.map(serializeEvent),
    impact: {
      // What the counterparty receives (the milestone's payout_amount) and what leaves escrow (its funding_amount: the payout and the platform fee).
      counterparty_paid: m.payout_amount,
      money_moved: m.funding_amount,
      milestones_remaining: live.filter((x) => x.status !== 'released' && x.id !== m.id).length,
      deal_progress_after_pct: percent(released + (stillOpen ? m.amount : 0), total),
    },
    decision: {
      risk_tier: d.item.risk_tier,
      approvals_required: m.approvals_required,
      approvals: d.slots.map(serializeApprovalSlot),
      reversibility: REVERSIBILITY,
      expires_at: null,
    },
    evidence: d.evidence.map((doc) => serializeDocumentFor(doc, readerId)),
  };
}
