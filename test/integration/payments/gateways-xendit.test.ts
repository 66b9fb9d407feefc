/**
 * The Xendit adapter through HTTP (decision D5, issue 8) against a fake Xendit on loopback:
 * pay creates an invoice (POST /v2/invoices, Basic auth with the secret key, external_id = our
 * order id, amount = escrow + surcharge, payment_methods of the method, invoice_duration), the
 * answer's payment_url is the invoice page; invoice callbacks with the x-callback-token are
 * reconciled by the worker (PAID, then SETTLED counted once, forged token, duplicate, late
 * EXPIRED) once the invoice query confirms them (nothing in a callback is signed: a PAID the
 * query calls PENDING, or a query that fails, pays nothing); the poller settles a lost callback through GET /v2/invoices?external_id=; gateway
 * failures and a missing secret never leave a payment row. Money tests end with the ledger check.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import {
  bearer,
  deliver,
  escrowStatus,
  FakeXendit,
  pay,
  paymentByOrder,
  paymentPostings,
  storedCallbacks,
  XENDIT_CALLBACK_TOKEN,
  XENDIT_SECRET_KEY,
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

describe('Xendit gateway adapter through HTTP (fake Xendit on loopback)', () => {
  let fake: FakeXendit;
  let original: typeof config.gateways;

  before(() => {
    original = structuredClone(config.gateways);
  });

  beforeEach(async () => {
    clock.set(T0);
    fake = await new FakeXendit().start();
    await createGateway({ provider: 'xendit', methods: ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'], feePercent: '0.7' });
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

  const callback = (o: Opened, rawBody: string, token = XENDIT_CALLBACK_TOKEN, path?: string) => deliver(o.client, rawBody, { 'x-callback-token': token }, path);

  it('pay qris: POST /v2/invoices with Basic secret-key auth, external_id = our order id, amount = escrow + surcharge; payment_url is the invoice', async () => {
    const o = await open('qris');
    expect(fake.calls('charge')).to.have.length(1);
    const req = fake.calls('charge')[0]!;
    expect(req.method).to.equal('POST');
    expect(req.url).to.equal('/v2/invoices');
    expect(req.headers.authorization).to.equal(`Basic ${Buffer.from(`${XENDIT_SECRET_KEY}:`).toString('base64')}`);
    const body = req.json as Record<string, unknown>;
    expect(body).to.deep.include({ external_id: o.order, amount: TOTAL, currency: 'IDR', invoice_duration: 15 * 60, description: 'Sepatu lari' });
    expect(body.payment_methods).to.deep.equal(['QRIS']);
    const inv = fake.invoices.get(o.order)!;
    expect(o.data).to.deep.include({
      provider: 'xendit',
      method: 'qris',
      amount: TOTAL,
      escrow_amount: AMOUNT,
      surcharge: SURCHARGE,
      payment_url: `https://checkout-staging.xendit.co/web/${inv.id}`,
      qr_code_url: null,
      va_number: null,
      deep_link_url: null,
      expires_at: new Date(T0.getTime() + 15 * MINUTE).toISOString(),
    });
    const row = await paymentByOrder(o.order);
    expect(row.redirect_url).to.equal(`https://checkout-staging.xendit.co/web/${inv.id}`);
    expect(JSON.parse(row.raw_response)).to.deep.include({ id: inv.id, external_id: o.order, status: 'PENDING' });
  });

  it('bank_transfer, gopay and shopeepay restrict the invoice to their channels and lifetimes', async () => {
    await open('bank_transfer');
    await open('gopay');
    await open('shopeepay');
    const sent = fake.calls('charge').map((r) => r.json as { payment_methods: string[]; invoice_duration: number; amount: number });
    expect(sent.map((b) => b.payment_methods)).to.deep.equal([['BCA', 'BNI', 'BRI', 'MANDIRI', 'PERMATA', 'BSI'], ['GOPAY'], ['SHOPEEPAY']]);
    expect(sent.map((b) => b.invoice_duration)).to.deep.equal([24 * 3600, 15 * 60, 15 * 60]);
    expect(sent.map((b) => b.amount)).to.deep.equal([TOTAL, TOTAL, TOTAL]);
  });

  it('crypto is not a Xendit channel: 502 GATEWAY_ERROR, nothing sent, no live link (the reserved row is failed)', async () => {
    const { escrow, buyer } = await createEscrow({ amount: AMOUNT });
    const res = await pay(api(), await issueKey(buyer.id), escrow.id, 'crypto');
    expect(res.status, JSON.stringify(res.body)).to.equal(502);
    expect(res.body.error.code).to.equal('GATEWAY_ERROR');
    expect(fake.requests).to.have.length(0);
    expect(await unfailedPayments()).to.equal(0);
  });

  it('a PAID invoice callback -> worker -> escrow paid; the SETTLED callback after it is the same fact and posts nothing more', async () => {
    const o = await open('qris');
    fake.setStatus(o.order, 'PAID');
    const res = await callback(o, fake.callback(o.order, 'PAID'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, data: { received: true, provider: 'xendit', duplicate: false } });
    noErrors(await runJobs());
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    // Confirmed with the invoice query before it was paid.
    expect(fake.calls('status').map((r) => r.query.get('external_id'))).to.deep.equal([o.order]);
    const status = await o.client.get(`/api/escrows/${o.escrowId}/payment-status`).set(bearer(o.key));
    expect(status.body.data).to.deep.include({ status: 'paid', amount: String(TOTAL), provider: 'xendit' });
    const settled = await callback(o, fake.callback(o.order, 'SETTLED'));
    expect(settled.body.data).to.deep.equal({ received: true, provider: 'xendit', duplicate: true });
    noErrors(await runJobs());
    expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 2, source: 'callback' }]);
    expect(await balanceOf(db, { escrowId: o.escrowId })).to.equal(AMOUNT);
    expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(SURCHARGE);
    expect(await paymentPostings(o.escrowId)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a wrong x-callback-token is 403 INVALID_SIGNATURE and stores nothing', async () => {
    const o = await open('qris');
    const raw = fake.callback(o.order, 'PAID');
    for (const token of [`${XENDIT_CALLBACK_TOKEN.slice(0, -1)}X`, 'short', XENDIT_CALLBACK_TOKEN.toUpperCase(), `${XENDIT_CALLBACK_TOKEN}0`, XENDIT_SECRET_KEY]) {
      const res = await callback(o, raw, token, '/api/webhooks/payment');
      expect(res.status, token).to.equal(403);
      expect(res.body.error.code).to.equal('INVALID_SIGNATURE');
    }
    expect(await countRows('payment_callbacks')).to.equal(0);
    noErrors(await runJobs());
    expect(await escrowStatus(o.escrowId)).to.equal('pending_payment');
    expect((await paymentByOrder(o.order)).status).to.equal('pending');
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a callback without external_id or with an unknown status is 400 INVALID_CALLBACK and stores nothing', async () => {
    const o = await open('qris');
    const good = JSON.parse(fake.callback(o.order, 'PAID')) as Record<string, unknown>;
    for (const body of [{ ...good, external_id: undefined }, { ...good, status: 'REFUNDED' }, { ...good, paid_amount: 151050.5 }]) {
      const res = await callback(o, JSON.stringify(body));
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_CALLBACK');
    }
    expect(await countRows('payment_callbacks')).to.equal(0);
  });

  it('a duplicate PAID callback is acknowledged once and posts once', async () => {
    const o = await open('bank_transfer');
    fake.setStatus(o.order, 'PAID');
    const raw = fake.callback(o.order, 'PAID');
    expect((await callback(o, raw)).body.data.duplicate).to.equal(false);
    expect((await callback(o, raw, XENDIT_CALLBACK_TOKEN, '/api/webhooks/universal')).body.data.duplicate).to.equal(true);
    noErrors(await runJobs());
    expect((await callback(o, raw, XENDIT_CALLBACK_TOKEN, '/api/webhooks/ipn')).body.data.duplicate).to.equal(true);
    noErrors(await runJobs());
    expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 3, source: 'callback' }]);
    expect(await paymentPostings(o.escrowId)).to.equal(1);
    expect(await balanceOf(db, { escrowId: o.escrowId })).to.equal(AMOUNT);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a late EXPIRED after PAID is acknowledged and ignored; a paid_amount that differs is flagged, not paid', async () => {
    const o = await open('qris');
    fake.setStatus(o.order, 'PAID');
    await callback(o, fake.callback(o.order, 'PAID'));
    noErrors(await runJobs());
    const late = await callback(o, fake.callback(o.order, 'EXPIRED'));
    expect(late.status).to.equal(200);
    noErrors(await runJobs());
    expect((await paymentByOrder(o.order)).status).to.equal('paid');
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    expect((await storedCallbacks()).map((c) => [c.status, c.outcome])).to.deep.equal([
      ['paid', 'paid'],
      ['expired', 'ignored_expired_after_paid'],
    ]);

    const m = await open('qris');
    fake.setStatus(m.order, 'PAID', 100_000);
    await callback(m, fake.callback(m.order, 'PAID', { paidAmount: 100_000 }));
    noErrors(await runJobs());
    const row = await paymentByOrder(m.order);
    expect(row.status).to.equal('pending');
    expect(row.flag).to.equal('amount_mismatch');
    expect(await escrowStatus(m.escrowId)).to.equal('pending_payment');
    expect(await paymentPostings(o.escrowId)).to.equal(1);
    expect(await paymentPostings(m.escrowId)).to.equal(0);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  describe('nothing in a callback is signed: the invoice query confirms it before anything is paid', () => {
    it('a PAID callback with the right token while the invoice query says PENDING: not paid, reconciled as still pending', async () => {
      const o = await open('qris');
      expect((await callback(o, fake.callback(o.order, 'PAID'))).status).to.equal(200);
      noErrors(await runJobs());
      expect(fake.calls('status').map((r) => r.query.get('external_id'))).to.deep.equal([o.order]);
      expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'still_pending', deliveries: 1, source: 'callback' }]);
      expect(await paymentByOrder(o.order)).to.deep.include({ status: 'pending', paid_at: null, flag: null });
      expect(await escrowStatus(o.escrowId)).to.equal('pending_payment');
      expect(await paymentPostings(o.escrowId)).to.equal(0);
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(0);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a PAID callback for more than the invoice says was paid is reconciled on the queried paid_amount: flagged, not paid', async () => {
      const o = await open('qris');
      fake.setStatus(o.order, 'PAID', 100_000);
      await callback(o, fake.callback(o.order, 'PAID'));
      noErrors(await runJobs());
      expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'amount_mismatch', deliveries: 1, source: 'callback' }]);
      expect(await paymentByOrder(o.order)).to.deep.include({ status: 'pending', flag: 'amount_mismatch' });
      expect(await paymentPostings(o.escrowId)).to.equal(0);
    });

    for (const failure of ['http500', 'timeout', 'malformed', 'http400'] as const) {
      it(`the invoice query ${failure}: the delivery stays unprocessed with attempts and last_error, the payment pending; once it answers PAID the next pass pays once`, async () => {
        const o = await open('qris');
        fake.setStatus(o.order, 'PAID');
        fake.statusFailure = failure;
        if (failure === 'timeout') config.gateways.httpTimeoutMs = 200;
        expect((await callback(o, fake.callback(o.order, 'PAID'))).status).to.equal(200);
        const ran = await runJobs(['gateway-callbacks']);
        expect(ran.filter((j) => j.error).map((j) => j.error)).to.have.length(1);
        const waiting = (await db('payment_callbacks').first()) as { processed_at: Date | null; outcome: string | null; attempts: number; last_error: string | null; next_attempt_at: Date };
        expect(waiting).to.deep.include({ processed_at: null, outcome: null, attempts: 1 });
        expect(waiting.last_error).to.match(/^status not confirmed by xendit: /);
        expect(waiting.next_attempt_at.getTime()).to.equal(clock.nowMs() + 1000);
        expect((await paymentByOrder(o.order)).status).to.equal('pending');
        expect(await escrowStatus(o.escrowId)).to.equal('pending_payment');
        expect(await paymentPostings(o.escrowId)).to.equal(0);
        // The query fails again after the backoff: still unpaid, waiting 2 s now.
        clock.advance(1000);
        expect((await runJobs(['gateway-callbacks'])).filter((j) => j.error)).to.have.length(1);
        expect((await db('payment_callbacks').first()) as { attempts: number }).to.deep.include({ attempts: 2 });
        expect(await escrowStatus(o.escrowId)).to.equal('pending_payment');
        fake.statusFailure = 'none';
        clock.advance(2000);
        noErrors(await runJobs());
        expect(fake.calls('status')).to.have.length(3);
        expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 1, source: 'callback' }]);
        expect(await escrowStatus(o.escrowId)).to.equal('paid');
        expect(await paymentPostings(o.escrowId)).to.equal(1);
        expect(await balanceOf(db, { escrowId: o.escrowId })).to.equal(AMOUNT);
        expect(await checkLedger(db)).to.deep.equal([]);
      });
    }

    it('an unconfirmed PAID for a link already paid asks nothing more', async () => {
      const o = await open('qris');
      fake.setStatus(o.order, 'PAID');
      await callback(o, fake.callback(o.order, 'PAID'));
      noErrors(await runJobs());
      await callback(o, fake.callback(o.order, 'EXPIRED'));
      noErrors(await runJobs());
      expect(fake.calls('status')).to.have.length(1);
      expect((await storedCallbacks()).map((c) => c.outcome)).to.deep.equal(['paid', 'ignored_expired_after_paid']);
    });
  });

  it('the poller settles a payment whose callback was lost, through GET /v2/invoices?external_id=', async () => {
    const o = await open('gopay');
    clock.advance(2 * MINUTE);
    expect(await pollPending()).to.deep.equal({ asked: 1, settled: 0 }); // still PENDING at Xendit
    fake.setStatus(o.order, 'PAID');
    clock.advance(5 * MINUTE);
    expect(await pollPending()).to.deep.equal({ asked: 1, settled: 1 });
    const polls = fake.calls('status');
    expect(polls).to.have.length(2);
    expect(polls[1]!.method).to.equal('GET');
    expect(polls[1]!.pathname).to.equal('/v2/invoices');
    expect(polls[1]!.query.get('external_id')).to.equal(o.order);
    expect(polls[1]!.headers.authorization).to.equal(`Basic ${Buffer.from(`${XENDIT_SECRET_KEY}:`).toString('base64')}`);
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 1, source: 'poll' }]);
    expect(await balanceOf(db, { escrowId: o.escrowId })).to.equal(AMOUNT);
    expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(SURCHARGE);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('the poller expires a link Xendit reports EXPIRED', async () => {
    const o = await open('qris');
    fake.setStatus(o.order, 'EXPIRED');
    clock.advance(2 * MINUTE);
    expect(await pollPending()).to.deep.equal({ asked: 1, settled: 0 });
    expect((await paymentByOrder(o.order)).status).to.equal('expired');
    expect(await escrowStatus(o.escrowId)).to.equal('pending_payment');
  });

  for (const failure of ['http500', 'http400', 'malformed', 'refused', 'timeout'] as const) {
    it(`an invoice request answered ${failure} is 502 GATEWAY_ERROR and leaves no live link (its reserved row is failed)`, async () => {
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

  for (const missing of ['secretKey', 'callbackToken'] as const) {
    it(`without the ${missing} the adapter is not loaded: 503 ADAPTER_NOT_LOADED and its callbacks are unknown`, async () => {
      config.gateways.xendit[missing] = '';
      const { escrow, buyer } = await createEscrow({ amount: AMOUNT });
      const client = api();
      const res = await pay(client, await issueKey(buyer.id), escrow.id, 'qris');
      expect(res.status, JSON.stringify(res.body)).to.equal(503);
      expect(res.body.error.code).to.equal('ADAPTER_NOT_LOADED');
      const cb = await deliver(client, JSON.stringify({ id: 'x', external_id: 'ESC-X', status: 'PAID', amount: 1 }), { 'x-callback-token': XENDIT_CALLBACK_TOKEN });
      expect(cb.status).to.equal(400);
      expect(cb.body.error.code).to.equal('UNKNOWN_PROVIDER');
      expect(fake.requests).to.have.length(0);
      expect(await countRows('payments')).to.equal(0);
      expect(await countRows('payment_callbacks')).to.equal(0);
    });
  }
});
