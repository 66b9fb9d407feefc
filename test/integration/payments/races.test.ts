/**
 * Payment races (issue 8; decision 0009: a payment underway wins over a cancel and postpones
 * the expiry; spec 3: "a payment landing concurrently wins and the cancel has no effect").
 * Each race runs real concurrent requests or worker calls, repeated ROUNDS times with
 * alternating head starts, and checks after every round that the money moved once and the
 * ledger holds.
 */
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { CALLBACK_RECORD, runJobs } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createGateway, sandboxCallback } from '../../factories/payments.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import type { EscrowRow } from '../../../shared/escrows/repo.js';
import { runExpiry, sweepTimers } from '../../../shared/escrows/service.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import type { PaymentRow } from '../../../shared/payments/repo.js';
import { processCallback } from '../../../shared/payments/service.js';
import type { UserRow } from '../../../shared/users/repo.js';

type Client = ReturnType<typeof api>;

const ROUNDS = 10;
const MINUTE = 60_000;
const T0 = new Date('2026-12-05T07:00:00.000Z');
const AMOUNT = 150_000;
const SURCHARGE = 1050;
const TOTAL = AMOUNT + SURCHARGE;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** Starts both, `b` first when `bFirst`, and waits for both. */
function both<A, B>(a: () => PromiseLike<A>, b: () => PromiseLike<B>, bFirst: boolean): Promise<[A, B]> {
  if (bFirst) {
    const pb = Promise.resolve(b());
    const pa = Promise.resolve(a());
    return Promise.all([pa, pb]);
  }
  const pa = Promise.resolve(a());
  const pb = Promise.resolve(b());
  return Promise.all([pa, pb]);
}

async function escrowRow(id: string): Promise<EscrowRow> {
  return (await db('escrows').where({ id }).first()) as EscrowRow;
}

async function paymentRow(id: string): Promise<PaymentRow> {
  return (await db('payments').where({ id }).first()) as PaymentRow;
}

async function userBalance(id: string): Promise<number> {
  return ((await db('users').select('balance').where({ id }).first()) as { balance: number }).balance;
}

function describeRes(res: Response): string {
  return `${res.status} ${JSON.stringify(res.body)}`;
}

describe('payment races', function () {
  this.timeout(180_000);
  let client: Client;
  let buyer: UserRow;
  let seller: UserRow;
  let buyerKey: string;
  let sellerKey: string;
  /** What the rounds should have moved so far. */
  let books: { clearing: number; fees: number; buyer: number };

  beforeEach(async () => {
    clock.set(T0);
    client = api();
    await createGateway({ provider: 'sandbox', feePercent: '0.7', sortOrder: 1 });
    buyer = (await createUser()).user;
    seller = (await createUser()).user;
    buyerKey = await issueKey(buyer.id);
    sellerKey = await issueKey(seller.id);
    books = { clearing: 0, fees: 0, buyer: 0 };
  });

  async function checkBooks(): Promise<void> {
    expect(await balanceOf(db, { system: 'gatewayClearing' }), 'gateway clearing').to.equal(-books.clearing);
    expect(await balanceOf(db, { system: 'gatewayFees' }), 'gateway fees').to.equal(books.fees);
    expect(await userBalance(buyer.id), 'buyer balance').to.equal(books.buyer);
    expect(await checkLedger(db)).to.deep.equal([]);
  }

  async function newEscrow(): Promise<string> {
    return (await createEscrow({ buyer, seller, amount: AMOUNT })).escrow.id;
  }

  async function payLink(escrowId: string, method = 'qris', provider?: string): Promise<{ paymentId: string; order: string }> {
    const res = await client
      .post(`/api/escrows/${escrowId}/pay`)
      .set(bearer(buyerKey))
      .send(provider ? { method, provider } : { method });
    expect(res.status, describeRes(res)).to.equal(201);
    return { paymentId: res.body.data.payment_link_id as string, order: res.body.data.gateway_order_id as string };
  }

  /** Delivers a signed paid callback over HTTP; returns the stored callback's id (not yet processed). */
  async function ingestPaid(order: string, amount = TOTAL): Promise<number> {
    const cb = sandboxCallback(order, 'paid', amount);
    const res = await client.post('/api/webhooks/inbound').set('Content-Type', 'application/json').set('X-Sandbox-Signature', cb.signature).send(cb.body);
    expect(res.status, describeRes(res)).to.equal(200);
    const row = (await db('payment_callbacks').select('id').where({ gateway_order_id: order, status: 'paid' }).first()) as { id: number };
    return row.id;
  }

  const cancel = (escrowId: string, key: string) => client.post(`/api/escrows/${escrowId}/cancel`).set(bearer(key)).send({ reason: 'race' });

  it('cancel racing a paid callback: the payment always wins (cancel 409 PAYMENT_IN_PROGRESS or INVALID_STATE)', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const escrowId = await newEscrow();
      const { paymentId, order } = await payLink(escrowId);
      const callbackId = await ingestPaid(order);
      const [res, processed] = await both(
        () => cancel(escrowId, round % 2 === 0 ? buyerKey : sellerKey),
        () => processCallback(callbackId),
        round % 3 === 0,
      );
      expect(res.status, describeRes(res)).to.equal(409);
      expect(res.body.error.code).to.be.oneOf(['PAYMENT_IN_PROGRESS', 'INVALID_STATE']);
      expect(processed).to.deep.equal({ outcome: 'paid' });
      expect((await escrowRow(escrowId)).status).to.equal('paid');
      expect(await paymentRow(paymentId)).to.deep.include({ status: 'paid', flag: null });
      expect(await countRows('journal_entries', { kind: 'escrow_payment', ref_id: escrowId })).to.equal(1);
      expect(await balanceOf(db, { escrowId })).to.equal(AMOUNT);
      books.clearing += TOTAL;
      books.fees += SURCHARGE;
      await checkBooks();
    }
    // The worker's inbox finds every callback processed: nothing runs again.
    const ran = await runJobs();
    expect(ran.filter((j) => j.error)).to.deep.equal([]);
    expect(ran.filter((j) => j.name === CALLBACK_RECORD)).to.deep.equal([]);
    await checkBooks();
  });

  it('cancel racing a paid callback through the worker (runJobs): the payment wins', async () => {
    for (let round = 0; round < ROUNDS / 2; round += 1) {
      const escrowId = await newEscrow();
      const { order } = await payLink(escrowId, 'bank_transfer');
      await ingestPaid(order);
      const [res, ran] = await both(
        () => cancel(escrowId, round % 2 === 0 ? sellerKey : buyerKey),
        () => runJobs(['gateway-callbacks']),
        round % 2 === 1,
      );
      expect(res.status, describeRes(res)).to.equal(409);
      expect(res.body.error.code).to.be.oneOf(['PAYMENT_IN_PROGRESS', 'INVALID_STATE']);
      expect(ran.filter((j) => j.error)).to.deep.equal([]);
      expect((await escrowRow(escrowId)).status).to.equal('paid');
      books.clearing += TOTAL;
      books.fees += SURCHARGE;
      await checkBooks();
    }
  });

  it('cancel vs pay: either pay 201 and cancel 409 PAYMENT_IN_PROGRESS, or cancel 200 and pay 409 INVALID_STATE', async () => {
    const wins = { pay: 0, cancel: 0 };
    for (let round = 0; round < ROUNDS; round += 1) {
      const escrowId = await newEscrow();
      const [payRes, cancelRes] = await both(
        () => client.post(`/api/escrows/${escrowId}/pay`).set(bearer(buyerKey)).send({ method: 'qris' }),
        () => cancel(escrowId, sellerKey),
        round % 2 === 1,
      );
      const links = await countRows('payments', { escrow_id: escrowId });
      const escrow = await escrowRow(escrowId);
      if (payRes.status === 201) {
        wins.pay += 1;
        expect(cancelRes.status, describeRes(cancelRes)).to.equal(409);
        expect(cancelRes.body.error.code).to.equal('PAYMENT_IN_PROGRESS');
        expect(escrow.status).to.equal('pending_payment');
        expect(links).to.equal(1);
        expect(await countRows('sandbox_charges', { gateway_order_id: payRes.body.data.gateway_order_id })).to.equal(1);
      } else {
        wins.cancel += 1;
        expect(payRes.status, describeRes(payRes)).to.equal(409);
        expect(payRes.body.error.code).to.equal('INVALID_STATE');
        expect(payRes.body.error.status).to.equal('cancelled');
        expect(cancelRes.status, describeRes(cancelRes)).to.equal(200);
        expect(escrow.status).to.equal('cancelled');
        expect(links).to.equal(0);
      }
      await checkBooks();
    }
    expect(wins.pay + wins.cancel).to.equal(ROUNDS);
  });

  it('cancel vs a manual claim: either claim 200 and cancel 409 PAYMENT_IN_PROGRESS, or cancel 200 and the claim recorded late (202)', async () => {
    await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer'], feePercent: '0', sortOrder: 0 });
    for (let round = 0; round < ROUNDS; round += 1) {
      const escrowId = await newEscrow();
      const { paymentId } = await payLink(escrowId, 'bank_transfer', 'manual_bca');
      const [claimRes, cancelRes] = await both(
        () => client.post(`/api/escrows/${escrowId}/claim-payment`).set(bearer(buyerKey)).send({ reference: `round ${round}` }),
        () => cancel(escrowId, sellerKey),
        round % 2 === 1,
      );
      const escrow = await escrowRow(escrowId);
      const payment = await paymentRow(paymentId);
      const label = `round ${round}: claim ${describeRes(claimRes)}; cancel ${describeRes(cancelRes)}`;
      if (claimRes.status === 200) {
        expect(cancelRes.status, label).to.equal(409);
        expect(cancelRes.body.error.code, label).to.equal('PAYMENT_IN_PROGRESS');
        expect(escrow.status, label).to.equal('pending_payment');
        expect(payment.status, label).to.equal('awaiting_confirmation');
      } else {
        // The cancel passed first; the transfer is still recorded, late, for staff to credit or return.
        expect(claimRes.status, label).to.equal(202);
        expect(claimRes.body.data.late_claim, label).to.equal(true);
        expect(cancelRes.status, label).to.equal(200);
        expect(escrow.status, label).to.equal('cancelled');
        expect(payment, label).to.deep.include({ status: 'awaiting_confirmation', flag: 'late_claim' });
      }
      await checkBooks();
    }
  });

  it('two paid callbacks of two different links processed at once: the escrow is paid once, the other credited to the buyer', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const escrowId = await newEscrow();
      const a = await payLink(escrowId, 'qris');
      clock.advance(1000);
      const b = await payLink(escrowId, 'bank_transfer');
      const idA = await ingestPaid(a.order);
      const idB = await ingestPaid(b.order);
      const [ra, rb] = await both(
        () => processCallback(idA),
        () => processCallback(idB),
        round % 2 === 1,
      );
      expect([ra.outcome, rb.outcome].sort()).to.deep.equal(['credited_to_buyer', 'paid']);
      const winner = ra.outcome === 'paid' ? a : b;
      const loser = ra.outcome === 'paid' ? b : a;
      expect(await paymentRow(winner.paymentId)).to.deep.include({ status: 'paid', flag: null });
      expect(await paymentRow(loser.paymentId)).to.deep.include({ status: 'paid', flag: 'credited_to_buyer' });
      expect((await escrowRow(escrowId)).status).to.equal('paid');
      expect(await countRows('journal_entries', { kind: 'escrow_payment', ref_id: escrowId })).to.equal(1);
      expect(await countRows('journal_entries', { kind: 'payment_credit', ref_id: loser.paymentId })).to.equal(1);
      expect(await balanceOf(db, { escrowId })).to.equal(AMOUNT);
      books.clearing += 2 * TOTAL;
      books.fees += SURCHARGE;
      books.buyer += TOTAL;
      await checkBooks();
    }
  });

  it('the same callback processed by several workers at once: one posting', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const escrowId = await newEscrow();
      const { paymentId, order } = await payLink(escrowId);
      const id = await ingestPaid(order);
      const results = await Promise.all([processCallback(id), processCallback(id), processCallback(id), processCallback(id)]);
      expect(results).to.deep.equal([{ outcome: 'paid' }, { outcome: 'paid' }, { outcome: 'paid' }, { outcome: 'paid' }]);
      expect(await paymentRow(paymentId)).to.deep.include({ status: 'paid', flag: null });
      expect(await countRows('journal_entries', { kind: 'escrow_payment', ref_id: escrowId })).to.equal(1);
      books.clearing += TOTAL;
      books.fees += SURCHARGE;
      await checkBooks();
    }
    const ran = await runJobs();
    expect(ran.filter((j) => j.error)).to.deep.equal([]);
    await checkBooks();
  });

  it('duplicate deliveries processed by concurrent worker runs: one posting', async () => {
    const escrowId = await newEscrow();
    const { order } = await payLink(escrowId);
    await ingestPaid(order);
    await ingestPaid(order);
    await ingestPaid(order);
    const runs = await Promise.all([runJobs(['gateway-callbacks']), runJobs(['gateway-callbacks']), runJobs(['gateway-callbacks'])]);
    expect(runs.flat().filter((j) => j.error)).to.deep.equal([]);
    expect((await escrowRow(escrowId)).status).to.equal('paid');
    expect(await countRows('journal_entries', { kind: 'escrow_payment', ref_id: escrowId })).to.equal(1);
    books.clearing += TOTAL;
    books.fees += SURCHARGE;
    await checkBooks();
  });

  it('the expiry timer while a link is live: postponed (escrow stays pending), then a paid callback pays it', async () => {
    const escrowId = await newEscrow();
    const deadline = (await escrowRow(escrowId)).expires_at;
    // Five minutes before the deadline the buyer opens a QRIS link (live 15 minutes).
    clock.set(new Date(deadline.getTime() - 5 * MINUTE));
    const { order, paymentId } = await payLink(escrowId);
    const linkExpiry = (await paymentRow(paymentId)).expires_at!;
    clock.set(new Date(deadline.getTime() + 1000));
    const ran = await runJobs();
    expect(ran.filter((j) => j.error)).to.deep.equal([]);
    expect(ran.filter((j) => j.name === 'escrows.expire').map((j) => j.result)).to.deep.equal([{ expired: false }]);
    expect((await escrowRow(escrowId)).status).to.equal('pending_payment');
    // The timer is queued again for the end of the link.
    const requeued = (await db('outbox').where({ job: 'escrows.expire' }).whereNull('relayed_at')) as { available_at: Date }[];
    expect(requeued.map((r) => r.available_at.toISOString())).to.deep.equal([linkExpiry.toISOString()]);
    // A cancel is still refused.
    const refused = await cancel(escrowId, sellerKey);
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal('PAYMENT_IN_PROGRESS');
    await ingestPaid(order);
    expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
    expect((await escrowRow(escrowId)).status).to.equal('paid');
    // The postponed timer fires after the link's end and leaves the paid escrow alone.
    clock.set(new Date(linkExpiry.getTime() + 1000));
    const later = await runJobs();
    expect(later.filter((j) => j.name === 'escrows.expire').map((j) => j.result)).to.deep.equal([{ expired: false }]);
    expect((await escrowRow(escrowId)).status).to.equal('paid');
    books.clearing += TOTAL;
    books.fees += SURCHARGE;
    await checkBooks();
  });

  it('the sweeper postpones too, without piling up a timer job per sweep while the link is live', async () => {
    const escrowId = await newEscrow();
    const deadline = (await escrowRow(escrowId)).expires_at;
    clock.set(new Date(deadline.getTime() - MINUTE));
    const { paymentId } = await payLink(escrowId, 'bank_transfer'); // live 24 hours
    const linkExpiry = (await paymentRow(paymentId)).expires_at!;
    clock.set(new Date(deadline.getTime() + 1000));
    expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
    expect((await escrowRow(escrowId)).status).to.equal('pending_payment');
    // The sweeper runs every minute; an hour of sweeps while the link is live.
    for (let minute = 0; minute < 60; minute += 1) {
      clock.advance(MINUTE);
      expect(await sweepTimers()).to.deep.equal({ released: 0, expired: 0 });
    }
    expect((await escrowRow(escrowId)).status).to.equal('pending_payment');
    const queued = (await db('outbox').where({ job: 'escrows.expire' }).whereNull('relayed_at')) as { available_at: Date }[];
    expect(queued.length, `escrows.expire jobs waiting: ${queued.length}`).to.equal(1);
    expect(queued[0]!.available_at.toISOString()).to.equal(linkExpiry.toISOString());
    // At the end of the link the escrow expires (by the job or by the sweeper).
    clock.set(new Date(linkExpiry.getTime() + 1000));
    expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
    await sweepTimers();
    expect(await escrowRow(escrowId)).to.deep.include({ status: 'cancelled', cancel_reason: 'expired' });
  });

  it('the expiry timer while a link is live, the link then lapses unpaid: the escrow expires at the end of the link', async () => {
    const escrowId = await newEscrow();
    const deadline = (await escrowRow(escrowId)).expires_at;
    clock.set(new Date(deadline.getTime() - MINUTE));
    const { paymentId } = await payLink(escrowId);
    const linkExpiry = (await paymentRow(paymentId)).expires_at!;
    clock.set(new Date(deadline.getTime() + 1000));
    expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
    expect((await escrowRow(escrowId)).status).to.equal('pending_payment');
    clock.set(new Date(linkExpiry.getTime() + 1000));
    const ran = await runJobs();
    expect(ran.filter((j) => j.name === 'escrows.expire').map((j) => j.result)).to.deep.equal([{ expired: true }]);
    expect(await escrowRow(escrowId)).to.deep.include({ status: 'cancelled', cancel_reason: 'expired' });
    await checkBooks();
  });

  it('the expiry timer racing a paid callback of a live link: the payment wins', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      clock.set(T0);
      const escrowId = await newEscrow();
      const deadline = (await escrowRow(escrowId)).expires_at;
      clock.set(new Date(deadline.getTime() - 2 * MINUTE));
      const { order } = await payLink(escrowId);
      const id = await ingestPaid(order);
      clock.set(new Date(deadline.getTime() + 1000));
      const [expiry, processed] = await both(
        () => runExpiry(escrowId),
        () => processCallback(id),
        round % 2 === 0,
      );
      expect(expiry).to.deep.equal({ expired: false });
      expect(processed).to.deep.equal({ outcome: 'paid' });
      expect((await escrowRow(escrowId)).status).to.equal('paid');
      books.clearing += TOTAL;
      books.fees += SURCHARGE;
      await checkBooks();
    }
  });
});
