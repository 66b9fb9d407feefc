/** Spec shapes of escrows (consumer spec section 2): the Escrow resource and the public preview. */
import { config } from '../config.js';
import type { UserRow } from '../users/repo.js';
import { courierBySlug, trackUrl } from '../tracking/couriers.js';
import type { EscrowRow } from './repo.js';

/** The hosted checkout page of an escrow (the page itself comes with the checkout feature). */
export function escrowUrl(id: string): string {
  return `${config.publicBaseUrl}/pay/${id}`;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function serializeTracking(e: EscrowRow) {
  if (!e.courier || !e.tracking_number) return null;
  const courier = courierBySlug(e.courier);
  return {
    courier: e.courier,
    courier_name: courier?.name ?? e.courier,
    number: e.tracking_number,
    track_url: courier ? trackUrl(courier, e.tracking_number) : null,
  };
}

export function serializeEscrow(e: EscrowRow) {
  const tracking = serializeTracking(e);
  return {
    id: e.id,
    buyer_id: e.buyer_id,
    seller_id: e.seller_id,
    item_name: e.item_name,
    amount: String(e.amount),
    description: e.description,
    category: e.category,
    status: e.status,
    partner_ref: e.partner_ref,
    partner_sig_version: e.partner_sig_version,
    source: e.source,
    created_at: e.created_at.toISOString(),
    updated_at: e.updated_at.toISOString(),
    escrow_url: escrowUrl(e.id),
    expires_at: e.expires_at.toISOString(),
    ...(tracking ? { tracking } : {}),
    paid_at: iso(e.paid_at),
    sent_at: iso(e.sent_at),
    received_at: iso(e.received_at),
    released_at: iso(e.released_at),
    disputed_at: iso(e.disputed_at),
    refunded_at: iso(e.refunded_at),
    cancelled_at: iso(e.cancelled_at),
    cancel_reason: e.cancel_reason,
    auto_release_at: iso(e.auto_release_at),
    extension_count: e.extension_count,
    platform_fee: e.fee_amount,
    seller_amount: e.fee_amount === null ? null : e.amount - e.fee_amount,
  };
}

/** Public: no buyer data, no internal ids beyond the seller's public id, no history. */
export function serializePreview(e: EscrowRow, seller: UserRow) {
  return {
    id: e.id,
    item_name: e.item_name,
    description: e.description,
    amount: e.amount,
    category: e.category,
    status: e.status,
    seller: { id: seller.id, display_name: seller.full_name, kyc_verified: seller.kyc_status === 'verified' },
    expires_at: e.expires_at.toISOString(),
    created_at: e.created_at.toISOString(),
  };
}

/** A seller's link-signing secret: in clear once (rotate), else its masked preview. */
export function serializeLinkSecret(s: { secret: string | null; created_at: Date | null }) {
  return { link_secret: s.secret, created_at: s.created_at?.toISOString() ?? null };
}
