/**
 * The Midtrans adapter through HTTP (decision D5, issue 8) against a fake Midtrans on loopback:
 * pay creates the charge (path, Basic auth with the server key, order id, gross_amount =
 * escrow + surcharge, the method's channel), the answer carries the QR / VA / deep link,
 * signed notifications are reconciled by the worker (paid, forged, duplicate, late expire,
 * amount mismatch) once the status API confirms their unsigned transaction_status (a claimed
 * settlement the status API calls pending, or cannot answer, pays nothing), a notification
 * that comes before pay commits is tried again and pays once, the status poller settles a
 * payment whose notification was lost, and
 * gateway failures (500, timeout, malformed, refused) or a missing server key never leave a
 * payment row. Money tests end with the ledger check.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import {
  deliver,
  escrowStatus,
  FakeMidtrans,
  MIDTRANS_SERVER_KEY,
  midtransSignatureKey,
  pay,
  paymentByOrder,
  paymentPostings,
  storedCallbacks,
  bearer,
  type Client,
} from '../../helpers/fake-gateways.js';
import { runJobs, type RanJob } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createGateway, unfailedPayments } from '../../factories/payments.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import { drainCallbacks, pollPending } from '../../../shared/payments/service.js';

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
  buyer: { email: string; full_name: string };
}

describe('Midtrans gateway adapter through HTTP (fake Midtrans on loopback)', () => {
  let fake: FakeMidtrans;
  let original: typeof config.gateways;

  before(() => {
    original = structuredClone(config.gateways);
  });

  beforeEach(async () => {
    clock.set(T0);
    fake = await new FakeMidtrans().start();
    await createGateway({ provider: 'midtrans', methods: ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'], feePercent: '0.7' });
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
    return { client, key, escrowId: escrow.id, order: res.body.data.gateway_order_id as string, data: res.body.data as Record<string, unknown>, buyer };
  }

  const notify = (o: Opened, rawBody: string, path?: string) => deliver(o.client, rawBody, {}, path);

  it('pay qris: POST /v2/charge with Basic server-key auth, our order id and gross_amount = escrow + surcharge; the answer carries the QR', async () => {
    const o = await open('qris');
    expect(fake.calls('charge')).to.have.length(1);
    const req = fake.calls('charge')[0]!;
    expect(req.method).to.equal('POST');
    expect(req.url).to.equal('/v2/charge');
    expect(req.headers.authorization).to.equal(`Basic ${Buffer.from(`${MIDTRANS_SERVER_KEY}:`).toString('base64')}`);
    expect(req.headers['content-type']).to.match(/^application\/json/);
    const body = req.json as Record<string, unknown>;
    expect(body.payment_type).to.equal('qris');
    expect(body.transaction_details).to.deep.equal({ order_id: o.order, gross_amount: TOTAL });
    // 15 minutes from 12:00 Jakarta time (05:00Z).
    expect(body.custom_expiry).to.deep.equal({ order_time: '2026-12-03 12:00:00 +0700', expiry_duration: 15, unit: 'minute' });
    expect(body.item_details).to.deep.equal([{ id: 'escrow', price: TOTAL, quantity: 1, name: 'Sepatu lari' }]);
    // The payer is the caller: the users row auth() read for the request (not read again).
    expect(body.customer_details).to.deep.equal({ first_name: o.buyer.full_name, email: o.buyer.email });

    const charge = fake.charges.get(o.order)!;
    expect(o.data).to.deep.include({
      provider: 'midtrans',
      method: 'qris',
      amount: TOTAL,
      escrow_amount: AMOUNT,
      surcharge: SURCHARGE,
      payment_url: null,
      va_number: null,
      va_bank: null,
      deep_link_url: null,
      qr_code_url: `${fake.origin}/v2/qris/${charge.transactionId}/qr-code`,
      expires_at: new Date(T0.getTime() + 15 * MINUTE).toISOString(),
    });
    expect(o.data.qr_string).to.equal(`00020101021226${o.order}5204000053033605405${TOTAL}6304ABCD`);
    const row = await paymentByOrder(o.order);
    expect(row.status).to.equal('pending');
    expect(JSON.parse(row.raw_response)).to.deep.equal({ transaction_id: charge.transactionId, order_id: o.order, payment_type: 'qris', transaction_status: 'pending', status_code: '201' });
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('pay bank_transfer (BNI VA), gopay and shopeepay: the channel sent and the VA number or deep links answered', async () => {
    const va = await open('bank_transfer');
    const vaReq = fake.calls('charge')[0]!.json as Record<string, unknown>;
    expect(vaReq.payment_type).to.equal('bank_transfer');
    expect(vaReq.bank_transfer).to.deep.equal({ bank: 'bni' });
    expect((vaReq.custom_expiry as Record<string, unknown>).expiry_duration).to.equal(24 * 60);
    expect(va.data.va_number).to.match(/^9888\d{12}$/);
    expect(va.data).to.deep.include({ va_bank: 'BNI', qr_code_url: null, deep_link_url: null, payment_url: null, amount: TOTAL });

    const gopay = await open('gopay');
    const gopayCharge = fake.charges.get(gopay.order)!;
    expect(gopayCharge.paymentType).to.equal('gopay');
    expect(gopay.data).to.deep.include({
      deep_link_url: `https://simulator.sandbox.midtrans.com/gopay/partner/app/payment-pin?tref=${gopayCharge.transactionId}`,
      qr_code_url: `${fake.origin}/v2/gopay/${gopayCharge.transactionId}/qr-code`,
      va_number: null,
    });

    const shopee = await open('shopeepay');
    const shopeeCharge = fake.charges.get(shopee.order)!;
    expect(shopeeCharge.paymentType).to.equal('shopeepay');
    expect(shopee.data).to.deep.include({ deep_link_url: `https://wsa.wallet.airpay.co.id/universal-link/wallet/pay?ref=${shopeeCharge.transactionId}`, qr_code_url: null });
    expect(fake.calls('charge').map((r) => (r.json as { transaction_details: { gross_amount: number } }).transaction_details.gross_amount)).to.deep.equal([TOTAL, TOTAL, TOTAL]);
  });

  it('crypto is not a Midtrans channel: 502 GATEWAY_ERROR, nothing sent, no live link (the reserved row is failed)', async () => {
    const { escrow, buyer } = await createEscrow({ amount: AMOUNT });
    const res = await pay(api(), await issueKey(buyer.id), escrow.id, 'crypto');
    expect(res.status, JSON.stringify(res.body)).to.equal(502);
    expect(res.body.error.code).to.equal('GATEWAY_ERROR');
    expect(fake.requests).to.have.length(0);
    expect(await unfailedPayments()).to.equal(0);
  });

  it('a settlement notification -> worker -> escrow paid: escrow held, surcharge to gateway fees, payment-status paid', async () => {
    const o = await open('qris');
    fake.setStatus(o.order, 'settlement');
    const raw = fake.notification(o.order, 'settlement');
    expect(JSON.parse(raw)).to.deep.include({ gross_amount: '151050.00', status_code: '200' });
    const res = await notify(o, raw);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, data: { received: true, provider: 'midtrans', duplicate: false } });
    expect(await escrowStatus(o.escrowId)).to.equal('pending_payment'); // reconciled by the worker, not inline
    expect(fake.calls('status')).to.have.length(0);
    noErrors(await runJobs());
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    // transaction_status is not signed: the worker asked the status API before paying.
    expect(fake.calls('status').map((r) => r.url)).to.deep.equal([`/v2/${o.order}/status`]);
    const status = await o.client.get(`/api/escrows/${o.escrowId}/payment-status`).set(bearer(o.key));
    expect(status.body.data).to.deep.include({ status: 'paid', amount: String(TOTAL), provider: 'midtrans', gateway_order_id: o.order });
    expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 1, source: 'callback' }]);
    expect(await balanceOf(db, { escrowId: o.escrowId })).to.equal(AMOUNT);
    expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(SURCHARGE);
    expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-TOTAL);
    expect(await paymentPostings(o.escrowId)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a capture with fraud_status accept pays too; a pending notification changes nothing', async () => {
    const o = await open('qris');
    expect((await notify(o, fake.notification(o.order, 'pending'))).status).to.equal(200);
    noErrors(await runJobs());
    expect(await escrowStatus(o.escrowId)).to.equal('pending_payment');
    expect((await paymentByOrder(o.order)).status).to.equal('pending');
    expect(fake.calls('status')).to.have.length(0); // a pending notification changes nothing: not asked
    fake.setStatus(o.order, 'capture');
    expect((await notify(o, fake.notification(o.order, 'capture', { fraudStatus: 'accept' }))).status).to.equal(200);
    noErrors(await runJobs());
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    expect((await storedCallbacks()).map((c) => [c.status, c.outcome])).to.deep.equal([
      ['pending', 'still_pending'],
      ['paid', 'paid'],
    ]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('forged notifications are 403 INVALID_SIGNATURE and store nothing (wrong key, altered amount, altered status, garbage)', async () => {
    const o = await open('qris');
    const forgeries = [
      fake.notification(o.order, 'settlement', { serverKey: 'SB-Mid-server-somebody-else' }),
      // signature of 151050.00 but the body claims 1.00 was the gross amount
      fake.notification(o.order, 'settlement', { grossAmount: '1.00', signatureKey: midtransSignatureKey(o.order, '200', '151050.00') }),
      // signature of a pending notification replayed with settlement
      fake.notification(o.order, 'settlement', { statusCode: '200', signatureKey: midtransSignatureKey(o.order, '201', '151050.00') }),
      fake.notification(o.order, 'settlement', { signatureKey: 'f'.repeat(128) }),
      fake.notification(o.order, 'settlement', { signatureKey: 'not-hex' }),
    ];
    for (const raw of forgeries) {
      const res = await notify(o, raw, '/api/webhooks/ipn');
      expect(res.status, raw).to.equal(403);
      expect(res.body.error.code).to.equal('INVALID_SIGNATURE');
    }
    expect(await countRows('payment_callbacks')).to.equal(0);
    noErrors(await runJobs());
    expect(await escrowStatus(o.escrowId)).to.equal('pending_payment');
    expect((await paymentByOrder(o.order)).status).to.equal('pending');
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a duplicate notification is acknowledged as a duplicate and posts once', async () => {
    const o = await open('qris');
    fake.setStatus(o.order, 'settlement');
    const raw = fake.notification(o.order, 'settlement');
    expect((await notify(o, raw, '/api/webhooks/inbound')).body.data.duplicate).to.equal(false);
    expect((await notify(o, raw, '/api/webhooks/payment')).body.data.duplicate).to.equal(true);
    noErrors(await runJobs());
    const again = await notify(o, raw, '/api/webhooks/universal');
    expect(again.status).to.equal(200);
    expect(again.body.data).to.deep.equal({ received: true, provider: 'midtrans', duplicate: true });
    noErrors(await runJobs());
    expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 3, source: 'callback' }]);
    expect(await paymentPostings(o.escrowId)).to.equal(1);
    expect(await balanceOf(db, { escrowId: o.escrowId })).to.equal(AMOUNT);
    expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(SURCHARGE);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a late expire after settlement is acknowledged and ignored: the payment stays paid', async () => {
    const o = await open('qris');
    fake.setStatus(o.order, 'settlement');
    await notify(o, fake.notification(o.order, 'settlement'));
    noErrors(await runJobs());
    const late = await notify(o, fake.notification(o.order, 'expire'));
    expect(late.status).to.equal(200);
    expect(late.body.data.duplicate).to.equal(false);
    noErrors(await runJobs());
    const row = await paymentByOrder(o.order);
    expect(row.status).to.equal('paid');
    expect(row.flag).to.equal(null);
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    expect((await storedCallbacks()).map((c) => [c.status, c.outcome])).to.deep.equal([
      ['paid', 'paid'],
      ['expired', 'ignored_expired_after_paid'],
    ]);
    expect(await paymentPostings(o.escrowId)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('an expire before payment marks the link expired; a settlement for a different gross_amount is flagged, not paid', async () => {
    const o = await open('qris');
    fake.setStatus(o.order, 'expire');
    await notify(o, fake.notification(o.order, 'expire'));
    noErrors(await runJobs());
    expect((await paymentByOrder(o.order)).status).to.equal('expired');

    const m = await open('qris');
    // Midtrans settled 150,000 (its status API says so too), not the 151,050 asked for.
    fake.setStatus(m.order, 'settlement');
    fake.charges.get(m.order)!.grossAmount = 150_000;
    await notify(m, fake.notification(m.order, 'settlement', { grossAmount: '150000.00' }));
    noErrors(await runJobs());
    const row = await paymentByOrder(m.order);
    expect(row.status).to.equal('pending');
    expect(row.flag).to.equal('amount_mismatch');
    expect(await escrowStatus(m.escrowId)).to.equal('pending_payment');
    expect(await paymentPostings(m.escrowId)).to.equal(0);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  describe('transaction_status is not signed: the status API confirms it before anything is paid', () => {
    it('a signed pending notification (status_code 201) replayed as settlement verifies, but the status API says pending: not paid, the poller keeps asking', async () => {
      const o = await open('qris');
      // signature_key covers order_id + "201" + gross_amount: the status word is free to change.
      const replay = fake.notification(o.order, 'settlement', { statusCode: '201' });
      expect(JSON.parse(replay)).to.deep.include({ signature_key: midtransSignatureKey(o.order, '201', '151050.00'), transaction_status: 'settlement' });
      const res = await notify(o, replay);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      noErrors(await runJobs());
      expect(fake.calls('status').map((r) => r.url)).to.deep.equal([`/v2/${o.order}/status`]);
      // Reconciled as what the gateway says: still pending.
      expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'still_pending', deliveries: 1, source: 'callback' }]);
      const row = await paymentByOrder(o.order);
      expect(row).to.deep.include({ status: 'pending', paid_at: null, flag: null });
      expect(row.next_poll_at!.getTime()).to.equal(T0.getTime() + 2 * MINUTE);
      expect(await escrowStatus(o.escrowId)).to.equal('pending_payment');
      expect(await paymentPostings(o.escrowId)).to.equal(0);
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(0);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    for (const failure of ['http500', 'timeout', 'malformed', 'refused'] as const) {
      it(`the status API ${failure}: the delivery stays unprocessed with attempts and last_error, the payment pending; once it answers settlement the next pass pays once`, async () => {
        const o = await open('qris');
        fake.setStatus(o.order, 'settlement');
        fake.statusFailure = failure;
        if (failure === 'timeout') config.gateways.httpTimeoutMs = 200;
        expect((await notify(o, fake.notification(o.order, 'settlement'))).status).to.equal(200);
        const ran = await runJobs(['gateway-callbacks']);
        expect(ran.filter((j) => j.error).map((j) => j.error)).to.have.length(1);
        expect(fake.calls('status')).to.have.length(1);
        const waiting = (await db('payment_callbacks').first()) as { processed_at: Date | null; outcome: string | null; attempts: number; last_error: string | null; next_attempt_at: Date };
        expect(waiting).to.deep.include({ processed_at: null, outcome: null, attempts: 1 });
        expect(waiting.last_error).to.match(/^status not confirmed by midtrans: /);
        expect(waiting.next_attempt_at.getTime()).to.equal(clock.nowMs() + 1000);
        expect((await paymentByOrder(o.order)).status).to.equal('pending');
        expect(await escrowStatus(o.escrowId)).to.equal('pending_payment');
        expect(await paymentPostings(o.escrowId)).to.equal(0);
        // Not due before its backoff: not asked again.
        expect(await runJobs(['gateway-callbacks'])).to.deep.equal([]);
        expect(fake.calls('status')).to.have.length(1);
        fake.statusFailure = 'none';
        clock.advance(1000);
        noErrors(await runJobs());
        expect(fake.calls('status')).to.have.length(2);
        expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 1, source: 'callback' }]);
        expect(await escrowStatus(o.escrowId)).to.equal('paid');
        expect(await paymentPostings(o.escrowId)).to.equal(1);
        expect(await balanceOf(db, { escrowId: o.escrowId })).to.equal(AMOUNT);
        expect(await checkLedger(db)).to.deep.equal([]);
      });
    }

    it('the status API says expire for a claimed settlement: the link is expired, not paid', async () => {
      const o = await open('qris');
      fake.setStatus(o.order, 'expire');
      await notify(o, fake.notification(o.order, 'settlement'));
      noErrors(await runJobs());
      expect((await storedCallbacks()).map((c) => [c.status, c.outcome])).to.deep.equal([['paid', 'marked_expired']]);
      expect((await paymentByOrder(o.order)).status).to.equal('expired');
      expect(await paymentPostings(o.escrowId)).to.equal(0);
    });
  });

  it('a notification that arrives while pay still waits for the charge answer finds its committed payment: paid at once, exactly once; the answer then records the link', async () => {
    const { escrow, buyer } = await createEscrow({ amount: AMOUNT });
    const key = await issueKey(buyer.id);
    const client = api();
    let early: { raw: string; duplicate: unknown; outcomes: string[] } | undefined;
    let hookError: unknown;
    // Midtrans records the charge, the buyer pays at once and the notification comes before pay has answered.
    fake.beforeChargeAnswer = async (req) => {
      try {
        const order = (req.json as { transaction_details: { order_id: string } }).transaction_details.order_id;
        fake.setStatus(order, 'settlement');
        const raw = fake.notification(order, 'settlement');
        const res = await deliver(client, raw, {});
        const drained = await drainCallbacks();
        early = { raw, duplicate: res.body.data?.duplicate, outcomes: drained.processed.map((p) => p.outcome).concat(drained.failed.map((f) => f.error)) };
      } catch (err) {
        hookError = err;
      }
    };
    const res = await pay(client, key, escrow.id, 'qris');
    fake.beforeChargeAnswer = null;
    expect(hookError).to.equal(undefined);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const order = res.body.data.gateway_order_id as string;
    // The payment row was committed before the gateway heard of the order (decision 0015).
    expect(early).to.deep.equal({ raw: early!.raw, duplicate: false, outcomes: ['paid'] });
    expect(fake.calls('status').map((r) => r.url)).to.deep.equal([`/v2/${order}/status`]);
    expect(await escrowStatus(escrow.id)).to.equal('paid');
    const payment = (await db('payments').where({ gateway_order_id: order }).first()) as { status: string; qr_url: string | null };
    expect(payment.status).to.equal('paid');
    // Midtrans retries the same notification: a duplicate, nothing more.
    const retry = await deliver(client, early!.raw, {});
    expect(retry.body.data).to.deep.equal({ received: true, provider: 'midtrans', duplicate: true });
    noErrors(await runJobs());
    expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 2, source: 'callback' }]);
    clock.advance(10 * MINUTE);
    expect(await pollPending()).to.deep.equal({ asked: 0, settled: 0 });
    noErrors(await runJobs());
    expect(await paymentPostings(escrow.id)).to.equal(1);
    expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(AMOUNT);
    expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-TOTAL);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('the poller settles a payment whose notification was lost, through GET /v2/{order_id}/status', async () => {
    const o = await open('bank_transfer');
    expect(await pollPending()).to.deep.equal({ asked: 0, settled: 0 }); // not due before 2 minutes
    clock.advance(2 * MINUTE + 1000);
    // Still pending at Midtrans: asked, nothing settled, asked again 5 minutes later.
    expect(await pollPending()).to.deep.equal({ asked: 1, settled: 0 });
    expect((await paymentByOrder(o.order)).next_poll_at!.getTime()).to.equal(clock.nowMs() + 5 * MINUTE);
    fake.setStatus(o.order, 'settlement');
    clock.advance(5 * MINUTE);
    expect(await pollPending()).to.deep.equal({ asked: 1, settled: 1 });
    const polls = fake.calls('status');
    expect(polls).to.have.length(2);
    expect(polls[1]!.method).to.equal('GET');
    expect(polls[1]!.url).to.equal(`/v2/${o.order}/status`);
    expect(polls[1]!.headers.authorization).to.equal(`Basic ${Buffer.from(`${MIDTRANS_SERVER_KEY}:`).toString('base64')}`);
    expect(await escrowStatus(o.escrowId)).to.equal('paid');
    expect((await paymentByOrder(o.order)).status).to.equal('paid');
    expect(await storedCallbacks()).to.deep.equal([{ status: 'paid', amount: TOTAL, outcome: 'paid', deliveries: 1, source: 'poll' }]);
    // The notification arriving late afterwards changes nothing.
    await notify(o, fake.notification(o.order, 'settlement'));
    noErrors(await runJobs());
    expect(await paymentPostings(o.escrowId)).to.equal(1);
    expect(await balanceOf(db, { escrowId: o.escrowId })).to.equal(AMOUNT);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('the poller backs off when the status API fails and keeps the payment pending', async () => {
    const o = await open('qris');
    fake.statusFailure = 'http500';
    clock.advance(2 * MINUTE);
    expect(await pollPending()).to.deep.equal({ asked: 1, settled: 0 });
    expect(fake.calls('status')).to.have.length(1);
    const row = await paymentByOrder(o.order);
    expect(row.status).to.equal('pending');
    expect(row.next_poll_at!.getTime()).to.equal(clock.nowMs() + 5 * MINUTE);
    expect(await countRows('payment_callbacks')).to.equal(0);
  });

  for (const failure of ['http500', 'http400', 'malformed', 'refused', 'timeout'] as const) {
    it(`a charge answered ${failure} is 502 GATEWAY_ERROR and leaves no live link (its reserved row is failed)`, async () => {
      fake.chargeFailure = failure;
      if (failure === 'timeout') config.gateways.httpTimeoutMs = 200;
      const { escrow, buyer } = await createEscrow({ amount: AMOUNT });
      const res = await pay(api(), await issueKey(buyer.id), escrow.id, 'qris');
      expect(res.status, JSON.stringify(res.body)).to.equal(502);
      expect(res.body.error.code).to.equal('GATEWAY_ERROR');
      expect(fake.calls('charge')).to.have.length(1);
      expect(await unfailedPayments()).to.equal(0);
      expect(await escrowStatus(escrow.id)).to.equal('pending_payment');
    });
  }

  it('without a server key the adapter is not loaded: 503 ADAPTER_NOT_LOADED, not listed, its notifications unknown', async () => {
    config.gateways.midtrans.serverKey = '';
    const { escrow, buyer } = await createEscrow({ amount: AMOUNT });
    const client = api();
    const res = await pay(client, await issueKey(buyer.id), escrow.id, 'qris');
    expect(res.status, JSON.stringify(res.body)).to.equal(503);
    expect(res.body.error.code).to.equal('ADAPTER_NOT_LOADED');
    const methods = await client.get('/api/gateways/available-methods');
    expect(methods.body.data).to.deep.equal([]);
    const cb = await deliver(client, JSON.stringify({ order_id: 'ESC-X', status_code: '200', gross_amount: '1.00', transaction_status: 'settlement', signature_key: 'a'.repeat(128) }), {});
    expect(cb.status).to.equal(400);
    expect(cb.body.error.code).to.equal('UNKNOWN_PROVIDER');
    expect(fake.requests).to.have.length(0);
    expect(await countRows('payments')).to.equal(0);
    expect(await countRows('payment_callbacks')).to.equal(0);
  });
});
