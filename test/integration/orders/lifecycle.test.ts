/**
 * Payment-service orders through their state table (consumer spec section 3; issue 11):
 * pay by balance, by a gateway link (sandbox callbacks, the worker) or a claimed manual
 * transfer; the operator's confirm, process, deliver and refund; every refused move; cancel
 * racing a paid callback; the SLA timer and its sweeper with the clock. The ledger is
 * checked after every test.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { fundUser } from '../../helpers/platform-factories.js';
import { createGateway } from '../../factories/payments.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import type { OrderRow } from '../../../shared/orders/repo.js';
import { sweepSla } from '../../../shared/orders/service.js';
import type { OrderStatus } from '../../../shared/orders/states.js';
import { drainCallbacks } from '../../../shared/payments/service.js';
import type { PaymentRow } from '../../../shared/payments/repo.js';
import type { UserRow } from '../../../shared/users/repo.js';

type Client = ReturnType<typeof api>;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const T0 = new Date('2026-12-11T02:00:00.000Z');
const HOUR = 3600_000;
const PRICE = 200_000;
const FEE = 10_000; // 5%
const TOTAL = PRICE + FEE;
const SURCHARGE = 1470; // ceil(210,000 * 0.7%)
const MANUAL_FIXED = 2500;

function expectError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
}

async function orderRow(id: string): Promise<OrderRow> {
  return (await db('service_orders').where({ id }).first()) as OrderRow;
}

async function eventsOf(id: string): Promise<[string, string][]> {
  const rows = (await db('service_order_events').where({ order_id: id }).orderBy('id')) as { event: string; actor_role: string }[];
  return rows.map((r) => [r.event, r.actor_role]);
}

/** Everything a refused move must leave as it was. */
async function snapshot(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of ['service_orders', 'service_order_events', 'payments', 'journal_entries', 'ledger_accounts', 'outbox', 'staff_audit']) {
    out[table] = (await db(table).select('*').orderBy(1)) as unknown[];
  }
  return out;
}

describe('payment-service orders: lifecycle', () => {
  let client: Client;
  let buyer: UserRow;
  let key: string;
  let adminKey: string;

  const create = async (itemPrice = PRICE): Promise<string> => {
    const res = await client.post('/api/jasabayar').set(bearer(key)).send({ target_url: 'https://store.example.com/item/9', target_label: 'Item', item_price: itemPrice });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.id as string;
  };
  const buyerPost = (id: string, action: string, body: Record<string, unknown> = {}) => client.post(`/api/jasabayar/${id}/${action}`).set(bearer(key)).send(body);
  const adminPost = (id: string, action: string, body: Record<string, unknown> = {}) => client.post(`/v1/admin/jasabayar/${id}/${action}`).set(bearer(adminKey)).send(body);
  const payBalance = async (id: string) => {
    const res = await buyerPost(id, 'pay', { method: 'balance' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res;
  };
  const simulate = async (gatewayOrderId: string, status: 'paid' | 'expired' | 'failed') => {
    const res = await client.post(`/api/sandbox/payments/${gatewayOrderId}/simulate`).set(bearer(key)).send({ status });
    expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 202]);
  };

  /** An order brought to `status` through the real paths. */
  async function orderIn(status: OrderStatus): Promise<string> {
    const id = await create();
    switch (status) {
      case 'awaiting_payment':
        return id;
      case 'cancelled':
        expect((await buyerPost(id, 'cancel')).status).to.equal(200);
        return id;
      case 'pending_review': {
        expect((await buyerPost(id, 'pay', { method: 'bank_transfer', provider: 'manual_bca' })).status).to.equal(201);
        expect((await buyerPost(id, 'claim-payment', { reference: 'BCA 1' })).status).to.equal(200);
        return id;
      }
      default:
        break;
    }
    await payBalance(id);
    if (status === 'paid') return id;
    expect((await adminPost(id, 'start')).status).to.equal(200);
    if (status === 'processing') return id;
    if (status === 'delivered') expect((await adminPost(id, 'deliver', { credentials: 'user: a / pass: b', delivery_note: 'done' })).status).to.equal(200);
    if (status === 'refunded') expect((await adminPost(id, 'refund', { reason: 'out of stock' })).status).to.equal(200);
    return id;
  }

  beforeEach(async () => {
    clock.set(T0);
    client = api();
    buyer = (await createUser()).user;
    key = await issueKey(buyer.id);
    adminKey = await issueKey((await createUser({ role: 'admin' })).user.id);
    await createGateway({ provider: 'sandbox', feePercent: '0.7', sortOrder: 1 });
    await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer'], feePercent: '0', feeFixed: MANUAL_FIXED, sortOrder: 0, config: { bank: 'BCA' } });
  });

  afterEach(async () => {
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  describe('paying', () => {
    it('by balance: awaiting_payment -> paid at once (buyer balance -> orders held), SLA clock starts; a second pay 409', async () => {
      await fundUser(buyer.id, 1_000_000);
      const id = await create();
      const k = randomUUID();
      const res = await buyerPost(id, 'pay', { method: 'balance' }).set('Idempotency-Key', k);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.method).to.equal('balance');
      expect(res.body.data.order).to.deep.include({ status: 'paid', paid_at: T0.toISOString(), sla_deadline_at: new Date(T0.getTime() + 24 * HOUR).toISOString() });
      const replay = await buyerPost(id, 'pay', { method: 'balance' }).set('Idempotency-Key', k);
      expect(replay.headers['idempotent-replay']).to.equal('true');
      expect(await balanceOf(db, { userId: buyer.id })).to.equal(1_000_000 - TOTAL);
      expect(await balanceOf(db, { system: 'ordersHeld' })).to.equal(TOTAL);
      expectError(await buyerPost(id, 'pay', { method: 'balance' }), 409, 'INVALID_STATE');
      expectError(await buyerPost(id, 'pay', { method: 'qris' }), 409, 'INVALID_STATE');
      expect(await balanceOf(db, { userId: buyer.id })).to.equal(1_000_000 - TOTAL);
      expect(await eventsOf(id)).to.deep.equal([['order.created', 'buyer'], ['order.paid', 'buyer']]);
    });

    it('by balance without enough: 400 INSUFFICIENT_BALANCE, nothing changes; method checks', async () => {
      await fundUser(buyer.id, TOTAL - 1);
      const id = await create();
      const before = await snapshot();
      expectError(await buyerPost(id, 'pay', { method: 'balance' }), 400, 'INSUFFICIENT_BALANCE');
      expectError(await buyerPost(id, 'pay', {}), 400, 'MISSING_METHOD');
      expectError(await buyerPost(id, 'pay', { method: 'cash' }), 400, 'UNSUPPORTED_METHOD');
      expect(await snapshot()).to.deep.equal(before);
    });

    it('by gateway: the link targets the order; the sandbox callback pays it through the worker (surcharge -> gateway fees)', async () => {
      const id = await create();
      const link = await buyerPost(id, 'pay', { method: 'qris', provider: 'sandbox' });
      expect(link.status, JSON.stringify(link.body)).to.equal(201);
      expect(link.body.data).to.deep.include({ order_id: id, amount: TOTAL + SURCHARGE, escrow_amount: TOTAL, surcharge: SURCHARGE, provider: 'sandbox', method: 'qris' });
      const pending = await client.get(`/api/jasabayar/${id}/payment-status`).set(bearer(key));
      expect(pending.body.data).to.deep.include({ status: 'pending', order_id: id, escrow_id: null, amount: String(TOTAL + SURCHARGE) });
      await simulate(link.body.data.gateway_order_id as string, 'paid');
      const ran = await runJobs();
      expect(ran.filter((j) => j.error)).to.deep.equal([]);
      expect(ran.find((j) => j.name === 'callbacks.reconcile')?.result).to.deep.equal({ outcome: 'paid' });
      const o = await orderRow(id);
      expect(o).to.deep.include({ status: 'paid', paid_via: 'gateway' });
      expect(o.sla_deadline_at?.toISOString()).to.equal(new Date(T0.getTime() + 24 * HOUR).toISOString());
      expect(await balanceOf(db, { system: 'ordersHeld' })).to.equal(TOTAL);
      expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(SURCHARGE);
      expect((await client.get(`/api/jasabayar/${id}/payment-status`).set(bearer(key))).body.data.status).to.equal('paid');
      expect(await eventsOf(id)).to.deep.equal([['order.created', 'buyer'], ['order.paid', 'system']]);
      // A paid order cannot be paid again, by any method.
      expectError(await buyerPost(id, 'pay', { method: 'qris' }), 409, 'INVALID_STATE');
    });

    it('by manual transfer: claim -> pending_review (no SLA clock); the operator confirms -> paid, clock starts', async () => {
      const id = await create();
      const link = await buyerPost(id, 'pay', { method: 'bank_transfer', provider: 'manual_bca' });
      expect(link.status).to.equal(201);
      expect(link.body.data).to.deep.include({ is_manual: true, amount: TOTAL + MANUAL_FIXED });
      const claim = await buyerPost(id, 'claim-payment', { reference: 'BCA 0912' });
      expect(claim.status, JSON.stringify(claim.body)).to.equal(200);
      expect(claim.body.data).to.deep.include({ status: 'awaiting_confirmation', order_id: id });
      expect(await orderRow(id)).to.deep.include({ status: 'pending_review', sla_deadline_at: null });
      expectError(await buyerPost(id, 'claim-payment', {}), 409, 'INVALID_STATE');
      clock.advance(48 * HOUR);
      expect(await sweepSla()).to.deep.equal({ refunded: 0 });
      const confirmed = await adminPost(id, 'confirm-payment', { note: 'masuk' });
      expect(confirmed.status, JSON.stringify(confirmed.body)).to.equal(200);
      const now = clock.now();
      expect(confirmed.body.data.order).to.deep.include({ status: 'paid', paid_at: now.toISOString(), sla_deadline_at: new Date(now.getTime() + 24 * HOUR).toISOString() });
      expect(await balanceOf(db, { system: 'ordersHeld' })).to.equal(TOTAL);
      expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(MANUAL_FIXED);
      expect(await eventsOf(id)).to.deep.equal([['order.created', 'buyer'], ['order.payment_claimed', 'buyer'], ['order.paid', 'admin']]);
      const audit = await db<{ action: string; target_id: string }>('staff_audit').select('action', 'target_id');
      expect(audit).to.deep.include({ action: 'order.confirmManual', target_id: id });
    });

    it('staff reject the claimed transfer (/v1/admin/payments/:id/reject): the order can be paid again; /confirm pays it like confirm-payment', async () => {
      const id = await create();
      const link = await buyerPost(id, 'pay', { method: 'bank_transfer', provider: 'manual_bca' });
      expect((await buyerPost(id, 'claim-payment', {})).status).to.equal(200);
      const rejected = await client.post(`/v1/admin/payments/${link.body.data.payment_link_id}/reject`).set(bearer(adminKey)).send({ note: 'tidak ada' });
      expect(rejected.status, JSON.stringify(rejected.body)).to.equal(200);
      expect(rejected.body.data.payment).to.deep.include({ status: 'failed', order_id: id });
      expect((await orderRow(id)).status).to.equal('awaiting_payment');
      expect((await eventsOf(id)).at(-1)).to.deep.equal(['order.payment_rejected', 'admin']);
      clock.advance(1000);
      const again = await buyerPost(id, 'pay', { method: 'bank_transfer', provider: 'manual_bca' });
      expect((await buyerPost(id, 'claim-payment', {})).status).to.equal(200);
      const confirmed = await client.post(`/v1/admin/payments/${again.body.data.payment_link_id}/confirm`).set(bearer(adminKey)).send({});
      expect(confirmed.status, JSON.stringify(confirmed.body)).to.equal(200);
      expect(confirmed.body.data.payment).to.deep.include({ status: 'paid', order_id: id, escrow_id: null });
      expect(await orderRow(id)).to.deep.include({ status: 'paid', paid_via: 'manual' });
      expect(await balanceOf(db, { system: 'ordersHeld' })).to.equal(TOTAL);
      expect(await balanceOf(db, { system: 'gatewayFees' })).to.equal(MANUAL_FIXED);
    });

    it('claim without a manual link: 404 NO_PAYMENT; after a gateway link: 409 NOT_MANUAL', async () => {
      const id = await create();
      expectError(await buyerPost(id, 'claim-payment', {}), 404, 'NO_PAYMENT');
      expectError(await client.get(`/api/jasabayar/${id}/payment-status`).set(bearer(key)), 404, 'NO_PAYMENT');
      expect((await buyerPost(id, 'pay', { method: 'qris' })).status).to.equal(201);
      expectError(await buyerPost(id, 'claim-payment', {}), 409, 'NOT_MANUAL');
    });
  });

  describe('operator moves', () => {
    it('paid -> processing -> delivered: the money is final (orders held -> orders revenue), events with actor_role, staff audit', async () => {
      await fundUser(buyer.id, TOTAL);
      const id = await orderIn('paid');
      const processing = await adminPost(id, 'start', { note: 'buying' });
      expect(processing.status, JSON.stringify(processing.body)).to.equal(200);
      expect(processing.body.data.order).to.deep.include({ id, status: 'processing' });
      clock.advance(HOUR);
      const delivered = await adminPost(id, 'deliver', { credentials: 'kode: ABCD-1234', delivery_note: 'Kode voucher terlampir' });
      expect(delivered.status, JSON.stringify(delivered.body)).to.equal(200);
      expect(delivered.body.data.order).to.deep.include({ status: 'delivered', delivered_at: clock.now().toISOString(), delivery_note: 'Kode voucher terlampir', has_credentials: true });
      expect(delivered.body.data.order).to.not.have.property('credentials');
      expect(await balanceOf(db, { system: 'ordersHeld' })).to.equal(0);
      expect(await balanceOf(db, { system: 'ordersRevenue' })).to.equal(TOTAL);
      expect(await eventsOf(id)).to.deep.equal([['order.created', 'buyer'], ['order.paid', 'buyer'], ['order.processing', 'admin'], ['order.delivered', 'admin']]);
      const audit = ((await db('staff_audit').select('action').orderBy('id')) as { action: string }[]).map((a) => a.action);
      expect(audit).to.deep.equal(['order.startProcessing', 'order.deliver']);
    });

    it('processing -> refunded by the operator: the full total back to the buyer balance', async () => {
      await fundUser(buyer.id, TOTAL);
      const id = await orderIn('processing');
      expect(await balanceOf(db, { userId: buyer.id })).to.equal(0);
      const res = await adminPost(id, 'refund', { reason: 'stok habis' });
      expect(res.status).to.equal(200);
      expect(res.body.data.order).to.deep.include({ status: 'refunded', refund_reason: 'stok habis', auto_refunded: false, refunded_at: T0.toISOString() });
      expect(await balanceOf(db, { userId: buyer.id })).to.equal(TOTAL);
      expect(await balanceOf(db, { system: 'ordersHeld' })).to.equal(0);
      expect((await eventsOf(id)).at(-1)).to.deep.equal(['order.refunded', 'admin']);
    });

    it('POST .../process is an alias of .../start (D10): the same move, the same answer', async () => {
      await fundUser(buyer.id, 2 * TOTAL);
      const [a, b] = [await orderIn('paid'), await orderIn('paid')];
      const viaStart = await adminPost(a, 'start');
      const viaProcess = await adminPost(b, 'process');
      expect([viaStart.status, viaProcess.status]).to.deep.equal([200, 200]);
      const shape = (o: Record<string, unknown>) => ({ ...o, id: 'x' });
      expect(shape(viaProcess.body.data.order as Record<string, unknown>)).to.deep.equal(shape(viaStart.body.data.order as Record<string, unknown>));
      expect(await eventsOf(b)).to.deep.equal(await eventsOf(a));
    });

    it('the operator lists every buyer orders (status filter, newest first, buyer_id, never credentials); a user is refused', async () => {
      await fundUser(buyer.id, 2 * TOTAL);
      const other = (await createUser()).user;
      const otherKey = await issueKey(other.id);
      await client.post('/api/jasabayar').set(bearer(otherKey)).send({ target_url: 'https://a.example.com/', item_price: 50_000 });
      clock.advance(1000);
      const delivered = await orderIn('delivered');
      clock.advance(1000);
      const paid = await orderIn('paid');
      const all = await client.get('/v1/admin/jasabayar').set(bearer(adminKey));
      expect(all.status).to.equal(200);
      expect(all.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 3, total_pages: 1 });
      const rows = (all.body as { data: { id: string; buyer_id: string }[] }).data;
      expect(rows.map((o) => o.id).slice(0, 2)).to.deep.equal([paid, delivered]);
      expect(rows[0]!.buyer_id).to.equal(buyer.id);
      expect(JSON.stringify(all.body)).to.not.include('pass: b');
      const onlyPaid = await client.get('/v1/admin/jasabayar?status=paid').set(bearer(adminKey));
      expect((onlyPaid.body as { data: { id: string }[] }).data.map((o) => o.id)).to.deep.equal([paid]);
      expectError(await client.get('/v1/admin/jasabayar').set(bearer(key)), 403, 'FORBIDDEN');
    });

    it('operator routes refuse the buyer (403) and change nothing', async () => {
      await fundUser(buyer.id, TOTAL);
      const id = await orderIn('paid');
      const before = await snapshot();
      for (const action of ['confirm-payment', 'start', 'process', 'deliver', 'refund']) {
        const res = await client.post(`/v1/admin/jasabayar/${id}/${action}`).set(bearer(key)).send(action === 'deliver' ? { delivery_note: 'x' } : {});
        expectError(res, 403, 'FORBIDDEN');
      }
      expect(await snapshot()).to.deep.equal(before);
      expectError(await adminPost(randomUUID(), 'start'), 404, 'NOT_FOUND');
      expectError(await adminPost(randomUUID(), 'process'), 404, 'NOT_FOUND');
    });
  });

  describe('the state table', () => {
    type Move = { name: string; allowed: OrderStatus[]; send: (id: string) => Promise<Response> };
    const moves: Move[] = [
      { name: 'cancel', allowed: ['awaiting_payment'], send: (id) => buyerPost(id, 'cancel') },
      { name: 'pay by balance', allowed: ['awaiting_payment'], send: (id) => buyerPost(id, 'pay', { method: 'balance' }) },
      { name: 'pay by gateway', allowed: ['awaiting_payment'], send: (id) => buyerPost(id, 'pay', { method: 'qris' }) },
      { name: 'confirm-payment', allowed: ['pending_review'], send: (id) => adminPost(id, 'confirm-payment') },
      { name: 'start', allowed: ['paid'], send: (id) => adminPost(id, 'start') },
      { name: 'process (the alias of start)', allowed: ['paid'], send: (id) => adminPost(id, 'process') },
      { name: 'deliver', allowed: ['processing'], send: (id) => adminPost(id, 'deliver', { delivery_note: 'x' }) },
      { name: 'refund', allowed: ['processing'], send: (id) => adminPost(id, 'refund') },
    ];
    const statuses: OrderStatus[] = ['awaiting_payment', 'pending_review', 'paid', 'processing', 'delivered', 'refunded', 'cancelled'];

    for (const status of statuses) {
      it(`from ${status}: every move the table does not list answers 409 INVALID_STATE and changes nothing; the listed ones work`, async () => {
        await fundUser(buyer.id, 10 * TOTAL);
        const id = await orderIn(status);
        for (const m of moves.filter((mv) => !mv.allowed.includes(status))) {
          const before = await snapshot();
          const res = await m.send(id);
          expect(res.status, `${m.name} from ${status}: ${JSON.stringify(res.body)}`).to.equal(409);
          expect(res.body.error.code).to.equal('INVALID_STATE');
          expect(res.body.error.status).to.equal(status);
          expect(await snapshot(), `${m.name} from ${status} changed something`).to.deep.equal(before);
        }
        for (const m of moves.filter((mv) => mv.allowed.includes(status))) {
          const fresh = await orderIn(status);
          const res = await m.send(fresh);
          expect(res.status, `${m.name} from ${status}: ${JSON.stringify(res.body)}`).to.be.oneOf([200, 201]);
        }
      });
    }
  });

  describe('cancel and a paid callback', () => {
    async function linked(): Promise<{ id: string; gatewayOrderId: string }> {
      const id = await create();
      const link = await buyerPost(id, 'pay', { method: 'qris', provider: 'sandbox' });
      expect(link.status).to.equal(201);
      return { id, gatewayOrderId: link.body.data.gateway_order_id as string };
    }

    it('the payment settled first wins: the cancel answers 409 and changes nothing', async () => {
      const { id, gatewayOrderId } = await linked();
      await simulate(gatewayOrderId, 'paid');
      await drainCallbacks();
      expectError(await buyerPost(id, 'cancel'), 409, 'INVALID_STATE');
      expect((await orderRow(id)).status).to.equal('paid');
      expect(await balanceOf(db, { system: 'ordersHeld' })).to.equal(TOTAL);
    });

    it('a payment landing after the cancel is credited to the buyer balance, whole, and the order stays cancelled', async () => {
      const { id, gatewayOrderId } = await linked();
      expect((await buyerPost(id, 'cancel')).status).to.equal(200);
      await simulate(gatewayOrderId, 'paid');
      const { processed } = await drainCallbacks();
      expect(processed.map((p) => p.outcome)).to.deep.equal(['credited_to_buyer']);
      expect((await orderRow(id)).status).to.equal('cancelled');
      const p = (await db('payments').where({ order_id: id }).first()) as PaymentRow;
      expect(p).to.deep.include({ status: 'paid', flag: 'credited_to_buyer' });
      expect(await balanceOf(db, { userId: buyer.id })).to.equal(TOTAL + SURCHARGE);
      expect(await balanceOf(db, { system: 'ordersHeld' })).to.equal(0);
    });

    it('racing: cancel and the worker at the same moment, ten times: each order is either paid (cancel 409) or cancelled (credited), never both, never neither', async () => {
      const orders: { id: string; gatewayOrderId: string }[] = [];
      for (let i = 0; i < 10; i += 1) orders.push(await linked());
      for (const o of orders) await simulate(o.gatewayOrderId, 'paid');
      const cancels = await Promise.all([drainCallbacks(), ...orders.map((o) => buyerPost(o.id, 'cancel'))]);
      let credited = 0;
      for (let i = 0; i < orders.length; i += 1) {
        const res = cancels[i + 1] as Response;
        const row = await orderRow(orders[i]!.id);
        const p = (await db('payments').where({ order_id: orders[i]!.id }).first()) as PaymentRow;
        expect(p.status).to.equal('paid');
        if (res.status === 200) {
          expect(row.status).to.equal('cancelled');
          expect(p.flag).to.equal('credited_to_buyer');
          credited += 1;
        } else {
          expectError(res, 409, 'INVALID_STATE');
          expect(row.status).to.equal('paid');
          expect(p.flag).to.equal(null);
        }
      }
      const paidCount = orders.length - credited;
      expect(await balanceOf(db, { system: 'ordersHeld' })).to.equal(paidCount * TOTAL);
      expect(await balanceOf(db, { userId: buyer.id })).to.equal(credited * (TOTAL + SURCHARGE));
    });
  });

  describe('the SLA timer (D6)', () => {
    it('runs only in paid and processing: refunded a moment after the deadline by the delayed job (auto_refunded), not at it', async () => {
      await fundUser(buyer.id, TOTAL);
      const id = await orderIn('processing');
      const deadline = (await orderRow(id)).sla_deadline_at!;
      clock.set(deadline);
      await runJobs(['timers']);
      expect((await orderRow(id)).status).to.equal('processing');
      clock.set(deadline.getTime() + 1);
      const ran = await runJobs(['timers']);
      expect(ran.filter((j) => j.name === 'orders.sla-refund').map((j) => j.result)).to.deep.equal([{ refunded: true }]);
      const o = await orderRow(id);
      expect(o).to.deep.include({ status: 'refunded', auto_refunded: true, refund_reason: 'sla_expired' });
      expect(await balanceOf(db, { userId: buyer.id })).to.equal(TOTAL);
      expect((await eventsOf(id)).at(-1)).to.deep.equal(['order.refunded', 'system']);
      // Idempotent: the sweeper and a repeated job find nothing to do.
      expect(await sweepSla()).to.deep.equal({ refunded: 0 });
    });

    it('the sweeper refunds an order whose timer job was lost', async () => {
      await fundUser(buyer.id, TOTAL);
      const id = await orderIn('paid');
      await db('outbox').where({ job: 'orders.sla-refund' }).del();
      clock.advance(24 * HOUR + 1);
      expect(await sweepSla()).to.deep.equal({ refunded: 1 });
      expect(await orderRow(id)).to.deep.include({ status: 'refunded', auto_refunded: true });
      expect(await balanceOf(db, { userId: buyer.id })).to.equal(TOTAL);
    });

    it('a delivery landing exactly at the deadline is in time and stays delivered; one a moment later is refused (SLA_EXPIRED) and refunded', async () => {
      await fundUser(buyer.id, 2 * TOTAL);
      const onTime = await orderIn('processing');
      const late = await orderIn('processing');
      const deadline = (await orderRow(onTime)).sla_deadline_at!;
      clock.set(deadline);
      const delivered = await adminPost(onTime, 'deliver', { credentials: 'k', delivery_note: 'tepat waktu' });
      expect(delivered.status, JSON.stringify(delivered.body)).to.equal(200);
      clock.set(deadline.getTime() + 1);
      const before = await snapshot();
      expectError(await adminPost(late, 'deliver', { delivery_note: 'terlambat' }), 409, 'SLA_EXPIRED');
      expect(await snapshot()).to.deep.equal(before);
      await runJobs(['timers']);
      expect(await sweepSla()).to.deep.equal({ refunded: 0 });
      expect((await orderRow(onTime)).status).to.equal('delivered');
      expect(await orderRow(late)).to.deep.include({ status: 'refunded', auto_refunded: true });
      expect(await balanceOf(db, { system: 'ordersRevenue' })).to.equal(TOTAL);
      expect(await balanceOf(db, { userId: buyer.id })).to.equal(TOTAL);
    });

    it('the sweeper runs on the timers queue every minute', async () => {
      const { MAINTENANCE_SCHEDULES } = await import('../../../workers/registry.js');
      expect(MAINTENANCE_SCHEDULES.find((s) => s.job === 'orders.sweep-sla')?.everyMs).to.equal(60_000);
    });
  });
});
