/** The sandbox gateway's tools for integrators (decision D4). */
import type { Actor } from '../actors.js';
import { clock } from '../clock.js';
import { config } from '../config.js';
import { db } from '../db.js';
import { ingestCallback, type IngestResult } from './callbacks.js';
import { paymentErrors } from './errors.js';
import { sandboxSignature } from './gateways/sandbox.js';
import * as repo from './repo.js';


/**
 * POST /api/sandbox/payments/:gateway_order_id/simulate: the sandbox gateway records the
 * outcome on its side and sends the signed callback through the same pipeline.
 */
export async function simulateSandbox(actor: Actor, gatewayOrderId: string, status: 'paid' | 'expired' | 'failed'): Promise<IngestResult> {
  const payment = await repo.findByOrder(db, gatewayOrderId);
  if (!payment || payment.provider !== 'sandbox') throw paymentErrors.noSandboxPayment();
  if (payment.buyer_id !== actor.userId && actor.role !== 'admin') throw paymentErrors.notBuyerToSimulate();
  await repo.setSandboxCharge(db, gatewayOrderId, status, clock.now());
  const rawBody = JSON.stringify({ provider: 'sandbox', gateway_order_id: gatewayOrderId, status, amount: payment.amount });
  return ingestCallback({ headers: { 'x-sandbox-signature': sandboxSignature(rawBody), 'content-type': 'application/json' }, rawBody, json: JSON.parse(rawBody) as unknown });
}

export const sandboxEnabled = (): boolean => config.sandboxMode;
