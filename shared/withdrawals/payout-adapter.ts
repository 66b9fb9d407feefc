/**
 * Payout adapters (issue 10, decision 0008): how approved withdrawals leave the platform.
 * The payout worker calls `send` outside any database transaction, after it has claimed
 * the withdrawal; an adapter for a real disbursement provider (Xendit, Midtrans Iris,
 * Flip...) implements the same interface, passing `reference` as the provider's
 * idempotency key so a repeated call for one withdrawal never pays twice.
 */
import { config } from '../config.js';
import type { WithdrawalMethod } from './states.js';

export interface PayoutRequest {
  /** Stable per withdrawal (`wd_<id>`): the provider's idempotency key / external id. */
  reference: string;
  withdrawalId: string;
  /** What the destination receives (the withdrawal's net amount), whole rupiah. */
  amount: number;
  currency: 'IDR';
  method: WithdrawalMethod;
  destination: Readonly<Record<string, string>>;
}

/**
 * - `paid`: the provider moved the money; `providerReference` is its transfer id.
 * - `failed`: refused for good (closed account, invalid destination): the withdrawal goes
 *   back to `approved` with the reason, for staff to reject (refund) or pay by hand.
 * A transient problem (timeout, 5xx) is a thrown error: the job is retried, and the retry
 * calls `send` again with the same reference.
 */
export type PayoutResult = { outcome: 'paid'; providerReference: string } | { outcome: 'failed'; reason: string };

export interface PayoutAdapter {
  readonly name: string;
  /**
   * False for an adapter that cannot move money itself (no provider configured): the
   * worker then leaves approved withdrawals for staff to pay by hand and mark paid.
   */
  readonly automatic: boolean;
  send(request: PayoutRequest): Promise<PayoutResult>;
}

/**
 * Sandbox: every payout succeeds at once; its transfer id is derived from the reference,
 * so a repeated call answers the same (idempotent by construction).
 */
export const sandboxPayoutAdapter: PayoutAdapter = {
  name: 'sandbox',
  automatic: true,
  send(request) {
    return Promise.resolve({ outcome: 'paid', providerReference: `sandbox-${request.reference}` });
  },
};

/** No provider: staff pay by hand and use mark-paid. */
export const manualPayoutAdapter: PayoutAdapter = {
  name: 'manual',
  automatic: false,
  send() {
    return Promise.reject(new Error('the manual payout adapter sends nothing; staff mark withdrawals paid'));
  },
};

let override: PayoutAdapter | null = null;

/** The adapter in use: the sandbox one in sandbox mode, otherwise manual payouts. */
export function payoutAdapter(): PayoutAdapter {
  if (override) return override;
  return config.sandboxMode ? sandboxPayoutAdapter : manualPayoutAdapter;
}

/** Tests only: replace the adapter (null restores the configured one). */
export function setPayoutAdapter(adapter: PayoutAdapter | null): void {
  override = adapter;
}
