/** Spec shapes of payments (consumer spec section 2): Payment record, Payment initiation, Gateway method entry. */
import { attentionOf, type ClaimResult } from './manual.js';
import type { GatewayRow, LinkView, PaymentRow, StaffPaymentRow } from './repo.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function serializePaymentRecord(p: PaymentRow) {
  return {
    id: p.id,
    escrow_id: p.escrow_id,
    order_id: p.order_id,
    provider: p.provider,
    method: p.method,
    gateway_order_id: p.gateway_order_id,
    amount: String(p.amount),
    status: p.status,
    qr_url: p.qr_url,
    va_number: p.va_number,
    redirect_url: p.redirect_url,
    raw_response: p.raw_response,
    expires_at: iso(p.expires_at),
    created_at: p.created_at.toISOString(),
    updated_at: p.updated_at.toISOString(),
    // Beyond the spec's list: what the hosted checkout needs to render the payment.
    qr_string: p.qr_string,
    va_bank: p.va_bank,
    deep_link_url: p.deep_link_url,
    escrow_amount: p.escrow_amount,
    surcharge: p.surcharge,
    is_manual: p.is_manual,
    paid_at: iso(p.paid_at),
    // null, or why the money did not simply pay its target: amount_mismatch, late_claim,
    // credited_to_buyer, returned_outside (decision 0009).
    flag: p.flag,
  };
}

/**
 * The answer of claim-payment (escrows and orders): the Payment record, whether the claim
 * came late (the escrow or order no longer takes it; staff credit or return the money) and
 * what happens next.
 */
export function serializeClaim(c: ClaimResult) {
  return { ...serializePaymentRecord(c.payment), late_claim: c.late, next_step: c.nextStep };
}

/** A payment as staff see it (the /v1/admin/payments answers). */
export function serializeStaffPayment(p: PaymentRow | StaffPaymentRow) {
  const listed = 'target_status' in p ? p : undefined;
  return {
    ...serializePaymentRecord(p),
    buyer_id: p.buyer_id,
    attention: attentionOf(p),
    claimed_at: iso(p.claimed_at),
    claim_reference: p.claim_reference,
    received_amount: p.received_amount,
    decided_by: p.decided_by,
    ...(listed ? { target_status: listed.target_status, reported_amount: listed.reported_amount === null ? null : Number(listed.reported_amount) } : {}),
  };
}

export function serializeInitiation(p: LinkView) {
  return {
    payment_link_id: p.id,
    gateway_order_id: p.gateway_order_id,
    method: p.method,
    provider: p.provider,
    payment_url: p.redirect_url,
    qr_code_url: p.qr_url,
    va_number: p.va_number,
    va_bank: p.va_bank,
    deep_link_url: p.deep_link_url,
    expires_at: iso(p.expires_at),
    amount: p.amount,
    escrow_amount: p.escrow_amount,
    surcharge: p.surcharge,
    qr_string: p.qr_string,
    is_manual: p.is_manual,
    order_id: p.order_id,
  };
}

export function serializeGateway(g: GatewayRow) {
  return {
    provider: g.provider,
    display_name: g.display_name,
    supported_methods: g.supported_methods,
    is_manual: g.is_manual,
    config: g.config ?? null,
    fee_percent: Number(g.fee_percent),
    fee_fixed: Number(g.fee_fixed),
  };
}
