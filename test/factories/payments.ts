/** Payment factories: gateway rows as an operator would configure them, and signed sandbox callbacks. */
import { clock } from '../../shared/clock.js';
import { db } from '../../shared/db.js';
import { sandboxSignature } from '../../shared/payments/gateways/sandbox.js';

export interface GatewayOptions {
  provider?: string;
  displayName?: string;
  methods?: string[];
  isManual?: boolean;
  enabled?: boolean;
  inMaintenance?: boolean;
  feePercent?: string;
  feeFixed?: number;
  sortOrder?: number;
  config?: unknown;
}

export async function createGateway(o: GatewayOptions = {}): Promise<string> {
  const now = clock.now();
  const provider = o.provider ?? 'sandbox';
  await db('payment_gateways').insert({
    provider,
    display_name: o.displayName ?? provider,
    supported_methods: o.methods ?? ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'],
    is_manual: o.isManual ?? false,
    enabled: o.enabled ?? true,
    in_maintenance: o.inMaintenance ?? false,
    config: o.config === undefined ? null : JSON.stringify(o.config),
    fee_percent: o.feePercent ?? '0.7',
    fee_fixed: o.feeFixed ?? 0,
    sort_order: o.sortOrder ?? 0,
    created_at: now,
    updated_at: now,
  });
  return provider;
}

/** A sandbox callback body and its signature header, as the sandbox gateway would send them. */
export function sandboxCallback(gatewayOrderId: string, status: 'paid' | 'expired' | 'failed', amount: number, secret?: string) {
  const body = JSON.stringify({ provider: 'sandbox', gateway_order_id: gatewayOrderId, status, amount });
  return { body, signature: sandboxSignature(body, secret) };
}

/**
 * Payment rows that are not `failed`. A refused gateway charge leaves its reserved row
 * failed (the row is committed before the gateway is called: rule 7), never a live link.
 */
export async function unfailedPayments(): Promise<number> {
  const [row] = await db('payments').whereNot({ status: 'failed' }).count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}
