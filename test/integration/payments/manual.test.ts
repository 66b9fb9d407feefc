/**
 * Manual transfers (consumer spec 4.2 claim-payment; decision D10 staff confirm/reject;
 * issue 8): pay on a manual gateway makes a record without a gateway call, the buyer claims
 * the transfer (awaiting_confirmation), staff confirm it (escrow paid, ledger, audit) or
 * reject it (failed, escrow still payable). A claim awaiting staff holds off a cancel.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createGateway, sandboxCallback } from '../../factories/payments.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import type { EscrowRow } from '../../../shared/escrows/repo.js';
import { markPaid } from '../../../shared/escrows/service.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import type { PaymentRow } from '../../../shared/payments/repo.js';
import type { UserRow } from '../../../shared/users/repo.js';

type Client = ReturnType<typeof api>;

const T0 = new Date('2026-12-04T06:00:00.000Z');
const AMOUNT = 150_000;
const FIXED = 2500;
const TOTAL = AMOUNT + FIXED;
const MANUAL_CONFIG = { bank_accounts: [{ bank: 'BCA', account_number: '8800112233', account_name: 'PT Rekber Aman' }], instructions: 'Transfer tepat sampai 3 digit terakhir' };
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

interface World {
  escrowId: string;
  buyer: UserRow;
  seller: UserRow;
  buyerKey: string;
  sellerKey: string;
  adminKey: string;
  admin: UserRow;
}

function expectError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
  expect(res.body).to.not.have.property('data');
}

async function paymentRow(id: string): Promise<PaymentRow> {
  return (await db('payments').where({ id }).first()) as PaymentRow;
}

async function escrowRow(id: string): Promise<EscrowRow> {
  return (await db('escrows').where({ id }).first()) as EscrowRow;
}

/** Everything staff or a claim could touch. */
async function snapshot(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of ['payments', 'escrows', 'escrow_events', 'journal_entries', 'journal_lines', 'outbox', 'staff_audit', 'idempotency_keys']) {
    out[table] = (await db(table).select('*').orderBy(1)) as unknown[];
  }
  return out;
}

describe('manual transfers', () => {
  let client: Client;
  let w: World;

  beforeEach(async () => {
    clock.set(T0);
    client = api();
    await createGateway({ provider: 'manual_bca', displayName: 'Transfer BCA', isManual: true, methods: ['bank_transfer', 'qris'], feePercent: '0', feeFixed: FIXED, config: MANUAL_CONFIG, sortOrder: 0 });
    await createGateway({ provider: 'sandbox', feePercent: '0.7', sortOrder: 1 });
    const made = await createEscrow({ amount: AMOUNT });
    const admin = (await createUser({ role: 'admin' })).user;
    w = {
      escrowId: made.escrow.id,
      buyer: made.buyer,
      seller: made.seller,
      buyerKey: await issueKey(made.buyer.id),
      sellerKey: await issueKey(made.seller.id),
      adminKey: await issueKey(admin.id),
      admin,
    };
  });

  const payManual = async (provider = 'manual_bca') => {
    const res = await client.post(`/api/escrows/${w.escrowId}/pay`).set(bearer(w.buyerKey)).send({ method: 'bank_transfer', provider });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res;
  };
  const claim = (key: string, body: Record<string, unknown> = {}, escrowId = w.escrowId) =>
    client.post(`/api/escrows/${escrowId}/claim-payment`).set(bearer(key)).send(body);
  const confirm = (key: string, paymentId: string, body: Record<string, unknown> = {}) => client.post(`/v1/admin/payments/${paymentId}/confirm`).set(bearer(key)).send(body);
  const reject = (key: string, paymentId: string, body: Record<string, unknown> = {}) => client.post(`/v1/admin/payments/${paymentId}/reject`).set(bearer(key)).send(body);

  it('pay on a manual gateway: a pending is_manual record, no gateway charge, the escrow deadline as expiry', async () => {
    const res = await payManual();
    expect(res.body.data).to.deep.include({
      method: 'bank_transfer',
      provider: 'manual_bca',
      payment_url: null,
      qr_code_url: null,
      va_number: null,
      va_bank: null,
      deep_link_url: null,
      amount: TOTAL,
      escrow_amount: AMOUNT,
      surcharge: FIXED,
    });
    const escrow = await escrowRow(w.escrowId);
    expect(res.body.data.expires_at).to.equal(escrow.expires_at.toISOString());
    const p = await paymentRow(res.body.data.payment_link_id as string);
    expect(p).to.deep.include({ status: 'pending', is_manual: true, provider: 'manual_bca', amount: TOTAL, next_poll_at: null, claimed_at: null });
    expect(JSON.parse(p.raw_response)).to.deep.equal({ manual: true, config: MANUAL_CONFIG });
    expect(await countRows('sandbox_charges')).to.equal(0);
    const status = await client.get(`/api/escrows/${w.escrowId}/payment-status`).set(bearer(w.buyerKey));
    expect(status.body.data).to.deep.include({ id: p.id, status: 'pending', is_manual: true, amount: String(TOTAL), provider: 'manual_bca' });
    // Auto-selection compares it like any gateway: at 150,000 the sandbox (1,050) is cheaper than 2,500 fixed.
    const auto = await client.post(`/api/escrows/${w.escrowId}/pay`).set(bearer(w.buyerKey)).send({ method: 'qris' });
    expect(auto.body.data.provider).to.equal('sandbox');
  });

  it('a claim after the payment deadline (before the expiry timer ran) is recorded late (202) for staff; the escrow is not paid', async () => {
    const res = await payManual();
    const escrow = await escrowRow(w.escrowId);
    clock.set(new Date(escrow.expires_at.getTime() + 1000));
    const claim = await client.post(`/api/escrows/${w.escrowId}/claim-payment`).set(bearer(w.buyerKey)).send({ reference: 'late' });
    expect(claim.status, JSON.stringify(claim.body)).to.equal(202);
    expect(claim.body.data).to.deep.include({ status: 'awaiting_confirmation', flag: 'late_claim', late_claim: true });
    expect(await paymentRow(res.body.data.payment_link_id as string)).to.deep.include({ status: 'awaiting_confirmation', flag: 'late_claim' });
    expect((await escrowRow(w.escrowId)).status).to.equal('pending_payment');
    expect(await countRows('journal_entries')).to.equal(0);
  });

  it('claim -> awaiting_confirmation with the reference; staff confirm -> escrow paid, ledger, staff_audit', async () => {
    const paid = await payManual();
    const paymentId = paid.body.data.payment_link_id as string;
    clock.advance(60_000);
    const claimed = await claim(w.buyerKey, { reference: 'BCA 04/12 ref 8812' });
    expect(claimed.status, JSON.stringify(claimed.body)).to.equal(200);
    expect(claimed.body.data).to.deep.include({ id: paymentId, status: 'awaiting_confirmation', amount: String(TOTAL), updated_at: new Date(T0.getTime() + 60_000).toISOString() });
    const p = await paymentRow(paymentId);
    expect(p).to.deep.include({ status: 'awaiting_confirmation', claim_reference: 'BCA 04/12 ref 8812' });
    expect(p.claimed_at!.toISOString()).to.equal(new Date(T0.getTime() + 60_000).toISOString());
    expect((await escrowRow(w.escrowId)).status).to.equal('pending_payment');
    expect(await countRows('journal_entries')).to.equal(0);

    clock.advance(60_000);
    const ok = await confirm(w.adminKey, paymentId, { note: 'mutasi BCA cocok' });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.body.data.payment).to.deep.include({ id: paymentId, escrow_id: w.escrowId, status: 'paid', amount: String(TOTAL), provider: 'manual_bca' });
    expect(await paymentRow(paymentId)).to.deep.include({ status: 'paid', decided_by: w.admin.id, flag: null });
    const escrow = await escrowRow(w.escrowId);
    expect(escrow.status).to.equal('paid');
    expect(await balanceOf(db, { escrowId: w.escrowId })).to.equal(AMOUNT);
    expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-TOTAL);
    expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(FIXED);
    expect(await countRows('journal_entries', { kind: 'escrow_payment' })).to.equal(1);
    const audit = await db<Record<string, unknown>>('staff_audit').select('actor_id', 'action', 'target_type', 'target_id', 'note', 'details');
    expect(audit).to.deep.equal([
      { actor_id: w.admin.id, action: 'payment.confirm', target_type: 'payment', target_id: paymentId, note: 'mutasi BCA cocok', details: { outcome: 'paid' } },
    ]);
    // Both parties are notified.
    expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
    expect(await countRows('notifications', { user_id: w.buyer.id, type: 'payment_success' })).to.equal(1);
    expect(await countRows('notifications', { user_id: w.seller.id, type: 'escrow_paid' })).to.equal(1);
    const status = await client.get(`/api/escrows/${w.escrowId}/payment-status`).set(bearer(w.sellerKey));
    expect(status.body.data.status).to.equal('paid');
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('staff reject -> failed; the escrow stays payable (a new link, then a cancel, are possible)', async () => {
    const paid = await payManual();
    const paymentId = paid.body.data.payment_link_id as string;
    expect((await claim(w.buyerKey, { reference: 'x' })).status).to.equal(200);
    const res = await reject(w.adminKey, paymentId, { note: 'tidak ada dana masuk' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.payment).to.deep.include({ id: paymentId, status: 'failed' });
    expect(await paymentRow(paymentId)).to.deep.include({ status: 'failed', decided_by: w.admin.id, paid_at: null });
    expect((await escrowRow(w.escrowId)).status).to.equal('pending_payment');
    expect(await countRows('journal_entries')).to.equal(0);
    const audit = await db<Record<string, unknown>>('staff_audit').select('actor_id', 'action', 'target_type', 'target_id', 'note');
    expect(audit).to.deep.equal([{ actor_id: w.admin.id, action: 'payment.reject', target_type: 'payment', target_id: paymentId, note: 'tidak ada dana masuk' }]);
    // The rejected claim cannot be claimed again, nor confirmed.
    expectError(await claim(w.buyerKey), 409, 'INVALID_STATE');
    expectError(await confirm(w.adminKey, paymentId), 409, 'INVALID_STATE');
    expectError(await reject(w.adminKey, paymentId), 409, 'INVALID_STATE');
    // A rejected claim holds nothing: the seller may cancel.
    const cancel = await client.post(`/api/escrows/${w.escrowId}/cancel`).set(bearer(w.sellerKey)).send({});
    expect(cancel.status, JSON.stringify(cancel.body)).to.equal(200);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  describe('claim-payment errors', () => {
    it('404 NO_PAYMENT before any pay; 404 ESCROW_NOT_FOUND for an unknown id', async () => {
      expectError(await claim(w.buyerKey), 404, 'NO_PAYMENT');
      expectError(await claim(w.buyerKey, {}, randomUUID()), 404, 'ESCROW_NOT_FOUND');
      expectError(await claim(w.buyerKey, {}, 'bad-id'), 404, 'ESCROW_NOT_FOUND');
    });

    it('409 NOT_MANUAL when the latest payment is a gateway link', async () => {
      await payManual();
      clock.advance(1000);
      const gw = await client.post(`/api/escrows/${w.escrowId}/pay`).set(bearer(w.buyerKey)).send({ method: 'qris', provider: 'sandbox' });
      expect(gw.status).to.equal(201);
      const before = await snapshot();
      expectError(await claim(w.buyerKey), 409, 'NOT_MANUAL');
      expect(await snapshot()).to.deep.equal(before);
    });

    it('409 INVALID_STATE when claimed twice; 202 late_claim when the escrow is no longer pending', async () => {
      await payManual();
      expect((await claim(w.buyerKey)).status).to.equal(200);
      const again = await claim(w.buyerKey, { reference: 'again' });
      expectError(again, 409, 'INVALID_STATE');
      expect(again.body.error.status).to.equal('awaiting_confirmation');
      // Another escrow: a manual link, then the escrow is paid some other way.
      const other = await createEscrow({ buyer: w.buyer, amount: AMOUNT });
      const link = await client.post(`/api/escrows/${other.escrow.id}/pay`).set(bearer(w.buyerKey)).send({ method: 'bank_transfer', provider: 'manual_bca' });
      expect(link.status).to.equal(201);
      await markPaid(undefined, other.escrow.id, { reference: 'elsewhere' });
      const late = await claim(w.buyerKey, {}, other.escrow.id);
      expect(late.status, JSON.stringify(late.body)).to.equal(202);
      expect(late.body.data).to.deep.include({ late_claim: true, flag: 'late_claim' });
      expect(await paymentRow(link.body.data.payment_link_id as string)).to.deep.include({ status: 'awaiting_confirmation', flag: 'late_claim' });
      expect((await escrowRow(other.escrow.id)).status).to.equal('paid');
      // And a cancelled one (an unclaimed manual transfer does not hold off a cancel).
      const third = await createEscrow({ buyer: w.buyer, amount: AMOUNT });
      expect((await client.post(`/api/escrows/${third.escrow.id}/pay`).set(bearer(w.buyerKey)).send({ method: 'bank_transfer', provider: 'manual_bca' })).status).to.equal(201);
      expect((await client.post(`/api/escrows/${third.escrow.id}/cancel`).set(bearer(w.buyerKey)).send({})).status).to.equal(200);
      const cancelled = await claim(w.buyerKey, {}, third.escrow.id);
      expect(cancelled.status, JSON.stringify(cancelled.body)).to.equal(202);
      expect(cancelled.body.data.next_step).to.match(/^The escrow was cancelled,/);
      expect((await escrowRow(third.escrow.id)).status).to.equal('cancelled');
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('403 NOT_BUYER for the seller, 403 FORBIDDEN for a stranger, 401 without credentials; nothing changes', async () => {
      await payManual();
      const stranger = (await createUser()).user;
      const strangerKey = await issueKey(stranger.id);
      const before = await snapshot();
      expectError(await claim(w.sellerKey), 403, 'NOT_BUYER');
      expectError(await claim(strangerKey), 403, 'FORBIDDEN');
      expectError(await client.post(`/api/escrows/${w.escrowId}/claim-payment`).send({}), 401, 'UNAUTHORIZED');
      expect(await snapshot()).to.deep.equal(before);
    });

    it('an over-long reference is refused 400; an Idempotency-Key replays the claim', async () => {
      await payManual();
      const long = await claim(w.buyerKey, { reference: 'x'.repeat(201) });
      expect(long.status).to.equal(400);
      const key = randomUUID();
      const first = await client.post(`/api/escrows/${w.escrowId}/claim-payment`).set(bearer(w.buyerKey)).set('Idempotency-Key', key).send({ reference: 'r1' });
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const replay = await client.post(`/api/escrows/${w.escrowId}/claim-payment`).set(bearer(w.buyerKey)).set('Idempotency-Key', key).send({ reference: 'r1' });
      expect(replay.status).to.equal(200);
      expect(replay.headers['idempotent-replay']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
    });
  });

  describe('staff routes', () => {
    it('non-admins get 403 FORBIDDEN on confirm and reject, and nothing changes', async () => {
      const paid = await payManual();
      const paymentId = paid.body.data.payment_link_id as string;
      expect((await claim(w.buyerKey)).status).to.equal(200);
      const stranger = (await createUser()).user;
      const before = await snapshot();
      for (const key of [w.buyerKey, w.sellerKey, await issueKey(stranger.id)]) {
        expectError(await confirm(key, paymentId), 403, 'FORBIDDEN');
        expectError(await reject(key, paymentId), 403, 'FORBIDDEN');
      }
      expectError(await client.post(`/v1/admin/payments/${paymentId}/confirm`).send({}), 401, 'UNAUTHORIZED');
      expect(await snapshot()).to.deep.equal(before);
      expect((await paymentRow(paymentId)).status).to.equal('awaiting_confirmation');
    });

    it('confirm twice -> 409 INVALID_STATE (paid once); reject after confirm -> 409; unknown id -> 404 NOT_FOUND', async () => {
      const paid = await payManual();
      const paymentId = paid.body.data.payment_link_id as string;
      expect((await claim(w.buyerKey)).status).to.equal(200);
      expect((await confirm(w.adminKey, paymentId)).status).to.equal(200);
      const twice = await confirm(w.adminKey, paymentId);
      expectError(twice, 409, 'INVALID_STATE');
      expect(twice.body.error.status).to.equal('paid');
      expectError(await reject(w.adminKey, paymentId), 409, 'INVALID_STATE');
      expect(await countRows('journal_entries', { kind: 'escrow_payment' })).to.equal(1);
      expect(await countRows('staff_audit')).to.equal(1);
      expect(await balanceOf(db, { escrowId: w.escrowId })).to.equal(AMOUNT);
      for (const id of [randomUUID(), 'nope']) {
        expectError(await confirm(w.adminKey, id), 404, 'NOT_FOUND');
        expectError(await reject(w.adminKey, id), 404, 'NOT_FOUND');
      }
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('an unclaimed manual payment cannot be confirmed or rejected (409 INVALID_STATE); neither can a gateway link', async () => {
      const paid = await payManual();
      const paymentId = paid.body.data.payment_link_id as string;
      const c = await confirm(w.adminKey, paymentId);
      expectError(c, 409, 'INVALID_STATE');
      expect(c.body.error.status).to.equal('pending');
      expectError(await reject(w.adminKey, paymentId), 409, 'INVALID_STATE');
      const gw = await client.post(`/api/escrows/${w.escrowId}/pay`).set(bearer(w.buyerKey)).send({ method: 'qris', provider: 'sandbox' });
      expectError(await confirm(w.adminKey, gw.body.data.payment_link_id as string), 409, 'INVALID_STATE');
      expect((await escrowRow(w.escrowId)).status).to.equal('pending_payment');
      expect(await countRows('staff_audit')).to.equal(0);
    });

    it('a note over 2000 characters is refused 400', async () => {
      const paid = await payManual();
      expect((await claim(w.buyerKey)).status).to.equal(200);
      const res = await confirm(w.adminKey, paid.body.data.payment_link_id as string, { note: 'n'.repeat(2001) });
      expect(res.status).to.equal(400);
      expect((await escrowRow(w.escrowId)).status).to.equal('pending_payment');
    });

    it('confirming a claim after the escrow was paid through another link credits the buyer', async () => {
      const manual = await payManual();
      expect((await claim(w.buyerKey)).status).to.equal(200);
      clock.advance(1000);
      const gw = await client.post(`/api/escrows/${w.escrowId}/pay`).set(bearer(w.buyerKey)).send({ method: 'qris', provider: 'sandbox' });
      const total2 = AMOUNT + 1050;
      const cb = sandboxCallback(gw.body.data.gateway_order_id as string, 'paid', total2);
      expect((await client.post('/api/webhooks/inbound').set('Content-Type', 'application/json').set('X-Sandbox-Signature', cb.signature).send(cb.body)).status).to.equal(200);
      expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
      expect((await escrowRow(w.escrowId)).status).to.equal('paid');
      const ok = await confirm(w.adminKey, manual.body.data.payment_link_id as string);
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(await paymentRow(manual.body.data.payment_link_id as string)).to.deep.include({ status: 'paid', flag: 'credited_to_buyer' });
      expect(((await db('users').select('balance').where({ id: w.buyer.id }).first()) as { balance: number }).balance).to.equal(TOTAL);
      expect(await balanceOf(db, { escrowId: w.escrowId })).to.equal(AMOUNT);
      expect(await countRows('journal_entries', { kind: 'escrow_payment' })).to.equal(1);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  describe('a claim awaiting staff holds the escrow', () => {
    it('cancel by either party -> 409 PAYMENT_IN_PROGRESS; staff cancel too; after confirm the escrow is paid', async () => {
      const paid = await payManual();
      expect((await claim(w.buyerKey)).status).to.equal(200);
      const before = await snapshot();
      for (const key of [w.buyerKey, w.sellerKey]) {
        expectError(await client.post(`/api/escrows/${w.escrowId}/cancel`).set(bearer(key)).send({ reason: 'changed my mind' }), 409, 'PAYMENT_IN_PROGRESS');
      }
      expectError(await client.post(`/v1/admin/escrows/${w.escrowId}/cancel`).set(bearer(w.adminKey)).send({ reason: 'fraud report' }), 409, 'PAYMENT_IN_PROGRESS');
      expect(await snapshot()).to.deep.equal(before);
      expect((await confirm(w.adminKey, paid.body.data.payment_link_id as string)).status).to.equal(200);
      expect((await escrowRow(w.escrowId)).status).to.equal('paid');
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('the expiry timer is postponed while a claim awaits staff, and runs once the claim is rejected', async () => {
      const paid = await payManual();
      expect((await claim(w.buyerKey)).status).to.equal(200);
      const escrow = await escrowRow(w.escrowId);
      clock.set(new Date(escrow.expires_at.getTime() + 1000));
      expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
      expect((await escrowRow(w.escrowId)).status).to.equal('pending_payment');
      expect((await reject(w.adminKey, paid.body.data.payment_link_id as string)).status).to.equal(200);
      clock.advance(3600_000 + 1000);
      expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
      const after = await escrowRow(w.escrowId);
      expect(after).to.deep.include({ status: 'cancelled', cancel_reason: 'expired' });
    });
  });

  describe('only staff settle a manual transfer', () => {
    it('a signed gateway callback naming a manual payment does not pay it', async () => {
      const paid = await payManual();
      const paymentId = paid.body.data.payment_link_id as string;
      expect((await claim(w.buyerKey)).status).to.equal(200);
      // The sandbox gateway did not make this order; its callback must not settle it.
      const cb = sandboxCallback(paid.body.data.gateway_order_id as string, 'paid', TOTAL);
      const res = await client.post('/api/webhooks/inbound').set('Content-Type', 'application/json').set('X-Sandbox-Signature', cb.signature).send(cb.body);
      expect(res.status).to.equal(200);
      expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
      expect((await paymentRow(paymentId)).status).to.equal('awaiting_confirmation');
      expect((await escrowRow(w.escrowId)).status).to.equal('pending_payment');
      expect(await countRows('journal_entries')).to.equal(0);
      // A failed or expired report from a gateway does not end the claim either.
      for (const status of ['failed', 'expired'] as const) {
        const late = sandboxCallback(paid.body.data.gateway_order_id as string, status, TOTAL);
        await client.post('/api/webhooks/inbound').set('Content-Type', 'application/json').set('X-Sandbox-Signature', late.signature).send(late.body);
      }
      expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
      expect((await paymentRow(paymentId)).status).to.equal('awaiting_confirmation');
      // Staff still decide.
      expect((await confirm(w.adminKey, paymentId)).status).to.equal(200);
      expect(await countRows('journal_entries', { kind: 'escrow_payment' })).to.equal(1);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });
});
