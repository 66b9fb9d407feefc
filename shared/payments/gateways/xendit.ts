/**
 * Xendit adapter (decision D5), on Xendit's Invoice API. Configuration:
 * config.gateways.xendit {baseUrl (default https://api.xendit.co), secretKey, callbackToken};
 * loaded only when both the secret API key and the callback verification token are set.
 * Requests use HTTP Basic auth with the secret key as user name and an empty password
 * (`Authorization: Basic base64(secretKey + ":")`). The invoice callback URL is set in the
 * Xendit dashboard to <PUBLIC_BASE_URL>/api/webhooks/inbound.
 *
 * Every method is one invoice (POST {baseUrl}/v2/invoices with our order id as `external_id`,
 * `amount`, `invoice_duration` in seconds, `currency` IDR) restricted by `payment_methods`; the
 * buyer pays on the hosted invoice page (`invoice_url` -> payment_url), so one callback shape
 * and one status query cover every method:
 *   qris          -> payment_methods ["QRIS"]
 *   bank_transfer -> payment_methods ["BCA", "BNI", "BRI", "MANDIRI", "PERMATA", "BSI"] (virtual accounts)
 *   gopay         -> payment_methods ["GOPAY"]
 *   shopeepay     -> payment_methods ["SHOPEEPAY"]
 *   crypto        -> Xendit has no such channel: GatewayError (leave it out of the gateway row)
 *
 * Invoice callbacks (HTTP POST, JSON) carry the header `x-callback-token`, which must equal the
 * account's callback verification token (compared in constant time); recognised by that
 * header (and no sandbox signature). Body: `id` (invoice id), `external_id`, `status`
 * (PAID, SETTLED, EXPIRED), `amount`, `paid_amount`. Nothing in it is signed, so the worker
 * confirms a callback's status (and amount) with the status API before acting on it.
 *   PAID, SETTLED -> paid (amount = paid_amount, else amount);  EXPIRED -> expired;  PENDING -> pending
 * Status API: GET {baseUrl}/v2/invoices?external_id=<order id> (an array of invoices).
 */
import { clock } from '../../clock.js';
import { config } from '../../config.js';
import { safeEqual } from '../../crypto.js';
import { gatewayJson } from './http.js';
import { GatewayError, type ChargeRequest, type ChargeResult, type GatewayAdapter, type GatewayStatus, type InboundDelivery, type ParsedCallback } from './types.js';

export const XENDIT_PAYMENT_METHODS: Partial<Record<ChargeRequest['method'], readonly string[]>> = {
  qris: ['QRIS'],
  bank_transfer: ['BCA', 'BNI', 'BRI', 'MANDIRI', 'PERMATA', 'BSI'],
  gopay: ['GOPAY'],
  shopeepay: ['SHOPEEPAY'],
};

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const rupiah = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

/** An invoice status in our words; undefined for anything else. */
export function xenditStatus(status: unknown): GatewayStatus | undefined {
  switch (status) {
    case 'PAID':
    case 'SETTLED':
      return 'paid';
    case 'EXPIRED':
      return 'expired';
    case 'PENDING':
      return 'pending';
    default:
      return undefined;
  }
}

/** What an invoice says was paid (paid_amount once paid, else the invoice amount). */
function invoiceAmount(inv: Json, status: GatewayStatus): number | undefined {
  if (status === 'paid' && inv.paid_amount !== undefined && inv.paid_amount !== null) return rupiah(inv.paid_amount);
  return rupiah(inv.amount);
}

function authHeader(): string {
  return `Basic ${Buffer.from(`${config.gateways.xendit.secretKey}:`, 'utf8').toString('base64')}`;
}

/** One JSON call to Xendit (shared transport in http.ts). */
async function call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  return gatewayJson({ gateway: 'Xendit', url: `${config.gateways.xendit.baseUrl}${path}`, method, authorization: authHeader(), body });
}

export const xenditAdapter: GatewayAdapter = {
  name: 'xendit',
  loaded: () => config.gateways.xendit.secretKey !== '' && config.gateways.xendit.callbackToken !== '',
  signsStatus: false, // a static callback token signs nothing: confirmed with the status API

  async createCharge(req: ChargeRequest): Promise<ChargeResult> {
    const methods = XENDIT_PAYMENT_METHODS[req.method];
    if (!methods) throw new GatewayError(`Xendit does not offer ${req.method}`);
    const seconds = Math.max(1, Math.floor((req.expiresAt.getTime() - clock.nowMs()) / 1000));
    const answer = await call('POST', '/v2/invoices', {
      external_id: req.gatewayOrderId,
      amount: req.amount,
      currency: 'IDR',
      description: req.itemName,
      invoice_duration: seconds,
      payer_email: req.buyer.email,
      customer: { given_names: req.buyer.fullName, email: req.buyer.email },
      payment_methods: methods,
      items: [{ name: req.itemName, quantity: 1, price: req.amount }],
    });
    if (
      !isObject(answer) ||
      !str(answer.id) ||
      answer.external_id !== req.gatewayOrderId ||
      answer.status !== 'PENDING' ||
      rupiah(answer.amount) !== req.amount ||
      !str(answer.invoice_url) ||
      !/^https?:\/\//.test(answer.invoice_url as string)
    ) {
      throw new GatewayError('Xendit answered the invoice request with an unexpected body');
    }
    return {
      paymentUrl: answer.invoice_url as string,
      qrString: null,
      qrUrl: null,
      vaNumber: null,
      vaBank: null,
      deepLinkUrl: null,
      raw: { id: answer.id, external_id: answer.external_id, status: answer.status, invoice_url: answer.invoice_url, expiry_date: answer.expiry_date ?? null },
    };
  },

  recognises: (d: InboundDelivery) => d.headers['x-callback-token'] !== undefined && d.headers['x-sandbox-signature'] === undefined,

  verify(d: InboundDelivery): boolean {
    const token = config.gateways.xendit.callbackToken;
    const given = d.headers['x-callback-token'];
    return token !== '' && typeof given === 'string' && safeEqual(given, token);
  },

  parse(d: InboundDelivery): ParsedCallback {
    const b = d.json;
    if (!isObject(b) || !str(b.external_id) || !str(b.id)) throw new Error('Xendit callback without external_id or id');
    const status = xenditStatus(b.status);
    if (!status) throw new Error(`Xendit invoice status ${String(b.status)} is not known`);
    const amount = invoiceAmount(b, status);
    if (amount === undefined) throw new Error('Xendit callback amount is not whole rupiah');
    return { gatewayOrderId: b.external_id as string, status, amount, eventId: null };
  },

  async queryStatus(gatewayOrderId: string) {
    const answer = await call('GET', `/v2/invoices?external_id=${encodeURIComponent(gatewayOrderId)}`);
    if (!Array.isArray(answer)) throw new GatewayError('Xendit answered the invoice query with an unexpected body');
    const invoices = (answer as unknown[]).filter((i): i is Json => isObject(i) && i.external_id === gatewayOrderId);
    if (invoices.length === 0) throw new GatewayError(`Xendit has no invoice for ${gatewayOrderId}`);
    // Our order ids are unique, so there is one invoice; a paid one wins if there were more.
    const inv = invoices.find((i) => xenditStatus(i.status) === 'paid') ?? invoices[0]!;
    const status = xenditStatus(inv.status);
    if (!status) throw new GatewayError(`Xendit reports ${String(inv.status)} for ${gatewayOrderId}`);
    return { status, amount: invoiceAmount(inv, status) ?? null };
  },
};
