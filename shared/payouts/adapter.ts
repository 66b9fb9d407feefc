/**
 * Payout adapters for enterprise disbursements (decision 0019), the shape of the consumer
 * withdrawals' adapters (shared/withdrawals/payout-adapter.ts): the payout worker calls
 * `send` outside any database transaction, after it has claimed the disbursement and
 * re-checked the destination's verification signature; `reference` (`disb_<id>`) is the
 * provider's idempotency key, so a repeated call for one disbursement never pays twice.
 * A sandbox deal's payouts always go through the sandbox adapter, whatever is configured:
 * test money never reaches a real provider.
 */
import { config } from '../config.js';

export interface DisbursementRequest {
  /** Stable per disbursement (`disb_<id>`): the provider's idempotency key / external id. */
  reference: string;
  disbursementId: string;
  amount: number;
  currency: string;
  destination: Readonly<{ bank_name: string; account_holder: string; account_number: string }>;
}

/** `paid`: the provider moved the money. `failed`: refused for good. A transient problem is a thrown error (retried). */
export type DisbursementResult = { outcome: 'paid'; providerReference: string } | { outcome: 'failed'; reason: string };

export interface DisbursementAdapter {
  readonly name: string;
  /** False when no provider is configured: staff settle or fail payouts by hand (D10). */
  readonly automatic: boolean;
  send(request: DisbursementRequest): Promise<DisbursementResult>;
}

/** Sandbox: every payout is paid at once, its transfer id derived from the reference (idempotent by construction). */
export const sandboxDisbursementAdapter: DisbursementAdapter = {
  name: 'sandbox',
  automatic: true,
  send: (request) => Promise.resolve({ outcome: 'paid', providerReference: `sandbox-${request.reference}` }),
};

/** No provider: staff pay by hand and settle through the console or D10. */
export const manualDisbursementAdapter: DisbursementAdapter = {
  name: 'manual',
  automatic: false,
  send: () => Promise.reject(new Error('the manual adapter sends nothing; staff settle payouts by hand')),
};

let override: DisbursementAdapter | null = null;

/** The adapter for a payout: sandbox deals always the sandbox one; live ones the configured one (sandbox in SANDBOX_MODE, else manual). */
export function disbursementAdapter(isTest: boolean): DisbursementAdapter {
  if (isTest) return sandboxDisbursementAdapter;
  if (override) return override;
  return config.sandboxMode ? sandboxDisbursementAdapter : manualDisbursementAdapter;
}

/** Tests only: replace the adapter of live payouts (null restores the configured one). */
export function setDisbursementAdapter(adapter: DisbursementAdapter | null): void {
  override = adapter;
}
