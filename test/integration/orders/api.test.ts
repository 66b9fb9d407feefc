/**
 * Payment-service orders, the buyer's routes (consumer spec 4.8, section 8 limits; issue 11):
 * config from settings, the camelCase quote, create with its validation and the server's
 * own fee, FEATURE_DISABLED, list, get (owner or admin), cancel, idempotency.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { createOrder, setOrderConfig } from '../../factories/orders.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import type { UserRow } from '../../../shared/users/repo.js';

type Client = ReturnType<typeof api>;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const T0 = new Date('2026-12-10T03:00:00.000Z');
const idsOf = (res: Response) => (res.body as { data: { id: string }[] }).data.map((o) => o.id);

function expectError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
}

const ORDER_FIELDS = [
  'id', 'target_url', 'target_label', 'notes', 'item_price', 'service_fee', 'total', 'status', 'sla_deadline_at', 'paid_at', 'delivered_at',
  'delivery_note', 'has_credentials', 'first_viewed_at', 'refunded_at', 'refund_reason', 'auto_refunded', 'cancelled_at', 'created_at', 'updated_at',
];

describe('payment-service orders: buyer routes', () => {
  let client: Client;
  let buyer: UserRow;
  let key: string;

  beforeEach(async () => {
    clock.set(T0);
    client = api();
    buyer = (await createUser()).user;
    key = await issueKey(buyer.id);
  });

  afterEach(async () => {
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  describe('config and quote', () => {
    it('GET config answers the defaults, then what the operator set', async () => {
      const res = await client.get('/api/jasabayar/config').set(bearer(key));
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({
        enabled: true, fee_type: 'percentage', fee_value: 5, fee_min_idr: 5000, fee_max_idr: null, sla_hours: 24, min_item_price_idr: 10_000, max_item_price_idr: 100_000_000,
      });
      await setOrderConfig({ enabled: false, fee_type: 'fixed', fee_value: 7500, fee_min_idr: 0, fee_max_idr: 20_000, sla_hours: 6, min_item_price_idr: 20_000, max_item_price_idr: 5_000_000 });
      const after = await client.get('/api/jasabayar/config').set(bearer(key));
      expect(after.body.data).to.deep.equal({
        enabled: false, fee_type: 'fixed', fee_value: 7500, fee_min_idr: 0, fee_max_idr: 20_000, sla_hours: 6, min_item_price_idr: 20_000, max_item_price_idr: 5_000_000,
      });
      expectError(await client.get('/api/jasabayar/config'), 401, 'UNAUTHORIZED');
    });

    it('quote answers camelCase: percentage with floor and cap, fixed; bounds', async () => {
      const q = async (itemPrice: unknown) => client.post('/api/jasabayar/quote').set(bearer(key)).send({ item_price: itemPrice });
      let res = await q(250_000);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data).to.deep.equal({ itemPrice: 250_000, serviceFee: 12_500, total: 262_500 });
      expect((await q(20_000)).body.data).to.deep.equal({ itemPrice: 20_000, serviceFee: 5000, total: 25_000 }); // floor
      expect((await q(0)).body.data).to.deep.equal({ itemPrice: 0, serviceFee: 5000, total: 5000 });
      await setOrderConfig({ fee_type: 'percentage', fee_value: 2.5, fee_min_idr: 1000, fee_max_idr: 50_000 });
      expect((await q(123_457)).body.data).to.deep.equal({ itemPrice: 123_457, serviceFee: 3086, total: 126_543 }); // floor(3086.425)
      expect((await q(10_000_000)).body.data).to.deep.equal({ itemPrice: 10_000_000, serviceFee: 50_000, total: 10_050_000 }); // cap
      await setOrderConfig({ fee_type: 'fixed', fee_value: 7500, fee_min_idr: 0 });
      expect((await q(1_000_000)).body.data).to.deep.equal({ itemPrice: 1_000_000, serviceFee: 7500, total: 1_007_500 });
      expectError(await q(-1), 400, 'INVALID_BODY');
      expectError(await q(1.5), 400, 'INVALID_BODY');
      expectError(await q('1000'), 400, 'INVALID_BODY');
      expectError(await q(100_000_001), 400, 'AMOUNT_TOO_LARGE');
      expectError(await q(1e20), 400, 'AMOUNT_TOO_LARGE');
      res = await client.post('/api/jasabayar/quote').set(bearer(key)).send({});
      expectError(res, 400, 'INVALID_BODY');
    });
  });

  describe('create', () => {
    const valid = { target_url: 'https://shop.example.com/p/1', target_label: 'Netflix 1 bulan', item_price: 200_000, notes: 'akun baru' };

    it('201 with the order object; the URL normalised; the fee from the server, a client fee ignored; an event', async () => {
      const res = await client
        .post('/api/jasabayar')
        .set(bearer(key))
        .send({ ...valid, target_url: '  HTTPS://Shop.Example.COM:443/p/1?x=1#frag ', service_fee: 1, total: 200_001 });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(Object.keys(res.body.data).sort()).to.deep.equal([...ORDER_FIELDS].sort());
      expect(res.body.data).to.deep.include({
        target_url: 'https://shop.example.com/p/1?x=1', target_label: 'Netflix 1 bulan', notes: 'akun baru', item_price: 200_000, service_fee: 10_000, total: 210_000,
        status: 'awaiting_payment', sla_deadline_at: null, paid_at: null, has_credentials: false, auto_refunded: false, cancelled_at: null, created_at: T0.toISOString(),
      });
      const events = (await db('service_order_events').where({ order_id: res.body.data.id })) as { event: string; actor_role: string }[];
      expect(events.map((e) => [e.event, e.actor_role])).to.deep.equal([['order.created', 'buyer']]);
    });

    it('validation: http(s) only, 2048 chars, label without < or > (255), notes up to 3000, price bounds', async () => {
      const bad = async (body: Record<string, unknown>, code = 'INVALID_BODY', status = 400) => expectError(await client.post('/api/jasabayar').set(bearer(key)).send(body), status, code);
      await bad({ ...valid, target_url: 'javascript:alert(1)' });
      await bad({ ...valid, target_url: 'ftp://example.com/file' });
      await bad({ ...valid, target_url: 'data:text/html,hi' });
      await bad({ ...valid, target_url: 'not a url' });
      await bad({ ...valid, target_url: 'https://user:pw@example.com/' });
      await bad({ ...valid, target_url: `https://example.com/${'a'.repeat(2030)}` });
      await bad({ ...valid, target_label: '<script>' });
      await bad({ ...valid, target_label: 'a > b' });
      await bad({ ...valid, target_label: 'x'.repeat(256) });
      await bad({ ...valid, notes: 'n'.repeat(3001) });
      await bad({ ...valid, item_price: 9999 });
      await bad({ ...valid, item_price: 10_000.5 });
      await bad({ ...valid, item_price: 100_000_001 }, 'AMOUNT_TOO_LARGE');
      const { target_url: _drop, ...noUrl } = valid;
      await bad(noUrl);
      expect(await countRows('service_orders')).to.equal(0);
      const edge = await client.post('/api/jasabayar').set(bearer(key)).send({ target_url: `https://example.com/${'a'.repeat(2028)}`, target_label: 'x'.repeat(255), notes: 'n'.repeat(3000), item_price: 10_000 });
      expect(edge.status, JSON.stringify(edge.body)).to.equal(201);
      expect(edge.body.data.target_url).to.have.length(2048);
      const max = await client.post('/api/jasabayar').set(bearer(key)).send({ target_url: 'http://example.com', item_price: 100_000_000 });
      expect(max.status).to.equal(201);
      expect(max.body.data).to.deep.include({ target_url: 'http://example.com/', target_label: null, notes: null, total: 105_000_000 });
    });

    it('FEATURE_DISABLED 503 when the operator turned it off; nothing stored', async () => {
      await setOrderConfig({ enabled: false });
      expectError(await client.post('/api/jasabayar').set(bearer(key)).send(valid), 503, 'FEATURE_DISABLED');
      expect(await countRows('service_orders')).to.equal(0);
    });

    it('idempotent: the same key answers the stored order (Idempotent-Replay), a different body 422, no second row', async () => {
      const k = randomUUID();
      const first = await client.post('/api/jasabayar').set(bearer(key)).set('Idempotency-Key', k).send(valid);
      expect(first.status).to.equal(201);
      const replay = await client.post('/api/jasabayar').set(bearer(key)).set('Idempotency-Key', k).send(valid);
      expect(replay.status).to.equal(201);
      expect(replay.headers['idempotent-replay']).to.equal('true');
      expect(replay.body.data.id).to.equal(first.body.data.id);
      expectError(await client.post('/api/jasabayar').set(bearer(key)).set('Idempotency-Key', k).send({ ...valid, item_price: 300_000 }), 422, 'IDEMPOTENCY_KEY_CONFLICT');
      expect(await countRows('service_orders')).to.equal(1);
    });
  });

  describe('list and get', () => {
    it('list: own orders only, newest first, status filter, pagination', async () => {
      const other = (await createUser()).user;
      await createOrder(other.id);
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        ids.push((await createOrder(buyer.id, { itemPrice: 10_000 + i })).id);
        clock.advance(1000);
      }
      await client.post(`/api/jasabayar/${ids[1]}/cancel`).set(bearer(key)).send({});
      const all = await client.get('/api/jasabayar').set(bearer(key));
      expect(all.status).to.equal(200);
      expect(idsOf(all)).to.deep.equal([...ids].reverse());
      expect(all.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 5, total_pages: 1 });
      expect(all.body.data[0]).to.not.have.property('credentials');
      const page2 = await client.get('/api/jasabayar?page=2&limit=2').set(bearer(key));
      expect(idsOf(page2)).to.deep.equal([ids[2], ids[1]]);
      expect(page2.body.pagination).to.deep.equal({ page: 2, limit: 2, total: 5, total_pages: 3 });
      const cancelled = await client.get('/api/jasabayar?status=cancelled').set(bearer(key));
      expect(idsOf(cancelled)).to.deep.equal([ids[1]]);
      expectError(await client.get('/api/jasabayar?status=bogus').set(bearer(key)), 400, 'INVALID_QUERY');
      expectError(await client.get('/api/jasabayar?limit=51').set(bearer(key)), 400, 'INVALID_QUERY');
    });

    it('get: the owner and an admin read it (events oldest first); another user 403; unknown 404', async () => {
      const o = await createOrder(buyer.id);
      const res = await client.get(`/api/jasabayar/${o.id}`).set(bearer(key));
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.include({ id: o.id, credentials: null });
      expect(res.body.data.events).to.deep.equal([{ event: 'order.created', message: res.body.data.events[0].message, actor_role: 'buyer', created_at: T0.toISOString() }]);
      const admin = (await createUser({ role: 'admin' })).user;
      expect((await client.get(`/api/jasabayar/${o.id}`).set(bearer(await issueKey(admin.id)))).status).to.equal(200);
      const stranger = (await createUser()).user;
      const sRes = await client.get(`/api/jasabayar/${o.id}`).set(bearer(await issueKey(stranger.id)));
      expectError(sRes, 403, 'FORBIDDEN');
      expect(JSON.stringify(sRes.body)).to.not.include('shop.example.com');
      expectError(await client.get(`/api/jasabayar/${randomUUID()}`).set(bearer(key)), 404, 'NOT_FOUND');
      expectError(await client.get('/api/jasabayar/not-a-uuid').set(bearer(key)), 404, 'NOT_FOUND');
    });

    it('get: at most 100 events, the oldest', async () => {
      const o = await createOrder(buyer.id);
      await db('service_order_events').insert(
        Array.from({ length: 120 }, (_, i) => ({ order_id: o.id, event: 'order.processing', message: `m${i}`, actor_role: 'system', created_at: new Date(T0.getTime() + (i + 1) * 1000) })),
      );
      const res = await client.get(`/api/jasabayar/${o.id}`).set(bearer(key));
      expect(res.body.data.events).to.have.length(100);
      expect(res.body.data.events[0].event).to.equal('order.created');
      expect(res.body.data.events[99].message).to.equal('m98');
    });
  });

  describe('cancel', () => {
    it('awaiting_payment -> cancelled, answers { success: true }; again 409; another user 403; unknown 404', async () => {
      const o = await createOrder(buyer.id);
      const stranger = (await createUser()).user;
      expectError(await client.post(`/api/jasabayar/${o.id}/cancel`).set(bearer(await issueKey(stranger.id))).send({}), 403, 'FORBIDDEN');
      const admin = (await createUser({ role: 'admin' })).user;
      expectError(await client.post(`/api/jasabayar/${o.id}/cancel`).set(bearer(await issueKey(admin.id))).send({}), 403, 'FORBIDDEN');
      const k = randomUUID();
      const res = await client.post(`/api/jasabayar/${o.id}/cancel`).set(bearer(key)).set('Idempotency-Key', k).send({});
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.equal({ success: true });
      const replay = await client.post(`/api/jasabayar/${o.id}/cancel`).set(bearer(key)).set('Idempotency-Key', k).send({});
      expect(replay.status).to.equal(200);
      expect(replay.headers['idempotent-replay']).to.equal('true');
      const row = (await db('service_orders').where({ id: o.id }).first()) as { status: string; cancelled_at: Date };
      expect(row.status).to.equal('cancelled');
      expect(row.cancelled_at.toISOString()).to.equal(T0.toISOString());
      const again = await client.post(`/api/jasabayar/${o.id}/cancel`).set(bearer(key)).send({});
      expectError(again, 409, 'INVALID_STATE');
      expectError(await client.post(`/api/jasabayar/${randomUUID()}/cancel`).set(bearer(key)).send({}), 404, 'NOT_FOUND');
      const events = (await db('service_order_events').where({ order_id: o.id }).orderBy('id')) as { event: string; actor_role: string }[];
      expect(events.map((e) => [e.event, e.actor_role])).to.deep.equal([['order.created', 'buyer'], ['order.cancelled', 'buyer']]);
    });
  });
});
