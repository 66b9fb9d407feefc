/**
 * The Tripay adapter through HTTP (decision D5, issue 8) against a fake Tripay on loopback:
 * pay creates a closed transaction (POST /api/transaction/create, Bearer API key, merchant_ref
 * = our order id, amount = escrow + surcharge, the channel code, the request signature
 * HMAC-SHA256(merchant code + merchant_ref + amount, private key) which the fake checks too),
 * the answer carries the QR / VA (pay_code) / deep link; callbacks signed with
 * X-Callback-Signature = HMAC-SHA256(raw body, private key) and X-Callback-Event:
 * payment_status are reconciled by the worker (paid, forged, duplicate, late EXPIRED, wrong
 * event); the poller settles a lost callback through GET /api/transaction/detail?reference=;
 * gateway failures and missing secrets never leave a payment row. Money tests end with the
 * ledger check.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import {
  bearer,
  deliver,
  escrowStatus,
  FakeTripay,
  pay,
  paymentByOrder,
  paymentPostings,
  storedCallbacks,
  TRIPAY_API_KEY,
  TRIPAY_MERCHANT_CODE,
  TRIPAY_PRIVATE_KEY,
  type Client,
} from '../../helpers/fake-gateways.js';
import { runJobs, type RanJob } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createGateway, unfailedPayments } from '../../factories/payments.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import { pollPending } from '../../../shared/payments/service.js';

const MINUTE = 60_000;
const T0 = new Date('2026-12-03T05:00:00.000Z');
const AMOUNT = 150_000;
const SURCHARGE = 1050; // ceil(150,000 * 0.7%)
const TOTAL = AMOUNT + SURCHARGE;

/** Tripay's documented HMAC-SHA256 hex with the private key, written here from the docs. */
const hmac = (data: string, key = TRIPAY_PRIVATE_KEY) => createHmac('sha256', key).update(data, 'utf8').digest('hex');

function noErrors(ran: RanJob[]): void {
  expect(ran.filter((j) => j.error).map((j) => `${j.name}: ${j.error}`)).to.deep.equal([]);
}

interface Opened {
  client: Client;
  key: string;
  escrowId: string;
  order: string;
  data: Record<string, unknown>;
}

describe('Tripay gateway adapter through HTTP (fake Tripay on loopback)', () => {
  let fake: FakeTripay;
  let original: typeof config.gateways;

  before(() => {
    original = structuredClone(config.gateways);
  });

  beforeEach(async () => {
    clock.set(T0);
    fake = await new FakeTripay().start();
    await createGateway({ provider: 'tripay', methods: ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'], feePercent: '0.7' });
  });

  afterEach(async () => {
    await fake.stop();
    expect(config.gateways).to.deep.equal(original);
  });

  async function open(method = 'qris'): Promise<Opened> {
    const { escrow, buyer } = await createEscrow({ amount: AMOUNT });
    const key = await issueKey(buyer.id);
    const client = api();
    const res = await pay(client, key, escrow.id, method);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { client, key, escrowId: escrow.id, order: res.body.data.gateway_order_id as string, data: res.body.data as Record<string, unknown> };
  }

  const callback = (o: Opened, rawBody: string, signature = hmac(rawBody), event = 'payment_status', path?: string) =>
    deliver(o.client, rawBody, { 'X-Callback-Signature': signature, 'X-Callback-Event': event }, path);

  it('pay qris: POST /api/transaction/create with the Bearer API key, merchant_ref, amount = escrow + surcharge and the documented signature; the answer carries the QR', async () => {
    const o = await open('qris');
    expect(fake.calls('charge')).to.have.length(1);
    const req = fake.calls('charge')[0]!;
    expect(req.method).to.equal('POST');
    expect(req.url).to.equal('/api/transaction/create');
    expect(req.headers.authorization).to.equal(`Bearer ${TRIPAY_API_KEY}`);
    const body = req.json as Record<string, unknown>;
    expect(body).to.deep.include({
      method: 'QRIS',
      merchant_ref: o.order,
      amount: TOTAL,
      expired_time: Math.floor(T0.getTime() / 1000) + 15 * 60,
      signature: hmac(`${TRIPAY_MERCHANT_CODE}${o.order}${TOTAL}`),
    });
    expect(body.order_items).to.deep.equal([{ sku: 'ESCROW', name: 'Sepatu lari', price: TOTAL, quantity: 1 }]);
    const t = fake.byMerchantRef(o.order);
    expect(o.data).to.deep.include({
      provider: 'tripay',
      method: 'qris',
      amount: TOTAL,
      escrow_amount: AMOUNT,
      surcharge: SURCHARGE,
      qr_code_url: `https://tripay.co.id/qr/${t.reference}`,
      payment_url: `https://tripay.co.id/checkout/${t.reference}`,
      va_number: null,
      deep_link_url: null,
      expires_at: new Date(T0.getTime() + 15 * MINUTE).toISOString(),
    });
    expect(o.data.qr_string).to.equal(`00020101021226TRIPAY${t.reference}5204000053033605405${TOTAL}6304BEEF`);
    expect(JSON.parse((await paymentByOrder(o.order)).raw_response)).to.deep.include({ reference: t.reference, merchant_ref: o.order, payment_method: 'QRIS', status: 'UNPAID' });
  });

  it('bank_transfer is BRIVA (pay_code is the VA), shopeepay answers the deep link, gopay is not a Tripay channel (502, nothing sent)', async () => {
    const va = await open('bank_transfer');
    const vaTx = fake.byMerchantRef(va.order);
    expect(vaTx.method).to.equal('BRIVA');
    expect(vaTx.expired_time).to.equal(Math.floor(T0.getTime() / 1000) + 24 * 3600);
    expect(va.data.va_number).to.match(/^57585\d{11}$/);
    expect(va.data).to.deep.include({ va_bank: 'BRI', qr_code_url: null, deep_link_url: null, payment_url: `https://tripay.co.id/checkout/${vaTx.reference}` });

    const shopee = await open('shopeepay');
    const shopeeTx = fake.byMerchantRef(shopee.order);
    expect(shopeeTx.method).to.equal('SHOPEEPAY');
    expect(shopee.data).to.deep.include({ deep_link_url: `https://tripay.co.id/checkout/${shopeeTx.reference}/redirect`, va_number: null });

    for (const method of ['gopay', 'crypto']) {
      const { escrow, buyer } = await createEscrow({ amount: AMOUNT });
      const res = await pay(api(), await issueKey(buyer.id), escrow.id, method);
      expect(res.status, JSON.stringify(res.body)).to.equal(502);
      expect(res.body.error.code).to.equal('GATEWAY_ERROR');
    }
    expect(fake.calls('charge')).to.have.length(2);
    expect(await unfailedPayments()).to.equal(2);
  });

  it('a PAID callback -> worker -> escrow paid: escrow held, surcharge to gateway fees, payment-status paid', async () => {
    const o = await open('qris');
    const raw = fake.callback(o.order, 'PAID');
    const res = await callback(o, raw);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, data: { received: true, provider: 'tripay', duplicate: false } });
    noErrors(await runJobs());
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    const status = await o.client.get(`/api/escrows/${o.escrowId}/payment-status`).set(bearer(o.key));
    expect(status.body.data).to.deep.include({ status: 'paid', amount: String(TOTAL), provider: 'tripay' });
    expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 1, source: 'callback' }]);
    const stored = (await db('payment_callbacks').first()) as { raw_body: string; headers: Record<string, string> };
    expect(stored.raw_body).to.equal(raw);
    expect(stored.headers).to.deep.equal({ 'content-type': 'application/json', 'x-callback-event': 'payment_status' });
    expect(await balanceOf(db, { escrowId: o.escrowId })).to.equal(AMOUNT);
    expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(SURCHARGE);
    expect(await paymentPostings(o.escrowId)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('Tripay signs the status (HMAC over the raw body): a PAID callback pays without asking the status API', async () => {
    const o = await open('qris');
    // Tripay's status API would still say UNPAID: asking it would leave the payment unpaid.
    expect(fake.byMerchantRef(o.order).status).to.equal('UNPAID');
    await callback(o, fake.callback(o.order, 'PAID'));
    noErrors(await runJobs());
    expect(fake.calls('status')).to.have.length(0);
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    expect(await paymentPostings(o.escrowId)).to.equal(1);
  });

  it('a buyer-borne Tripay fee on top (total_amount = amount + fee_customer) still matches the amount asked for', async () => {
    const o = await open('bank_transfer');
    await callback(o, fake.callback(o.order, 'PAID', { totalAmount: TOTAL + 4250, feeCustomer: 4250 }));
    noErrors(await runJobs());
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    expect((await storedCallbacks())[0]!.amount).to.equal(TOTAL);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a forged X-Callback-Signature is 403 INVALID_SIGNATURE and stores nothing', async () => {
    const o = await open('qris');
    const raw = fake.callback(o.order, 'PAID');
    const altered = raw.replace(`"total_amount":${TOTAL}`, '"total_amount":1');
    expect(altered).to.not.equal(raw);
    const forgeries: [string, string][] = [
      [raw, hmac(raw, 'some-other-private-key')],
      [altered, hmac(raw)], // the signature of the original body on an altered body
      [raw, hmac(`${TRIPAY_MERCHANT_CODE}${o.order}${TOTAL}`)], // a request signature is not a callback signature
      [raw, '0'.repeat(64)],
      [raw, 'not-hex'],
    ];
    for (const [body, sig] of forgeries) {
      const res = await callback(o, body, sig, 'payment_status', '/api/webhooks/ipn');
      expect(res.status, sig).to.equal(403);
      expect(res.body.error.code).to.equal('INVALID_SIGNATURE');
    }
    expect(await countRows('payment_callbacks')).to.equal(0);
    noErrors(await runJobs());
    expect(await escrowStatus(o.escrowId)).to.equal('pending_payment');
    expect((await paymentByOrder(o.order)).status).to.equal('pending');
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a signed callback of another event or a REFUND status is 400 INVALID_CALLBACK and stores nothing', async () => {
    const o = await open('qris');
    const raw = fake.callback(o.order, 'PAID');
    const wrongEvent = await callback(o, raw, hmac(raw), 'payment_refund');
    expect(wrongEvent.status).to.equal(400);
    expect(wrongEvent.body.error.code).to.equal('INVALID_CALLBACK');
    const refund = fake.callback(o.order, 'REFUND');
    const res = await callback(o, refund);
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('INVALID_CALLBACK');
    expect(await countRows('payment_callbacks')).to.equal(0);
  });

  it('a duplicate PAID callback is acknowledged once and posts once', async () => {
    const o = await open('qris');
    const raw = fake.callback(o.order, 'PAID');
    expect((await callback(o, raw)).body.data.duplicate).to.equal(false);
    expect((await callback(o, raw, hmac(raw), 'payment_status', '/api/webhooks/payment')).body.data.duplicate).to.equal(true);
    noErrors(await runJobs());
    expect((await callback(o, raw, hmac(raw), 'payment_status', '/api/webhooks/universal')).body.data.duplicate).to.equal(true);
    noErrors(await runJobs());
    expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 3, source: 'callback' }]);
    expect(await paymentPostings(o.escrowId)).to.equal(1);
    expect(await balanceOf(db, { escrowId: o.escrowId })).to.equal(AMOUNT);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a late EXPIRED (or FAILED) after PAID is acknowledged and ignored: the payment stays paid', async () => {
    const o = await open('qris');
    await callback(o, fake.callback(o.order, 'PAID'));
    noErrors(await runJobs());
    for (const late of ['EXPIRED', 'FAILED'] as const) {
      const res = await callback(o, fake.callback(o.order, late));
      expect(res.status).to.equal(200);
    }
    noErrors(await runJobs());
    expect((await paymentByOrder(o.order)).status).to.equal('paid');
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    expect((await storedCallbacks()).map((c) => [c.status, c.outcome])).to.deep.equal([
      ['paid', 'paid'],
      ['expired', 'ignored_expired_after_paid'],
      ['failed', 'ignored_failed_after_paid'],
    ]);
    expect(await paymentPostings(o.escrowId)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('the poller settles a payment whose callback was lost, through GET /api/transaction/detail?reference=', async () => {
    const o = await open('bank_transfer');
    const reference = fake.byMerchantRef(o.order).reference;
    clock.advance(2 * MINUTE);
    expect(await pollPending()).to.deep.equal({ asked: 1, settled: 0 }); // still UNPAID at Tripay
    fake.setStatus(o.order, 'PAID');
    clock.advance(5 * MINUTE);
    expect(await pollPending()).to.deep.equal({ asked: 1, settled: 1 });
    const polls = fake.calls('status');
    expect(polls).to.have.length(2);
    expect(polls[1]!.method).to.equal('GET');
    expect(polls[1]!.pathname).to.equal('/api/transaction/detail');
    expect(polls[1]!.query.get('reference')).to.equal(reference);
    expect(polls[1]!.headers.authorization).to.equal(`Bearer ${TRIPAY_API_KEY}`);
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 1, source: 'poll' }]);
    // The callback arriving afterwards changes nothing.
    await callback(o, fake.callback(o.order, 'PAID'));
    noErrors(await runJobs());
    expect(await paymentPostings(o.escrowId)).to.equal(1);
    expect(await balanceOf(db, { escrowId: o.escrowId })).to.equal(AMOUNT);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('the poller backs off when the status API times out', async () => {
    const o = await open('qris');
    fake.statusFailure = 'timeout';
    config.gateways.httpTimeoutMs = 200;
    clock.advance(2 * MINUTE);
    expect(await pollPending()).to.deep.equal({ asked: 1, settled: 0 });
    expect(fake.calls('status')).to.have.length(1);
    const row = await paymentByOrder(o.order);
    expect(row.status).to.equal('pending');
    expect(row.next_poll_at!.getTime()).to.equal(clock.nowMs() + 5 * MINUTE);
  });

  for (const failure of ['http500', 'http400', 'malformed', 'refused', 'timeout'] as const) {
    it(`a transaction request answered ${failure} is 502 GATEWAY_ERROR and leaves no live link (its reserved row is failed)`, async () => {
      fake.chargeFailure = failure;
      if (failure === 'timeout') config.gateways.httpTimeoutMs = 200;
      const { escrow, buyer } = await createEscrow({ amount: AMOUNT });
      const res = await pay(api(), await issueKey(buyer.id), escrow.id, 'qris');
      expect(res.status, JSON.stringify(res.body)).to.equal(502);
      expect(res.body.error.code).to.equal('GATEWAY_ERROR');
      expect(fake.calls('charge')).to.have.length(1);
      expect(await unfailedPayments()).to.equal(0);
    });
  }

  it('a wrong merchant code makes Tripay refuse the signature: 502 GATEWAY_ERROR, no live link (the reserved row is failed)', async () => {
    config.gateways.tripay.merchantCode = 'T99999';
    const { escrow, buyer } = await createEscrow({ amount: AMOUNT });
    const res = await pay(api(), await issueKey(buyer.id), escrow.id, 'qris');
    expect(res.status, JSON.stringify(res.body)).to.equal(502);
    expect(res.body.error.code).to.equal('GATEWAY_ERROR');
    expect(await unfailedPayments()).to.equal(0);
  });

  for (const missing of ['apiKey', 'privateKey', 'merchantCode'] as const) {
    it(`without the ${missing} the adapter is not loaded: 503 ADAPTER_NOT_LOADED and its callbacks are unknown`, async () => {
      config.gateways.tripay[missing] = '';
      const { escrow, buyer } = await createEscrow({ amount: AMOUNT });
      const client = api();
      const res = await pay(client, await issueKey(buyer.id), escrow.id, 'qris');
      expect(res.status, JSON.stringify(res.body)).to.equal(503);
      expect(res.body.error.code).to.equal('ADAPTER_NOT_LOADED');
      const raw = JSON.stringify({ merchant_ref: 'ESC-X', status: 'PAID', total_amount: 1 });
      const cb = await deliver(client, raw, { 'X-Callback-Signature': hmac(raw), 'X-Callback-Event': 'payment_status' });
      expect(cb.status).to.equal(400);
      expect(cb.body.error.code).to.equal('UNKNOWN_PROVIDER');
      expect(fake.requests).to.have.length(0);
      expect(await countRows('payments')).to.equal(0);
      expect(await countRows('payment_callbacks')).to.equal(0);
    });
  }
});
