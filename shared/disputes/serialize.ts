/** Spec shapes of disputes (consumer spec section 2: Dispute, extended for list and get). */
import type { DisputeRow, DisputeView, MessageRow } from './repo.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function serializeDispute(d: DisputeRow) {
  return {
    id: d.id,
    escrow_id: d.escrow_id,
    initiator_id: d.initiator_id,
    reason_category: d.reason_category,
    description: d.description,
    status: d.status,
    priority: d.priority,
    resolution_note: d.resolution_note,
    resolved_by: d.resolved_by,
    resolved_at: iso(d.resolved_at),
    created_at: d.created_at.toISOString(),
    updated_at: d.updated_at.toISOString(),
  };
}

export function serializeDisputeView(d: DisputeView) {
  return {
    ...serializeDispute(d),
    item_name: d.item_name,
    amount: `${d.amount}.00`,
    escrow_status: d.escrow_status,
    buyer_id: d.buyer_id,
    seller_id: d.seller_id,
    buyer_email: d.buyer_email,
    buyer_full_name: d.buyer_full_name,
    seller_email: d.seller_email,
    seller_full_name: d.seller_full_name,
  };
}

export function serializeMessage(m: MessageRow) {
  return {
    id: m.id,
    dispute_id: m.dispute_id,
    sender_id: m.sender_id,
    sender_role: m.sender_role,
    message: m.message,
    evidence_urls: m.evidence_urls,
    created_at: m.created_at.toISOString(),
  };
}

/** The staff ruling answer: the extended Dispute with its outcome (release, refund or hold). */
export function serializeRuling(d: DisputeView) {
  return { dispute: { ...serializeDisputeView(d), outcome: d.outcome } };
}

/** The dispute list's pagination: `total` as a string and no total_pages, as the spec shows it. */
export function disputePagination(page: number, limit: number, total: number) {
  return { page, limit, total: String(total) };
}
