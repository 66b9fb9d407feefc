/**
 * Midtrans Core API adapter (decision D5). Configuration: config.gateways.midtrans
 * {baseUrl (default https://api.midtrans.com), serverKey}; loaded only when the server key is
 * set. Requests use HTTP Basic auth with the server key as user name and an empty password
 * (`Authorization: Basic base64(serverKey + ":")`). The Payment Notification URL is set in
 * the Midtrans dashboard to <PUBLIC_BASE_URL>/api/webhooks/inbound.
 *
 * Our methods -> Midtrans channels (POST {baseUrl}/v2/charge):
 *   qris          -> payment_type "qris": `qr_string` and the "generate-qr-code" action (QR image URL)
 *   bank_transfer -> payment_type "bank_transfer", bank_transfer.bank "bni": `va_numbers[0]`
 *                    (a BNI virtual account accepts transfers from any Indonesian bank)
 *   gopay         -> payment_type "gopay": "deeplink-redirect" action (deep link) and
 *                    "generate-qr-code" action (QR image URL, for desktop buyers)
 *   shopeepay     -> payment_type "shopeepay": "deeplink-redirect" action (deep link)
 *   crypto        -> Midtrans has no such channel: GatewayError (leave it out of the gateway row)
 * The link lifetime is sent as `custom_expiry` (order_time in GMT+7, duration in minutes).
 *
 * Midtrans answers with a body `status_code` that is authoritative even under HTTP 200: a
 * charge is accepted only with "201" (pending) and the order id we sent.
 *
 * Notifications (HTTP POST, JSON): `order_id`, `status_code`, `gross_amount` ("151050.00"),
 * `transaction_status`, `fraud_status`, `signature_key` = lowercase hex
 * SHA-512(order_id + status_code + gross_amount + serverKey). Recognised by that payload shape
 * (and none of the sandbox, Xendit or Tripay headers). transaction_status is not signed (a
 * signed pending notification, status_code 201, could be replayed as "settlement"), so the
 * worker confirms a notification's status with the status API before acting on it.
 *
 * transaction_status -> our status:
 *   settlement; capture with fraud_status accept (or none) -> paid
 *   pending; authorize; capture with fraud_status challenge -> pending
 *   expire -> expired;  deny, cancel, failure -> failed
 *   anything else (refund, partial_refund, chargeback, ...) is not a payment outcome: parse
 *   throws (400 INVALID_CALLBACK), the status poller treats it as an unusable answer.
 * Status API: GET {baseUrl}/v2/{order_id}/status (same fields as a notification).
 */
import { createHash } from 'node:crypto';
import { clock } from '../../clock.js';
import { config } from '../../config.js';
import { safeEqual } from '../../crypto.js';
import { gatewayJson } from './http.js';
import { GatewayError, type ChargeRequest, type ChargeResult, type GatewayAdapter, type GatewayStatus, type InboundDelivery, type ParsedCallback } from './types.js';

const PAYMENT_TYPES: Partial<Record<ChargeRequest['method'], string>> = {
  qris: 'qris',
  bank_transfer: 'bank_transfer',
  gopay: 'gopay',
  shopeepay: 'shopeepay',
};
const VA_BANK = 'bni';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** lowercase hex SHA-512 of order_id + status_code + gross_amount + server key (Midtrans notification docs). */
export function midtransSignature(orderId: string, statusCode: string, grossAmount: string, serverKey = config.gateways.midtrans.serverKey): string {
  return createHash('sha512').update(`${orderId}${statusCode}${grossAmount}${serverKey}`, 'utf8').digest('hex');
}

/** "151050.00" (or "151050") -> 151050; anything that is not whole rupiah -> undefined. */
export function midtransAmount(value: unknown): number | undefined {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^\d{1,15}(\.0{1,2})?$/.test(text)) return undefined;
  const n = Number(text.split('.')[0]);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Midtrans' transaction_status (and fraud_status) in our words; undefined when it is not a payment outcome. */
export function midtransStatus(transactionStatus: unknown, fraudStatus: unknown): GatewayStatus | undefined {
  switch (transactionStatus) {
    case 'settlement':
      return 'paid';
    case 'capture':
      return fraudStatus === 'challenge' ? 'pending' : fraudStatus === undefined || fraudStatus === null || fraudStatus === 'accept' ? 'paid' : 'failed';
    case 'pending':
    case 'authorize':
      return 'pending';
    case 'expire':
      return 'expired';
    case 'deny':
    case 'cancel':
    case 'failure':
      return 'failed';
    default:
      return undefined;
  }
}

function authHeader(): string {
  return `Basic ${Buffer.from(`${config.gateways.midtrans.serverKey}:`, 'utf8').toString('base64')}`;
}

/** One JSON call to Midtrans (shared transport in http.ts); the answer must be an object. */
async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Json> {
  const json = await gatewayJson({ gateway: 'Midtrans', url: `${config.gateways.midtrans.baseUrl}${path}`, method, authorization: authHeader(), body });
  if (!isObject(json)) throw new GatewayError('Midtrans answered with an unexpected body');
  return json;
}

function actionUrl(answer: Json, name: string): string | null {
  const actions = Array.isArray(answer.actions) ? (answer.actions as unknown[]) : [];
  for (const a of actions) if (isObject(a) && a.name === name && str(a.url)) return a.url as string;
  return null;
}

/** "2026-12-03 12:00:00 +0700": the order time in GMT+7, the format custom_expiry wants. */
function jakartaTime(at: Date): string {
  return `${new Date(at.getTime() + 7 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ')} +0700`;
}

export const midtransAdapter: GatewayAdapter = {
  name: 'midtrans',
  loaded: () => config.gateways.midtrans.serverKey !== '',
  signsStatus: false, // transaction_status is not in signature_key: confirmed with the status API

  async createCharge(req: ChargeRequest): Promise<ChargeResult> {
    const paymentType = PAYMENT_TYPES[req.method];
    if (!paymentType) throw new GatewayError(`Midtrans does not offer ${req.method}`);
    const now = clock.now();
    const body: Json = {
      payment_type: paymentType,
      transaction_details: { order_id: req.gatewayOrderId, gross_amount: req.amount },
      item_details: [{ id: 'escrow', price: req.amount, quantity: 1, name: req.itemName.slice(0, 50) }],
      customer_details: { first_name: req.buyer.fullName.slice(0, 255), email: req.buyer.email },
      custom_expiry: {
        order_time: jakartaTime(now),
        expiry_duration: Math.max(1, Math.ceil((req.expiresAt.getTime() - now.getTime()) / 60_000)),
        unit: 'minute',
      },
    };
    if (paymentType === 'bank_transfer') body.bank_transfer = { bank: VA_BANK };
    const answer = await call('POST', '/v2/charge', body);
    if (answer.status_code !== '201' || answer.order_id !== req.gatewayOrderId || midtransAmount(answer.gross_amount) !== req.amount) {
      throw new GatewayError(`Midtrans refused the charge (status_code ${String(answer.status_code)})`, { status_code: answer.status_code });
    }
    const result: ChargeResult = {
      paymentUrl: null,
      qrString: null,
      qrUrl: null,
      vaNumber: null,
      vaBank: null,
      deepLinkUrl: null,
      raw: {
        transaction_id: answer.transaction_id ?? null,
        order_id: answer.order_id,
        payment_type: answer.payment_type ?? paymentType,
        transaction_status: answer.transaction_status ?? null,
        status_code: answer.status_code,
      },
    };
    if (paymentType === 'qris') {
      result.qrString = str(answer.qr_string) ?? null;
      result.qrUrl = actionUrl(answer, 'generate-qr-code');
      if (!result.qrString && !result.qrUrl) throw new GatewayError('Midtrans answered a QRIS charge without a QR code');
    } else if (paymentType === 'bank_transfer') {
      const va = Array.isArray(answer.va_numbers) ? (answer.va_numbers as unknown[]).find((v): v is Json => isObject(v) && str(v.va_number) !== undefined) : undefined;
      if (!va) throw new GatewayError('Midtrans answered a bank transfer charge without a virtual account number');
      result.vaNumber = va.va_number as string;
      result.vaBank = (str(va.bank) ?? VA_BANK).toUpperCase();
    } else {
      result.deepLinkUrl = actionUrl(answer, 'deeplink-redirect');
      result.qrUrl = actionUrl(answer, 'generate-qr-code');
      if (!result.deepLinkUrl && !result.qrUrl) throw new GatewayError(`Midtrans answered a ${paymentType} charge without a deep link`);
    }
    return result;
  },

  recognises(d: InboundDelivery): boolean {
    if (d.headers['x-sandbox-signature'] !== undefined || d.headers['x-callback-token'] !== undefined || d.headers['x-callback-signature'] !== undefined) return false;
    const b = d.json;
    return isObject(b) && typeof b.signature_key === 'string' && typeof b.order_id === 'string' && typeof b.status_code === 'string' && typeof b.transaction_status === 'string';
  },

  verify(d: InboundDelivery): boolean {
    const key = config.gateways.midtrans.serverKey;
    const b = d.json;
    if (key === '' || !isObject(b)) return false;
    const { order_id: orderId, status_code: statusCode, gross_amount: grossAmount, signature_key: given } = b;
    if (typeof orderId !== 'string' || typeof statusCode !== 'string' || typeof grossAmount !== 'string' || typeof given !== 'string') return false;
    const sig = given.toLowerCase();
    return /^[0-9a-f]{128}$/.test(sig) && safeEqual(sig, midtransSignature(orderId, statusCode, grossAmount, key));
  },

  parse(d: InboundDelivery): ParsedCallback {
    const b = d.json;
    if (!isObject(b) || !str(b.order_id)) throw new Error('Midtrans notification without order_id');
    const status = midtransStatus(b.transaction_status, b.fraud_status);
    if (!status) throw new Error(`Midtrans transaction_status ${String(b.transaction_status)} is not a payment outcome`);
    const amount = midtransAmount(b.gross_amount);
    if (amount === undefined) throw new Error('Midtrans gross_amount is not whole rupiah');
    return { gatewayOrderId: b.order_id as string, status, amount, eventId: null };
  },

  async queryStatus(gatewayOrderId: string) {
    const answer = await call('GET', `/v2/${encodeURIComponent(gatewayOrderId)}/status`);
    if (answer.order_id !== gatewayOrderId) throw new GatewayError(`Midtrans does not know ${gatewayOrderId} (status_code ${String(answer.status_code)})`);
    const status = midtransStatus(answer.transaction_status, answer.fraud_status);
    if (!status) throw new GatewayError(`Midtrans reports ${String(answer.transaction_status)} for ${gatewayOrderId}`);
    return { status, amount: midtransAmount(answer.gross_amount) ?? null };
  },
};
