/**
 * Inbound gateway callbacks with the sandbox gateway (consumer spec section 6, decision D4,
 * issue 8): the four addresses, provider detection, signature checks on the raw body,
 * malformed payloads, reconciliation by the gateway-callbacks worker (escrow paid, both
 * parties notified, the ledger: gateway clearing -total, escrow +amount, gateway fees
 * +surcharge), duplicates (also concurrent), reordered deliveries, amount mismatches, a
 * second link paid, a database error mid-reconciliation followed by the gateway's retry,
 * a callback that comes before its payment row commits (tried again, paid once), the status
 * poller for lost callbacks, and the sandbox simulate endpoint.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { CALLBACK_RECORD, runJobs, type RanJob } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createGateway, sandboxCallback } from '../../factories/payments.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { redis } from '../../../shared/redis.js';
import type { EscrowRow } from '../../../shared/escrows/repo.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import { enqueue } from '../../../shared/outbox.js';
import { insertPayment, type PaymentRow } from '../../../shared/payments/repo.js';
import { callbackStoresWaiting } from '../../../shared/payments/callbacks.js';
import { pollPending, UNKNOWN_ORDER_RETRY_MS } from '../../../shared/payments/service.js';
import type { UserRow } from '../../../shared/users/repo.js';

type Client = ReturnType<typeof api>;

const MINUTE = 60_000;
const T0 = new Date('2026-12-03T05:00:00.000Z');
const AMOUNT = 150_000;
const SURCHARGE = 1050; // 0.7%
const TOTAL = AMOUNT + SURCHARGE;
const PATHS = ['/api/webhooks/inbound', '/api/webhooks/ipn', '/api/webhooks/payment', '/api/webhooks/universal'] as const;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

interface Link {
  escrowId: string;
  paymentId: string;
  order: string;
  buyer: UserRow;
  seller: UserRow;
  buyerKey: string;
}

/** HMAC-SHA256 hex of the raw body, written here from decision D4 (not the code's signer). */
function sign(rawBody: string, secret = config.gateways.sandboxSecret): string {
  return createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex');
}

function deliver(client: Client, path: string, rawBody: string, signature: string | undefined, contentType = 'application/json') {
  const req = client.post(path).set('Content-Type', contentType);
  if (signature !== undefined) void req.set('X-Sandbox-Signature', signature);
  return req.send(rawBody);
}

function callback(client: Client, order: string, status: 'paid' | 'expired' | 'failed', amount: number, path: string = PATHS[0]) {
  const cb = sandboxCallback(order, status, amount);
  return deliver(client, path, cb.body, cb.signature);
}

function expectError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
}

function expectAccepted(res: Response, duplicate: boolean): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  expect(res.body).to.deep.equal({ success: true, data: { received: true, provider: 'sandbox', duplicate } });
}

function noErrors(ran: RanJob[]): void {
  expect(ran.filter((j) => j.error).map((j) => `${j.name}: ${j.error}`)).to.deep.equal([]);
}

async function paymentRow(id: string): Promise<PaymentRow> {
  return (await db('payments').where({ id }).first()) as PaymentRow;
}

async function escrowRow(id: string): Promise<EscrowRow> {
  return (await db('escrows').where({ id }).first()) as EscrowRow;
}

async function userBalance(id: string): Promise<number> {
  return ((await db('users').select('balance').where({ id }).first()) as { balance: number }).balance;
}

async function paymentEntries(escrowId: string): Promise<number> {
  return countRows('journal_entries', { kind: 'escrow_payment', ref_type: 'escrow', ref_id: escrowId });
}

interface StoredCallback {
  id: number;
  gateway_order_id: string;
  status: string;
  amount: number | null;
  source: string;
  deliveries: number;
  processed_at: Date | null;
  outcome: string | null;
  raw_body: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date | null;
}

async function callbacks(): Promise<StoredCallback[]> {
  return (await db('payment_callbacks').orderBy('id')) as StoredCallback[];
}

/** Everything a callback could touch. */
async function snapshot(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of ['payments', 'payment_callbacks', 'escrows', 'journal_entries', 'journal_lines', 'outbox', 'sandbox_charges', 'notifications']) {
    out[table] = (await db(table).select('*').orderBy(1)) as unknown[];
  }
  return out;
}

describe('inbound gateway callbacks (sandbox)', function () {
  this.timeout(60_000);
  let client: Client;

  beforeEach(async () => {
    clock.set(T0);
    client = api();
    await createGateway({ provider: 'sandbox', feePercent: '0.7' });
  });

  /** A pending escrow with a live sandbox link (qris unless told). */
  async function link(options: { buyer?: UserRow; buyerKey?: string; method?: string; amount?: number } = {}): Promise<Link> {
    const made = await createEscrow({ amount: options.amount ?? AMOUNT, ...(options.buyer ? { buyer: options.buyer } : {}) });
    const buyerKey = options.buyerKey ?? (await issueKey(made.buyer.id));
    return newLink(made.escrow.id, made.buyer, made.seller, buyerKey, options.method);
  }

  async function newLink(escrowId: string, buyer: UserRow, seller: UserRow, buyerKey: string, method = 'qris'): Promise<Link> {
    const res = await client.post(`/api/escrows/${escrowId}/pay`).set(bearer(buyerKey)).send({ method });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { escrowId, paymentId: res.body.data.payment_link_id as string, order: res.body.data.gateway_order_id as string, buyer, seller, buyerKey };
  }

  /** The money of one paid link, checked to the rupiah. */
  async function expectPaidOnce(l: Link, total = TOTAL, surcharge = SURCHARGE, amount = AMOUNT): Promise<void> {
    expect((await escrowRow(l.escrowId)).status).to.equal('paid');
    const p = await paymentRow(l.paymentId);
    expect(p).to.deep.include({ status: 'paid', flag: null, next_poll_at: null });
    expect(p.paid_at).to.be.instanceOf(Date);
    expect(await paymentEntries(l.escrowId)).to.equal(1);
    expect(await balanceOf(db, { escrowId: l.escrowId })).to.equal(amount);
    expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-total);
    expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(surcharge);
    expect(await checkLedger(db)).to.deep.equal([]);
  }

  async function expectUnpaid(l: Link): Promise<void> {
    expect((await escrowRow(l.escrowId)).status).to.equal('pending_payment');
    expect(await paymentEntries(l.escrowId)).to.equal(0);
    expect(await balanceOf(db, { escrowId: l.escrowId })).to.equal(0);
    expect(await countRows('journal_entries')).to.equal(0);
    expect(await checkLedger(db)).to.deep.equal([]);
  }

  describe('receiving', () => {
    for (const path of PATHS) {
      it(`${path} accepts a signed sandbox callback, stores it raw and queues it; the worker pays the escrow`, async () => {
        const l = await link();
        const cb = sandboxCallback(l.order, 'paid', TOTAL);
        const res = await deliver(client, path, cb.body, sign(cb.body));
        expectAccepted(res, false);
        const [stored] = await callbacks();
        expect(stored).to.deep.include({ gateway_order_id: l.order, status: 'paid', amount: TOTAL, source: 'callback', deliveries: 1, processed_at: null, outcome: null, raw_body: cb.body });
        // Nothing is applied before the worker runs.
        await expectUnpaid(l);
        // The stored row is the worker's inbox: due now, nothing else queued.
        expect(stored!.next_attempt_at!.toISOString()).to.equal(clock.now().toISOString());
        expect(await countRows('outbox', { job: 'payments.process-callback' })).to.equal(0);
        noErrors(await runJobs());
        await expectPaidOnce(l);
        const [after] = await callbacks();
        expect(after!.outcome).to.equal('paid');
        expect(after!.processed_at).to.be.instanceOf(Date);
      });
    }

    it('the signature is checked on the exact bytes: any JSON spacing that was signed verifies; upper-case hex is accepted', async () => {
      const l = await link();
      const raw = `{ "provider" : "sandbox",\n  "gateway_order_id": "${l.order}", "status": "paid", "amount": ${TOTAL} }`;
      expectAccepted(await deliver(client, PATHS[3], raw, sign(raw).toUpperCase()), false);
      expect((await callbacks())[0]!.raw_body).to.equal(raw);
      noErrors(await runJobs());
      await expectPaidOnce(l);
    });

    it('a forged signature is refused 403 INVALID_SIGNATURE and nothing is stored or queued', async () => {
      const l = await link();
      const cb = sandboxCallback(l.order, 'paid', TOTAL);
      noErrors(await runJobs());
      const before = await snapshot();
      const forgeries: [string, string][] = [
        [cb.body, '0'.repeat(64)],
        [cb.body, sign(cb.body, 'not-the-secret')],
        [cb.body, sign(cb.body).slice(0, 63)],
        [cb.body, `${sign(cb.body)}00`],
        [cb.body, ''],
        [cb.body, 'sha256=' + sign(cb.body)],
        // A correct signature of another body: the amount was tampered with.
        [cb.body.replace(String(TOTAL), '1'), cb.signature],
        // Re-serialised with other spacing: the signature no longer matches the bytes.
        [JSON.stringify(JSON.parse(cb.body), null, 1), cb.signature],
      ];
      for (const [i, [body, signature]] of forgeries.entries()) {
        const res = await deliver(client, PATHS[i % PATHS.length]!, body, signature);
        expectError(res, 403, 'INVALID_SIGNATURE');
      }
      noErrors(await runJobs());
      expect(await snapshot()).to.deep.equal(before);
      await expectUnpaid(l);
    });

    it('a delivery no configured gateway sends is refused 400 UNKNOWN_PROVIDER, nothing stored', async () => {
      const l = await link();
      const cb = sandboxCallback(l.order, 'paid', TOTAL);
      noErrors(await runJobs());
      const before = await snapshot();
      // No sandbox signature header: nothing identifies the sender.
      expectError(await deliver(client, PATHS[0], cb.body, undefined), 400, 'UNKNOWN_PROVIDER');
      expectError(await deliver(client, PATHS[1], JSON.stringify({ order_id: l.order, transaction_status: 'settlement' }), undefined), 400, 'UNKNOWN_PROVIDER');
      expectError(await deliver(client, PATHS[2], '{}', undefined), 400, 'UNKNOWN_PROVIDER');
      // Outside sandbox mode the sandbox gateway is not loaded: its callbacks are not recognised.
      const saved = config.sandboxMode;
      config.sandboxMode = false;
      try {
        expectError(await deliver(client, PATHS[0], cb.body, cb.signature), 400, 'UNKNOWN_PROVIDER');
      } finally {
        config.sandboxMode = saved;
      }
      expect(await snapshot()).to.deep.equal(before);
    });

    it('a signed but malformed payload is refused 400 INVALID_CALLBACK, nothing stored', async () => {
      const l = await link();
      noErrors(await runJobs());
      const before = await snapshot();
      const bodies = [
        { provider: 'sandbox', gateway_order_id: l.order, status: 'settled', amount: TOTAL },
        { provider: 'sandbox', gateway_order_id: l.order, status: 'pending', amount: TOTAL },
        { provider: 'sandbox', status: 'paid', amount: TOTAL },
        { provider: 'sandbox', gateway_order_id: 42, status: 'paid', amount: TOTAL },
        { provider: 'midtrans', gateway_order_id: l.order, status: 'paid', amount: TOTAL },
        { gateway_order_id: l.order, status: 'paid', amount: TOTAL },
        {},
        [],
      ];
      for (const [i, body] of bodies.entries()) {
        const raw = JSON.stringify(body);
        expectError(await deliver(client, PATHS[i % PATHS.length]!, raw, sign(raw)), 400, 'INVALID_CALLBACK');
      }
      // Not a JSON body at all (signed all the same).
      for (const [raw, type] of [
        ['status=paid', 'application/x-www-form-urlencoded'],
        ['paid', 'text/plain'],
      ] as const) {
        expectError(await deliver(client, PATHS[0], raw, sign(raw), type), 400, 'INVALID_CALLBACK');
      }
      // JSON that does not parse as an object or array: the body parser's common 400 INVALID_BODY.
      for (const raw of ['{"provider":"sandbox",', '"paid"', 'null', '42']) {
        expectError(await deliver(client, PATHS[1], raw, sign(raw)), 400, 'INVALID_BODY');
      }
      expect(await snapshot()).to.deep.equal(before);
    });

    it('a signed callback for an order nobody made is stored and reconciled as unknown_order, changing nothing else; tried again for an hour, then final', async () => {
      const l = await link();
      expectAccepted(await callback(client, 'ESC-NOBODY-0001', 'paid', TOTAL), false);
      noErrors(await runJobs());
      const [stored] = await callbacks();
      expect(stored).to.deep.include({ gateway_order_id: 'ESC-NOBODY-0001', outcome: 'unknown_order', processed_at: null, attempts: 1 });
      expect(stored!.last_error).to.include('no payment with this gateway order id');
      expect(stored!.next_attempt_at!.getTime()).to.equal(clock.nowMs() + 1000);
      await expectUnpaid(l);
      expect((await paymentRow(l.paymentId)).status).to.equal('pending');
      // Tried again after 1 s, 2 s, 4 s ... (at most 10 minutes) while it is younger than an hour.
      let tries = 1;
      while ((await callbacks())[0]!.processed_at === null) {
        clock.set((await callbacks())[0]!.next_attempt_at!);
        const ran = (await runJobs(['gateway-callbacks'])).filter((j) => j.name === CALLBACK_RECORD);
        expect(ran.map((j) => j.result)).to.deep.equal([{ outcome: 'unknown_order' }]);
        tries += 1;
      }
      const final = (await callbacks())[0]!;
      expect(final).to.deep.include({ outcome: 'unknown_order', next_attempt_at: null });
      expect(final.processed_at!.getTime()).to.be.at.least(T0.getTime() + UNKNOWN_ORDER_RETRY_MS);
      expect(final.processed_at!.getTime()).to.be.below(T0.getTime() + UNKNOWN_ORDER_RETRY_MS + 11 * MINUTE);
      expect(tries).to.be.within(10, 20);
      // Final: nothing runs any more.
      clock.advance(60 * MINUTE);
      expect(await runJobs(['gateway-callbacks'])).to.deep.equal([]);
      await expectUnpaid(l);
    });
  });

  describe('reconciliation', () => {
    it('paid: the escrow is paid, both parties are notified, the ledger moves once, payment-status shows paid', async () => {
      const l = await link();
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
      const ran = await runJobs();
      noErrors(ran);
      expect(ran.filter((j) => j.name === CALLBACK_RECORD).map((j) => j.result)).to.deep.equal([{ outcome: 'paid' }]);
      await expectPaidOnce(l);
      const escrow = await escrowRow(l.escrowId);
      expect(escrow.paid_at!.toISOString()).to.equal(T0.toISOString());
      const events = (await db('escrow_events').where({ escrow_id: l.escrowId, event: 'payment.completed' })) as { data: Record<string, unknown> }[];
      expect(events).to.have.length(1);
      expect(events[0]!.data).to.deep.include({ reference: l.paymentId, provider: 'sandbox', amount: AMOUNT, surcharge: SURCHARGE });
      // Notifications are written by the notifications worker from the outbox.
      noErrors(await runJobs());
      const notes = (await db('notifications').select('user_id', 'type').whereIn('type', ['payment_success', 'escrow_paid']).orderBy('type')) as { user_id: string; type: string }[];
      expect(notes).to.deep.equal([
        { user_id: l.seller.id, type: 'escrow_paid' },
        { user_id: l.buyer.id, type: 'payment_success' },
      ]);
      const status = await client.get(`/api/escrows/${l.escrowId}/payment-status`).set(bearer(l.buyerKey));
      expect(status.body.data).to.deep.include({ id: l.paymentId, status: 'paid', amount: String(TOTAL) });
      // The escrow moves on as usual: the seller can ship it.
      const ship = await client.post(`/api/escrows/${l.escrowId}/send`).set(bearer(await issueKey(l.seller.id))).send({});
      expect(ship.status, JSON.stringify(ship.body)).to.equal(200);
    });

    it('a callback without an amount pays (nothing to compare)', async () => {
      const l = await link();
      const raw = JSON.stringify({ provider: 'sandbox', gateway_order_id: l.order, status: 'paid' });
      expectAccepted(await deliver(client, PATHS[0], raw, sign(raw)), false);
      noErrors(await runJobs());
      await expectPaidOnce(l);
    });

    it('the same paid callback delivered 5 times in a row: acknowledged each time, one posting', async () => {
      const l = await link();
      expectAccepted(await callback(client, l.order, 'paid', TOTAL, PATHS[0]), false);
      for (let i = 1; i < 5; i += 1) expectAccepted(await callback(client, l.order, 'paid', TOTAL, PATHS[i % 4]), true);
      noErrors(await runJobs());
      // And twice more after it was applied: acknowledged, not reconciled again.
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), true);
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), true);
      expect((await callbacks())[0]!.next_attempt_at).to.equal(null);
      const again = await runJobs();
      noErrors(again);
      expect(again.filter((j) => j.name === CALLBACK_RECORD)).to.deep.equal([]);
      const stored = await callbacks();
      expect(stored).to.have.length(1);
      expect(stored[0]).to.deep.include({ deliveries: 7, outcome: 'paid' });
      await expectPaidOnce(l);
      noErrors(await runJobs());
      expect(await countRows('notifications', { type: 'payment_success' })).to.equal(1);
      expect(await countRows('notifications', { type: 'escrow_paid' })).to.equal(1);
    });

    it('the same paid callback delivered 5 times at once: exactly one is new, one posting', async () => {
      const l = await link();
      const cb = sandboxCallback(l.order, 'paid', TOTAL);
      const answers = await Promise.all(PATHS.concat(PATHS[0]).map((path) => deliver(client, path, cb.body, cb.signature)));
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(answers.filter((a) => a.body.data.duplicate === false)).to.have.length(1);
      expect((await callbacks())[0]!.deliveries).to.equal(5);
      noErrors(await runJobs());
      await expectPaidOnce(l);
    });

    it('reordered: expired then paid -> paid (a paid report overrides expired)', async () => {
      const l = await link();
      expectAccepted(await callback(client, l.order, 'expired', TOTAL), false);
      noErrors(await runJobs());
      expect((await paymentRow(l.paymentId)).status).to.equal('expired');
      await expectUnpaid(l);
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
      noErrors(await runJobs());
      await expectPaidOnce(l);
      expect((await callbacks()).map((c) => c.outcome)).to.deep.equal(['marked_expired', 'paid']);
    });

    it('reordered: failed then paid, both queued before the worker runs -> paid', async () => {
      const l = await link();
      expectAccepted(await callback(client, l.order, 'failed', TOTAL), false);
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
      noErrors(await runJobs());
      await expectPaidOnce(l);
      expect((await callbacks()).map((c) => c.outcome)).to.deep.equal(['marked_failed', 'paid']);
    });

    it('paid then a late expired and failed -> stays paid', async () => {
      const l = await link();
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
      noErrors(await runJobs());
      clock.advance(20 * MINUTE);
      expectAccepted(await callback(client, l.order, 'expired', TOTAL), false);
      expectAccepted(await callback(client, l.order, 'failed', TOTAL), false);
      noErrors(await runJobs());
      await expectPaidOnce(l);
      expect((await callbacks()).map((c) => c.outcome)).to.deep.equal(['paid', 'ignored_expired_after_paid', 'ignored_failed_after_paid']);
      const status = await client.get(`/api/escrows/${l.escrowId}/payment-status`).set(bearer(l.buyerKey));
      expect(status.body.data.status).to.equal('paid');
    });

    it('paid with the wrong amount: not paid, flagged amount_mismatch for staff, the escrow still pending', async () => {
      const l = await link();
      for (const wrong of [TOTAL - 1, AMOUNT, TOTAL + 1]) {
        expectAccepted(await callback(client, l.order, 'paid', wrong), false);
      }
      noErrors(await runJobs());
      const p = await paymentRow(l.paymentId);
      expect(p).to.deep.include({ status: 'pending', flag: 'amount_mismatch', paid_at: null });
      expect((await callbacks()).map((c) => c.outcome)).to.deep.equal(['amount_mismatch', 'amount_mismatch', 'amount_mismatch']);
      await expectUnpaid(l);
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(0);
      expect(await userBalance(l.buyer.id)).to.equal(0);
    });

    it('paid with an amount that is not a whole number of rupiah (text, fraction, negative) never pays', async () => {
      const l = await link();
      for (const amount of [String(TOTAL), '1', TOTAL + 0.5, 1.5, -TOTAL, true]) {
        const raw = JSON.stringify({ provider: 'sandbox', gateway_order_id: l.order, status: 'paid', amount });
        const res = await deliver(client, PATHS[0], raw, sign(raw));
        // Refused as malformed, or accepted and flagged: either way not paid.
        if (res.status !== 200) expectError(res, 400, 'INVALID_CALLBACK');
      }
      noErrors(await runJobs());
      expect((await paymentRow(l.paymentId)).status).to.equal('pending');
      await expectUnpaid(l);
    });

    it('a second link paid after the first: credited to the buyer, the escrow paid once', async () => {
      const l1 = await link();
      clock.advance(1000);
      const l2 = await newLink(l1.escrowId, l1.buyer, l1.seller, l1.buyerKey, 'bank_transfer');
      expectAccepted(await callback(client, l1.order, 'paid', TOTAL), false);
      noErrors(await runJobs());
      await expectPaidOnce(l1);
      expectAccepted(await callback(client, l2.order, 'paid', TOTAL), false);
      const ran = await runJobs();
      noErrors(ran);
      expect(ran.filter((j) => j.name === CALLBACK_RECORD).map((j) => j.result)).to.deep.equal([{ outcome: 'credited_to_buyer' }]);
      expect(await paymentRow(l2.paymentId)).to.deep.include({ status: 'paid', flag: 'credited_to_buyer' });
      expect(await paymentRow(l1.paymentId)).to.deep.include({ status: 'paid', flag: null });
      expect((await escrowRow(l1.escrowId)).status).to.equal('paid');
      expect(await paymentEntries(l1.escrowId)).to.equal(1);
      expect(await balanceOf(db, { escrowId: l1.escrowId })).to.equal(AMOUNT);
      expect(await userBalance(l1.buyer.id)).to.equal(TOTAL);
      expect(await balanceOf(db, { userId: l1.buyer.id })).to.equal(TOTAL);
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-2 * TOTAL);
      expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(SURCHARGE);
      expect(await countRows('journal_entries', { kind: 'payment_credit', ref_type: 'payment', ref_id: l2.paymentId })).to.equal(1);
      // A duplicate of the second callback credits nothing more.
      expectAccepted(await callback(client, l2.order, 'paid', TOTAL), true);
      noErrors(await runJobs());
      expect(await userBalance(l1.buyer.id)).to.equal(TOTAL);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a link paid after the escrow was cancelled (its link had expired) is credited to the buyer', async () => {
      const l = await link();
      clock.advance(16 * MINUTE);
      const cancel = await client.post(`/api/escrows/${l.escrowId}/cancel`).set(bearer(l.buyerKey)).send({});
      expect(cancel.status, JSON.stringify(cancel.body)).to.equal(200);
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
      noErrors(await runJobs());
      expect((await escrowRow(l.escrowId)).status).to.equal('cancelled');
      expect(await paymentRow(l.paymentId)).to.deep.include({ status: 'paid', flag: 'credited_to_buyer' });
      expect(await userBalance(l.buyer.id)).to.equal(TOTAL);
      expect(await balanceOf(db, { escrowId: l.escrowId })).to.equal(0);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  describe('a database error mid-reconciliation, then the gateway retries', () => {
    const dropTrigger = async () => {
      await db.raw('DROP TRIGGER IF EXISTS test_injected_failure ON escrows');
      await db.raw('DROP FUNCTION IF EXISTS test_injected_failure()');
    };
    afterEach(dropTrigger);

    it('the reconciliation fails, nothing is half-applied; the retried delivery is due at once and pays exactly once', async () => {
      const l = await link();
      await db.raw(`CREATE FUNCTION test_injected_failure() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected failure while reconciling'; END $$`);
      await db.raw('CREATE TRIGGER test_injected_failure BEFORE UPDATE ON escrows FOR EACH ROW EXECUTE FUNCTION test_injected_failure()');
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
      const ran = await runJobs();
      const failed = ran.filter((j) => j.name === CALLBACK_RECORD);
      expect(failed).to.have.length(1);
      expect(failed[0]!.error).to.include('injected failure');
      // Nothing of the reconciliation survived: the payment row is still pending, the callback unprocessed.
      expect(await paymentRow(l.paymentId)).to.deep.include({ status: 'pending', paid_at: null, flag: null });
      expect((await callbacks())[0]).to.deep.include({ processed_at: null, outcome: null });
      await expectUnpaid(l);
      expect(await countRows('outbox', { job: 'notifications.create' })).to.equal(1); // the escrow_invited notice only
      expect(await countRows('outbox', { job: 'notifications.create-batch' })).to.equal(0);
      // The failure is kept for staff and the delivery waits 1 s before its next attempt.
      const waiting = (await callbacks())[0]!;
      expect(waiting).to.deep.include({ attempts: 1 });
      expect(waiting.last_error).to.include('injected failure');
      expect(waiting.next_attempt_at!.getTime()).to.equal(clock.nowMs() + 1000);
      await dropTrigger();
      // The gateway retries the same callback: acknowledged as a duplicate, queued again.
      expectAccepted(await callback(client, l.order, 'paid', TOTAL, PATHS[2]), true);
      noErrors(await runJobs());
      await expectPaidOnce(l);
      expect((await callbacks())[0]).to.deep.include({ deliveries: 2, outcome: 'paid' });
      // Any later run of the failed job changes nothing.
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), true);
      noErrors(await runJobs());
      await expectPaidOnce(l);
    });

    it('without a new delivery, the worker tries again after its backoff (1 s, then 2 s, 4 s ...)', async () => {
      const l = await link();
      await db.raw(`CREATE FUNCTION test_injected_failure() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected failure while reconciling'; END $$`);
      await db.raw('CREATE TRIGGER test_injected_failure BEFORE UPDATE ON escrows FOR EACH ROW EXECUTE FUNCTION test_injected_failure()');
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
      expect((await runJobs()).filter((j) => j.name === CALLBACK_RECORD && j.error)).to.have.length(1);
      clock.advance(1000);
      expect((await runJobs()).filter((j) => j.name === CALLBACK_RECORD && j.error)).to.have.length(1);
      expect((await callbacks())[0]).to.deep.include({ attempts: 2 });
      expect((await callbacks())[0]!.next_attempt_at!.getTime()).to.equal(clock.nowMs() + 2000);
      await dropTrigger();
      // Not due yet: nothing runs.
      clock.advance(1999);
      expect((await runJobs()).filter((j) => j.name === CALLBACK_RECORD)).to.deep.equal([]);
      await expectUnpaid(l);
      clock.advance(1);
      const ran = await runJobs();
      noErrors(ran);
      expect(ran.filter((j) => j.name === CALLBACK_RECORD).map((j) => j.result)).to.deep.equal([{ outcome: 'paid' }]);
      await expectPaidOnce(l);
      expect((await callbacks())[0]).to.deep.include({ deliveries: 1, attempts: 2, outcome: 'paid', next_attempt_at: null });
    });

    it('one delivery that keeps failing does not hold up the others of its batch', async () => {
      const a = await link();
      const b = await link();
      await db.raw(`CREATE FUNCTION test_injected_failure() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected failure for one escrow'; END $$`);
      await db.raw(`CREATE TRIGGER test_injected_failure BEFORE UPDATE ON escrows FOR EACH ROW
        WHEN (OLD.id = '${a.escrowId}') EXECUTE FUNCTION test_injected_failure()`);
      expectAccepted(await callback(client, a.order, 'paid', TOTAL), false);
      expectAccepted(await callback(client, b.order, 'paid', TOTAL), false);
      const ran = (await runJobs()).filter((j) => j.name === CALLBACK_RECORD);
      expect(ran).to.have.length(2);
      expect(ran[0]!.error).to.include('injected failure for one escrow');
      expect(ran[1]!.result).to.deep.equal({ outcome: 'paid' });
      expect((await escrowRow(a.escrowId)).status).to.equal('pending_payment');
      expect((await escrowRow(b.escrowId)).status).to.equal('paid');
      expect(await balanceOf(db, { escrowId: b.escrowId })).to.equal(AMOUNT);
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-TOTAL);
      expect(await checkLedger(db)).to.deep.equal([]);
      await dropTrigger();
      clock.advance(1000);
      noErrors(await runJobs());
      expect((await escrowRow(a.escrowId)).status).to.equal('paid');
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-2 * TOTAL);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a failure while posting to the ledger also leaves nothing behind', async () => {
      const l = await link();
      await db.raw(`CREATE FUNCTION test_injected_failure() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected failure in the ledger'; END $$`);
      await db.raw('CREATE TRIGGER test_injected_failure BEFORE INSERT ON journal_lines FOR EACH ROW EXECUTE FUNCTION test_injected_failure()');
      try {
        expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
        const ran = await runJobs();
        expect(ran.filter((j) => j.error).map((j) => j.error)).to.have.length(1);
        expect(await paymentRow(l.paymentId)).to.deep.include({ status: 'pending', paid_at: null });
        expect((await escrowRow(l.escrowId)).status).to.equal('pending_payment');
        expect(await countRows('journal_entries')).to.equal(0);
        expect(await countRows('escrow_events', { event: 'payment.completed' })).to.equal(0);
      } finally {
        await db.raw('DROP TRIGGER IF EXISTS test_injected_failure ON journal_lines');
        await db.raw('DROP FUNCTION IF EXISTS test_injected_failure()');
      }
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), true);
      noErrors(await runJobs());
      await expectPaidOnce(l);
    });
  });

  describe('batches', () => {
    it('deliveries that arrive while both store slots are busy share the next statement and COMMIT; each is answered after its own row committed', async () => {
      const links: Link[] = [];
      for (let i = 0; i < 6; i++) links.push(await link());
      // The first two deliveries' statements (one per slot) wait on this lock, so the others queue behind them.
      const blocker = await db.transaction();
      await blocker.raw('LOCK TABLE payment_callbacks IN SHARE ROW EXCLUSIVE MODE');
      const answered: string[] = [];
      const send = (l: Link) => callback(client, l.order, 'paid', TOTAL).then((res) => (answered.push(l.order), res));
      const waitFor = async (what: string, done: () => Promise<boolean> | boolean) => {
        for (let i = 0; !(await done()); i++) {
          if (i > 400) throw new Error(`gave up waiting for ${what}`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      };
      const blocked = async (n: number) => {
        const r = await db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO payment_callbacks%'`);
        return (r.rows[0] as { n: number }).n === n;
      };
      const first = [send(links[0]!)];
      await waitFor('the first store to wait on the lock', () => blocked(1));
      first.push(send(links[1]!));
      await waitFor('the second store (the other slot) to wait on the lock', () => blocked(2));
      // Four more, and a second copy of one of them (never written together with its twin, nor beside it).
      const rest = [...links.slice(2).map(send), send(links[2]!)];
      await waitFor('five deliveries queued behind the two', () => callbackStoresWaiting() === 5);
      expect(answered, 'nothing is answered before its row is stored').to.deep.equal([]);
      await blocker.commit();
      const answers = await Promise.all([...first, ...rest]);
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(answers.filter((a) => a.body.data.duplicate === true)).to.have.length(1);
      // Rows written by one transaction share its xmin: the first two alone, the four others in
      // one statement, of which the row the copy later updated now carries the copy's
      // statement's. (Had the copy gone in with its twin, that statement would have failed
      // and each of the six been written alone.)
      const writers = await db.raw(`SELECT count(*)::int AS n FROM payment_callbacks GROUP BY xmin`);
      expect((writers.rows as { n: number }[]).map((w) => w.n).sort()).to.deep.equal([1, 1, 1, 3]);
      const stored = await callbacks();
      expect(stored).to.have.length(6);
      expect(stored.find((c) => c.gateway_order_id === links[2]!.order)!.deliveries).to.equal(2);
      noErrors(await runJobs());
      for (const l of links) expect((await escrowRow(l.escrowId)).status).to.equal('paid');
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('deliveries due together are reconciled in one transaction; their notices leave in one outbox row, each written once', async () => {
      const links = [await link(), await link(), await link()];
      await runJobs(); // the escrow_invited notices
      for (const l of links) expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
      const ran = await runJobs();
      noErrors(ran);
      expect(ran.filter((j) => j.name === CALLBACK_RECORD).map((j) => j.result)).to.deep.equal([{ outcome: 'paid' }, { outcome: 'paid' }, { outcome: 'paid' }]);
      const batches = (await db('outbox').where({ job: 'notifications.create-batch' })) as { id: number; payload: { notices: { type: string; escrow_id: string }[] } }[];
      expect(batches).to.have.length(1);
      expect(batches[0]!.payload.notices.map((n) => `${n.type}:${n.escrow_id}`)).to.have.members(
        links.flatMap((l) => [`payment_success:${l.escrowId}`, `escrow_paid:${l.escrowId}`]),
      );
      expect(await countRows('outbox', { job: 'notifications.create' })).to.equal(3); // escrow_invited only
      const paidNotes = async () => db('notifications').whereIn('type', ['payment_success', 'escrow_paid']).count<{ count: string }[]>('* as count');
      expect(Number((await paidNotes())[0]!.count)).to.equal(6);
      for (const l of links) {
        expect(await db('notifications').where({ user_id: l.buyer.id, type: 'payment_success' })).to.have.length(1);
        expect(await db('notifications').where({ user_id: l.seller.id, type: 'escrow_paid' })).to.have.length(1);
      }
      // The batch job sent again (Redis lost its completion): nothing is written twice.
      await redis.flushdb();
      await db('outbox').where({ id: batches[0]!.id }).update({ relayed_at: null, completed_at: null });
      const rerun = await runJobs();
      expect(rerun.filter((j) => j.name === 'notifications.create-batch').map((j) => j.result)).to.deep.equal([{ created: 0, notices: 6 }]);
      expect(Number((await paidNotes())[0]!.count)).to.equal(6);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  describe('a callback that comes before its payment row commits', () => {
    let pending: Knex.Transaction[] = [];
    afterEach(async () => {
      for (const trx of pending) if (!trx.isCompleted()) await trx.rollback();
      pending = [];
    });

    /**
     * A sandbox link whose payment row is written by a transaction not yet committed, as
     * while `pay` still waits on its gateway; `commit()` ends it.
     */
    async function uncommittedLink(order: string): Promise<Link & { commit: () => Promise<void> }> {
      const made = await createEscrow({ amount: AMOUNT });
      const buyerKey = await issueKey(made.buyer.id);
      const trx = await db.transaction();
      pending.push(trx);
      const now = clock.now();
      const payment = await insertPayment(trx, {
        escrow_id: made.escrow.id,
        buyer_id: made.buyer.id,
        provider: 'sandbox',
        method: 'qris',
        is_manual: false,
        gateway_order_id: order,
        escrow_amount: AMOUNT,
        surcharge: SURCHARGE,
        amount: TOTAL,
        raw_response: '{}',
        expires_at: new Date(now.getTime() + 15 * MINUTE),
        next_poll_at: new Date(now.getTime() + 2 * MINUTE),
        created_at: now,
        updated_at: now,
      });
      await trx('sandbox_charges').insert({ gateway_order_id: order, amount: TOTAL, method: 'qris', status: 'paid', created_at: now, updated_at: now });
      const commit = async () => {
        await trx.commit();
      };
      return { escrowId: made.escrow.id, paymentId: payment.id, order, buyer: made.buyer, seller: made.seller, buyerKey, commit };
    }

    /** The paid callback arrives and is reconciled while the payment row is not visible: no credit, not final. */
    async function arrivesEarly(l: Link): Promise<void> {
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
      const ran = await runJobs(['gateway-callbacks']);
      noErrors(ran);
      expect(ran.filter((j) => j.name === CALLBACK_RECORD).map((j) => j.result)).to.deep.equal([{ outcome: 'unknown_order' }]);
      expect((await callbacks())[0]).to.deep.include({ outcome: 'unknown_order', processed_at: null, attempts: 1, deliveries: 1 });
      expect((await escrowRow(l.escrowId)).status).to.equal('pending_payment');
      expect(await countRows('journal_entries')).to.equal(0);
    }

    it("no credit while the row is not committed; the gateway's retry after the commit is answered duplicate, reconciled at once and pays exactly once", async () => {
      const l = await uncommittedLink('ESC-EARLY-0001');
      await arrivesEarly(l);
      await l.commit();
      // The gateway's retry of the same delivery: acknowledged (the gateway stops), and due at once.
      expectAccepted(await callback(client, l.order, 'paid', TOTAL, PATHS[1]), true);
      expect((await callbacks())[0]!.next_attempt_at!.toISOString()).to.equal(clock.now().toISOString());
      const ran = await runJobs();
      noErrors(ran);
      expect(ran.filter((j) => j.name === CALLBACK_RECORD).map((j) => j.result)).to.deep.equal([{ outcome: 'paid' }]);
      await expectPaidOnce(l);
      expect((await callbacks())[0]).to.deep.include({ outcome: 'paid', deliveries: 2, next_attempt_at: null });
      // More retries, polls and passes change nothing: one posting.
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), true);
      clock.advance(10 * MINUTE);
      expect(await pollPending()).to.deep.equal({ asked: 0, settled: 0 });
      noErrors(await runJobs());
      await expectPaidOnce(l);
      expect(await countRows('notifications', { type: 'payment_success', user_id: l.buyer.id })).to.equal(1);
    });

    it('without a retry from the gateway, the worker tries again after its backoff and pays once', async () => {
      const l = await uncommittedLink('ESC-EARLY-0002');
      await arrivesEarly(l);
      await l.commit();
      // Not due before its backoff (1 s).
      expect(await runJobs(['gateway-callbacks'])).to.deep.equal([]);
      clock.advance(1000);
      const ran = await runJobs();
      noErrors(ran);
      expect(ran.filter((j) => j.name === CALLBACK_RECORD).map((j) => j.result)).to.deep.equal([{ outcome: 'paid' }]);
      await expectPaidOnce(l);
    });

    it('the poller finds the committed payment too; the waiting callback then finds it paid', async () => {
      const l = await uncommittedLink('ESC-EARLY-0003');
      await arrivesEarly(l);
      await l.commit();
      clock.advance(2 * MINUTE);
      expect(await pollPending()).to.deep.equal({ asked: 1, settled: 1 });
      noErrors(await runJobs());
      await expectPaidOnce(l);
      expect((await callbacks()).map((c) => [c.source, c.outcome])).to.deep.equal([
        ['callback', 'duplicate_paid'],
        ['poll', 'paid'],
      ]);
    });

    it('given up after an hour (final unknown_order for staff), a later retry of the same delivery still reopens it and pays once', async () => {
      const l = await uncommittedLink('ESC-EARLY-0004');
      await arrivesEarly(l);
      // The row stays invisible for more than an hour (a stuck transaction): the delivery becomes final.
      clock.advance(UNKNOWN_ORDER_RETRY_MS + 1000);
      expect((await runJobs(['gateway-callbacks'])).filter((j) => j.name === CALLBACK_RECORD).map((j) => j.result)).to.deep.equal([{ outcome: 'unknown_order' }]);
      const final = (await callbacks())[0]!;
      expect(final.processed_at).to.be.instanceOf(Date);
      expect(final).to.deep.include({ outcome: 'unknown_order', next_attempt_at: null });
      await l.commit();
      // The poller is what usually settles it; here the gateway's retry comes first.
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), true);
      expect((await callbacks())[0]).to.deep.include({ processed_at: null });
      noErrors(await runJobs(['gateway-callbacks']));
      await expectPaidOnce(l);
      expect((await callbacks())[0]).to.deep.include({ outcome: 'paid', deliveries: 2 });
    });

    it('a retry of a callback whose payment was found is still only a duplicate (a final outcome is not reopened)', async () => {
      const l = await link();
      expectAccepted(await callback(client, l.order, 'expired', TOTAL), false);
      noErrors(await runJobs());
      expectAccepted(await callback(client, l.order, 'expired', TOTAL), true);
      expect(await runJobs(['gateway-callbacks'])).to.deep.equal([]);
      expect((await callbacks())[0]).to.deep.include({ outcome: 'marked_expired', deliveries: 2, next_attempt_at: null });
    });
  });

  describe('the sandbox signs the whole body', () => {
    it("a paid callback pays on its own word: the sandbox's status view (still pending) is not asked", async () => {
      const l = await link();
      expect(((await db('sandbox_charges').where({ gateway_order_id: l.order }).first()) as { status: string }).status).to.equal('pending');
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
      noErrors(await runJobs());
      await expectPaidOnce(l);
    });
  });

  describe('the status poller (a lost callback never loses a payment)', () => {
    it('the gateway says paid but its callback never came: two minutes on, the poll job pays the escrow', async () => {
      const l = await link();
      // The sandbox gateway records the payment on its side; the callback is lost.
      await db('sandbox_charges').where({ gateway_order_id: l.order }).update({ status: 'paid', updated_at: clock.now() });
      // Not asked before its time.
      expect(await pollPending()).to.deep.equal({ asked: 0, settled: 0 });
      await expectUnpaid(l);
      clock.advance(2 * MINUTE + 1000);
      await enqueue(db, 'payments.poll-pending', {});
      const ran = await runJobs(['gateway-callbacks']);
      noErrors(ran);
      expect(ran.filter((j) => j.name === 'payments.poll-pending').map((j) => j.result)).to.deep.equal([{ asked: 1, settled: 1 }]);
      await expectPaidOnce(l);
      const [stored] = await callbacks();
      expect(stored).to.deep.include({ source: 'poll', status: 'paid', amount: TOTAL, outcome: 'paid', gateway_order_id: l.order });
      // The queued copy of the poll's report and any later poll change nothing.
      noErrors(await runJobs());
      clock.advance(10 * MINUTE);
      expect(await pollPending()).to.deep.equal({ asked: 0, settled: 0 });
      await expectPaidOnce(l);
      // Both parties were notified.
      noErrors(await runJobs());
      expect(await countRows('notifications', { type: 'payment_success', user_id: l.buyer.id })).to.equal(1);
      expect(await countRows('notifications', { type: 'escrow_paid', user_id: l.seller.id })).to.equal(1);
    });

    it('a poll and the late callback of the same payment: paid once', async () => {
      const l = await link();
      await db('sandbox_charges').where({ gateway_order_id: l.order }).update({ status: 'paid' });
      clock.advance(3 * MINUTE);
      expect(await pollPending()).to.deep.equal({ asked: 1, settled: 1 });
      expectAccepted(await callback(client, l.order, 'paid', TOTAL), false);
      const ran = await runJobs();
      noErrors(ran);
      expect(ran.filter((j) => j.name === CALLBACK_RECORD).map((j) => j.result)).to.deep.include({ outcome: 'duplicate_paid' });
      await expectPaidOnce(l);
    });

    it('still pending: asked again every 5 minutes; 30 minutes past its expiry the link is expired (the escrow stays payable)', async () => {
      const l = await link(); // qris: expires T0 + 15 min
      clock.advance(2 * MINUTE);
      expect(await pollPending()).to.deep.equal({ asked: 1, settled: 0 });
      expect((await paymentRow(l.paymentId)).next_poll_at!.toISOString()).to.equal(new Date(T0.getTime() + 7 * MINUTE).toISOString());
      clock.advance(4 * MINUTE);
      expect(await pollPending()).to.deep.equal({ asked: 0, settled: 0 });
      // Past its expiry but within the 30-minute grace: still pending.
      clock.set(new Date(T0.getTime() + (15 + 29) * MINUTE));
      expect(await pollPending()).to.deep.equal({ asked: 1, settled: 0 });
      expect((await paymentRow(l.paymentId)).status).to.equal('pending');
      // Next asked at +49 min, past expiry + 30 min: expired.
      clock.set(new Date(T0.getTime() + (15 + 29 + 5) * MINUTE));
      await enqueue(db, 'payments.poll-pending', {});
      noErrors(await runJobs(['gateway-callbacks']));
      const p = await paymentRow(l.paymentId);
      expect(p).to.deep.include({ status: 'expired', next_poll_at: null, paid_at: null });
      expect((await callbacks()).map((c) => [c.source, c.status, c.outcome])).to.deep.equal([['poll', 'expired', 'marked_expired']]);
      expect((await escrowRow(l.escrowId)).status).to.equal('pending_payment');
      await expectUnpaid(l);
      // The expired link no longer holds the escrow: it can be cancelled.
      const cancel = await client.post(`/api/escrows/${l.escrowId}/cancel`).set(bearer(l.buyerKey)).send({});
      expect(cancel.status, JSON.stringify(cancel.body)).to.equal(200);
    });

    it('the gateway reports the link failed: the poll marks it failed', async () => {
      const l = await link();
      await db('sandbox_charges').where({ gateway_order_id: l.order }).update({ status: 'failed' });
      clock.advance(2 * MINUTE);
      expect(await pollPending()).to.deep.equal({ asked: 1, settled: 0 });
      expect((await paymentRow(l.paymentId)).status).to.equal('failed');
      await expectUnpaid(l);
    });

    it('links whose adapter is not loaded do not starve the others: each is put off, the rest are asked', async () => {
      // Two older links of a gateway whose adapter is no longer loaded on this server.
      const stale1 = await link();
      const stale2 = await link();
      await db('payments').whereIn('id', [stale1.paymentId, stale2.paymentId]).update({ provider: 'doku' });
      clock.advance(1000);
      const l = await link();
      await db('sandbox_charges').where({ gateway_order_id: l.order }).update({ status: 'paid' });
      // Batches of two, as a busy poller with many unloaded links would see them.
      for (let i = 0; i < 3 && (await paymentRow(l.paymentId)).status === 'pending'; i += 1) {
        clock.advance(5 * MINUTE);
        await pollPending(2);
      }
      await expectPaidOnce(l);
      expect((await paymentRow(stale1.paymentId)).status).to.equal('pending');
    });

    it('manual transfers are never polled', async () => {
      await createGateway({ provider: 'manual_bca', isManual: true, feePercent: '0', sortOrder: -1, methods: ['bank_transfer'] });
      const made = await createEscrow();
      const res = await client.post(`/api/escrows/${made.escrow.id}/pay`).set(bearer(await issueKey(made.buyer.id))).send({ method: 'bank_transfer' });
      expect(res.body.data.provider).to.equal('manual_bca');
      clock.advance(3 * 24 * 60 * MINUTE);
      expect(await pollPending()).to.deep.equal({ asked: 0, settled: 0 });
    });
  });

  describe('POST /api/sandbox/payments/:gateway_order_id/simulate', () => {
    it('the buyer simulates paid: 202, the callback goes through the pipeline, the worker pays', async () => {
      const l = await link();
      const res = await client.post(`/api/sandbox/payments/${l.order}/simulate`).set(bearer(l.buyerKey)).send({ status: 'paid' });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expect(res.body.data).to.deep.include({ sent: true, duplicate: false });
      const [stored] = await callbacks();
      expect(stored).to.deep.include({ gateway_order_id: l.order, status: 'paid', amount: TOTAL, source: 'callback', processed_at: null });
      // The stored raw body verifies with the D4 signature (it is what a gateway would send).
      expect(JSON.parse(stored!.raw_body)).to.deep.equal({ provider: 'sandbox', gateway_order_id: l.order, status: 'paid', amount: TOTAL });
      expect(((await db('sandbox_charges').where({ gateway_order_id: l.order }).first()) as { status: string }).status).to.equal('paid');
      await expectUnpaid(l);
      noErrors(await runJobs());
      await expectPaidOnce(l);
      // Simulated twice: a duplicate.
      const again = await client.post(`/api/sandbox/payments/${l.order}/simulate`).set(bearer(l.buyerKey)).send({ status: 'paid' });
      expect(again.status).to.equal(202);
      expect(again.body.data.duplicate).to.equal(true);
      noErrors(await runJobs());
      await expectPaidOnce(l);
    });

    it('an admin may simulate (expired, then paid wins)', async () => {
      const l = await link();
      const admin = (await createUser({ role: 'admin' })).user;
      const key = await issueKey(admin.id);
      const expired = await client.post(`/api/sandbox/payments/${l.order}/simulate`).set(bearer(key)).send({ status: 'expired' });
      expect(expired.status, JSON.stringify(expired.body)).to.equal(202);
      noErrors(await runJobs());
      expect((await paymentRow(l.paymentId)).status).to.equal('expired');
      const paid = await client.post(`/api/sandbox/payments/${l.order}/simulate`).set(bearer(key)).send({ status: 'paid' });
      expect(paid.status).to.equal(202);
      noErrors(await runJobs());
      await expectPaidOnce(l);
    });

    it('the seller and strangers are refused 403; an unknown order 404; a bad status 400; without credentials 401', async () => {
      const l = await link();
      const { user: stranger } = await createUser();
      const strangerKey = await issueKey(stranger.id);
      const sellerKey = await issueKey(l.seller.id);
      noErrors(await runJobs());
      const before = await snapshot();
      for (const key of [sellerKey, strangerKey]) {
        const res = await client.post(`/api/sandbox/payments/${l.order}/simulate`).set(bearer(key)).send({ status: 'paid' });
        expectError(res, 403, 'FORBIDDEN');
      }
      expectError(await client.post(`/api/sandbox/payments/ESC-UNKNOWN-1/simulate`).set(bearer(l.buyerKey)).send({ status: 'paid' }), 404, 'NOT_FOUND');
      const bad = await client.post(`/api/sandbox/payments/${l.order}/simulate`).set(bearer(l.buyerKey)).send({ status: 'settled' });
      expect(bad.status, JSON.stringify(bad.body)).to.equal(400);
      expectError(await client.post(`/api/sandbox/payments/${l.order}/simulate`).send({ status: 'paid' }), 401, 'UNAUTHORIZED');
      noErrors(await runJobs());
      expect(await snapshot()).to.deep.equal(before);
    });

    it('a manual payment cannot be simulated (404); outside sandbox mode the route does not exist', async () => {
      await createGateway({ provider: 'manual_bca', isManual: true, feePercent: '0', sortOrder: -1, methods: ['bank_transfer'] });
      const made = await createEscrow();
      const key = await issueKey(made.buyer.id);
      const res = await client.post(`/api/escrows/${made.escrow.id}/pay`).set(bearer(key)).send({ method: 'bank_transfer' });
      expect(res.body.data.provider).to.equal('manual_bca');
      const sim = await client.post(`/api/sandbox/payments/${res.body.data.gateway_order_id}/simulate`).set(bearer(key)).send({ status: 'paid' });
      expectError(sim, 404, 'NOT_FOUND');
      const l = await link();
      const prod = api({ sandboxMode: false });
      const off = await prod.post(`/api/sandbox/payments/${l.order}/simulate`).set(bearer(l.buyerKey)).send({ status: 'paid' });
      expect(off.status).to.equal(404);
      expect(await countRows('payment_callbacks')).to.equal(0);
    });
  });
});
