/** Spec shapes of deals and milestones (enterprise spec 2 Deal, Milestone, Deal fee; 4.4). */
import { serializeEvent } from '../enterprise/serialize.js';
import { FEE_PAYEE, FEE_PAYER } from './fees.js';
import type { DealDetail, DealListItem } from './service.js';
import type { Funded } from './moves.js';
import type { Ruled } from './rulings.js';
import type { DealWithNames, MilestoneRow } from './repo.js';
import { serializeDocumentFor } from '../documents/serialize.js';
import { NO_EXTRAS, serializeApprovalSlot, serializeDisbursementBrief, type MilestoneExtras } from './extras.js';
import { HELD, type DealStatus } from './states.js';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

function totals(milestones: MilestoneRow[]) {
  const live = milestones.filter((m) => m.status !== 'cancelled');
  const sum = (ms: MilestoneRow[]) => ms.reduce((s, m) => s + m.amount, 0);
  return {
    total_amount: sum(live),
    funded_amount: sum(live.filter((m) => HELD.includes(m.status) || m.status === 'released')),
    // What a split ruling refunded to the workspace was never released.
    released_amount: live.filter((m) => m.status === 'released').reduce((s, m) => s + m.amount - m.refunded_amount, 0),
  };
}

export function serializeFee(d: DealWithNames, milestones: MilestoneRow[]) {
  // Funding and payout totals over the same (not cancelled) milestones as total_amount, from
  // their own shares: total + buyer_fee and total - seller_fee while none is cancelled, and
  // never below zero once some are (a cancelled deal funds and pays out nothing).
  const live = milestones.filter((m) => m.status !== 'cancelled');
  return {
    rate_bp: d.fee_rate_bp,
    rate_percent: d.fee_rate_bp / 100,
    min_fee: d.fee_min,
    tier: d.fee_tier_min_volume === null ? null : { min_volume: d.fee_tier_min_volume },
    volume_basis: d.fee_volume_basis,
    platform_fee: d.platform_fee,
    allocation: d.fee_allocation,
    buyer_percent: d.fee_buyer_percent,
    seller_percent: 100 - d.fee_buyer_percent,
    buyer_fee: d.buyer_fee,
    seller_fee: d.seller_fee,
    funding_total: live.reduce((s, m) => s + m.funding_amount, 0),
    payout_total: live.reduce((s, m) => s + m.payout_amount, 0),
    payer: FEE_PAYER,
    payee: FEE_PAYEE,
    frozen: d.fee_frozen,
  };
}

export function serializeDeal(d: DealWithNames, milestones: MilestoneRow[], status: DealStatus, workspaceCountry: string) {
  return {
    id: d.id,
    reference: d.reference,
    title: d.title,
    description: d.description,
    external_ref: d.external_ref,
    status,
    currency: d.currency,
    ...totals(milestones),
    cross_border: d.counterparty_country_code !== workspaceCountry,
    owner: { id: d.owner_id, name: d.owner_name },
    created_at: iso(d.created_at),
    updated_at: iso(d.updated_at),
    counterparty: { id: d.counterparty_id, name: d.counterparty_name, country_code: d.counterparty_country_code, kyb_status: d.counterparty_kyb_status, relationship: d.counterparty_relationship },
    fee: serializeFee(d, milestones),
    is_test: d.is_test,
  };
}

/** A milestone for one reader (`readerId`): its documents' stored uploads are links signed for them. */
export function serializeMilestone(m: MilestoneRow, readerId: string, extras: MilestoneExtras = NO_EXTRAS) {
  return {
    id: m.id,
    sequence_no: m.sequence_no,
    title: m.title,
    required_evidence: m.required_evidence,
    amount: m.amount,
    status: m.status,
    due_at: iso(m.due_at),
    funded_at: iso(m.funded_at),
    funding_method: m.funding_method,
    evidence_summary: m.evidence_summary,
    evidence_submitted_at: iso(m.evidence_submitted_at),
    approved_at: iso(m.approved_at),
    released_at: iso(m.released_at),
    disputed_at: iso(m.disputed_at),
    dispute_reason: m.dispute_reason,
    approvals_required: m.approvals_required,
    approvals: (extras.approvals.get(m.id) ?? []).map(serializeApprovalSlot),
    documents: (extras.documents.get(m.id) ?? []).map((d) => serializeDocumentFor(d, readerId)),
    disbursements: (extras.disbursements.get(m.id) ?? []).map(serializeDisbursementBrief),
    buyer_fee: m.buyer_fee,
    seller_fee: m.seller_fee,
    funding_amount: m.funding_amount,
    payout_amount: m.payout_amount,
  };
}

/** GET /deals/:id and every deal write: { deal, milestones, events (last 100), outcome }, for one reader. */
export function serializeDetail(d: DealDetail, readerId: string) {
  const released = d.milestones.filter((m) => m.released_at !== null && m.funded_at !== null);
  const minutes = released.map((m) => (new Date(m.released_at!).getTime() - new Date(m.funded_at!).getTime()) / 60_000);
  return {
    deal: serializeDeal(d.deal, d.milestones, d.status, d.workspaceCountry),
    milestones: d.milestones.map((m) => serializeMilestone(m, readerId, d.extras)),
    events: d.events.map(serializeEvent),
    outcome: {
      time_to_release_minutes: minutes.length ? Math.round(minutes.reduce((a, b) => a + b, 0) / minutes.length) : null,
      approvals_by_people: d.approvalsByPeople,
      // A rejection sends the milestone back for new evidence too (approvals/service.ts).
      revisions: d.events.filter((e) => e.event === 'milestone.revision_requested' || e.event === 'milestone.rejected').length,
    },
  };
}

/** A deal list item: the deal plus counterparty_name, milestone_count, released_count, platform_fee. */
export function serializeListItem(i: DealListItem, workspaceCountry: string) {
  return {
    ...serializeDeal(i.deal, i.milestones, i.status, workspaceCountry),
    counterparty_name: i.deal.counterparty_name,
    milestone_count: i.milestones.filter((m) => m.status !== 'cancelled').length,
    released_count: i.milestones.filter((m) => m.status === 'released').length,
    platform_fee: i.deal.platform_fee,
  };
}

/** POST /v1/admin/enterprise/milestones/:id/resolve-dispute (D10: the moved resource): { milestone, deal_status }. */
export function serializeRuled(r: Ruled, readerId: string) {
  return { milestone: serializeMilestone(r.milestone, readerId, r.extras), deal_status: r.dealStatus };
}

/** POST .../fund (4.4): { milestone { id, deal_id, status, amount, buyer_fee, funding_amount, funding_method }, deal_status }. */
export function serializeFunded(f: Funded) {
  const m = f.milestone;
  return {
    milestone: { id: m.id, deal_id: m.deal_id, status: m.status, amount: m.amount, buyer_fee: m.buyer_fee, funding_amount: m.funding_amount, funding_method: m.funding_method },
    deal_status: f.dealStatus,
  };
}
