/**
 * Authorisation of every id-taking escrow, dispute and payment route: a third user (a
 * stranger) gets 403 FORBIDDEN (NOT_BUYER on pay, as the spec names it) on an escrow or
 * dispute where the parties could act, learns nothing about it, and changes nothing; the
 * parties then can act (the state was live). The sandbox simulate route (keyed by
 * gateway_order_id) refuses strangers too. Lists show only the caller's rows; the staff
 * routes refuse non-admins.
 */
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp, routers } from '../../../api/app.js';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser, signIn } from '../../factories/users.js';
import { db } from '../../../shared/db.js';
import { openDispute } from '../../../shared/disputes/service.js';
import { pay } from '../../../shared/payments/service.js';
import { createGateway } from '../../factories/payments.js';
import type { EscrowStatus } from '../../../shared/escrows/states.js';
import type { UserRow } from '../../../shared/users/repo.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { createUploadRow } from '../../factories/uploads.js';
import { createOrder } from '../../factories/orders.js';
import { pay as payOrder } from '../../../shared/orders/service.js';

/** The buyer's payment-service order of the jasabayar rows (made by their setup). */
const STRANGERS_ORDER = '5d1e2f3a-4b5c-4d6e-9f70-8192a3b4c5d6';
/** A payment-service order of the buyer, optionally with a payment link (sandbox QRIS or a manual transfer). */
async function buyerOrder(w: World, link?: 'gateway' | 'manual'): Promise<void> {
  await createOrder(w.buyer.id, { id: STRANGERS_ORDER });
  if (link === undefined) return;
  await gateways();
  await payOrder(undefined, { userId: w.buyer.id, role: 'user' }, STRANGERS_ORDER, link === 'manual' ? { method: 'bank_transfer', provider: 'manual_bca' } : { method: 'qris', provider: 'sandbox' });
}

/** The buyer's notification the notifications row marks read (made by its setup). */
const STRANGERS_NOTIFICATION = '5d2b8e4a-6c1f-4a9b-8e3d-2f7a1b0c9d8e';

/** The buyer's upload the attachments row attaches (made by its setup). */
const STRANGERS_UPLOAD = '0c6f9d2e-3b1a-4e5f-8a7b-9c0d1e2f3a4b';

type Client = ReturnType<typeof api>;
type Party = 'buyer' | 'seller';

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const idsOf = (body: { data: { id: string }[] }) => body.data.map((row) => row.id);

/** Tables whose rows a stranger's request must not touch. */
const WATCHED = [
  'escrows',
  'escrow_events',
  'disputes',
  'dispute_messages',
  'ratings',
  'journal_entries',
  'journal_lines',
  'ledger_accounts',
  'outbox',
  'notifications',
  'idempotency_keys',
  'staff_audit',
  'payments',
  'payment_callbacks',
  'sandbox_charges',
  'service_orders',
  'service_order_events',
] as const;

async function dump(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of WATCHED) out[table] = (await db(table).select('*').orderBy(1)) as unknown[];
  return out;
}

interface World {
  escrowId: string;
  disputeId: string | null;
  buyer: UserRow;
  seller: UserRow;
  stranger: UserRow;
  item: string;
  amount: number;
  disputeText: string;
}

interface RouteCase {
  name: string;
  /** The escrow state in which the parties can use the route. */
  status: EscrowStatus;
  /** Open a dispute first (the dispute routes). */
  dispute?: boolean;
  method: 'get' | 'post' | 'patch';
  /** The route as registered (for the completeness check). */
  template: string;
  path: (w: World) => string;
  body?: Record<string, unknown>;
  /** Who may use it, and what they get: the control that the state was live. */
  party: Party;
  ok: number;
  /** The stranger's error code (default FORBIDDEN). */
  code?: string;
  /** Prepares the escrow (gateways, a payment link) before the stranger calls. */
  setup?: (w: World) => Promise<void>;
}

/** The sandbox gateway and a manual transfer gateway, as an operator would configure them. */
async function gateways(): Promise<void> {
  await createGateway({ provider: 'sandbox', feePercent: '0.7', sortOrder: 1 });
  await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer'], feePercent: '0', sortOrder: 0, config: { bank: 'BCA' } });
}

/** A payment link made by the buyer (sandbox QRIS, or a manual transfer). */
async function paymentLink(w: World, manual = false) {
  await gateways();
  return pay(undefined, { userId: w.buyer.id, role: 'user' }, w.escrowId, manual ? { method: 'bank_transfer', provider: 'manual_bca' } : { method: 'qris', provider: 'sandbox' });
}

const ROUTES: RouteCase[] = [
  {
    name: 'POST /api/escrows/:id/attachments',
    status: 'paid',
    method: 'post',
    template: '/api/escrows/:id/attachments', path: (w) => `/api/escrows/${w.escrowId}/attachments`,
    body: { attachment_url: `${STRANGERS_UPLOAD}.jpg` },
    party: 'buyer',
    ok: 201,
    setup: async (w) => void (await createUploadRow(w.buyer.id, { id: STRANGERS_UPLOAD })),
  },
  { name: 'GET /api/escrows/:id/attachments', status: 'paid', method: 'get', template: '/api/escrows/:id/attachments', path: (w) => `/api/escrows/${w.escrowId}/attachments`, party: 'seller', ok: 200 },
  { name: 'GET /api/escrows/:id', status: 'paid', method: 'get', template: '/api/escrows/:id', path: (w) => `/api/escrows/${w.escrowId}`, party: 'buyer', ok: 200 },
  {
    name: 'POST /api/escrows/:id/send',
    status: 'paid',
    method: 'post',
    template: '/api/escrows/:id/send', path: (w) => `/api/escrows/${w.escrowId}/send`,
    body: { courier: 'jne', tracking_number: 'JNE0012345' },
    party: 'seller',
    ok: 200,
  },
  { name: 'POST /api/escrows/:id/confirm-received', status: 'sent', method: 'post', template: '/api/escrows/:id/confirm-received', path: (w) => `/api/escrows/${w.escrowId}/confirm-received`, body: {}, party: 'buyer', ok: 200 },
  { name: 'POST /api/escrows/:id/release', status: 'received', method: 'post', template: '/api/escrows/:id/release', path: (w) => `/api/escrows/${w.escrowId}/release`, body: {}, party: 'buyer', ok: 200 },
  { name: 'POST /api/escrows/:id/cancel', status: 'pending_payment', method: 'post', template: '/api/escrows/:id/cancel', path: (w) => `/api/escrows/${w.escrowId}/cancel`, body: { reason: 'changed my mind' }, party: 'seller', ok: 200 },
  { name: 'POST /api/escrows/:id/extend', status: 'sent', method: 'post', template: '/api/escrows/:id/extend', path: (w) => `/api/escrows/${w.escrowId}/extend`, body: {}, party: 'buyer', ok: 200 },
  {
    name: 'POST /api/escrows/:id/rating',
    status: 'released',
    method: 'post',
    template: '/api/escrows/:id/rating', path: (w) => `/api/escrows/${w.escrowId}/rating`,
    body: { stars: 1, review: 'never got it' },
    party: 'buyer',
    ok: 201,
  },
  { name: 'GET /api/escrows/:id/ratings', status: 'released', method: 'get', template: '/api/escrows/:id/ratings', path: (w) => `/api/escrows/${w.escrowId}/ratings`, party: 'seller', ok: 200 },
  {
    name: 'POST /v1/escrows/:id/dispute',
    status: 'paid',
    method: 'post',
    template: '/v1/escrows/:id/dispute', path: (w) => `/v1/escrows/${w.escrowId}/dispute`,
    body: { reason_category: 'item_not_received', description: 'stranger claims' },
    party: 'buyer',
    ok: 201,
  },
  { name: 'GET /v1/disputes/:id', status: 'paid', dispute: true, method: 'get', template: '/v1/disputes/:id', path: (w) => `/v1/disputes/${w.disputeId}`, party: 'seller', ok: 200 },
  { name: 'GET /v1/disputes/:id/messages', status: 'paid', dispute: true, method: 'get', template: '/v1/disputes/:id/messages', path: (w) => `/v1/disputes/${w.disputeId}/messages`, party: 'seller', ok: 200 },
  {
    name: 'POST /v1/disputes/:id/messages',
    status: 'paid',
    dispute: true,
    method: 'post',
    template: '/v1/disputes/:id/messages', path: (w) => `/v1/disputes/${w.disputeId}/messages`,
    body: { message: 'let me in', evidence_urls: ['https://example.com/a.jpg'] },
    party: 'seller',
    ok: 201,
  },
  {
    name: 'POST /api/sandbox/escrows/:id/fast-forward (auto_release)',
    status: 'sent',
    method: 'post',
    template: '/api/sandbox/escrows/:id/fast-forward', path: (w) => `/api/sandbox/escrows/${w.escrowId}/fast-forward`,
    body: { timer: 'auto_release' },
    party: 'buyer',
    ok: 202,
  },
  {
    name: 'POST /api/sandbox/escrows/:id/fast-forward (expiry)',
    status: 'pending_payment',
    method: 'post',
    template: '/api/sandbox/escrows/:id/fast-forward', path: (w) => `/api/sandbox/escrows/${w.escrowId}/fast-forward`,
    body: { timer: 'expiry' },
    party: 'seller',
    ok: 202,
  },
  {
    name: 'POST /api/escrows/:id/pay',
    status: 'pending_payment',
    method: 'post',
    template: '/api/escrows/:id/pay', path: (w) => `/api/escrows/${w.escrowId}/pay`,
    body: { method: 'qris' },
    party: 'buyer',
    ok: 201,
    code: 'NOT_BUYER',
    setup: gateways,
  },
  {
    name: 'GET /api/escrows/:id/payment-status',
    status: 'pending_payment',
    method: 'get',
    template: '/api/escrows/:id/payment-status', path: (w) => `/api/escrows/${w.escrowId}/payment-status`,
    party: 'seller',
    ok: 200,
    setup: async (w) => void (await paymentLink(w)),
  },
  {
    name: 'POST /api/escrows/:id/claim-payment',
    status: 'pending_payment',
    method: 'post',
    template: '/api/escrows/:id/claim-payment', path: (w) => `/api/escrows/${w.escrowId}/claim-payment`,
    body: { reference: 'transfer 12:00' },
    party: 'buyer',
    ok: 200,
    setup: async (w) => void (await paymentLink(w, true)),
  },
  { name: 'GET /api/jasabayar/:id', status: 'pending_payment', method: 'get', template: '/api/jasabayar/:id', path: () => `/api/jasabayar/${STRANGERS_ORDER}`, party: 'buyer', ok: 200, setup: (w) => buyerOrder(w) },
  { name: 'POST /api/jasabayar/:id/cancel', status: 'pending_payment', method: 'post', template: '/api/jasabayar/:id/cancel', path: () => `/api/jasabayar/${STRANGERS_ORDER}/cancel`, body: {}, party: 'buyer', ok: 200, setup: (w) => buyerOrder(w) },
  {
    name: 'POST /api/jasabayar/:id/pay',
    status: 'pending_payment',
    method: 'post',
    template: '/api/jasabayar/:id/pay', path: () => `/api/jasabayar/${STRANGERS_ORDER}/pay`,
    body: { method: 'qris' },
    party: 'buyer',
    ok: 201,
    setup: async (w) => {
      await buyerOrder(w);
      await gateways();
    },
  },
  {
    name: 'POST /api/jasabayar/:id/claim-payment',
    status: 'pending_payment',
    method: 'post',
    template: '/api/jasabayar/:id/claim-payment', path: () => `/api/jasabayar/${STRANGERS_ORDER}/claim-payment`,
    body: { reference: 'transfer 12:00' },
    party: 'buyer',
    ok: 200,
    setup: (w) => buyerOrder(w, 'manual'),
  },
  {
    name: 'GET /api/jasabayar/:id/payment-status',
    status: 'pending_payment',
    method: 'get',
    template: '/api/jasabayar/:id/payment-status', path: () => `/api/jasabayar/${STRANGERS_ORDER}/payment-status`,
    party: 'buyer',
    ok: 200,
    setup: (w) => buyerOrder(w, 'gateway'),
  },
  { name: 'GET /api/escrows/:id/tracking', status: 'sent', method: 'get', template: '/api/escrows/:id/tracking', path: (w) => `/api/escrows/${w.escrowId}/tracking`, party: 'seller', ok: 200 },
  {
    name: 'POST /api/escrows/:id/tracking/refresh',
    status: 'sent',
    method: 'post',
    template: '/api/escrows/:id/tracking/refresh', path: (w) => `/api/escrows/${w.escrowId}/tracking/refresh`,
    party: 'buyer',
    ok: 200,
    setup: async (w) => void (await db('escrows').where({ id: w.escrowId }).update({ courier: 'jne', tracking_number: 'JNE0099' })),
  },
  {
    name: 'PATCH /v1/notifications/:id/read',
    status: 'paid',
    method: 'patch',
    template: '/v1/notifications/:id/read', path: () => `/v1/notifications/${STRANGERS_NOTIFICATION}/read`,
    party: 'buyer',
    ok: 200,
    setup: async (w) => {
      await db('notifications').insert({ id: STRANGERS_NOTIFICATION, user_id: w.buyer.id, type: 'payment_success', title: 'Pembayaran berhasil', body: w.item, metadata: JSON.stringify({ escrow_id: w.escrowId }), source_key: 'strangers', created_at: new Date() });
    },
  },
];

let seq = 0;

async function world(status: EscrowStatus, dispute = false, setup?: (w: World) => Promise<void>): Promise<World> {
  seq += 1;
  const item = `Barang rahasia nomor ${seq} zqx`;
  const amount = 173_457 + seq;
  const buyer = (await createUser({ fullName: `Pembeli Rahasia ${seq} qq` })).user;
  const seller = (await createUser({ fullName: `Penjual Rahasia ${seq} qq` })).user;
  const { escrow } = await createEscrow({ status, amount, item, buyer, seller });
  const stranger = (await createUser({ fullName: `Orang Asing ${seq} qq` })).user;
  const disputeText = `Isi sengketa rahasia ${seq} qzx`;
  let disputeId: string | null = null;
  if (dispute) {
    disputeId = (await openDispute({ userId: buyer.id, role: 'user' }, escrow.id, { reason_category: 'item_not_as_described', description: disputeText })).id;
  }
  const w = { escrowId: escrow.id, disputeId, buyer, seller, stranger, item, amount, disputeText };
  if (setup) await setup(w);
  // Notifications of the setup are written now, so the comparison sees only the request.
  await runJobs();
  return w;
}

function send(client: Client, c: RouteCase, w: World, key: string) {
  const path = c.path(w);
  const req = c.method === 'get' ? client.get(path) : c.method === 'patch' ? client.patch(path).send(c.body ?? {}) : client.post(path).send(c.body ?? {});
  return req.set(bearer(key));
}

function expectNothingLeaked(body: unknown, w: World): void {
  const json = JSON.stringify(body);
  for (const secret of [w.item, String(w.amount), w.buyer.email, w.seller.email, w.buyer.id, w.seller.id, w.buyer.full_name, w.seller.full_name, w.disputeText]) {
    expect(json, `the answer leaks ${secret}`).to.not.include(secret);
  }
}

describe('strangers on escrows and disputes', () => {
  let client: Client;
  before(() => {
    client = api();
  });

  describe('every id-taking route answers a stranger 403 FORBIDDEN (NOT_BUYER on pay) and changes nothing', () => {
    it('the table names every registered id-taking route (but the public preview and the staff routes)', () => {
      const registered = new Set<string>();
      for (const router of routers) {
        for (const layer of router.stack) {
          const path = String(layer.path);
          // Enterprise routes have their own matrix (test/integration/enterprise/matrix.test.ts: every route,
          // credential and role, and no reads or changes across workspaces); the KYB invite routes answer
          // another user 403 INVITE_CLAIMED on every route (test/integration/kyb/invites.test.ts).
          const enterprise = path.startsWith('/v1/enterprise') || path.startsWith('/v1/kyb/');
          if (!path.includes(':id') || path.startsWith('/v1/admin') || enterprise || path === '/api/escrows/:id/preview') continue;
          for (const method of layer.methods) if (method !== 'HEAD') registered.add(`${method} ${path}`);
        }
      }
      const tested = new Set(ROUTES.map((c) => `${c.method.toUpperCase()} ${c.template}`));
      expect([...registered].sort()).to.deep.equal([...tested].sort());
    });

    for (const c of ROUTES) {
      it(`${c.name} (escrow ${c.status}${c.dispute ? ', dispute open' : ''})`, async () => {
        const w = await world(c.status, c.dispute, c.setup);
        const strangerKey = await issueKey(w.stranger.id);
        const before = await dump();
        const res = await send(client, c, w, strangerKey);
        expect(res.status, JSON.stringify(res.body)).to.equal(403);
        expect(res.body.success).to.equal(false);
        expect(res.body.error.code).to.equal(c.code ?? 'FORBIDDEN');
        expect(res.body).to.not.have.property('data');
        expectNothingLeaked(res.body, w);
        await runJobs();
        expect(await dump()).to.deep.equal(before);
        // The same request from the party is served: the stranger was refused on a live escrow.
        const partyKey = await issueKey(c.party === 'buyer' ? w.buyer.id : w.seller.id);
        const ok = await send(client, c, w, partyKey);
        expect(ok.status, `party: ${JSON.stringify(ok.body)}`).to.equal(c.ok);
        expect(await checkLedger(db)).to.deep.equal([]);
      });
    }

    it('with an Idempotency-Key the stranger is refused too, and the key stays unused', async () => {
      const w = await world('received');
      const before = await dump();
      const res = await client
        .post(`/api/escrows/${w.escrowId}/release`)
        .set(bearer(await issueKey(w.stranger.id)))
        .set('Idempotency-Key', '6f1c1a7e-8d3b-4c2a-9e4f-0a1b2c3d4e5f')
        .send({});
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('FORBIDDEN');
      expectNothingLeaked(res.body, w);
      expect(await dump()).to.deep.equal(before);
    });

    it('over a session cookie the stranger is refused the same way', async () => {
      const w = await world('paid');
      const agent = supertest.agent(createApp().callback());
      const csrf = await signIn(agent, w.stranger.email);
      const before = await dump();
      const read = await agent.get(`/api/escrows/${w.escrowId}`);
      expect(read.status).to.equal(403);
      expect(read.body.error.code).to.equal('FORBIDDEN');
      expectNothingLeaked(read.body, w);
      const sent = await agent.post(`/api/escrows/${w.escrowId}/send`).set('X-CSRF-Token', csrf).send({});
      expect(sent.status).to.equal(403);
      expect(sent.body.error.code).to.equal('FORBIDDEN');
      expectNothingLeaked(sent.body, w);
      const after = await dump();
      // Signing in touched the session tables only; every watched table is as it was.
      expect(after).to.deep.equal(before);
    });

    it('POST /api/sandbox/payments/:gateway_order_id/simulate: a stranger (and the seller) get 403 FORBIDDEN, nothing sent', async () => {
      let order = '';
      const w = await world('pending_payment', false, async (made) => {
        order = (await paymentLink(made)).gateway_order_id;
      });
      const strangerKey = await issueKey(w.stranger.id);
      const sellerKey = await issueKey(w.seller.id);
      const before = await dump();
      for (const key of [strangerKey, sellerKey]) {
        for (const status of ['paid', 'expired', 'failed']) {
          const res = await client.post(`/api/sandbox/payments/${order}/simulate`).set(bearer(key)).send({ status });
          expect(res.status, JSON.stringify(res.body)).to.equal(403);
          expect(res.body.error.code).to.equal('FORBIDDEN');
          expect(res.body).to.not.have.property('data');
          expectNothingLeaked(res.body, w);
        }
      }
      await runJobs();
      expect(await dump()).to.deep.equal(before);
      // The buyer can (the order was live).
      const ok = await client.post(`/api/sandbox/payments/${order}/simulate`).set(bearer(await issueKey(w.buyer.id))).send({ status: 'paid' });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(202);
      await runJobs();
      expect(((await db('escrows').where({ id: w.escrowId }).first()) as { status: string }).status).to.equal('paid');
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  describe('lists hold only the caller rows', () => {
    it('GET /api/escrows of a stranger shows only the stranger escrows', async () => {
      const w = await world('paid');
      const own = await createEscrow({ buyer: w.stranger, item: 'Milik sendiri' });
      const key = await issueKey(w.stranger.id);
      const res = await client.get('/api/escrows').set(bearer(key));
      expect(res.status).to.equal(200);
      expect(idsOf(res.body)).to.deep.equal([own.escrow.id]);
      expect(res.body.pagination.total).to.equal(1);
      expectNothingLeaked(res.body, w);
      for (const q of ['status=paid', 'role=seller', 'role=buyer&status=paid', 'limit=50']) {
        const filtered = await client.get(`/api/escrows?${q}`).set(bearer(key));
        expect(filtered.status).to.equal(200);
        expect(idsOf(filtered.body), q).to.not.include(w.escrowId);
        expectNothingLeaked(filtered.body, w);
      }
    });

    it('GET /v1/disputes of a stranger shows only the stranger disputes', async () => {
      const w = await world('paid', true);
      const own = await createEscrow({ seller: w.stranger, status: 'sent', item: 'Sengketa sendiri' });
      const ownDispute = await openDispute({ userId: w.stranger.id, role: 'user' }, own.escrow.id, { reason_category: 'other', description: 'mine' });
      const key = await issueKey(w.stranger.id);
      for (const q of ['', '?status=open', '?limit=50']) {
        const res = await client.get(`/v1/disputes${q}`).set(bearer(key));
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(idsOf(res.body), q).to.deep.equal([ownDispute.id]);
        expect(res.body.pagination.total, q).to.equal('1');
        expectNothingLeaked(res.body, w);
      }
      // The parties see theirs and not the stranger's.
      const buyerList = await client.get('/v1/disputes').set(bearer(await issueKey(w.buyer.id)));
      expect(idsOf(buyerList.body)).to.deep.equal([w.disputeId]);
    });
  });

  describe('staff routes refuse non-admins', () => {
    for (const who of ['buyer', 'seller', 'stranger'] as const) {
      it(`POST /v1/admin/disputes/:id/resolve by the ${who} -> 403 FORBIDDEN, nothing changed`, async () => {
        const w = await world('sent', true);
        const user = who === 'buyer' ? w.buyer : who === 'seller' ? w.seller : w.stranger;
        const key = await issueKey(user.id);
        const before = await dump();
        for (const outcome of ['release', 'refund', 'hold']) {
          const res = await client.post(`/v1/admin/disputes/${w.disputeId}/resolve`).set(bearer(key)).send({ outcome, note: 'self-service' });
          expect(res.status, JSON.stringify(res.body)).to.equal(403);
          expect(res.body.error.code).to.equal('FORBIDDEN');
          expectNothingLeaked(res.body, w);
        }
        await runJobs();
        expect(await dump()).to.deep.equal(before);
        expect(await countRows('journal_entries', { kind: 'escrow_release' })).to.equal(0);
        expect(await countRows('journal_entries', { kind: 'escrow_refund' })).to.equal(0);
      });

      it(`POST /v1/admin/escrows/:id/cancel by the ${who} -> 403 FORBIDDEN, nothing changed`, async () => {
        const w = await world('pending_payment');
        const user = who === 'buyer' ? w.buyer : who === 'seller' ? w.seller : w.stranger;
        const key = await issueKey(user.id);
        const before = await dump();
        const res = await client.post(`/v1/admin/escrows/${w.escrowId}/cancel`).set(bearer(key)).send({ reason: 'self-service' });
        expect(res.status, JSON.stringify(res.body)).to.equal(403);
        expect(res.body.error.code).to.equal('FORBIDDEN');
        expectNothingLeaked(res.body, w);
        await runJobs();
        expect(await dump()).to.deep.equal(before);
      });
    }

    for (const who of ['buyer', 'seller', 'stranger'] as const) {
      it(`POST /v1/admin/payments/:id/confirm and /reject by the ${who} -> 403 FORBIDDEN, nothing changed`, async () => {
        let paymentId = '';
        const w = await world('pending_payment', false, async (made) => {
          paymentId = (await paymentLink(made, true)).id;
        });
        const buyerKey = await issueKey(w.buyer.id);
        const claimed = await client.post(`/api/escrows/${w.escrowId}/claim-payment`).set(bearer(buyerKey)).send({});
        expect(claimed.status, JSON.stringify(claimed.body)).to.equal(200);
        const key = who === 'buyer' ? buyerKey : await issueKey(who === 'seller' ? w.seller.id : w.stranger.id);
        const before = await dump();
        for (const action of ['confirm', 'reject']) {
          const res = await client.post(`/v1/admin/payments/${paymentId}/${action}`).set(bearer(key)).send({ note: 'self-service' });
          expect(res.status, JSON.stringify(res.body)).to.equal(403);
          expect(res.body.error.code).to.equal('FORBIDDEN');
          expectNothingLeaked(res.body, w);
        }
        await runJobs();
        expect(await dump()).to.deep.equal(before);
        expect(await countRows('journal_entries', { kind: 'escrow_payment' })).to.equal(0);
      });
    }

    it('an admin can confirm and reject manual payments (the routes are live)', async () => {
      const admin = (await createUser({ role: 'admin' })).user;
      const key = await issueKey(admin.id);
      for (const action of ['confirm', 'reject'] as const) {
        let paymentId = '';
        const w = await world('pending_payment', false, async (made) => {
          if (action === 'confirm') await gateways();
          paymentId = (await pay(undefined, { userId: made.buyer.id, role: 'user' }, made.escrowId, { method: 'bank_transfer', provider: 'manual_bca' })).id;
        });
        const claimed = await client.post(`/api/escrows/${w.escrowId}/claim-payment`).set(bearer(await issueKey(w.buyer.id))).send({});
        expect(claimed.status).to.equal(200);
        const res = await client.post(`/v1/admin/payments/${paymentId}/${action}`).set(bearer(key)).send({ note: 'checked' });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body.data.payment.status).to.equal(action === 'confirm' ? 'paid' : 'failed');
      }
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('an admin can use both (the routes are live)', async () => {
      const admin = (await createUser({ role: 'admin' })).user;
      const key = await issueKey(admin.id);
      const d = await world('sent', true);
      const resolved = await client.post(`/v1/admin/disputes/${d.disputeId}/resolve`).set(bearer(key)).send({ outcome: 'hold' });
      expect(resolved.status, JSON.stringify(resolved.body)).to.equal(200);
      expect(resolved.body.data.dispute.status).to.equal('on_hold');
      const c = await world('pending_payment');
      const cancelled = await client.post(`/v1/admin/escrows/${c.escrowId}/cancel`).set(bearer(key)).send({ reason: 'fraud report' });
      expect(cancelled.status, JSON.stringify(cancelled.body)).to.equal(200);
      expect(cancelled.body.data.escrow.status).to.equal('cancelled');
    });
  });
});
