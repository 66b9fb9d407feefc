/**
 * Disputes (consumer spec 4.3, section 2 Dispute, section 8 idempotency): opening from paid,
 * sent and received by either party, every refused state, validation, the list and get
 * answers with their extended fields, and the message thread.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { createUser } from '../../factories/users.js';
import { createEscrow } from '../../factories/escrows.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import type { EscrowStatus } from '../../../shared/escrows/states.js';
import type { UserRow } from '../../../shared/users/repo.js';

type Client = ReturnType<typeof api>;

const T0 = new Date('2026-12-01T03:00:00.000Z');
const SECOND = 1000;

/** The Dispute of consumer spec section 2, field for field. */
const DISPUTE_KEYS = [
  'id',
  'escrow_id',
  'initiator_id',
  'reason_category',
  'description',
  'status',
  'priority',
  'resolution_note',
  'resolved_by',
  'resolved_at',
  'created_at',
  'updated_at',
];
/** What list and get add to it. */
const EXTENDED_KEYS = ['item_name', 'amount', 'escrow_status', 'buyer_id', 'seller_id', 'buyer_email', 'buyer_full_name', 'seller_email', 'seller_full_name'];

function expectError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
}

/** The ids of a list answer, in order. */
function ids(res: Response): string[] {
  return (res.body.data as { id: string }[]).map((d) => d.id);
}

function auth(key: string): [string, string] {
  return ['Authorization', `Bearer ${key}`];
}

async function countRows(table: string, where: Record<string, unknown> = {}): Promise<number> {
  const row = (await db(table).where(where).count<{ count: string }[]>('* as count'))[0];
  return Number(row?.count ?? 0);
}

/** One live personal key per user (the schema allows one): issued once per test, then reused. */
const keys = new Map<string, string>();
async function keyOf(userId: string): Promise<string> {
  const known = keys.get(userId);
  if (known) return known;
  const key = await issueKey(userId);
  keys.set(userId, key);
  return key;
}

async function escrowStatus(id: string): Promise<string> {
  return ((await db('escrows').where({ id }).first()) as { status: string }).status;
}

const body = { reason_category: 'item_not_received', description: 'Barang belum sampai setelah dua minggu' };

interface Parties {
  escrowId: string;
  buyer: UserRow;
  seller: UserRow;
  buyerKey: string;
  sellerKey: string;
}

async function parties(status: EscrowStatus, amount = 150_000, extra: { buyer?: UserRow; seller?: UserRow; item?: string } = {}): Promise<Parties> {
  const made = await createEscrow({ status, amount, ...extra });
  return {
    escrowId: made.escrow.id,
    buyer: made.buyer,
    seller: made.seller,
    buyerKey: await keyOf(made.buyer.id),
    sellerKey: await keyOf(made.seller.id),
  };
}

function openDispute(client: Client, key: string, escrowId: string, payload: object = body): Promise<Response> {
  return client.post(`/v1/escrows/${escrowId}/dispute`).set(...auth(key)).send(payload);
}

async function adminWithKey(): Promise<{ admin: UserRow; key: string }> {
  const admin = (await createUser({ role: 'admin' })).user;
  return { admin, key: await keyOf(admin.id) };
}

describe('disputes (consumer spec 4.3)', () => {
  let client: Client;

  before(() => {
    client = api();
  });

  beforeEach(() => {
    clock.set(T0);
    keys.clear();
  });

  describe('POST /v1/escrows/:id/dispute', () => {
    for (const status of ['paid', 'sent', 'received'] as const) {
      for (const side of ['buyer', 'seller'] as const) {
        it(`the ${side} opens a dispute on a ${status} escrow: 201 Dispute, escrow disputed, escrow.disputed recorded`, async () => {
          const p = await parties(status);
          const initiator = side === 'buyer' ? p.buyer : p.seller;
          const res = await openDispute(client, side === 'buyer' ? p.buyerKey : p.sellerKey, p.escrowId, {
            reason_category: 'item_not_as_described',
            description: 'Warna berbeda dari foto',
          });
          expect(res.status, JSON.stringify(res.body)).to.equal(201);
          expect(res.body.success).to.equal(true);
          const d = res.body.data;
          expect(Object.keys(d).sort()).to.deep.equal([...DISPUTE_KEYS].sort());
          expect(d.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
          expect(d).to.deep.include({
            escrow_id: p.escrowId,
            initiator_id: initiator.id,
            reason_category: 'item_not_as_described',
            description: 'Warna berbeda dari foto',
            status: 'open',
            priority: 'normal',
            resolution_note: null,
            resolved_by: null,
            resolved_at: null,
            created_at: T0.toISOString(),
            updated_at: T0.toISOString(),
          });

          const escrow = (await db('escrows').where({ id: p.escrowId }).first()) as { status: string; disputed_at: Date };
          expect(escrow.status).to.equal('disputed');
          expect(escrow.disputed_at.toISOString()).to.equal(T0.toISOString());
          const seen = await client.get(`/api/escrows/${p.escrowId}`).set(...auth(p.buyerKey));
          expect(seen.status).to.equal(200);
          expect(seen.body.data.status).to.equal('disputed');

          const row = (await db('disputes').where({ id: d.id }).first()) as { escrow_status_before: string };
          expect(row.escrow_status_before).to.equal(status);
          const events = (await db('escrow_events').where({ escrow_id: p.escrowId, event: 'escrow.disputed' })) as {
            actor_id: string;
            actor_role: string;
          }[];
          expect(events.map((e) => ({ actor_id: e.actor_id, actor_role: e.actor_role }))).to.deep.equal([{ actor_id: initiator.id, actor_role: side }]);
          // Money stays held in the escrow account while it is disputed.
          expect(await checkLedger(db)).to.deep.equal([]);
        });
      }
    }

    for (const status of ['pending_payment', 'released', 'cancelled', 'refunded', 'disputed'] as const) {
      it(`refuses a ${status} escrow: 409 NOT_DISPUTABLE naming the state`, async () => {
        const p = await parties(status);
        const before = await countRows('disputes', { escrow_id: p.escrowId });
        for (const key of [p.buyerKey, p.sellerKey]) {
          const res = await openDispute(client, key, p.escrowId);
          expectError(res, 409, 'NOT_DISPUTABLE');
          expect(res.body.error.status).to.equal(status);
          expect(res.body.error.message).to.include(status);
        }
        expect(await countRows('disputes', { escrow_id: p.escrowId })).to.equal(before);
        expect(await escrowStatus(p.escrowId)).to.equal(status);
        expect(await checkLedger(db)).to.deep.equal([]);
      });
    }

    it('a second dispute (by either party) answers 409 NOT_DISPUTABLE and leaves one dispute', async () => {
      const p = await parties('sent');
      expect((await openDispute(client, p.buyerKey, p.escrowId)).status).to.equal(201);
      for (const key of [p.buyerKey, p.sellerKey]) {
        const res = await openDispute(client, key, p.escrowId, { reason_category: 'other', description: 'lagi' });
        expectError(res, 409, 'NOT_DISPUTABLE');
        expect(res.body.error.status).to.equal('disputed');
      }
      expect(await countRows('disputes', { escrow_id: p.escrowId })).to.equal(1);
      expect(await countRows('escrow_events', { escrow_id: p.escrowId, event: 'escrow.disputed' })).to.equal(1);
    });

    it('ignores Idempotency-Key (spec section 8): a retry with the same key repeats and gets 409 NOT_DISPUTABLE', async () => {
      const p = await parties('paid');
      const key = randomUUID();
      const first = await client.post(`/v1/escrows/${p.escrowId}/dispute`).set(...auth(p.buyerKey)).set('Idempotency-Key', key).send(body);
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      expect(first.headers['idempotent-replay']).to.equal(undefined);
      const retry = await client.post(`/v1/escrows/${p.escrowId}/dispute`).set(...auth(p.buyerKey)).set('Idempotency-Key', key).send(body);
      expectError(retry, 409, 'NOT_DISPUTABLE');
      expect(retry.headers['idempotent-replay']).to.equal(undefined);
      expect(await countRows('disputes', { escrow_id: p.escrowId })).to.equal(1);
      expect(await countRows('idempotency_keys')).to.equal(0);
    });

    it('a stranger (and an admin who is no party) gets 403 FORBIDDEN; the escrow stays paid', async () => {
      const p = await parties('paid');
      const stranger = (await createUser()).user;
      const { key: adminKey } = await adminWithKey();
      for (const key of [await keyOf(stranger.id), adminKey]) {
        expectError(await openDispute(client, key, p.escrowId), 403, 'FORBIDDEN');
      }
      expect(await escrowStatus(p.escrowId)).to.equal('paid');
      expect(await countRows('disputes')).to.equal(0);
    });

    it('an unknown or malformed escrow id answers 404 NOT_FOUND; no credentials 401', async () => {
      const p = await parties('paid');
      expectError(await openDispute(client, p.buyerKey, randomUUID()), 404, 'NOT_FOUND');
      expectError(await openDispute(client, p.buyerKey, 'not-a-uuid'), 404, 'NOT_FOUND');
      expectError(await client.post(`/v1/escrows/${p.escrowId}/dispute`).send(body), 401, 'UNAUTHORIZED');
      expect(await countRows('disputes')).to.equal(0);
    });

    it('validates the body: 400 INVALID_BODY for a missing or unknown reason_category and a description of 0 or 3001 characters', async () => {
      const p = await parties('paid');
      const cases: { payload: object; field: string }[] = [
        { payload: { description: 'tanpa kategori' }, field: 'reason_category' },
        { payload: { reason_category: 'fraud', description: 'kategori salah' }, field: 'reason_category' },
        { payload: { reason_category: 'other', description: '' }, field: 'description' },
        { payload: { reason_category: 'other', description: 'x'.repeat(3001) }, field: 'description' },
        { payload: { reason_category: 'other' }, field: 'description' },
      ];
      for (const c of cases) {
        const res = await openDispute(client, p.buyerKey, p.escrowId, c.payload);
        expectError(res, 400, 'INVALID_BODY');
        expect(res.body.error.details.fieldErrors, JSON.stringify(c.payload).slice(0, 80)).to.have.property(c.field);
      }
      expect(await escrowStatus(p.escrowId)).to.equal('paid');
      expect(await countRows('disputes')).to.equal(0);

      const longest = 'y'.repeat(3000);
      const ok = await openDispute(client, p.buyerKey, p.escrowId, { reason_category: 'seller_unresponsive', description: longest });
      expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).to.equal(201);
      expect(ok.body.data.description).to.equal(longest);
      expect(ok.body.data.reason_category).to.equal('seller_unresponsive');
    });

    it('notifies the other party and staff of the new dispute (through the outbox)', async () => {
      const p = await parties('paid');
      const { admin } = await adminWithKey();
      const res = await openDispute(client, p.sellerKey, p.escrowId);
      expect(res.status).to.equal(201);
      const ran = await runJobs();
      expect(ran.filter((j) => j.error)).to.deep.equal([]);
      const notes = await db('notifications').where({ type: 'dispute_opened' }).select<{ user_id: string }[]>('user_id');
      expect(notes.map((n) => n.user_id).sort()).to.deep.equal([p.buyer.id, admin.id].sort());
    });
  });

  describe('GET /v1/disputes', () => {
    /**
     * U is buyer of E1 and seller of E2; E3 is between two others. Disputes open one
     * second apart: D1 (E1, by U), D2 (E2, by E2's buyer), D3 (E3).
     */
    async function world() {
      const u = (await createUser({ fullName: 'Ulfa Rahma' })).user;
      const uKey = await keyOf(u.id);
      const e1 = await parties('paid', 150_000, { buyer: u, item: 'Kamera analog' });
      const e2 = await parties('sent', 1_234_567, { seller: u, item: 'Jasa desain logo' });
      const e3 = await parties('received', 50_000);
      const d1 = await openDispute(client, uKey, e1.escrowId);
      clock.advance(SECOND);
      const d2 = await openDispute(client, e2.buyerKey, e2.escrowId, { reason_category: 'other', description: 'desain tidak sesuai' });
      clock.advance(SECOND);
      const d3 = await openDispute(client, e3.sellerKey, e3.escrowId);
      for (const r of [d1, d2, d3]) expect(r.status, JSON.stringify(r.body)).to.equal(201);
      return { u, uKey, e1, e2, e3, d1: d1.body.data.id as string, d2: d2.body.data.id as string, d3: d3.body.data.id as string };
    }

    it("lists only the caller's disputes (as buyer or seller), newest first, with the extended fields and total as a string", async () => {
      const w = await world();
      const res = await client.get('/v1/disputes').set(...auth(w.uKey));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.pagination).to.deep.equal({ page: 1, limit: 20, total: '2' });
      expect(ids(res)).to.deep.equal([w.d2, w.d1]);

      const [second, first] = res.body.data;
      for (const d of res.body.data) expect(Object.keys(d).sort()).to.deep.equal([...DISPUTE_KEYS, ...EXTENDED_KEYS].sort());
      expect(first).to.deep.include({
        id: w.d1,
        escrow_id: w.e1.escrowId,
        initiator_id: w.u.id,
        reason_category: 'item_not_received',
        status: 'open',
        priority: 'normal',
        resolution_note: null,
        resolved_by: null,
        resolved_at: null,
        created_at: T0.toISOString(),
        item_name: 'Kamera analog',
        amount: '150000.00',
        escrow_status: 'disputed',
        buyer_id: w.u.id,
        seller_id: w.e1.seller.id,
        buyer_email: w.u.email,
        buyer_full_name: 'Ulfa Rahma',
        seller_email: w.e1.seller.email,
        seller_full_name: w.e1.seller.full_name,
      });
      expect(second).to.deep.include({
        id: w.d2,
        initiator_id: w.e2.buyer.id,
        item_name: 'Jasa desain logo',
        amount: '1234567.00',
        escrow_status: 'disputed',
        buyer_id: w.e2.buyer.id,
        seller_id: w.u.id,
        buyer_email: w.e2.buyer.email,
        buyer_full_name: w.e2.buyer.full_name,
        seller_email: w.u.email,
        seller_full_name: 'Ulfa Rahma',
        created_at: new Date(T0.getTime() + SECOND).toISOString(),
      });
    });

    it('pages with page and limit; bad queries answer 400 INVALID_QUERY', async () => {
      const w = await world();
      const p1 = await client.get('/v1/disputes?limit=1').set(...auth(w.uKey));
      expect(p1.status).to.equal(200);
      expect(p1.body.pagination).to.deep.equal({ page: 1, limit: 1, total: '2' });
      expect(ids(p1)).to.deep.equal([w.d2]);
      const p2 = await client.get('/v1/disputes?limit=1&page=2').set(...auth(w.uKey));
      expect(p2.body.pagination).to.deep.equal({ page: 2, limit: 1, total: '2' });
      expect(ids(p2)).to.deep.equal([w.d1]);
      const p3 = await client.get('/v1/disputes?limit=1&page=3').set(...auth(w.uKey));
      expect(p3.body.data).to.deep.equal([]);
      expect(p3.body.pagination.total).to.equal('2');
      for (const q of ['limit=0', 'limit=51', 'page=0', 'status=closed']) {
        expectError(await client.get(`/v1/disputes?${q}`).set(...auth(w.uKey)), 400, 'INVALID_QUERY');
      }
    });

    it('filters by status (open, on_hold, resolved)', async () => {
      const w = await world();
      const { key: adminKey } = await adminWithKey();
      const ruled = await client.post(`/v1/admin/disputes/${w.d1}/resolve`).set(...auth(adminKey)).send({ outcome: 'refund', note: 'barang tidak dikirim' });
      expect(ruled.status, JSON.stringify(ruled.body)).to.equal(200);
      const held = await client.post(`/v1/admin/disputes/${w.d3}/resolve`).set(...auth(adminKey)).send({ outcome: 'hold' });
      expect(held.status, JSON.stringify(held.body)).to.equal(200);

      const open = await client.get('/v1/disputes?status=open').set(...auth(w.uKey));
      expect(ids(open)).to.deep.equal([w.d2]);
      expect(open.body.pagination.total).to.equal('1');
      const resolved = await client.get('/v1/disputes?status=resolved').set(...auth(w.uKey));
      expect(ids(resolved)).to.deep.equal([w.d1]);
      expect(resolved.body.data[0]).to.deep.include({ status: 'resolved', escrow_status: 'refunded', resolution_note: 'barang tidak dikirim' });
      const onHold = await client.get('/v1/disputes?status=on_hold').set(...auth(w.uKey));
      expect(onHold.body.data).to.deep.equal([]);
      expect(onHold.body.pagination.total).to.equal('0');
      // The admin's view of on_hold holds E3's dispute.
      const adminHeld = await client.get('/v1/disputes?status=on_hold').set(...auth(adminKey));
      expect(ids(adminHeld)).to.deep.equal([w.d3]);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('an admin sees every dispute, newest first; a user with none sees an empty list', async () => {
      const w = await world();
      const { key: adminKey } = await adminWithKey();
      const all = await client.get('/v1/disputes').set(...auth(adminKey));
      expect(all.status).to.equal(200);
      expect(ids(all)).to.deep.equal([w.d3, w.d2, w.d1]);
      expect(all.body.pagination).to.deep.equal({ page: 1, limit: 20, total: '3' });
      const nobody = await keyOf((await createUser()).user.id);
      const none = await client.get('/v1/disputes').set(...auth(nobody));
      expect(none.body.data).to.deep.equal([]);
      expect(none.body.pagination).to.deep.equal({ page: 1, limit: 20, total: '0' });
      expectError(await client.get('/v1/disputes'), 401, 'UNAUTHORIZED');
    });
  });

  describe('GET /v1/disputes/:id', () => {
    it('answers the extended Dispute to the buyer, the seller and an admin; 403 to a stranger; 404 NOT_FOUND when unknown', async () => {
      const p = await parties('received', 275_000, { item: 'Sepeda lipat' });
      const opened = await openDispute(client, p.buyerKey, p.escrowId);
      const id = opened.body.data.id as string;
      const { key: adminKey } = await adminWithKey();
      for (const key of [p.buyerKey, p.sellerKey, adminKey]) {
        const res = await client.get(`/v1/disputes/${id}`).set(...auth(key));
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(Object.keys(res.body.data).sort()).to.deep.equal([...DISPUTE_KEYS, ...EXTENDED_KEYS].sort());
        expect(res.body.data).to.deep.include({
          ...opened.body.data,
          item_name: 'Sepeda lipat',
          amount: '275000.00',
          escrow_status: 'disputed',
          buyer_id: p.buyer.id,
          seller_id: p.seller.id,
          buyer_email: p.buyer.email,
          buyer_full_name: p.buyer.full_name,
          seller_email: p.seller.email,
          seller_full_name: p.seller.full_name,
        });
      }
      const stranger = await keyOf((await createUser()).user.id);
      const denied = await client.get(`/v1/disputes/${id}`).set(...auth(stranger));
      expectError(denied, 403, 'FORBIDDEN');
      expect(JSON.stringify(denied.body)).not.to.include(p.buyer.email);
      expectError(await client.get(`/v1/disputes/${randomUUID()}`).set(...auth(p.buyerKey)), 404, 'NOT_FOUND');
      expectError(await client.get('/v1/disputes/not-a-uuid').set(...auth(p.buyerKey)), 404, 'NOT_FOUND');
    });
  });

  describe('dispute messages', () => {
    async function disputed() {
      const p = await parties('paid');
      const res = await openDispute(client, p.buyerKey, p.escrowId);
      expect(res.status).to.equal(201);
      const { admin, key: adminKey } = await adminWithKey();
      return { ...p, disputeId: res.body.data.id as string, admin, adminKey };
    }

    function postMessage(key: string, id: string, payload: object): Promise<Response> {
      return client.post(`/v1/disputes/${id}/messages`).set(...auth(key)).send(payload);
    }

    it('buyer, seller and admin post (sender_role says who); GET lists them oldest first for every participant', async () => {
      const d = await disputed();
      const a = await postMessage(d.buyerKey, d.disputeId, { message: 'Barang belum datang' });
      expect(a.status, JSON.stringify(a.body)).to.equal(201);
      expect(a.body.data).to.deep.equal({
        id: a.body.data.id,
        dispute_id: d.disputeId,
        sender_id: d.buyer.id,
        sender_role: 'buyer',
        message: 'Barang belum datang',
        evidence_urls: [],
        created_at: T0.toISOString(),
      });
      clock.advance(SECOND);
      const evidence = ['https://files.example.com/resi-1.jpg', 'http://files.example.com/resi-2.pdf'];
      const b = await postMessage(d.sellerKey, d.disputeId, { message: 'Sudah dikirim, ini resinya', evidence_urls: evidence });
      expect(b.status, JSON.stringify(b.body)).to.equal(201);
      expect(b.body.data).to.deep.include({ sender_id: d.seller.id, sender_role: 'seller', evidence_urls: evidence });
      clock.advance(SECOND);
      const c = await postMessage(d.adminKey, d.disputeId, { message: 'Kami periksa dulu' });
      expect(c.status, JSON.stringify(c.body)).to.equal(201);
      expect(c.body.data).to.deep.include({ sender_id: d.admin.id, sender_role: 'admin' });

      for (const key of [d.buyerKey, d.sellerKey, d.adminKey]) {
        const list = await client.get(`/v1/disputes/${d.disputeId}/messages`).set(...auth(key));
        expect(list.status).to.equal(200);
        expect(ids(list)).to.deep.equal([a.body.data.id, b.body.data.id, c.body.data.id]);
        expect(list.body.data[1]).to.deep.equal(b.body.data);
      }
    });

    it('evidence_urls: up to 5 http(s) links; 6, another scheme or a non-URL answer 400 INVALID_BODY', async () => {
      const d = await disputed();
      const five = [1, 2, 3, 4, 5].map((i) => `https://files.example.com/bukti-${i}.png`);
      const ok = await postMessage(d.buyerKey, d.disputeId, { message: 'lima bukti', evidence_urls: five });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
      expect(ok.body.data.evidence_urls).to.deep.equal(five);
      const bad: unknown[][] = [
        [...five, 'https://files.example.com/bukti-6.png'],
        ['ftp://files.example.com/bukti.png'],
        ['javascript:alert(1)'],
        ['bukan tautan'],
        [42],
      ];
      for (const urls of bad) {
        const res = await postMessage(d.buyerKey, d.disputeId, { message: 'bukti', evidence_urls: urls });
        expectError(res, 400, 'INVALID_BODY');
      }
      expect(await countRows('dispute_messages')).to.equal(1);
    });

    it('an empty or missing message answers 400 INVALID_BODY', async () => {
      const d = await disputed();
      for (const payload of [{ message: '' }, { message: '   ' }, {}, { message: 'x'.repeat(3001) }]) {
        expectError(await postMessage(d.sellerKey, d.disputeId, payload), 400, 'INVALID_BODY');
      }
      expect(await countRows('dispute_messages')).to.equal(0);
    });

    it('a stranger can neither read nor post (403 FORBIDDEN); an unknown dispute is 404 NOT_FOUND', async () => {
      const d = await disputed();
      expect((await postMessage(d.buyerKey, d.disputeId, { message: 'rahasia' })).status).to.equal(201);
      const stranger = await keyOf((await createUser()).user.id);
      expectError(await postMessage(stranger, d.disputeId, { message: 'halo' }), 403, 'FORBIDDEN');
      const read = await client.get(`/v1/disputes/${d.disputeId}/messages`).set(...auth(stranger));
      expectError(read, 403, 'FORBIDDEN');
      expect(JSON.stringify(read.body)).not.to.include('rahasia');
      expectError(await postMessage(d.buyerKey, randomUUID(), { message: 'halo' }), 404, 'NOT_FOUND');
      expectError(await client.get(`/v1/disputes/${randomUUID()}/messages`).set(...auth(d.buyerKey)), 404, 'NOT_FOUND');
      expect(await countRows('dispute_messages')).to.equal(1);
    });

    it('messages are allowed while the dispute is on hold and refused with 409 DISPUTE_CLOSED after a final ruling', async () => {
      const d = await disputed();
      const hold = await client.post(`/v1/admin/disputes/${d.disputeId}/resolve`).set(...auth(d.adminKey)).send({ outcome: 'hold', note: 'menunggu bukti' });
      expect(hold.status, JSON.stringify(hold.body)).to.equal(200);
      for (const key of [d.buyerKey, d.sellerKey, d.adminKey]) {
        const res = await postMessage(key, d.disputeId, { message: 'selama ditahan' });
        expect(res.status, JSON.stringify(res.body)).to.equal(201);
      }
      const release = await client.post(`/v1/admin/disputes/${d.disputeId}/resolve`).set(...auth(d.adminKey)).send({ outcome: 'release' });
      expect(release.status, JSON.stringify(release.body)).to.equal(200);
      for (const key of [d.buyerKey, d.sellerKey, d.adminKey]) {
        expectError(await postMessage(key, d.disputeId, { message: 'setelah putusan' }), 409, 'DISPUTE_CLOSED');
      }
      // The thread stays readable.
      const list = await client.get(`/v1/disputes/${d.disputeId}/messages`).set(...auth(d.buyerKey));
      expect(list.status).to.equal(200);
      expect(list.body.data).to.have.length(3);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a message notifies the parties who did not write it', async () => {
      const d = await disputed();
      await runJobs();
      await db('notifications').del();
      expect((await postMessage(d.adminKey, d.disputeId, { message: 'Mohon kirim bukti' })).status).to.equal(201);
      const ran = await runJobs();
      expect(ran.filter((j) => j.error)).to.deep.equal([]);
      const notes = await db('notifications').where({ type: 'dispute_message' }).select<{ user_id: string }[]>('user_id');
      expect(notes.map((n) => n.user_id).sort()).to.deep.equal([d.buyer.id, d.seller.id].sort());
    });
  });
});
