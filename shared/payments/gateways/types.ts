/**
 * One interface for every payment gateway (issue 8): create a charge, verify and parse an
 * inbound callback, and ask the gateway for a charge's status (the reconciliation poller).
 * Adapters hold no state; their secrets and base URLs come from configuration.
 */
export const PAYMENT_METHODS = ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** What a gateway says about a charge, in our words. */
export type GatewayStatus = 'pending' | 'paid' | 'expired' | 'failed';

export interface ChargeRequest {
  gatewayOrderId: string;
  /** Total to pay (escrow amount + surcharge), whole rupiah. */
  amount: number;
  method: PaymentMethod;
  expiresAt: Date;
  itemName: string;
  buyer: { id: string; email: string; fullName: string };
}

export interface ChargeResult {
  paymentUrl: string | null;
  qrString: string | null;
  qrUrl: string | null;
  vaNumber: string | null;
  vaBank: string | null;
  deepLinkUrl: string | null;
  /** Provider metadata kept as text (never relied on). */
  raw: unknown;
}

/** A verified callback, parsed. */
export interface ParsedCallback {
  gatewayOrderId: string;
  status: GatewayStatus;
  /** The amount the gateway reports as paid (or charged), whole rupiah; null when it says none. */
  amount: number | null;
  /** The gateway's id of this event when it has one (else the status decides duplicates). */
  eventId: string | null;
}

export interface InboundDelivery {
  /** Lower-cased header names. */
  headers: Record<string, string | undefined>;
  rawBody: string;
  /** The body parsed as JSON (null when it is not JSON). */
  json: unknown;
}

export class GatewayError extends Error {
  constructor(
    message: string,
    readonly detail?: unknown,
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

export interface GatewayAdapter {
  readonly name: string;
  /** True when the adapter has what it needs (its secret) to run. */
  loaded(): boolean;
  /**
   * Whether a verified callback's status is covered by what the gateway signs. When it is not
   * (Midtrans signs order_id + status_code + gross_amount, not transaction_status; Xendit sends
   * a static token and signs nothing), the worker confirms the status with `queryStatus` before
   * it acts on it (decision 0009).
   */
  readonly signsStatus: boolean;
  createCharge(request: ChargeRequest): Promise<ChargeResult>;
  /** Does this delivery come from this gateway? (headers and payload shape, before any signature check). */
  recognises(delivery: InboundDelivery): boolean;
  /** Verifies the signature on the raw body: false means forged (answer 403, change nothing). */
  verify(delivery: InboundDelivery): boolean;
  parse(delivery: InboundDelivery): ParsedCallback;
  /** The gateway's own answer about a charge (the poller, and the confirmation of an unsigned callback status). */
  queryStatus(gatewayOrderId: string): Promise<{ status: GatewayStatus; amount: number | null }>;
}
