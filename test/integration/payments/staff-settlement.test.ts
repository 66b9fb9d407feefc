/**
 * Money at the edges (decision 0009): money that arrives late, short, long or unannounced is
 * never stranded. A manual transfer claimed after its escrow or order closed is recorded
 * (202, flag late_claim) and staff credit it or mark it returned; a gateway payment whose
 * amount did not match is credited (the amount the gateway reported) or marked returned.
 * Exactly once, through the ledger, staff only, with an audit row; races give one 200 and
 * one 409.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createOrder } from '../../factories/orders.js';
import { createGateway, sandboxCallback } from '../../factories/payments.js';
import { createUser, signIn } from '../../factories/users.js';
import { createApp } from '../../../api/app.js';
import supertest from 'supertest';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import type { EscrowRow } from '../../../shared/escrows/repo.js';
import { markPaid } from '../../../shared/escrows/service.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import { cancel as cancelOrder, pay as payOrder } from '../../../shared/orders/service.js';
import type { PaymentRow } from '../../../shared/payments/repo.js';
import type { UserRow } from '../../../shared/users/repo.js';

type Client = ReturnType<typeof api>;

const T0 = new Date('2026-12-06T06:00:00.000Z');
const AMOUNT = 150_000;
const FIXED = 2500;
const TOTAL = AMOUNT + FIXED; // a manual transfer's total
const GW_TOTAL = AMOUNT + 1050; // a sandbox link's total (0.7%)
const SHORT = GW_TOTAL - 51_000;
const ROUNDS = 8;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

function expectError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
}

const paymentRow = async (id: string) => (await db('payments').where({ id }).first()) as PaymentRow;
const escrowRow = async (id: string) => (await db('escrows').where({ id }).first()) as EscrowRow;
const userBalance = async (id: string) => ((await db('users').select('balance').where({ id }).first()) as { balance: number }).balance;

/** Everything a staff move could touch. */
async function snapshot(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of ['payments', 'escrows', 'service_orders', 'journal_entries', 'journal_lines', 'ledger_accounts', 'staff_audit', 'idempotency_keys']) {
    out[table] = (await db(table).select('*').orderBy(1)) as unknown[];
  }
  return out;
}

describe('money at the edges: late claims and amount mismatches settled by staff', () => {
  let client: Client;
  let buyer: UserRow;
  let seller: UserRow;
  let admin: UserRow;
  let buyerKey: string;
  let sellerKey: string;
  let adminKey: string;

  beforeEach(async () => {
    clock.set(T0);
    client = api();
    await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer'], feePercent: '0', feeFixed: FIXED, config: { bank_accounts: [] }, sortOrder: 0 });
    await createGateway({ provider: 'sandbox', feePercent: '0.7', sortOrder: 1 });
    buyer = (await createUser()).user;
    seller = (await createUser()).user;
    admin = (await createUser({ role: 'admin' })).user;
    buyerKey = await issueKey(buyer.id);
    sellerKey = await issueKey(seller.id);
    adminKey = await issueKey(admin.id);
  });

  const newEscrow = async () => (await createEscrow({ buyer, seller, amount: AMOUNT })).escrow;
  const payManual = async (escrowId: string): Promise<string> => {
    const res = await client.post(`/api/escrows/${escrowId}/pay`).set(bearer(buyerKey)).send({ method: 'bank_transfer', provider: 'manual_bca' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.payment_link_id as string;
  };
  const claim = (escrowId: string, body: Record<string, unknown> = {}, key = buyerKey) => client.post(`/api/escrows/${escrowId}/claim-payment`).set(bearer(key)).send(body);
  const staffMove = (move: string, paymentId: string, body: Record<string, unknown> = {}, key = adminKey) =>
    client.post(`/v1/admin/payments/${paymentId}/${move}`).set(bearer(key)).send(body);

  /** A sandbox link paid with the wrong amount: pending, flagged amount_mismatch. */
  async function mismatched(reported = SHORT): Promise<{ escrowId: string; paymentId: string; order: string }> {
    const e = await newEscrow();
    const res = await client.post(`/api/escrows/${e.id}/pay`).set(bearer(buyerKey)).send({ method: 'qris', provider: 'sandbox' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const order = res.body.data.gateway_order_id as string;
    await deliver(order, reported);
    const p = await paymentRow(res.body.data.payment_link_id as string);
    expect(p).to.deep.include({ status: 'pending', flag: 'amount_mismatch' });
    return { escrowId: e.id, paymentId: p.id, order };
  }

  async function deliver(order: string, amount: number): Promise<void> {
    const cb = sandboxCallback(order, 'paid', amount);
    const res = await client.post('/api/webhooks/inbound').set('Content-Type', 'application/json').set('X-Sandbox-Signature', cb.signature).send(cb.body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
  }

  /** An escrow whose unclaimed manual transfer was overtaken by a cancel, then claimed: 202 late. */
  async function lateClaim(reference = 'BCA 06/12'): Promise<{ escrowId: string; paymentId: string; res: Response }> {
    const e = await newEscrow();
    const paymentId = await payManual(e.id);
    expect((await client.post(`/api/escrows/${e.id}/cancel`).set(bearer(sellerKey)).send({ reason: 'out of stock' })).status).to.equal(200);
    const res = await claim(e.id, { reference });
    return { escrowId: e.id, paymentId, res };
  }

  describe('a claim after the escrow or order closed', () => {
    it('after a cancel: 202, awaiting_confirmation flagged late_claim, a next step; the escrow stays cancelled; no money moves', async () => {
      const { escrowId, paymentId, res } = await lateClaim();
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expect(res.body.success).to.equal(true);
      expect(res.body.data).to.deep.include({ id: paymentId, escrow_id: escrowId, status: 'awaiting_confirmation', flag: 'late_claim', late_claim: true, amount: String(TOTAL) });
      expect(res.body.data.next_step).to.equal('The escrow was cancelled, so this transfer cannot pay it; staff will verify it and credit it to your balance or return it to you.');
      expect(await paymentRow(paymentId)).to.deep.include({ status: 'awaiting_confirmation', flag: 'late_claim', claim_reference: 'BCA 06/12' });
      expect((await escrowRow(escrowId)).status).to.equal('cancelled');
      expect(await countRows('journal_entries')).to.equal(0);
      // Claimed once: a second claim is refused.
      expectError(await claim(escrowId), 409, 'INVALID_STATE');
      // payment-status shows the flag too.
      const status = await client.get(`/api/escrows/${escrowId}/payment-status`).set(bearer(buyerKey));
      expect(status.body.data).to.deep.include({ id: paymentId, status: 'awaiting_confirmation', flag: 'late_claim' });
    });

    it('an on-time claim answers 200 with late_claim false and its own next step', async () => {
      const e = await newEscrow();
      await payManual(e.id);
      const res = await claim(e.id);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data).to.deep.include({ status: 'awaiting_confirmation', flag: null, late_claim: false, next_step: 'Staff will verify your transfer; once they confirm it the escrow is paid.' });
    });

    it('a keyed late claim is stored (2xx), so it survives the request transaction and replays', async () => {
      const e = await newEscrow();
      const paymentId = await payManual(e.id);
      expect((await client.post(`/api/escrows/${e.id}/cancel`).set(bearer(buyerKey)).send({})).status).to.equal(200);
      const key = randomUUID();
      const first = await client.post(`/api/escrows/${e.id}/claim-payment`).set(bearer(buyerKey)).set('Idempotency-Key', key).send({ reference: 'r' });
      expect(first.status, JSON.stringify(first.body)).to.equal(202);
      expect(await paymentRow(paymentId)).to.deep.include({ status: 'awaiting_confirmation', flag: 'late_claim' });
      const replay = await client.post(`/api/escrows/${e.id}/claim-payment`).set(bearer(buyerKey)).set('Idempotency-Key', key).send({ reference: 'r' });
      expect(replay.status).to.equal(202);
      expect(replay.headers['idempotent-replay']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
    });

    it('past the deadline (before the expiry timer ran): 202 expired; the late claim does not hold off the expiry; staff confirm credits the buyer and never pays the escrow', async () => {
      const e = await newEscrow();
      const paymentId = await payManual(e.id);
      clock.set(new Date(e.expires_at.getTime() + 1000));
      const res = await claim(e.id, { reference: 'late' });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expect(res.body.data.next_step).to.match(/^The escrow was expired,/);
      // Confirmed before the timer ran: still credited, the escrow is not paid.
      const ok = await staffMove('confirm', paymentId, { note: 'found it, escrow closed' });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body.data.payment).to.deep.include({ id: paymentId, status: 'paid', flag: 'credited_to_buyer' });
      expect((await escrowRow(e.id)).status).to.equal('pending_payment');
      expect(await balanceOf(db, { escrowId: e.id })).to.equal(0);
      expect(await userBalance(buyer.id)).to.equal(TOTAL);
      expect(await countRows('journal_entries', { kind: 'escrow_payment' })).to.equal(0);
      expect(await countRows('journal_entries', { posting_key: `payment-credit:${paymentId}` })).to.equal(1);
      const audit = await db('staff_audit').select('action', 'target_id', 'note', 'details');
      expect(audit).to.deep.equal([
        { action: 'payment.confirm', target_id: paymentId, note: 'found it, escrow closed', details: { outcome: 'credited_to_buyer', reason: 'late_claim', amount: TOTAL, link_amount: TOTAL } },
      ]);
      // The expiry timer still ends the escrow.
      clock.advance(3600_000 + 1000);
      expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
      expect(await escrowRow(e.id)).to.deep.include({ status: 'cancelled', cancel_reason: 'expired' });
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a late claim left waiting does not postpone the expiry (an on-time claim would)', async () => {
      const e = await newEscrow();
      const paymentId = await payManual(e.id);
      clock.set(new Date(e.expires_at.getTime() + 1000));
      expect((await claim(e.id)).status).to.equal(202);
      expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
      expect(await escrowRow(e.id)).to.deep.include({ status: 'cancelled', cancel_reason: 'expired' });
      expect(await paymentRow(paymentId)).to.deep.include({ status: 'awaiting_confirmation', flag: 'late_claim' });
      expect((await staffMove('credit', paymentId)).status).to.equal(200);
      expect(await userBalance(buyer.id)).to.equal(TOTAL);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('after the escrow was paid another way: 202 "already paid"', async () => {
      const e = await newEscrow();
      await payManual(e.id);
      await markPaid(undefined, e.id, { reference: 'elsewhere' });
      const res = await claim(e.id);
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expect(res.body.data.next_step).to.match(/^The escrow was already paid,/);
      expect((await escrowRow(e.id)).status).to.equal('paid');
    });

    it('an order cancelled before the claim: 202, the order stays cancelled with a late-claim event; staff credit it', async () => {
      const order = await createOrder(buyer.id);
      const asBuyer = { userId: buyer.id, role: 'user' as const };
      const link = await payOrder(undefined, asBuyer, order.id, { method: 'bank_transfer', provider: 'manual_bca' });
      if (link.kind !== 'link') throw new Error('expected a link');
      await cancelOrder(undefined, asBuyer, order.id);
      const res = await client.post(`/api/jasabayar/${order.id}/claim-payment`).set(bearer(buyerKey)).send({ reference: 'ORD' });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expect(res.body.data).to.deep.include({ id: link.payment.id, order_id: order.id, status: 'awaiting_confirmation', flag: 'late_claim', late_claim: true });
      expect(res.body.data.next_step).to.match(/^The order was cancelled,/);
      const o = (await db('service_orders').where({ id: order.id }).first()) as { status: string };
      expect(o.status).to.equal('cancelled');
      const events = ((await db('service_order_events').where({ order_id: order.id }).orderBy('id')) as { event: string }[]).map((x) => x.event);
      expect(events).to.deep.equal(['order.created', 'order.cancelled', 'order.payment_claimed_late']);
      // The order's own confirm-payment does not apply; the payment's credit does.
      expectError(await client.post(`/v1/admin/jasabayar/${order.id}/confirm-payment`).set(bearer(adminKey)).send({}), 409, 'INVALID_STATE');
      const credited = await staffMove('credit', link.payment.id, { note: 'order was cancelled' });
      expect(credited.status, JSON.stringify(credited.body)).to.equal(200);
      expect(credited.body.data.payment).to.deep.include({ status: 'paid', flag: 'credited_to_buyer', received_amount: link.payment.amount });
      expect(await userBalance(buyer.id)).to.equal(link.payment.amount);
      expect(((await db('service_orders').where({ id: order.id }).first()) as { status: string }).status).to.equal('cancelled');
      expect(await balanceOf(db, { system: 'ordersHeld' })).to.equal(0);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('an order paid by balance before the claim: 202 "already paid"', async () => {
      const order = await createOrder(buyer.id);
      const asBuyer = { userId: buyer.id, role: 'user' as const };
      await payOrder(undefined, asBuyer, order.id, { method: 'bank_transfer', provider: 'manual_bca' });
      await db('service_orders').where({ id: order.id }).update({ status: 'paid', paid_at: clock.now(), paid_via: 'balance' });
      const res = await client.post(`/api/jasabayar/${order.id}/claim-payment`).set(bearer(buyerKey)).send({});
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expect(res.body.data.next_step).to.match(/^The order was already paid,/);
    });
  });

  describe('POST /v1/admin/payments/:id/credit', () => {
    it('an amount mismatch: credits the amount the gateway reported (not the link total), once, through the ledger, with an audit row', async () => {
      const m = await mismatched(SHORT);
      const res = await staffMove('credit', m.paymentId, { note: 'short payment, credit it' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.data.payment).to.deep.include({ id: m.paymentId, status: 'paid', flag: 'credited_to_buyer', amount: String(GW_TOTAL), received_amount: SHORT, decided_by: admin.id, attention: null });
      expect(await paymentRow(m.paymentId)).to.deep.include({ status: 'paid', flag: 'credited_to_buyer', received_amount: SHORT, next_poll_at: null });
      expect(await userBalance(buyer.id)).to.equal(SHORT);
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-SHORT);
      const entries = (await db('journal_entries').where({ posting_key: `payment-credit:${m.paymentId}` })) as { id: number; kind: string }[];
      expect(entries.map((x) => x.kind)).to.deep.equal(['payment_credit']);
      const lines = ((await db('journal_lines as l').join('ledger_accounts as a', 'a.id', 'l.account_id').where('l.entry_id', entries[0]!.id).select('a.code', 'l.amount').orderBy('l.amount')) as { code: string; amount: number }[]);
      expect(lines).to.deep.equal([
        { code: 'gateway:clearing', amount: -SHORT },
        { code: `user:${buyer.id}`, amount: SHORT },
      ]);
      expect(await db('staff_audit').select('actor_id', 'action', 'target_type', 'target_id', 'note', 'details')).to.deep.equal([
        { actor_id: admin.id, action: 'payment.credit', target_type: 'payment', target_id: m.paymentId, note: 'short payment, credit it', details: { outcome: 'credited_to_buyer', reason: 'amount_mismatch', amount: SHORT, link_amount: GW_TOTAL } },
      ]);
      // Exactly once: again, or returned after, is 409; nothing more moves.
      const again = await staffMove('credit', m.paymentId);
      expectError(again, 409, 'INVALID_STATE');
      expect(again.body.error).to.deep.include({ status: 'paid', flag: 'credited_to_buyer' });
      expectError(await staffMove('mark-returned', m.paymentId, { note: 'x' }), 409, 'INVALID_STATE');
      // A late correct report from the gateway moves nothing either.
      await deliver(m.order, GW_TOTAL);
      expect((await escrowRow(m.escrowId)).status).to.equal('pending_payment');
      expect(await userBalance(buyer.id)).to.equal(SHORT);
      expect(await countRows('journal_entries')).to.equal(1);
      expect(await countRows('staff_audit')).to.equal(1);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('an overpayment credits the larger reported amount; the latest mismatched report counts', async () => {
      const m = await mismatched(GW_TOTAL + 10_000);
      await deliver(m.order, GW_TOTAL + 20_000);
      const res = await staffMove('credit', m.paymentId);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(await userBalance(buyer.id)).to.equal(GW_TOTAL + 20_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a mismatched link that later expired still qualifies', async () => {
      const m = await mismatched();
      const cb = sandboxCallback(m.order, 'expired', GW_TOTAL);
      await client.post('/api/webhooks/inbound').set('Content-Type', 'application/json').set('X-Sandbox-Signature', cb.signature).send(cb.body);
      expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
      expect(await paymentRow(m.paymentId)).to.deep.include({ status: 'expired', flag: 'amount_mismatch' });
      expect((await staffMove('credit', m.paymentId)).status).to.equal(200);
      expect(await userBalance(buyer.id)).to.equal(SHORT);
    });

    it('a late manual claim: credits the claimed total; the escrow stays cancelled', async () => {
      const { escrowId, paymentId } = await lateClaim();
      const res = await staffMove('credit', paymentId, {});
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.payment).to.deep.include({ status: 'paid', flag: 'credited_to_buyer', received_amount: TOTAL });
      expect(await userBalance(buyer.id)).to.equal(TOTAL);
      expect((await escrowRow(escrowId)).status).to.equal('cancelled');
      expect(await db('staff_audit').select('action', 'note')).to.deep.equal([{ action: 'payment.credit', note: null }]);
      expectError(await staffMove('confirm', paymentId), 409, 'INVALID_STATE');
      expectError(await staffMove('reject', paymentId), 409, 'INVALID_STATE');
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('honours Idempotency-Key: a replay answers the stored body and moves nothing', async () => {
      const m = await mismatched();
      const key = randomUUID();
      const first = await client.post(`/v1/admin/payments/${m.paymentId}/credit`).set(bearer(adminKey)).set('Idempotency-Key', key).send({ note: 'n' });
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const replay = await client.post(`/v1/admin/payments/${m.paymentId}/credit`).set(bearer(adminKey)).set('Idempotency-Key', key).send({ note: 'n' });
      expect(replay.status).to.equal(200);
      expect(replay.headers['idempotent-replay']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
      expect(await countRows('journal_entries')).to.equal(1);
      expect(await countRows('staff_audit')).to.equal(1);
      expect(await userBalance(buyer.id)).to.equal(SHORT);
    });

    it('works from an admin session (cookie and CSRF token)', async () => {
      const m = await mismatched();
      const browser = supertest.agent(createApp().callback());
      const csrf = await signIn(browser, admin.email);
      expect((await browser.post(`/v1/admin/payments/${m.paymentId}/credit`).send({})).status).to.equal(403);
      const res = await browser.post(`/v1/admin/payments/${m.paymentId}/credit`).set('X-CSRF-Token', csrf).send({});
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(await userBalance(buyer.id)).to.equal(SHORT);
    });
  });

  describe('POST /v1/admin/payments/:id/mark-returned', () => {
    it('an amount mismatch: gateway clearing -> returned outside (the reported amount), once, note required and recorded', async () => {
      const m = await mismatched();
      expectError(await staffMove('mark-returned', m.paymentId, {}), 400, 'INVALID_BODY');
      expectError(await staffMove('mark-returned', m.paymentId, { note: '   ' }), 400, 'INVALID_BODY');
      expect(await countRows('journal_entries')).to.equal(0);
      const res = await staffMove('mark-returned', m.paymentId, { note: 'refunded via BCA ref 7781' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.payment).to.deep.include({ id: m.paymentId, status: 'paid', flag: 'returned_outside', received_amount: SHORT });
      expect(await balanceOf(db, { system: 'returnedOutside' })).to.equal(SHORT);
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-SHORT);
      expect(await userBalance(buyer.id)).to.equal(0);
      expect(await countRows('journal_entries', { posting_key: `payment-return:${m.paymentId}`, kind: 'payment_returned' })).to.equal(1);
      expect(await db('staff_audit').select('action', 'note', 'details')).to.deep.equal([
        { action: 'payment.mark_returned', note: 'refunded via BCA ref 7781', details: { outcome: 'returned_outside', reason: 'amount_mismatch', amount: SHORT, link_amount: GW_TOTAL } },
      ]);
      expectError(await staffMove('mark-returned', m.paymentId, { note: 'again' }), 409, 'INVALID_STATE');
      expectError(await staffMove('credit', m.paymentId), 409, 'INVALID_STATE');
      expect(await countRows('journal_entries')).to.equal(1);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a late manual claim: the claimed total leaves to returned outside', async () => {
      const { paymentId } = await lateClaim();
      const res = await staffMove('mark-returned', paymentId, { note: 'sent back to the buyer' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(await balanceOf(db, { system: 'returnedOutside' })).to.equal(TOTAL);
      expect(await userBalance(buyer.id)).to.equal(0);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  describe('which payments qualify', () => {
    it('anything but an unsettled amount mismatch or a late claim is 409 INVALID_STATE and changes nothing; an unknown id is 404 NOT_FOUND', async () => {
      const e1 = await newEscrow();
      const unclaimed = await payManual(e1.id); // pending manual, not claimed
      const e2 = await newEscrow();
      const onTime = await payManual(e2.id);
      expect((await claim(e2.id)).status).to.equal(200); // awaiting_confirmation, not late
      const e3 = await newEscrow();
      const gw = await client.post(`/api/escrows/${e3.id}/pay`).set(bearer(buyerKey)).send({ method: 'qris', provider: 'sandbox' });
      const plainLink = gw.body.data.payment_link_id as string; // pending gateway link, no flag
      const e4 = await newEscrow();
      const paidGw = await client.post(`/api/escrows/${e4.id}/pay`).set(bearer(buyerKey)).send({ method: 'qris', provider: 'sandbox' });
      await deliver(paidGw.body.data.gateway_order_id as string, GW_TOTAL); // paid, no flag
      const { paymentId: rejected } = await lateClaim();
      expect((await staffMove('reject', rejected)).status).to.equal(200); // a late claim rejected: failed
      const before = await snapshot();
      for (const id of [unclaimed, onTime, plainLink, paidGw.body.data.payment_link_id as string, rejected]) {
        expectError(await staffMove('credit', id), 409, 'INVALID_STATE');
        expectError(await staffMove('mark-returned', id, { note: 'n' }), 409, 'INVALID_STATE');
      }
      for (const id of [randomUUID(), 'nope']) {
        expectError(await staffMove('credit', id), 404, 'NOT_FOUND');
        expectError(await staffMove('mark-returned', id, { note: 'n' }), 404, 'NOT_FOUND');
      }
      expect(await snapshot()).to.deep.equal(before);
    });

    it('a note over 2000 characters is refused 400', async () => {
      const m = await mismatched();
      expectError(await staffMove('credit', m.paymentId, { note: 'n'.repeat(2001) }), 400, 'INVALID_BODY');
      expectError(await staffMove('mark-returned', m.paymentId, { note: 'n'.repeat(2001) }), 400, 'INVALID_BODY');
      expect(await countRows('journal_entries')).to.equal(0);
    });
  });

  describe('staff only', () => {
    it('the buyer, the seller and a stranger get 403 FORBIDDEN on credit, mark-returned and the list; anonymous 401; nothing changes', async () => {
      const m = await mismatched();
      const { paymentId: late } = await lateClaim();
      const stranger = (await createUser()).user;
      const before = await snapshot();
      for (const key of [buyerKey, sellerKey, await issueKey(stranger.id)]) {
        for (const id of [m.paymentId, late]) {
          expectError(await staffMove('credit', id, { note: 'self-service' }, key), 403, 'FORBIDDEN');
          expectError(await staffMove('mark-returned', id, { note: 'self-service' }, key), 403, 'FORBIDDEN');
          expectError(await staffMove('confirm', id, {}, key), 403, 'FORBIDDEN');
        }
        expectError(await client.get('/v1/admin/payments?attention=1').set(bearer(key)), 403, 'FORBIDDEN');
      }
      expectError(await client.post(`/v1/admin/payments/${m.paymentId}/credit`).send({}), 401, 'UNAUTHORIZED');
      expectError(await client.post(`/v1/admin/payments/${m.paymentId}/mark-returned`).send({ note: 'x' }), 401, 'UNAUTHORIZED');
      expectError(await client.get('/v1/admin/payments'), 401, 'UNAUTHORIZED');
      expect(await snapshot()).to.deep.equal(before);
    });
  });

  describe('GET /v1/admin/payments', () => {
    it('?attention=1 lists amount mismatches, late claims and claims awaiting staff, oldest first, paginated; reason filters; without it every payment', async () => {
      const m = await mismatched();
      clock.advance(1000);
      const { paymentId: late } = await lateClaim('LATE-REF');
      clock.advance(1000);
      const e = await newEscrow();
      const onTime = await payManual(e.id);
      expect((await claim(e.id, { reference: 'ON-TIME' })).status).to.equal(200);
      clock.advance(1000);
      const e2 = await newEscrow();
      await payManual(e2.id); // unclaimed: not listed
      const all = await client.get('/v1/admin/payments?attention=1').set(bearer(adminKey));
      expect(all.status, JSON.stringify(all.body)).to.equal(200);
      expect((all.body.data as { id: string }[]).map((p) => p.id)).to.deep.equal([m.paymentId, late, onTime]);
      expect(all.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 3, total_pages: 1 });
      expect(all.body.data[0]).to.deep.include({ attention: 'amount_mismatch', flag: 'amount_mismatch', status: 'pending', reported_amount: SHORT, amount: String(GW_TOTAL), target_status: 'pending_payment', buyer_id: buyer.id });
      expect(all.body.data[1]).to.deep.include({ attention: 'late_claim', flag: 'late_claim', claim_reference: 'LATE-REF', target_status: 'cancelled', reported_amount: null });
      expect(all.body.data[2]).to.deep.include({ attention: 'claimed', claim_reference: 'ON-TIME', target_status: 'pending_payment' });
      const page2 = await client.get('/v1/admin/payments?attention=1&limit=2&page=2').set(bearer(adminKey));
      expect((page2.body.data as { id: string }[]).map((p) => p.id)).to.deep.equal([onTime]);
      expect(page2.body.pagination).to.deep.equal({ page: 2, limit: 2, total: 3, total_pages: 2 });
      const onlyLate = await client.get('/v1/admin/payments?reason=late_claim').set(bearer(adminKey));
      expect((onlyLate.body.data as { id: string }[]).map((p) => p.id)).to.deep.equal([late]);
      const everything = await client.get('/v1/admin/payments').set(bearer(adminKey));
      expect(everything.body.pagination.total).to.equal(4);
      expectError(await client.get('/v1/admin/payments?attention=yes').set(bearer(adminKey)), 400, 'INVALID_QUERY');
      expectError(await client.get('/v1/admin/payments?reason=other').set(bearer(adminKey)), 400, 'INVALID_QUERY');
      // Settled payments leave the list.
      expect((await staffMove('credit', m.paymentId)).status).to.equal(200);
      expect((await staffMove('mark-returned', late, { note: 'returned' })).status).to.equal(200);
      const after = await client.get('/v1/admin/payments?attention=1').set(bearer(adminKey));
      expect((after.body.data as { id: string }[]).map((p) => p.id)).to.deep.equal([onTime]);
    });
  });

  describe('races', function () {
    this.timeout(120_000);

    it('two staff credits at once (keyed and not): one 200, one 409 INVALID_STATE, one posting', async () => {
      let credited = 0;
      for (let round = 0; round < ROUNDS; round += 1) {
        const target = round % 2 === 0 ? await mismatched() : { ...(await lateClaim()), order: '' };
        const call = (n: number) => {
          const req = client.post(`/v1/admin/payments/${target.paymentId}/credit`).set(bearer(adminKey));
          return (round % 4 < 2 ? req.set('Idempotency-Key', randomUUID()) : req).send({ note: `call ${n}` });
        };
        const results = await Promise.all([call(1), call(2)]);
        const statuses = results.map((r) => r.status).sort();
        expect(statuses, results.map((r) => JSON.stringify(r.body)).join(' ')).to.deep.equal([200, 409]);
        expect(results.find((r) => r.status === 409)!.body.error.code).to.equal('INVALID_STATE');
        expect(await countRows('journal_entries', { posting_key: `payment-credit:${target.paymentId}` })).to.equal(1);
        expect(await countRows('staff_audit', { target_id: target.paymentId })).to.equal(1);
        credited += round % 2 === 0 ? SHORT : TOTAL;
        expect(await userBalance(buyer.id)).to.equal(credited);
        expect(await checkLedger(db)).to.deep.equal([]);
      }
    });

    it('credit racing mark-returned: exactly one wins', async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        const m = await mismatched();
        const [a, b] = await Promise.all([
          staffMove('credit', m.paymentId, {}),
          staffMove('mark-returned', m.paymentId, { note: 'returned' }),
        ]);
        expect([a.status, b.status].sort()).to.deep.equal([200, 409]);
        const p = await paymentRow(m.paymentId);
        expect(p.flag).to.equal(a.status === 200 ? 'credited_to_buyer' : 'returned_outside');
        expect(await countRows('journal_entries', { ref_id: m.paymentId })).to.equal(1);
        expect(await checkLedger(db)).to.deep.equal([]);
      }
    });
  });
});
