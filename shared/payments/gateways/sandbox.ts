/**
 * The sandbox gateway (decision D4): available in SANDBOX_MODE only, supports every method.
 * Charges are kept in `sandbox_charges` (the gateway's own view, which its status API
 * answers from); completion arrives as a signed callback on /api/webhooks/inbound with
 * `X-Sandbox-Signature: hex HMAC-SHA256(raw body, SANDBOX_GATEWAY_SECRET)`.
 */
import { createHmac } from 'node:crypto';
import { clock } from '../../clock.js';
import { config } from '../../config.js';
import { safeEqual } from '../../crypto.js';
import type { Knex } from 'knex';
import { createDb, prepared } from '../../db.js';
import type { ChargeRequest, ChargeResult, GatewayAdapter, GatewayStatus, InboundDelivery, ParsedCallback } from './types.js';

/**
 * The sandbox gateway stands for an outside system, so it keeps its own two connections:
 * `pay` calls it while its transaction holds a connection of the main pool, and a charge
 * written through that same pool waited for a second connection. Twelve concurrent pays
 * on a pool of ten then starved each other until the acquire timeout (npm run chaos).
 */
let sandboxDb: Knex | undefined;
const gatewayDb = (): Knex => (sandboxDb ??= createDb(config.databaseUrl, 2));

/** Closes the sandbox gateway's connections (process shutdown, tests). */
export async function closeSandboxGateway(): Promise<void> {
  const open = sandboxDb;
  sandboxDb = undefined;
  await open?.destroy();
}

export function sandboxSignature(rawBody: string, secret = config.gateways.sandboxSecret): string {
  return createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex');
}

const STATUSES: readonly GatewayStatus[] = ['paid', 'expired', 'failed'];

export const sandboxAdapter: GatewayAdapter = {
  name: 'sandbox',
  loaded: () => config.sandboxMode,
  signsStatus: true, // HMAC over the whole body

  async createCharge(req: ChargeRequest): Promise<ChargeResult> {
    const now = clock.now();
    // A named statement, as a gateway's own service would keep it (and as the bench's floor sends it).
    await prepared(
      'sandbox_charge_insert',
      'INSERT INTO sandbox_charges (gateway_order_id, amount, method, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)',
      [req.gatewayOrderId, req.amount, req.method, now],
      gatewayDb(),
    );
    // The sandbox has no hosted page or app to open: it is completed with the simulate route.
    return {
      paymentUrl: null,
      qrString: req.method === 'qris' ? `00020101021226SANDBOX${req.gatewayOrderId}5204000053033605802ID5405${req.amount}6304` : null,
      qrUrl: null,
      vaNumber: req.method === 'bank_transfer' ? `8808${req.gatewayOrderId.replace(/[^0-9]/g, '').padEnd(12, '0').slice(0, 12)}` : null,
      vaBank: req.method === 'bank_transfer' ? 'SANDBOX' : null,
      deepLinkUrl: null,
      raw: { sandbox: true, gateway_order_id: req.gatewayOrderId },
    };
  },

  recognises: (d: InboundDelivery) => d.headers['x-sandbox-signature'] !== undefined,

  verify(d: InboundDelivery): boolean {
    const given = (d.headers['x-sandbox-signature'] ?? '').toLowerCase();
    return /^[0-9a-f]{64}$/.test(given) && safeEqual(given, sandboxSignature(d.rawBody));
  },

  parse(d: InboundDelivery): ParsedCallback {
    const body = (d.json ?? {}) as Record<string, unknown>;
    const status = body.status as GatewayStatus;
    if (body.provider !== 'sandbox' || typeof body.gateway_order_id !== 'string' || !STATUSES.includes(status)) {
      throw new Error('sandbox callback is malformed');
    }
    // Absent (or null): nothing to compare. Present: whole rupiah, or the callback is malformed.
    if (body.amount !== undefined && body.amount !== null && !(Number.isSafeInteger(body.amount) && (body.amount as number) >= 0)) {
      throw new Error('sandbox callback amount is not whole rupiah');
    }
    const amount = typeof body.amount === 'number' ? body.amount : null;
    return { gatewayOrderId: body.gateway_order_id, status, amount, eventId: null };
  },

  async queryStatus(gatewayOrderId: string) {
    const row = (await gatewayDb()('sandbox_charges').select('status', 'amount').where({ gateway_order_id: gatewayOrderId }).first()) as
      | { status: GatewayStatus; amount: number }
      | undefined;
    return row ? { status: row.status, amount: row.amount } : { status: 'failed' as const, amount: null };
  },
};
