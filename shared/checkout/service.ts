/**
 * The hosted checkout at `escrow_url` (/pay/:id): what its page shows to whom, and the
 * two forms it posts (pick a method, claim a manual transfer). The payment itself goes
 * through the payments service; this owns the page's one rule of its own, which link is
 * still live.
 */
import type { Actor } from '../actors.js';
import { clock } from '../clock.js';
import { db } from '../db.js';
import { isUuid } from '../ids.js';
import type { EscrowRow } from '../escrows/repo.js';
import * as escrowRepo from '../escrows/repo.js';
import { isExpired } from '../escrows/service.js';
import { claimPayment, type ClaimResult } from '../payments/manual.js';
import type { PaymentRow } from '../payments/repo.js';
import * as paymentRepo from '../payments/repo.js';
import { availableGateways, pay } from '../payments/service.js';
import { surchargeOf } from '../payments/surcharge.js';
import type { UserRow } from '../users/repo.js';
import * as users from '../users/repo.js';
import { checkoutErrors } from './errors.js';
import { renderQrDataUrl } from './qr.js';

/** One way to pay, as the method picker lists it. */
export interface MethodOption {
  provider: string;
  displayName: string;
  method: string;
  surcharge: number;
  total: number;
}

/** The signed-in viewer of a checkout page (the route's page session). */
export interface CheckoutViewer {
  userId: string;
}

/** What the checkout page shows, from the escrow's state and who looks at it. */
export type CheckoutPage<V extends CheckoutViewer> =
  | { kind: 'ended'; reason: 'expired' | 'cancelled' }
  | { kind: 'guest'; escrow: EscrowRow; seller: UserRow; viewer: null; pending: boolean }
  | { kind: 'notBuyer' | 'paid'; escrow: EscrowRow; seller: UserRow; viewer: V; pending: boolean }
  | { kind: 'paying'; escrow: EscrowRow; seller: UserRow; viewer: V; pending: true; live: LivePayment | null; options: MethodOption[] | null; lastFailed: boolean };

/** The buyer's live link, with its QRIS image when it has one. */
export interface LivePayment {
  payment: PaymentRow;
  qrDataUrl: string | null;
}

/**
 * A link the buyer can still pay: waiting for the gateway or for staff; a gateway link
 * only until it expires (a manual transfer has no deadline of its own).
 */
export function isLive(p: PaymentRow, now = clock.now()): boolean {
  return (p.status === 'pending' || p.status === 'awaiting_confirmation') && (p.is_manual || !p.expires_at || p.expires_at > now);
}

async function methodOptions(amount: number): Promise<MethodOption[]> {
  const gateways = await availableGateways();
  return gateways.flatMap((g) =>
    g.supported_methods.map((method) => {
      const surcharge = surchargeOf(amount, g);
      return { provider: g.provider, displayName: g.display_name, method, surcharge, total: amount + surcharge };
    }),
  );
}

/**
 * GET /pay/:id. The viewer is asked for only once the escrow is known to be open (an
 * ended escrow's page looks the same to everyone, and reads no session).
 */
export async function checkoutPage<V extends CheckoutViewer>(id: string, viewerOf: () => Promise<V | null>): Promise<CheckoutPage<V>> {
  const escrow = isUuid(id) ? await escrowRepo.findById(db, id) : undefined;
  if (!escrow) throw checkoutErrors.escrowNotFound();
  if (isExpired(escrow)) return { kind: 'ended', reason: 'expired' };
  if (escrow.status === 'cancelled') return { kind: 'ended', reason: 'cancelled' };
  const seller = await users.findById(db, escrow.seller_id);
  if (!seller) throw checkoutErrors.escrowNotFound();
  const viewer = await viewerOf();
  const pending = escrow.status === 'pending_payment';
  if (!viewer) return { kind: 'guest', escrow, seller, viewer, pending };
  if (escrow.buyer_id !== viewer.userId) return { kind: 'notBuyer', escrow, seller, viewer, pending };
  if (!pending) return { kind: 'paid', escrow, seller, viewer, pending };
  const current = await paymentRepo.currentForEscrow(db, escrow.id);
  if (current && isLive(current)) {
    const live = { payment: current, qrDataUrl: current.qr_string ? await renderQrDataUrl(current.qr_string) : null };
    // Another method replaces a gateway link (the old one simply expires unpaid); a claimed transfer waits for staff.
    const options = current.status === 'pending' ? await methodOptions(escrow.amount) : null;
    return { kind: 'paying', escrow, seller, viewer, pending, live, options, lastFailed: false };
  }
  return { kind: 'paying', escrow, seller, viewer, pending, live: null, options: await methodOptions(escrow.amount), lastFailed: current !== undefined };
}

/**
 * POST /pay/:id/pay. A resubmitted form (double click, back button) reuses the live link
 * of the same choice instead of opening another.
 */
export async function payFromPage(actor: Actor, escrowId: string, choice: { provider: string; method: string }): Promise<void> {
  const current = isUuid(escrowId) ? await paymentRepo.currentForEscrow(db, escrowId) : undefined;
  const sameLive =
    current !== undefined &&
    current.buyer_id === actor.userId &&
    current.status === 'pending' &&
    current.provider === choice.provider &&
    current.method === choice.method &&
    (!current.expires_at || current.expires_at > clock.now());
  if (!sameLive) await pay(undefined, actor, escrowId, choice);
}

/** POST /pay/:id/claim: the buyer says they transferred (an optional reference of at most 200 characters). */
export async function claimFromPage(actor: Actor, escrowId: string, reference: string): Promise<ClaimResult> {
  const given = reference.trim();
  if (given.length > 200) throw checkoutErrors.referenceTooLong();
  return claimPayment(undefined, actor, escrowId, given === '' ? {} : { reference: given });
}
