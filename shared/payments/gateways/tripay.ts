/**
 * Tripay adapter (decision D5), closed payments. Configuration: config.gateways.tripay
 * {baseUrl (default https://tripay.co.id/api; the sandbox is .../api-sandbox), apiKey,
 * privateKey, merchantCode}; loaded only when all three secrets are set. Requests carry
 * `Authorization: Bearer <apiKey>`. The callback URL is set in the Tripay merchant dashboard
 * to <PUBLIC_BASE_URL>/api/webhooks/inbound.
 *
 * Our methods -> Tripay channel codes (POST {baseUrl}/transaction/create, JSON body `method`,
 * `merchant_ref` = our order id, `amount`, `customer_name`, `customer_email`, `order_items`,
 * `expired_time` (unix seconds), `signature` = hex HMAC-SHA256(merchantCode + merchant_ref +
 * amount, privateKey)):
 *   qris          -> "QRIS"      (`qr_string`, `qr_url`)
 *   bank_transfer -> "BRIVA"     (`pay_code` = the BRI virtual account number; payable from any bank)
 *   shopeepay     -> "SHOPEEPAY" (`pay_url` = deep link/redirect, `checkout_url`)
 *   gopay, crypto -> Tripay has no such channel: GatewayError (leave them out of the gateway row;
 *                    GoPay users can pay the QRIS method)
 * `checkout_url` (Tripay's hosted page) is the payment_url of every method.
 *
 * Callbacks (HTTP POST, JSON): header `X-Callback-Signature` = hex HMAC-SHA256(raw body,
 * privateKey), compared in constant time; header `X-Callback-Event: payment_status`. Recognised
 * by the X-Callback-Signature header (without the sandbox's or Xendit's headers). Body:
 * `reference` (Tripay's id), `merchant_ref` (ours), `status`, `total_amount`, `fee_customer`.
 *   PAID -> paid;  EXPIRED -> expired;  FAILED -> failed;  UNPAID -> pending;
 *   REFUND (or anything else) is not a payment outcome: parse throws (400 INVALID_CALLBACK).
 * The amount we compare is what the buyer paid less any fee Tripay charged the buyer on top
 * (total_amount - fee_customer), i.e. the `amount` we asked for.
 *
 * Status API: GET {baseUrl}/transaction/detail?reference=<Tripay reference>. The poller only
 * knows our order id, so the reference is read back from the payment's stored raw_response
 * (written by createCharge below).
 */
import { createHmac } from 'node:crypto';
import { config } from '../../config.js';
import { safeEqual } from '../../crypto.js';
import { db } from '../../db.js';
import { findByOrder } from '../repo.js';
import { gatewayJson } from './http.js';
import { GatewayError, type ChargeRequest, type ChargeResult, type GatewayAdapter, type GatewayStatus, type InboundDelivery, type ParsedCallback } from './types.js';

export const TRIPAY_CHANNELS: Partial<Record<ChargeRequest['method'], string>> = {
  qris: 'QRIS',
  bank_transfer: 'BRIVA',
  shopeepay: 'SHOPEEPAY',
};
const VA_BANKS: Record<string, string> = { BRIVA: 'BRI' };

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const rupiah = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

/** Signature of a closed transaction request: hex HMAC-SHA256(merchantCode + merchantRef + amount, privateKey). */
export function tripayRequestSignature(merchantRef: string, amount: number, c = config.gateways.tripay): string {
  return createHmac('sha256', c.privateKey).update(`${c.merchantCode}${merchantRef}${amount}`, 'utf8').digest('hex');
}

/** Signature of a callback: hex HMAC-SHA256(raw body, privateKey). */
export function tripayCallbackSignature(rawBody: string, privateKey = config.gateways.tripay.privateKey): string {
  return createHmac('sha256', privateKey).update(rawBody, 'utf8').digest('hex');
}

/** A Tripay transaction status in our words; undefined when it is not a payment outcome. */
export function tripayStatus(status: unknown): GatewayStatus | undefined {
  switch (status) {
    case 'PAID':
      return 'paid';
    case 'EXPIRED':
      return 'expired';
    case 'FAILED':
      return 'failed';
    case 'UNPAID':
      return 'pending';
    default:
      return undefined;
  }
}

/** The amount we asked for: `total` (total_amount or amount, which include a buyer-borne fee) less fee_customer. */
function requestedAmount(total: unknown, feeCustomer: unknown): number | undefined {
  const t = rupiah(total);
  const fee = feeCustomer === undefined || feeCustomer === null ? 0 : rupiah(feeCustomer);
  return t === undefined || fee === undefined || fee > t ? undefined : t - fee;
}

/** One JSON call to Tripay (shared transport in http.ts); `success: false` or no `data` is a GatewayError. */
async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Json> {
  const json = await gatewayJson({
    gateway: 'Tripay',
    url: `${config.gateways.tripay.baseUrl}${path}`,
    method,
    authorization: `Bearer ${config.gateways.tripay.apiKey}`,
    body,
  });
  if (!isObject(json) || json.success !== true || !isObject(json.data)) throw new GatewayError('Tripay answered with an unexpected body');
  return json.data;
}

export const tripayAdapter: GatewayAdapter = {
  name: 'tripay',
  loaded: () => config.gateways.tripay.apiKey !== '' && config.gateways.tripay.privateKey !== '' && config.gateways.tripay.merchantCode !== '',
  signsStatus: true, // HMAC over the raw body

  async createCharge(req: ChargeRequest): Promise<ChargeResult> {
    const channel = TRIPAY_CHANNELS[req.method];
    if (!channel) throw new GatewayError(`Tripay does not offer ${req.method}`);
    const data = await call('POST', '/transaction/create', {
      method: channel,
      merchant_ref: req.gatewayOrderId,
      amount: req.amount,
      customer_name: req.buyer.fullName,
      customer_email: req.buyer.email,
      order_items: [{ sku: 'ESCROW', name: req.itemName, price: req.amount, quantity: 1 }],
      expired_time: Math.ceil(req.expiresAt.getTime() / 1000),
      signature: tripayRequestSignature(req.gatewayOrderId, req.amount),
    });
    if (!str(data.reference) || data.merchant_ref !== req.gatewayOrderId || requestedAmount(data.amount, data.fee_customer) !== req.amount) {
      throw new GatewayError('Tripay answered the transaction request with an unexpected body');
    }
    const result: ChargeResult = {
      paymentUrl: str(data.checkout_url) ?? null,
      qrString: null,
      qrUrl: null,
      vaNumber: null,
      vaBank: null,
      deepLinkUrl: null,
      raw: {
        reference: data.reference,
        merchant_ref: data.merchant_ref,
        payment_method: data.payment_method ?? channel,
        status: data.status ?? null,
        checkout_url: data.checkout_url ?? null,
        expired_time: data.expired_time ?? null,
      },
    };
    if (req.method === 'qris') {
      result.qrString = str(data.qr_string) ?? null;
      result.qrUrl = str(data.qr_url) ?? null;
      if (!result.qrString && !result.qrUrl) throw new GatewayError('Tripay answered a QRIS transaction without a QR code');
    } else if (req.method === 'bank_transfer') {
      result.vaNumber = str(data.pay_code) ?? null;
      result.vaBank = VA_BANKS[channel] ?? channel;
      if (!result.vaNumber) throw new GatewayError('Tripay answered a virtual account transaction without pay_code');
    } else {
      result.deepLinkUrl = str(data.pay_url) ?? null;
      if (!result.deepLinkUrl && !result.paymentUrl) throw new GatewayError(`Tripay answered a ${channel} transaction without pay_url`);
    }
    return result;
  },

  recognises: (d: InboundDelivery) =>
    d.headers['x-callback-signature'] !== undefined && d.headers['x-sandbox-signature'] === undefined && d.headers['x-callback-token'] === undefined,

  verify(d: InboundDelivery): boolean {
    const key = config.gateways.tripay.privateKey;
    const given = (d.headers['x-callback-signature'] ?? '').toLowerCase();
    return key !== '' && /^[0-9a-f]{64}$/.test(given) && safeEqual(given, tripayCallbackSignature(d.rawBody, key));
  },

  parse(d: InboundDelivery): ParsedCallback {
    if (d.headers['x-callback-event'] !== 'payment_status') throw new Error(`Tripay callback event ${String(d.headers['x-callback-event'])} is not payment_status`);
    const b = d.json;
    if (!isObject(b) || !str(b.merchant_ref)) throw new Error('Tripay callback without merchant_ref');
    const status = tripayStatus(b.status);
    if (!status) throw new Error(`Tripay status ${String(b.status)} is not a payment outcome`);
    const amount = requestedAmount(b.total_amount, b.fee_customer);
    if (amount === undefined) throw new Error('Tripay total_amount is not whole rupiah');
    return { gatewayOrderId: b.merchant_ref as string, status, amount, eventId: null };
  },

  async queryStatus(gatewayOrderId: string) {
    const payment = await findByOrder(db, gatewayOrderId);
    let reference: string | undefined;
    try {
      const raw = JSON.parse(payment?.raw_response ?? '{}') as unknown;
      reference = isObject(raw) ? str(raw.reference) : undefined;
    } catch {
      reference = undefined;
    }
    if (!reference) throw new GatewayError(`No Tripay reference is stored for ${gatewayOrderId}`);
    const data = await call('GET', `/transaction/detail?reference=${encodeURIComponent(reference)}`);
    if (data.merchant_ref !== gatewayOrderId) throw new GatewayError(`Tripay's ${reference} is not ${gatewayOrderId}`);
    const status = tripayStatus(data.status);
    if (!status) throw new GatewayError(`Tripay reports ${String(data.status)} for ${gatewayOrderId}`);
    return { status, amount: requestedAmount(data.amount, data.fee_customer) ?? null };
  },
};
