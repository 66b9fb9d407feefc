/**
 * Fake Midtrans, Xendit and Tripay servers on loopback (decision D5: NO real network in
 * tests). Each is a small node:http server on 127.0.0.1 that records every request and answers
 * like the provider's charge and status APIs, keeping its own view of each charge (what its
 * status API reports; tests move it with `setStatus`). `start()` points config.gateways.<provider>
 * at the server and sets test secrets; `stop()` restores every config.gateways field it touched
 * (httpTimeoutMs included).
 *
 * Failure modes, per kind of call ('charge' or 'status'): `http500`, `http400`, `timeout` (the
 * request is held open and never answered), `malformed` (HTTP 200, not JSON) and `refused`
 * (HTTP 200 with the provider's own refusal body).
 *
 * The callback builders sign with the providers' documented formulas, written here
 * independently of the adapters (node:crypto): Midtrans signature_key = SHA-512 hex of
 * order_id + status_code + gross_amount + server key; Xendit x-callback-token = the account's
 * verification token; Tripay X-Callback-Signature = HMAC-SHA256 hex of the raw body with the
 * private key.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type supertest from 'supertest';
import { config } from '../../shared/config.js';
import { db } from '../../shared/db.js';
import type { PaymentRow } from '../../shared/payments/repo.js';

export type Failure = 'none' | 'http500' | 'http400' | 'timeout' | 'malformed' | 'refused';
type CallKind = 'charge' | 'status';

export interface RecordedRequest {
  method: string;
  /** Path and query as sent (e.g. `/v2/charge`, `/v2/invoices?external_id=...`). */
  url: string;
  pathname: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, or null. */
  json: unknown;
}

interface Answer {
  status: number;
  body: unknown;
}

const basic = (user: string) => `Basic ${Buffer.from(`${user}:`, 'utf8').toString('base64')}`;
const digits = (n: number) => Array.from(randomBytes(n), (b) => String(b % 10)).join('');
const hexId = () => randomBytes(12).toString('hex');

abstract class FakeGateway {
  readonly requests: RecordedRequest[] = [];
  /** How charge calls fail ('none': they answer like the provider). */
  chargeFailure: Failure = 'none';
  /** How status calls fail. */
  statusFailure: Failure = 'none';
  /**
   * Runs after a charge is recorded and before its answer is sent, i.e. while `pay`'s
   * transaction is still open (a gateway that calls back before the payment row commits).
   */
  beforeChargeAnswer: ((req: RecordedRequest) => Promise<void>) | null = null;
  origin = '';
  private server: Server | null = null;
  private savedTimeout = config.gateways.httpTimeoutMs;

  /** Path prefix of the provider's base URL (Tripay's is /api). */
  protected prefix = '';
  protected abstract kindOf(req: RecordedRequest): CallKind | null;
  protected abstract handle(req: RecordedRequest): Answer;
  protected abstract refusal(kind: CallKind): unknown;
  protected abstract configure(baseUrl: string): void;
  protected abstract restore(): void;

  get baseUrl(): string {
    return `${this.origin}${this.prefix}`;
  }

  /** Requests of one kind ('charge' or 'status'), in order. */
  calls(kind: CallKind): RecordedRequest[] {
    return this.requests.filter((r) => this.kindOf(r) === kind);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.receive(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.origin = `http://127.0.0.1:${port}`;
    this.savedTimeout = config.gateways.httpTimeoutMs;
    this.configure(this.baseUrl);
    return this;
  }

  async stop(): Promise<void> {
    this.restore();
    config.gateways.httpTimeoutMs = this.savedTimeout;
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private receive(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://fake');
      let json: unknown;
      try {
        json = body === '' ? null : (JSON.parse(body) as unknown);
      } catch {
        json = null;
      }
      const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '/', pathname: url.pathname, query: url.searchParams, headers: req.headers, body, json };
      this.requests.push(recorded);
      const kind = this.kindOf(recorded);
      const failure = kind === 'charge' ? this.chargeFailure : kind === 'status' ? this.statusFailure : 'none';
      if (failure === 'timeout') return; // held open until the client gives up or the server stops
      let answer: Answer;
      if (kind && failure === 'http500') answer = { status: 500, body: { error: 'internal server error' } };
      else if (kind && failure === 'http400') answer = { status: 400, body: { error: 'bad request' } };
      else if (kind && failure === 'refused') answer = { status: 200, body: this.refusal(kind) };
      else if (kind && failure === 'malformed') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>upstream proxy error</html>');
        return;
      } else answer = this.handle(recorded);
      const send = () => {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
      };
      if (kind === 'charge' && answer.status === 200 && this.beforeChargeAnswer) void this.beforeChargeAnswer(recorded).finally(send);
      else send();
    });
  }
}

// ---- Midtrans ------------------------------------------------------------------------------

export const MIDTRANS_SERVER_KEY = 'SB-Mid-server-FAKE0123456789abcdef';

export interface MidtransCharge {
  orderId: string;
  transactionId: string;
  grossAmount: number;
  paymentType: string;
  transactionStatus: string;
  request: Record<string, unknown>;
}

/** Midtrans status_code of a transaction_status (Midtrans status codes 2xx/4xx). */
function midtransCode(transactionStatus: string): string {
  if (transactionStatus === 'settlement' || transactionStatus === 'capture') return '200';
  if (transactionStatus === 'pending') return '201';
  if (transactionStatus === 'expire') return '407';
  return '202';
}

/** SHA-512 hex of order_id + status_code + gross_amount + server key (Midtrans notification docs). */
export function midtransSignatureKey(orderId: string, statusCode: string, grossAmount: string, serverKey = MIDTRANS_SERVER_KEY): string {
  return createHash('sha512').update(orderId + statusCode + grossAmount + serverKey).digest('hex');
}

export class FakeMidtrans extends FakeGateway {
  readonly charges = new Map<string, MidtransCharge>();
  private saved = { ...config.gateways.midtrans };

  protected kindOf(req: RecordedRequest): CallKind | null {
    if (req.method === 'POST' && req.pathname === '/v2/charge') return 'charge';
    if (req.method === 'GET' && /^\/v2\/[^/]+\/status$/.test(req.pathname)) return 'status';
    return null;
  }

  protected configure(baseUrl: string): void {
    this.saved = { ...config.gateways.midtrans };
    config.gateways.midtrans.baseUrl = baseUrl;
    config.gateways.midtrans.serverKey = MIDTRANS_SERVER_KEY;
  }

  protected restore(): void {
    Object.assign(config.gateways.midtrans, this.saved);
  }

  protected refusal(): unknown {
    return { status_code: '406', status_message: 'The request could not be completed due to a conflict with the current state of the target resource, please try again' };
  }

  /** The gateway's own view moves (what the status API answers). */
  setStatus(orderId: string, transactionStatus: string): void {
    const c = this.charges.get(orderId);
    if (!c) throw new Error(`fake Midtrans has no charge ${orderId}`);
    c.transactionStatus = transactionStatus;
  }

  protected handle(req: RecordedRequest): Answer {
    if (req.headers.authorization !== basic(MIDTRANS_SERVER_KEY)) {
      return { status: 401, body: { status_code: '401', status_message: 'Unknown Merchant server_key/id' } };
    }
    const kind = this.kindOf(req);
    if (kind === 'charge') return this.charge(req);
    if (kind === 'status') {
      const orderId = decodeURIComponent(req.pathname.split('/')[2] ?? '');
      const c = this.charges.get(orderId);
      if (!c) return { status: 404, body: { status_code: '404', status_message: "Transaction doesn't exist." } };
      return {
        status: 200,
        body: {
          status_code: midtransCode(c.transactionStatus),
          status_message: 'Success, transaction is found',
          transaction_id: c.transactionId,
          order_id: c.orderId,
          gross_amount: `${c.grossAmount}.00`,
          currency: 'IDR',
          payment_type: c.paymentType,
          transaction_time: '2026-12-03 12:00:00',
          transaction_status: c.transactionStatus,
          fraud_status: 'accept',
        },
      };
    }
    return { status: 404, body: { status_code: '404', status_message: 'not found' } };
  }

  private charge(req: RecordedRequest): Answer {
    const b = (req.json ?? {}) as Record<string, unknown>;
    const details = (b.transaction_details ?? {}) as Record<string, unknown>;
    const orderId = details.order_id;
    const gross = details.gross_amount;
    const type = b.payment_type;
    if (typeof orderId !== 'string' || typeof gross !== 'number' || !Number.isSafeInteger(gross) || typeof type !== 'string' || !['qris', 'bank_transfer', 'gopay', 'shopeepay'].includes(type)) {
      return { status: 400, body: { status_code: '400', status_message: 'One or more parameters in the payload is invalid.' } };
    }
    if (this.charges.has(orderId)) return { status: 200, body: this.refusal() };
    const transactionId = `${hexId().slice(0, 8)}-${hexId().slice(0, 4)}-4${hexId().slice(0, 3)}-8${hexId().slice(0, 3)}-${hexId()}`;
    this.charges.set(orderId, { orderId, transactionId, grossAmount: gross, paymentType: type, transactionStatus: 'pending', request: b });
    const base = {
      status_code: '201',
      status_message: `${type} transaction is created`,
      transaction_id: transactionId,
      order_id: orderId,
      merchant_id: 'G000000001',
      gross_amount: `${gross}.00`,
      currency: 'IDR',
      payment_type: type,
      transaction_time: '2026-12-03 12:00:00',
      transaction_status: 'pending',
      fraud_status: 'accept',
    };
    const qr = { name: 'generate-qr-code', method: 'GET', url: `${this.origin}/v2/${type}/${transactionId}/qr-code` };
    if (type === 'qris') return { status: 200, body: { ...base, actions: [qr], qr_string: `00020101021226${orderId}5204000053033605405${gross}6304ABCD`, acquirer: 'gopay' } };
    if (type === 'gopay') {
      return {
        status: 200,
        body: {
          ...base,
          actions: [
            qr,
            { name: 'deeplink-redirect', method: 'GET', url: `https://simulator.sandbox.midtrans.com/gopay/partner/app/payment-pin?tref=${transactionId}` },
            { name: 'get-status', method: 'GET', url: `${this.origin}/v2/${transactionId}/status` },
            { name: 'cancel', method: 'POST', url: `${this.origin}/v2/${transactionId}/cancel` },
          ],
        },
      };
    }
    if (type === 'shopeepay') {
      return { status: 200, body: { ...base, actions: [{ name: 'deeplink-redirect', method: 'GET', url: `https://wsa.wallet.airpay.co.id/universal-link/wallet/pay?ref=${transactionId}` }] } };
    }
    const bank = ((b.bank_transfer ?? {}) as Record<string, unknown>).bank;
    return { status: 200, body: { ...base, va_numbers: [{ bank: typeof bank === 'string' ? bank : 'bni', va_number: `9888${digits(12)}` }] } };
  }

  /** A signed HTTP notification as Midtrans sends it (raw JSON text). */
  notification(
    orderId: string,
    transactionStatus: string,
    o: { grossAmount?: string; statusCode?: string; serverKey?: string; fraudStatus?: string; signatureKey?: string } = {},
  ): string {
    const c = this.charges.get(orderId);
    const statusCode = o.statusCode ?? midtransCode(transactionStatus);
    const grossAmount = o.grossAmount ?? `${c?.grossAmount ?? 0}.00`;
    return JSON.stringify({
      transaction_time: '2026-12-03 12:01:30',
      transaction_status: transactionStatus,
      transaction_id: c?.transactionId ?? 'unknown',
      status_message: 'midtrans payment notification',
      status_code: statusCode,
      signature_key: o.signatureKey ?? midtransSignatureKey(orderId, statusCode, grossAmount, o.serverKey ?? MIDTRANS_SERVER_KEY),
      settlement_time: transactionStatus === 'settlement' ? '2026-12-03 12:01:30' : undefined,
      payment_type: c?.paymentType ?? 'qris',
      order_id: orderId,
      merchant_id: 'G000000001',
      gross_amount: grossAmount,
      fraud_status: o.fraudStatus ?? 'accept',
      currency: 'IDR',
    });
  }
}

// ---- Xendit --------------------------------------------------------------------------------

export const XENDIT_SECRET_KEY = 'xnd_development_FAKE0123456789abcdefghijklmnopqrstuv';
export const XENDIT_CALLBACK_TOKEN = 'xendit-callback-token-FAKE-0123456789';

export interface XenditInvoice {
  id: string;
  external_id: string;
  amount: number;
  status: string;
  paid_amount?: number;
  request: Record<string, unknown>;
}

export class FakeXendit extends FakeGateway {
  readonly invoices = new Map<string, XenditInvoice>();
  private saved = { ...config.gateways.xendit };

  protected kindOf(req: RecordedRequest): CallKind | null {
    if (req.method === 'POST' && req.pathname === '/v2/invoices') return 'charge';
    if (req.method === 'GET' && req.pathname === '/v2/invoices') return 'status';
    return null;
  }

  protected configure(baseUrl: string): void {
    this.saved = { ...config.gateways.xendit };
    config.gateways.xendit.baseUrl = baseUrl;
    config.gateways.xendit.secretKey = XENDIT_SECRET_KEY;
    config.gateways.xendit.callbackToken = XENDIT_CALLBACK_TOKEN;
  }

  protected restore(): void {
    Object.assign(config.gateways.xendit, this.saved);
  }

  protected refusal(): unknown {
    return { error_code: 'API_VALIDATION_ERROR', message: 'Invalid request' };
  }

  setStatus(externalId: string, status: 'PENDING' | 'PAID' | 'SETTLED' | 'EXPIRED', paidAmount?: number): void {
    const inv = this.invoices.get(externalId);
    if (!inv) throw new Error(`fake Xendit has no invoice ${externalId}`);
    inv.status = status;
    if (status === 'PAID' || status === 'SETTLED') inv.paid_amount = paidAmount ?? inv.amount;
  }

  private view(inv: XenditInvoice) {
    return {
      id: inv.id,
      external_id: inv.external_id,
      user_id: '5848fdf860053555135587e7',
      status: inv.status,
      merchant_name: 'Escrow Test',
      merchant_profile_picture_url: 'https://du8nwjtfkinx.cloudfront.net/xendit.png',
      amount: inv.amount,
      ...(inv.paid_amount !== undefined ? { paid_amount: inv.paid_amount } : {}),
      payer_email: (inv.request.payer_email as string | undefined) ?? null,
      description: inv.request.description ?? null,
      expiry_date: '2026-12-03T05:15:00.000Z',
      invoice_url: `https://checkout-staging.xendit.co/web/${inv.id}`,
      available_banks: [],
      available_retail_outlets: [],
      available_ewallets: [],
      available_qr_codes: [],
      should_exclude_credit_card: true,
      should_send_email: false,
      created: '2026-12-03T05:00:00.000Z',
      updated: '2026-12-03T05:00:00.000Z',
      currency: 'IDR',
    };
  }

  protected handle(req: RecordedRequest): Answer {
    if (req.headers.authorization !== basic(XENDIT_SECRET_KEY)) {
      return { status: 401, body: { error_code: 'INVALID_API_KEY', message: 'API key is not authorized for this API service' } };
    }
    const kind = this.kindOf(req);
    if (kind === 'charge') {
      const b = (req.json ?? {}) as Record<string, unknown>;
      if (typeof b.external_id !== 'string' || typeof b.amount !== 'number' || !Number.isSafeInteger(b.amount) || b.amount <= 0) {
        return { status: 400, body: { error_code: 'API_VALIDATION_ERROR', message: 'external_id and amount are required' } };
      }
      const inv: XenditInvoice = { id: hexId(), external_id: b.external_id, amount: b.amount, status: 'PENDING', request: b };
      this.invoices.set(inv.external_id, inv);
      return { status: 200, body: this.view(inv) };
    }
    if (kind === 'status') {
      const ext = req.query.get('external_id');
      const found = [...this.invoices.values()].filter((i) => ext === null || i.external_id === ext);
      return { status: 200, body: found.map((i) => this.view(i)) };
    }
    return { status: 404, body: { error_code: 'NOT_FOUND', message: 'not found' } };
  }

  /** An invoice callback body as Xendit sends it (raw JSON text); the token goes in x-callback-token. */
  callback(externalId: string, status: 'PAID' | 'SETTLED' | 'EXPIRED', o: { amount?: number; paidAmount?: number } = {}): string {
    const inv = this.invoices.get(externalId);
    const amount = o.amount ?? inv?.amount ?? 0;
    const paid = status === 'PAID' || status === 'SETTLED';
    return JSON.stringify({
      id: inv?.id ?? hexId(),
      external_id: externalId,
      user_id: '5848fdf860053555135587e7',
      is_high: false,
      payment_method: paid ? 'QR_CODE' : undefined,
      status,
      merchant_name: 'Escrow Test',
      amount,
      ...(paid ? { paid_amount: o.paidAmount ?? amount, paid_at: '2026-12-03T05:01:30.000Z', payment_channel: 'QRIS', payment_id: `qrpy_${hexId()}` } : {}),
      payer_email: 'buyer@example.test',
      description: 'Sepatu lari',
      created: '2026-12-03T05:00:00.000Z',
      updated: '2026-12-03T05:01:30.000Z',
      currency: 'IDR',
    });
  }
}

// ---- Tripay --------------------------------------------------------------------------------

export const TRIPAY_API_KEY = 'DEV-FAKEapikey0123456789abcdefghijklmnopqr';
export const TRIPAY_PRIVATE_KEY = 'FAKE1-priv2-key34-56789-abcde';
export const TRIPAY_MERCHANT_CODE = 'T00001';

export interface TripayTransaction {
  reference: string;
  merchant_ref: string;
  method: string;
  amount: number;
  status: string;
  expired_time: number;
  request: Record<string, unknown>;
}

/** hex HMAC-SHA256 with Tripay's private key (callbacks sign the raw body; requests sign merchantCode + merchant_ref + amount). */
export function tripayHmac(data: string, privateKey = TRIPAY_PRIVATE_KEY): string {
  return createHmac('sha256', privateKey).update(data).digest('hex');
}

const TRIPAY_NAMES: Record<string, string> = { QRIS: 'QRIS', BRIVA: 'BRI Virtual Account', SHOPEEPAY: 'ShopeePay' };

export class FakeTripay extends FakeGateway {
  readonly transactions = new Map<string, TripayTransaction>();
  protected override prefix = '/api';
  private saved = { ...config.gateways.tripay };

  protected kindOf(req: RecordedRequest): CallKind | null {
    if (req.method === 'POST' && req.pathname === '/api/transaction/create') return 'charge';
    if (req.method === 'GET' && req.pathname === '/api/transaction/detail') return 'status';
    return null;
  }

  protected configure(baseUrl: string): void {
    this.saved = { ...config.gateways.tripay };
    config.gateways.tripay.baseUrl = baseUrl;
    config.gateways.tripay.apiKey = TRIPAY_API_KEY;
    config.gateways.tripay.privateKey = TRIPAY_PRIVATE_KEY;
    config.gateways.tripay.merchantCode = TRIPAY_MERCHANT_CODE;
  }

  protected restore(): void {
    Object.assign(config.gateways.tripay, this.saved);
  }

  protected refusal(): unknown {
    return { success: false, message: 'Merchant tidak aktif', data: null };
  }

  byMerchantRef(merchantRef: string): TripayTransaction {
    const t = [...this.transactions.values()].find((x) => x.merchant_ref === merchantRef);
    if (!t) throw new Error(`fake Tripay has no transaction ${merchantRef}`);
    return t;
  }

  setStatus(merchantRef: string, status: 'UNPAID' | 'PAID' | 'EXPIRED' | 'FAILED'): void {
    this.byMerchantRef(merchantRef).status = status;
  }

  private view(t: TripayTransaction) {
    const fee = t.method === 'QRIS' ? 750 + Math.ceil(t.amount * 0.007) : 4250;
    return {
      reference: t.reference,
      merchant_ref: t.merchant_ref,
      payment_selection_type: 'static',
      payment_method: t.method,
      payment_name: TRIPAY_NAMES[t.method] ?? t.method,
      customer_name: t.request.customer_name ?? null,
      customer_email: t.request.customer_email ?? null,
      customer_phone: null,
      callback_url: null,
      return_url: null,
      amount: t.amount,
      fee_merchant: fee,
      fee_customer: 0,
      total_fee: fee,
      amount_received: t.amount - fee,
      pay_code: t.method === 'BRIVA' ? `57585${digits(11)}` : null,
      pay_url: t.method === 'SHOPEEPAY' ? `https://tripay.co.id/checkout/${t.reference}/redirect` : null,
      checkout_url: `https://tripay.co.id/checkout/${t.reference}`,
      status: t.status,
      expired_time: t.expired_time,
      order_items: t.request.order_items ?? [],
      qr_string: t.method === 'QRIS' ? `00020101021226TRIPAY${t.reference}5204000053033605405${t.amount}6304BEEF` : null,
      qr_url: t.method === 'QRIS' ? `https://tripay.co.id/qr/${t.reference}` : null,
    };
  }

  protected handle(req: RecordedRequest): Answer {
    if (req.headers.authorization !== `Bearer ${TRIPAY_API_KEY}`) return { status: 401, body: { success: false, message: 'Invalid API key' } };
    const kind = this.kindOf(req);
    if (kind === 'charge') {
      const b = (req.json ?? {}) as Record<string, unknown>;
      const { method, merchant_ref: ref, amount, signature, expired_time: expiredTime } = b;
      if (typeof method !== 'string' || !['QRIS', 'BRIVA', 'SHOPEEPAY'].includes(method)) return { status: 400, body: { success: false, message: 'Invalid payment method' } };
      if (typeof ref !== 'string' || typeof amount !== 'number' || !Number.isSafeInteger(amount) || typeof expiredTime !== 'number') {
        return { status: 400, body: { success: false, message: 'Invalid parameters' } };
      }
      if (signature !== tripayHmac(TRIPAY_MERCHANT_CODE + ref + String(amount))) return { status: 400, body: { success: false, message: 'Invalid signature' } };
      const t: TripayTransaction = { reference: `DEV-T${TRIPAY_MERCHANT_CODE.slice(1)}${digits(8)}ABCDE`, merchant_ref: ref, method, amount, status: 'UNPAID', expired_time: expiredTime, request: b };
      this.transactions.set(t.reference, t);
      return { status: 200, body: { success: true, message: '', data: this.view(t) } };
    }
    if (kind === 'status') {
      const t = this.transactions.get(req.query.get('reference') ?? '');
      if (!t) return { status: 404, body: { success: false, message: 'Transaksi tidak ditemukan' } };
      return { status: 200, body: { success: true, message: 'Transaction found', data: this.view(t) } };
    }
    return { status: 404, body: { success: false, message: 'not found' } };
  }

  /** A callback body as Tripay sends it (raw JSON text); sign it with tripayHmac(body). */
  callback(merchantRef: string, status: 'PAID' | 'EXPIRED' | 'FAILED' | 'UNPAID' | 'REFUND', o: { totalAmount?: number; feeCustomer?: number } = {}): string {
    const t = this.byMerchantRef(merchantRef);
    const fee = 1810;
    const total = o.totalAmount ?? t.amount;
    return JSON.stringify({
      reference: t.reference,
      merchant_ref: merchantRef,
      payment_method: t.method,
      payment_method_code: t.method,
      total_amount: total,
      fee_merchant: fee,
      fee_customer: o.feeCustomer ?? 0,
      total_fee: fee,
      amount_received: total - fee,
      is_closed_payment: 1,
      status,
      paid_at: status === 'PAID' ? 1796274090 : null,
      note: null,
    });
  }
}

// ---- Flows shared by the gateway tests -----------------------------------------------------

export type Client = ReturnType<typeof supertest>;

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** POST /api/escrows/:id/pay as the buyer (a fresh idempotency key each time). */
export function pay(client: Client, key: string, escrowId: string, method: string, provider?: string) {
  return client
    .post(`/api/escrows/${escrowId}/pay`)
    .set(bearer(key))
    .set('Idempotency-Key', randomUUID())
    .send(provider === undefined ? { method } : { method, provider });
}

/** A gateway callback on one of the four inbound addresses, raw JSON body as given. */
export function deliver(client: Client, rawBody: string, headers: Record<string, string>, path = '/api/webhooks/inbound') {
  return client.post(path).set('Content-Type', 'application/json').set(headers).send(rawBody);
}

export async function paymentByOrder(order: string): Promise<PaymentRow> {
  return (await db('payments').where({ gateway_order_id: order }).first()) as PaymentRow;
}

export async function escrowStatus(id: string): Promise<string> {
  return ((await db('escrows').where({ id }).first()) as { status: string }).status;
}

/** Journal entries that moved an escrow's payment (one per paid escrow, however many callbacks). */
export async function paymentPostings(escrowId: string): Promise<number> {
  const row = (await db('journal_entries').where({ kind: 'escrow_payment', ref_id: escrowId }).count<{ count: string }[]>('* as count'))[0];
  return Number(row?.count ?? 0);
}

export async function storedCallbacks(): Promise<{ status: string; amount: number | null; outcome: string | null; deliveries: number; source: string }[]> {
  return (await db('payment_callbacks').select('status', 'amount', 'outcome', 'deliveries', 'source').orderBy('id')) as {
    status: string;
    amount: number | null;
    outcome: string | null;
    deliveries: number;
    source: string;
  }[];
}
