/**
 * Every staff move under /v1/admin (decision D10: "answers return the moved resource")
 * answers in one wrapper: `{ success: true, data: { <resource>: <the moved resource> } }`,
 * the resource named once, with its id and the status the move left it in.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { createEscrow } from '../../factories/escrows.js';
import { createOrder } from '../../factories/orders.js';
import { createGateway } from '../../factories/payments.js';
import { createUser } from '../../factories/users.js';
import { createWithdrawal, fundedUser } from '../../factories/withdrawals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import type { OrderStatus } from '../../../shared/orders/states.js';
import { setPayoutAdapter, manualPayoutAdapter } from '../../../shared/withdrawals/payout-adapter.js';

type Client = ReturnType<typeof api>;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

interface Ctx {
  client: Client;
  adminKey: string;
  admin: Awaited<ReturnType<typeof createUser>>['user'];
}

interface Move {
  /** The route as D10 writes it. */
  route: string;
  /** The key the moved resource answers under. */
  resource: string;
  /** Status the resource is in after the move (the field named `status`, or `field`). */
  after: { field: string; value: string | boolean };
  /** Makes the resource ready for the move; answers the path to post and its body. */
  prepare: (c: Ctx) => Promise<{ id: string; path: string; body: Record<string, unknown> }>;
}

/** An escrow with a claimed manual transfer, waiting for staff: the payment record id. */
async function claimedPayment(c: Ctx): Promise<string> {
  const { escrow, buyer } = await createEscrow({ amount: 150_000 });
  const key = await issueKey(buyer.id);
  const link = await c.client.post(`/api/escrows/${escrow.id}/pay`).set(bearer(key)).send({ method: 'bank_transfer', provider: 'manual_bca' });
  expect(link.status, JSON.stringify(link.body)).to.equal(201);
  expect((await c.client.post(`/api/escrows/${escrow.id}/claim-payment`).set(bearer(key)).send({ reference: 'BCA 1' })).status).to.be.oneOf([200, 202]);
  return link.body.data.payment_link_id as string;
}

/** An escrow cancelled before its manual transfer was claimed: the claim is recorded late (202); the payment record id. */
async function lateClaimedPayment(c: Ctx): Promise<string> {
  const { escrow, buyer } = await createEscrow({ amount: 150_000 });
  const key = await issueKey(buyer.id);
  const link = await c.client.post(`/api/escrows/${escrow.id}/pay`).set(bearer(key)).send({ method: 'bank_transfer', provider: 'manual_bca' });
  expect(link.status, JSON.stringify(link.body)).to.equal(201);
  expect((await c.client.post(`/api/escrows/${escrow.id}/cancel`).set(bearer(key)).send({})).status).to.equal(200);
  expect((await c.client.post(`/api/escrows/${escrow.id}/claim-payment`).set(bearer(key)).send({ reference: 'BCA late' })).status).to.equal(202);
  return link.body.data.payment_link_id as string;
}

/** A payment-service order walked to `status` through the real routes. */
async function orderIn(c: Ctx, status: OrderStatus): Promise<string> {
  const buyer = await fundedUser(1_000_000);
  const key = await issueKey(buyer.id);
  const order = await createOrder(buyer.id);
  if (status === 'pending_review') {
    const link = await c.client.post(`/api/jasabayar/${order.id}/pay`).set(bearer(key)).send({ method: 'bank_transfer', provider: 'manual_bca' });
    expect(link.status, JSON.stringify(link.body)).to.equal(201);
    const claim = await c.client.post(`/api/jasabayar/${order.id}/claim-payment`).set(bearer(key)).send({ reference: 'BCA 2' });
    expect(claim.status, JSON.stringify(claim.body)).to.equal(200);
    return order.id;
  }
  expect((await c.client.post(`/api/jasabayar/${order.id}/pay`).set(bearer(key)).send({ method: 'balance' })).status).to.equal(200);
  if (status === 'processing') expect((await c.client.post(`/v1/admin/jasabayar/${order.id}/start`).set(bearer(c.adminKey)).send({})).status).to.equal(200);
  return order.id;
}

const MOVES: Move[] = [
  {
    route: 'POST /v1/admin/users/:id/suspend',
    resource: 'user',
    after: { field: 'is_suspended', value: true },
    prepare: async () => {
      const { user } = await createUser();
      return { id: user.id, path: `/v1/admin/users/${user.id}/suspend`, body: { note: 'spam' } };
    },
  },
  {
    route: 'POST /v1/admin/users/:id/reactivate',
    resource: 'user',
    after: { field: 'is_suspended', value: false },
    prepare: async (c) => {
      const { user } = await createUser();
      expect((await c.client.post(`/v1/admin/users/${user.id}/suspend`).set(bearer(c.adminKey)).send({})).status).to.equal(200);
      return { id: user.id, path: `/v1/admin/users/${user.id}/reactivate`, body: {} };
    },
  },
  {
    route: 'POST /v1/admin/disputes/:id/resolve',
    resource: 'dispute',
    after: { field: 'outcome', value: 'refund' },
    prepare: async () => {
      const { escrow } = await createEscrow({ status: 'disputed' });
      const d = (await db('disputes').where({ escrow_id: escrow.id }).first()) as { id: string };
      return { id: d.id, path: `/v1/admin/disputes/${d.id}/resolve`, body: { outcome: 'refund', note: 'barang tidak dikirim' } };
    },
  },
  {
    route: 'POST /v1/admin/escrows/:id/cancel',
    resource: 'escrow',
    after: { field: 'status', value: 'cancelled' },
    prepare: async () => {
      const { escrow } = await createEscrow();
      return { id: escrow.id, path: `/v1/admin/escrows/${escrow.id}/cancel`, body: { reason: 'duplicate' } };
    },
  },
  {
    route: 'POST /v1/admin/payments/:id/confirm',
    resource: 'payment',
    after: { field: 'status', value: 'paid' },
    prepare: async (c) => {
      const id = await claimedPayment(c);
      return { id, path: `/v1/admin/payments/${id}/confirm`, body: {} };
    },
  },
  {
    route: 'POST /v1/admin/payments/:id/reject',
    resource: 'payment',
    after: { field: 'status', value: 'failed' },
    prepare: async (c) => {
      const id = await claimedPayment(c);
      return { id, path: `/v1/admin/payments/${id}/reject`, body: { note: 'tidak ada di mutasi' } };
    },
  },
  {
    route: 'POST /v1/admin/payments/:id/credit',
    resource: 'payment',
    after: { field: 'flag', value: 'credited_to_buyer' },
    prepare: async (c) => {
      const id = await lateClaimedPayment(c);
      return { id, path: `/v1/admin/payments/${id}/credit`, body: { note: 'escrow was cancelled' } };
    },
  },
  {
    route: 'POST /v1/admin/payments/:id/mark-returned',
    resource: 'payment',
    after: { field: 'flag', value: 'returned_outside' },
    prepare: async (c) => {
      const id = await lateClaimedPayment(c);
      return { id, path: `/v1/admin/payments/${id}/mark-returned`, body: { note: 'sent back to the payer' } };
    },
  },
  {
    route: 'POST /v1/admin/withdrawals/:id/approve',
    resource: 'withdrawal',
    after: { field: 'status', value: 'approved' },
    prepare: async () => {
      const { withdrawal } = await createWithdrawal({ amount: 100_000 });
      return { id: withdrawal.id, path: `/v1/admin/withdrawals/${withdrawal.id}/approve`, body: {} };
    },
  },
  {
    route: 'POST /v1/admin/withdrawals/:id/mark-paid',
    resource: 'withdrawal',
    after: { field: 'status', value: 'paid' },
    prepare: async (c) => {
      const { withdrawal } = await createWithdrawal({ amount: 100_000, status: 'approved', staff: c.admin });
      return { id: withdrawal.id, path: `/v1/admin/withdrawals/${withdrawal.id}/mark-paid`, body: { reference: 'BCA-1' } };
    },
  },
  {
    route: 'POST /v1/admin/withdrawals/:id/reject',
    resource: 'withdrawal',
    after: { field: 'status', value: 'rejected' },
    prepare: async () => {
      const { withdrawal } = await createWithdrawal({ amount: 100_000 });
      return { id: withdrawal.id, path: `/v1/admin/withdrawals/${withdrawal.id}/reject`, body: { note: 'rekening salah' } };
    },
  },
  {
    route: 'POST /v1/admin/jasabayar/:id/confirm-payment',
    resource: 'order',
    after: { field: 'status', value: 'paid' },
    prepare: async (c) => {
      const id = await orderIn(c, 'pending_review');
      return { id, path: `/v1/admin/jasabayar/${id}/confirm-payment`, body: {} };
    },
  },
  {
    route: 'POST /v1/admin/jasabayar/:id/start',
    resource: 'order',
    after: { field: 'status', value: 'processing' },
    prepare: async (c) => {
      const id = await orderIn(c, 'paid');
      return { id, path: `/v1/admin/jasabayar/${id}/start`, body: {} };
    },
  },
  {
    route: 'POST /v1/admin/jasabayar/:id/process (alias of start)',
    resource: 'order',
    after: { field: 'status', value: 'processing' },
    prepare: async (c) => {
      const id = await orderIn(c, 'paid');
      return { id, path: `/v1/admin/jasabayar/${id}/process`, body: {} };
    },
  },
  {
    route: 'POST /v1/admin/jasabayar/:id/deliver',
    resource: 'order',
    after: { field: 'status', value: 'delivered' },
    prepare: async (c) => {
      const id = await orderIn(c, 'processing');
      return { id, path: `/v1/admin/jasabayar/${id}/deliver`, body: { credentials: 'user: a / pass: b', delivery_note: 'done' } };
    },
  },
  {
    route: 'POST /v1/admin/jasabayar/:id/refund',
    resource: 'order',
    after: { field: 'status', value: 'refunded' },
    prepare: async (c) => {
      const id = await orderIn(c, 'processing');
      return { id, path: `/v1/admin/jasabayar/${id}/refund`, body: { reason: 'stok habis' } };
    },
  },
];

describe('staff moves answer the moved resource in one wrapper (D10)', () => {
  let c: Ctx;

  beforeEach(async () => {
    clock.set(new Date('2026-12-05T03:00:00.000Z'));
    // The payout worker does not run here; approved withdrawals wait for staff.
    setPayoutAdapter(manualPayoutAdapter);
    await createGateway({ provider: 'manual_bca', displayName: 'Transfer BCA', isManual: true, methods: ['bank_transfer'], feePercent: '0', feeFixed: 2500, sortOrder: 0 });
    const admin = (await createUser({ role: 'admin' })).user;
    c = { client: api(), adminKey: await issueKey(admin.id), admin };
  });

  afterEach(() => setPayoutAdapter(null));

  for (const move of MOVES) {
    it(`${move.route}: { success: true, data: { ${move.resource}: { id, ${move.after.field}: ${String(move.after.value)} } } }`, async () => {
      const { id, path, body } = await move.prepare(c);
      const res = await c.client.post(path).set(bearer(c.adminKey)).send(body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(Object.keys(res.body as object).sort()).to.deep.equal(['data', 'success']);
      expect(res.body.success).to.equal(true);
      expect(Object.keys(res.body.data as object), JSON.stringify(res.body.data)).to.deep.equal([move.resource]);
      const moved = res.body.data[move.resource] as Record<string, unknown>;
      expect(moved.id).to.equal(id);
      expect(moved[move.after.field]).to.equal(move.after.value);
    });
  }
});
