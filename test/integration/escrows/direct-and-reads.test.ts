/**
 * Direct creation (POST /api/escrows) and the reads: the caller's list with its filters and
 * pagination, one escrow for its parties and staff, and the public preview (consumer spec
 * sections 2, 4.2, 8).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { commitTransaction, db, foldedTransaction } from '../../../shared/db.js';
import { insertWithEventAtCommit, type EscrowRow } from '../../../shared/escrows/repo.js';
import { outboxItem } from '../../../shared/outbox.js';

type Client = ReturnType<typeof api>;

const HOUR_MS = 3600_000;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

interface NotificationRow {
  user_id: string;
  type: string;
  metadata: Record<string, unknown>;
}

async function notifications(): Promise<NotificationRow[]> {
  return (await db('notifications').select('user_id', 'type', 'metadata').orderBy('created_at')) as NotificationRow[];
}

describe('direct escrows and reads', () => {
  let client: Client;
  before(() => {
    client = api();
  });

  describe('POST /api/escrows', () => {
    it('as buyer: the caller is the buyer, the counterparty the seller, who is invited', async () => {
      const buyer = (await createUser()).user;
      const seller = (await createUser()).user;
      const res = await client
        .post('/api/escrows')
        .set(bearer(await issueKey(buyer.id)))
        .send({ role: 'buyer', counterparty_username: seller.username, item_name: '  Jam tangan  ', description: 'Bekas, mulus', amount: 175_000, category: 'goods' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const e = res.body.data;
      expect(e.buyer_id).to.equal(buyer.id);
      expect(e.seller_id).to.equal(seller.id);
      expect(e.item_name).to.equal('Jam tangan');
      expect(e.description).to.equal('Bekas, mulus');
      expect(e.amount).to.equal('175000');
      expect(e.category).to.equal('goods');
      expect(e.status).to.equal('pending_payment');
      expect(e.source).to.equal('direct');
      expect(e.partner_ref).to.equal(null);
      expect(e.escrow_url).to.equal(`${config.publicBaseUrl}/pay/${e.id}`);
      expect(new Date(e.expires_at as string).getTime() - new Date(e.created_at as string).getTime()).to.equal(24 * HOUR_MS);
      const row = (await db('escrows').where({ id: e.id }).first()) as EscrowRow;
      expect([row.buyer_id, row.seller_id, row.created_by]).to.deep.equal([buyer.id, seller.id, buyer.id]);
      // Notifications appear only through the outbox.
      expect(await notifications()).to.deep.equal([]);
      const ran = await runJobs();
      expect(ran.filter((j) => j.error)).to.deep.equal([]);
      const notes = await notifications();
      expect(notes.map((n) => [n.user_id, n.type])).to.deep.equal([[seller.id, 'escrow_invited']]);
      expect(notes[0]!.metadata.escrow_id).to.equal(e.id);
      // A second run writes nothing new.
      await runJobs();
      expect(await countRows('notifications')).to.equal(1);
    });

    it('as seller: the caller is the seller, the counterparty the buyer, who is invited', async () => {
      const seller = (await createUser()).user;
      const buyer = (await createUser()).user;
      const res = await client
        .post('/api/escrows')
        .set(bearer(await issueKey(seller.id)))
        .send({ role: 'seller', counterparty_username: buyer.username.toUpperCase(), item_name: 'Desain logo', amount: 400_000, category: 'service' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.buyer_id).to.equal(buyer.id);
      expect(res.body.data.seller_id).to.equal(seller.id);
      expect(res.body.data.category).to.equal('service');
      expect(res.body.data.description).to.equal('');
      const row = (await db('escrows').where({ id: res.body.data.id }).first()) as EscrowRow;
      expect(row.created_by).to.equal(seller.id);
      await runJobs();
      const notes = await notifications();
      expect(notes.map((n) => [n.user_id, n.type])).to.deep.equal([[buyer.id, 'escrow_invited']]);
      expect(notes[0]!.metadata.escrow_id).to.equal(res.body.data.id);
    });

    it('category defaults to goods; the escrow.created event names the creator', async () => {
      const buyer = (await createUser()).user;
      const seller = (await createUser()).user;
      const res = await client
        .post('/api/escrows')
        .set(bearer(await issueKey(buyer.id)))
        .send({ role: 'buyer', counterparty_username: seller.username, item_name: 'Buku', amount: 10_000 });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.category).to.equal('goods');
      expect(res.body.data.amount).to.equal('10000');
      const ev = (await db('escrow_events').where({ escrow_id: res.body.data.id })) as { event: string; actor_id: string; actor_role: string; data: unknown; created_at: Date }[];
      expect(ev.map((x) => [x.event, x.actor_id, x.actor_role, x.data])).to.deep.equal([['escrow.created', buyer.id, 'buyer', { source: 'direct' }]]);
      // Written with the escrow in one statement: the escrow's own creation time.
      expect(ev[0]!.created_at.toISOString()).to.equal(res.body.data.created_at);
      // The seller's notice and the expiry timer, in that order (one INSERT of two rows).
      const jobs = (await db('outbox').whereRaw("payload->>'escrow_id' = ?", [res.body.data.id]).orderBy('id')) as { job: string; available_at: Date; payload: Record<string, unknown> }[];
      expect(jobs.map((j) => j.job)).to.deep.equal(['notifications.create', 'escrows.expire']);
      expect(jobs[0]!.payload).to.deep.equal({ user_id: seller.id, type: 'escrow_invited', escrow_id: res.body.data.id, dispute_id: null, outcome: null });
      expect(jobs[1]!.available_at.toISOString()).to.equal(res.body.data.expires_at);
    });

    it('the same Idempotency-Key creates one escrow and replays the answer', async () => {
      const buyer = (await createUser()).user;
      const seller = (await createUser()).user;
      const key = await issueKey(buyer.id);
      const idem = randomUUID();
      const body = { role: 'buyer', counterparty_username: seller.username, item_name: 'Sepeda', amount: 900_000 };
      const first = await client.post('/api/escrows').set(bearer(key)).set('Idempotency-Key', idem).send(body);
      const second = await client.post('/api/escrows').set(bearer(key)).set('Idempotency-Key', idem).send(body);
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      expect(second.status).to.equal(201);
      expect(second.headers['idempotent-replay']).to.equal('true');
      expect(second.body).to.deep.equal(first.body);
      expect(await countRows('escrows')).to.equal(1);
    });

    it('the answer is the row as stored (the creation goes with the COMMIT): keyed and not, as buyer and as seller, with and without a description', async () => {
      const me = (await createUser()).user;
      const other = (await createUser()).user;
      const key = await issueKey(me.id);
      const bodies = [
        { role: 'buyer', counterparty_username: other.username, item_name: "Kopi 'Gayo' \\ 1kg", amount: 150_000 },
        { role: 'seller', counterparty_username: other.username.toUpperCase(), item_name: 'Jasa desain', description: 'Logo + kartu nama 😀', amount: 2_500_000, category: 'service' },
        // Lone UTF-16 surrogates (valid JSON escapes): stored, and answered, as U+FFFD.
        { role: 'buyer', counterparty_username: other.username, item_name: 'Tas \ud800 kulit', description: 'x\udc00y\ud83d', amount: 90_000 },
      ];
      for (const body of bodies) {
        for (const idem of [randomUUID(), undefined]) {
          const req = client.post('/api/escrows').set(bearer(key));
          const res = await (idem ? req.set('Idempotency-Key', idem) : req).send(body);
          expect(res.status, JSON.stringify(res.body)).to.equal(201);
          const read = await client.get(`/api/escrows/${res.body.data.id as string}`).set(bearer(key));
          expect(read.status).to.equal(200);
          expect(res.body.data).to.deep.equal(read.body.data);
        }
      }
    });

    it('insertWithEventAtCommit answers every column as Postgres writes it, in a folded transaction and in a knex one; the write waits for the COMMIT', async () => {
      const buyer = (await createUser()).user;
      const seller = (await createUser()).user;
      const now = clock.now();
      const row = (description: string) => ({
        id: randomUUID(), buyer_id: buyer.id, seller_id: seller.id, created_by: buyer.id, source: 'direct' as const, item_name: "Kamera 'bekas' \\ lensa",
        description, amount: 3_250_000, category: 'digital' as const, expires_at: new Date(now.getTime() + 24 * HOUR_MS), created_at: now, updated_at: now,
      });
      const first = { event: 'escrow.created' as const, actorId: buyer.id, actorRole: 'buyer' as const, data: { source: 'direct' } };
      const stored = async (id: string) => (await db('escrows').where({ id }).first()) as EscrowRow | undefined;

      const { trx } = await foldedTransaction(db, { sql: 'SELECT 1', bindings: [] });
      const folded = await insertWithEventAtCommit(trx, row('Lengkap dengan tas 😀'), first, [outboxItem('escrows.expire', { escrow_id: randomUUID() })]);
      expect(await stored(folded.id), 'held until the COMMIT').to.equal(undefined);
      await commitTransaction(trx);
      expect(folded).to.deep.equal(await stored(folded.id));

      const plain = await db.transaction((t) => insertWithEventAtCommit(t, row(''), first));
      expect(plain).to.deep.equal(await stored(plain.id));
      expect(await db('escrow_events').whereIn('escrow_id', [folded.id, plain.id]).count<{ count: number }[]>('* as count')).to.deep.equal([{ count: 2 }]);
    });

    describe('errors (no escrow is created)', () => {
      interface ErrCase {
        name: string;
        body: (me: string, other: string) => Record<string, unknown>;
        status: number;
        code: string;
      }
      const base = (other: string) => ({ role: 'buyer', counterparty_username: other, item_name: 'Barang', amount: 150_000 });
      const cases: ErrCase[] = [
        { name: 'amount below 10,000', body: (_m, o) => ({ ...base(o), amount: 9_999 }), status: 400, code: 'INVALID_AMOUNT' },
        { name: 'amount above 500,000,000', body: (_m, o) => ({ ...base(o), amount: 500_000_001 }), status: 400, code: 'INVALID_AMOUNT' },
        { name: 'fractional amount', body: (_m, o) => ({ ...base(o), amount: 10_000.5 }), status: 400, code: 'INVALID_AMOUNT' },
        { name: 'negative amount', body: (_m, o) => ({ ...base(o), amount: -150_000 }), status: 400, code: 'INVALID_AMOUNT' },
        { name: 'amount not a number', body: (_m, o) => ({ ...base(o), amount: '150rb' }), status: 400, code: 'INVALID_AMOUNT' },
        { name: 'unknown category', body: (_m, o) => ({ ...base(o), category: 'food' }), status: 422, code: 'INVALID_CATEGORY' },
        { name: 'item_name over 200 characters', body: (_m, o) => ({ ...base(o), item_name: 'x'.repeat(201) }), status: 422, code: 'INVALID_ITEM' },
        { name: 'unknown counterparty', body: () => base('nobody_here_at_all'), status: 404, code: 'USER_NOT_FOUND' },
        { name: 'own username (as buyer)', body: (m) => base(m), status: 422, code: 'SELLER_IS_BUYER' },
        { name: 'own username (as seller)', body: (m) => ({ ...base(m), role: 'seller' }), status: 422, code: 'SELLER_IS_BUYER' },
        { name: 'role neither buyer nor seller', body: (_m, o) => ({ ...base(o), role: 'broker' }), status: 400, code: 'INVALID_BODY' },
        { name: 'item_name missing', body: (_m, o) => ({ role: 'buyer', counterparty_username: o, amount: 150_000 }), status: 400, code: 'INVALID_BODY' },
        { name: 'amount missing', body: (_m, o) => ({ role: 'buyer', counterparty_username: o, item_name: 'Barang' }), status: 400, code: 'INVALID_BODY' },
      ];
      for (const c of cases) {
        it(`${c.name} -> ${c.status} ${c.code}`, async () => {
          const me = (await createUser()).user;
          const other = (await createUser()).user;
          const res = await client.post('/api/escrows').set(bearer(await issueKey(me.id))).send(c.body(me.username, other.username));
          expect(res.status, JSON.stringify(res.body)).to.equal(c.status);
          expect(res.body.error.code).to.equal(c.code);
          expect(await countRows('escrows')).to.equal(0);
          expect(await countRows('outbox')).to.equal(0);
        });
      }

      for (const [name, options] of [
        ['an admin', { role: 'admin' as const }],
        ['a suspended user', { status: 'suspended' as const }],
        ['a closed account', { status: 'closed' as const }],
      ] as const) {
        it(`${name} as counterparty -> 404 USER_NOT_FOUND`, async () => {
          const me = (await createUser()).user;
          const other = (await createUser(options)).user;
          const res = await client.post('/api/escrows').set(bearer(await issueKey(me.id))).send(base(other.username));
          expect(res.status, JSON.stringify(res.body)).to.equal(404);
          expect(res.body.error.code).to.equal('USER_NOT_FOUND');
          expect(await countRows('escrows')).to.equal(0);
        });
      }

      it('no credentials -> 401 UNAUTHORIZED', async () => {
        const other = (await createUser()).user;
        const res = await client.post('/api/escrows').send(base(other.username));
        expect(res.status).to.equal(401);
        expect(res.body.error.code).to.equal('UNAUTHORIZED');
        expect(await countRows('escrows')).to.equal(0);
      });
    });
  });

  describe('GET /api/escrows (the caller list)', () => {
    // A is buyer of e1 (pending_payment) and e2 (paid), seller of e3 (pending_payment);
    // `foreign` is between two other users. Created one second apart, e1 oldest.
    async function setup() {
      const a = (await createUser()).user;
      const e1 = (await createEscrow({ buyer: a })).escrow;
      clock.advance(1000);
      const e2 = (await createEscrow({ buyer: a, status: 'paid' })).escrow;
      clock.advance(1000);
      const e3 = (await createEscrow({ seller: a })).escrow;
      clock.advance(1000);
      const foreign = (await createEscrow()).escrow;
      return { a, key: await issueKey(a.id), e1, e2, e3, foreign };
    }

    const ids = (body: { data: { id: string }[] }) => body.data.map((e) => e.id);

    it('lists only the caller escrows, newest first, with default pagination', async () => {
      const { key, e1, e2, e3, foreign } = await setup();
      const res = await client.get('/api/escrows').set(bearer(key));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(ids(res.body)).to.deep.equal([e3.id, e2.id, e1.id]);
      expect(ids(res.body)).to.not.include(foreign.id);
      expect(res.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 3, total_pages: 1 });
    });

    it('filters by status, by role, and by both', async () => {
      const { key, e1, e2, e3 } = await setup();
      const cases: [string, string[], number][] = [
        ['status=pending_payment', [e3.id, e1.id], 2],
        ['status=paid', [e2.id], 1],
        ['status=released', [], 0],
        ['role=buyer', [e2.id, e1.id], 2],
        ['role=seller', [e3.id], 1],
        ['role=buyer&status=paid', [e2.id], 1],
        ['role=seller&status=paid', [], 0],
      ];
      for (const [query, expected, total] of cases) {
        const res = await client.get(`/api/escrows?${query}`).set(bearer(key));
        expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(200);
        expect(ids(res.body), query).to.deep.equal(expected);
        expect(res.body.pagination.total, query).to.equal(total);
        expect(res.body.pagination.total_pages, query).to.equal(Math.ceil(total / 20));
      }
    });

    it('paginates with limit and page; total and total_pages count every match', async () => {
      const { key, e1, e2, e3 } = await setup();
      const pages: [string, string[], { page: number; limit: number; total: number; total_pages: number }][] = [
        ['limit=1&page=1', [e3.id], { page: 1, limit: 1, total: 3, total_pages: 3 }],
        ['limit=1&page=2', [e2.id], { page: 2, limit: 1, total: 3, total_pages: 3 }],
        ['limit=1&page=3', [e1.id], { page: 3, limit: 1, total: 3, total_pages: 3 }],
        ['limit=1&page=4', [], { page: 4, limit: 1, total: 3, total_pages: 3 }],
        ['limit=2&page=1', [e3.id, e2.id], { page: 1, limit: 2, total: 3, total_pages: 2 }],
        ['limit=2&page=2', [e1.id], { page: 2, limit: 2, total: 3, total_pages: 2 }],
        ['limit=50', [e3.id, e2.id, e1.id], { page: 1, limit: 50, total: 3, total_pages: 1 }],
      ];
      for (const [query, expected, pagination] of pages) {
        const res = await client.get(`/api/escrows?${query}`).set(bearer(key));
        expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(200);
        expect(ids(res.body), query).to.deep.equal(expected);
        expect(res.body.pagination, query).to.deep.equal(pagination);
      }
    });

    for (const query of ['limit=51', 'limit=0', 'limit=-1', 'limit=abc', 'page=0', 'status=shipped', 'role=admin']) {
      it(`${query} -> 400 INVALID_QUERY`, async () => {
        const { key } = await setup();
        const res = await client.get(`/api/escrows?${query}`).set(bearer(key));
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_QUERY');
      });
    }

    it('a user with no escrows gets an empty list', async () => {
      await setup();
      const lonely = (await createUser()).user;
      const res = await client.get('/api/escrows').set(bearer(await issueKey(lonely.id)));
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal([]);
      expect(res.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 0, total_pages: 0 });
    });

    it('no credentials -> 401 UNAUTHORIZED', async () => {
      const res = await client.get('/api/escrows');
      expect(res.status).to.equal(401);
      expect(res.body.error.code).to.equal('UNAUTHORIZED');
    });
  });

  describe('GET /api/escrows/:id', () => {
    it('the buyer, the seller and an admin read the escrow', async () => {
      const { escrow, buyer, seller } = await createEscrow({ status: 'paid', amount: 321_000 });
      const admin = (await createUser({ role: 'admin' })).user;
      for (const [who, id] of [
        ['buyer', buyer.id],
        ['seller', seller.id],
        ['admin', admin.id],
      ] as const) {
        const res = await client.get(`/api/escrows/${escrow.id}`).set(bearer(await issueKey(id)));
        expect(res.status, `${who}: ${JSON.stringify(res.body)}`).to.equal(200);
        expect(res.body.data.id).to.equal(escrow.id);
        expect(res.body.data.buyer_id).to.equal(buyer.id);
        expect(res.body.data.seller_id).to.equal(seller.id);
        expect(res.body.data.amount).to.equal('321000');
        expect(res.body.data.status).to.equal('paid');
        expect(res.body.data.paid_at).to.be.a('string');
      }
    });

    const missing: [string, string][] = [
      ['an unknown uuid', randomUUID()],
      ['the nil uuid', '00000000-0000-0000-0000-000000000000'],
      ['a malformed id', 'not-an-escrow-id'],
      ['a numeric id', '12345'],
      ['a very long id', 'a'.repeat(100)],
    ];
    for (const [name, id] of missing) {
      it(`${name} -> 404 ESCROW_NOT_FOUND`, async () => {
        const me = (await createUser()).user;
        const res = await client.get(`/api/escrows/${id}`).set(bearer(await issueKey(me.id)));
        expect(res.status, JSON.stringify(res.body)).to.equal(404);
        expect(res.body.error.code).to.equal('ESCROW_NOT_FOUND');
      });
    }

    it('no credentials -> 401 UNAUTHORIZED', async () => {
      const { escrow } = await createEscrow();
      const res = await client.get(`/api/escrows/${escrow.id}`);
      expect(res.status).to.equal(401);
      expect(res.body.error.code).to.equal('UNAUTHORIZED');
      expect(JSON.stringify(res.body)).to.not.include(escrow.item_name);
    });
  });

  describe('GET /api/escrows/:id/preview (public)', () => {
    async function named() {
      const buyer = (await createUser({ fullName: 'Bambang Pembeli Rahasia' })).user;
      const seller = (await createUser({ fullName: 'Sari Penjual Terbuka' })).user;
      return createEscrow({ buyer, seller, amount: 187_500, item: 'Lensa kamera 50mm', category: 'goods' });
    }

    it('answers without credentials: exactly the preview fields, no buyer data', async () => {
      const { escrow, buyer, seller } = await named();
      const res = await client.get(`/api/escrows/${escrow.id}/preview`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers['access-control-allow-origin']).to.equal('*');
      const p = res.body.data;
      expect(Object.keys(p).sort()).to.deep.equal(['amount', 'category', 'created_at', 'description', 'expires_at', 'id', 'item_name', 'seller', 'status']);
      expect(Object.keys(p.seller).sort()).to.deep.equal(['display_name', 'id', 'kyc_verified']);
      expect(p.amount).to.equal(187_500);
      expect(Number.isInteger(p.amount)).to.equal(true);
      expect(p).to.deep.include({ id: escrow.id, item_name: 'Lensa kamera 50mm', description: '', category: 'goods', status: 'pending_payment' });
      expect(p.seller).to.deep.equal({ id: seller.id, display_name: 'Sari Penjual Terbuka', kyc_verified: false });
      expect(p.expires_at).to.equal(escrow.expires_at.toISOString());
      expect(p.created_at).to.equal(escrow.created_at.toISOString());
      const json = JSON.stringify(res.body);
      for (const secret of [buyer.id, buyer.email, buyer.username, buyer.full_name, 'buyer', seller.email]) {
        expect(json, `preview leaks ${secret}`).to.not.include(secret);
      }
    });

    it('shows the same fields (and no buyer data) to a signed-in buyer too', async () => {
      const { escrow, buyer } = await named();
      const res = await client.get(`/api/escrows/${escrow.id}/preview`).set(bearer(await issueKey(buyer.id)));
      expect(res.status).to.equal(200);
      expect(Object.keys(res.body.data).sort()).to.deep.equal(['amount', 'category', 'created_at', 'description', 'expires_at', 'id', 'item_name', 'seller', 'status']);
      expect(JSON.stringify(res.body)).to.not.include(buyer.id);
      expect(JSON.stringify(res.body)).to.not.include(buyer.email);
    });

    it('kyc_verified is true for a verified seller', async () => {
      const { escrow, seller } = await named();
      await db('users').where({ id: seller.id }).update({ kyc_status: 'verified' });
      const res = await client.get(`/api/escrows/${escrow.id}/preview`);
      expect(res.status).to.equal(200);
      expect(res.body.data.seller).to.deep.equal({ id: seller.id, display_name: 'Sari Penjual Terbuka', kyc_verified: true });
    });

    const missing: [string, string][] = [
      ['an unknown uuid', randomUUID()],
      ['the nil uuid', '00000000-0000-0000-0000-000000000000'],
      ['a malformed id', 'not-an-escrow-id'],
      ['a numeric id', '12345'],
      ['a very long id', 'a'.repeat(100)],
    ];
    for (const [name, id] of missing) {
      it(`${name} -> 404 NOT_FOUND`, async () => {
        await named();
        const res = await client.get(`/api/escrows/${id}/preview`);
        expect(res.status, JSON.stringify(res.body)).to.equal(404);
        expect(res.body.error.code).to.equal('NOT_FOUND');
        expect(res.body).to.not.have.property('data');
      });
    }

    it('410 EXPIRED after the payment window, before and after the expiry timer ran', async () => {
      const { escrow } = await named();
      clock.advance(24 * HOUR_MS - 1000);
      const open = await client.get(`/api/escrows/${escrow.id}/preview`);
      expect(open.status, JSON.stringify(open.body)).to.equal(200);
      clock.advance(2000); // 24h + 1s after creation
      const before = await client.get(`/api/escrows/${escrow.id}/preview`);
      expect(before.status, JSON.stringify(before.body)).to.equal(410);
      expect(before.body.error.code).to.equal('EXPIRED');
      expect(JSON.stringify(before.body)).to.not.include('Lensa kamera');
      const row = (await db('escrows').where({ id: escrow.id }).first()) as EscrowRow;
      expect(row.status).to.equal('pending_payment');
      const ran = await runJobs();
      expect(ran.filter((j) => j.error)).to.deep.equal([]);
      expect(ran.map((j) => j.name)).to.include('escrows.expire');
      const expired = (await db('escrows').where({ id: escrow.id }).first()) as EscrowRow;
      expect([expired.status, expired.cancel_reason]).to.deep.equal(['cancelled', 'expired']);
      const after = await client.get(`/api/escrows/${escrow.id}/preview`);
      expect(after.status, JSON.stringify(after.body)).to.equal(410);
      expect(after.body.error.code).to.equal('EXPIRED');
    });

    it('a cancelled (not expired) escrow previews with status cancelled', async () => {
      const { escrow } = await createEscrow({ status: 'cancelled' });
      const res = await client.get(`/api/escrows/${escrow.id}/preview`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.status).to.equal('cancelled');
    });

    it('a paid escrow past the payment window still previews (it did not expire)', async () => {
      const { escrow } = await createEscrow({ status: 'paid' });
      clock.advance(25 * HOUR_MS);
      const res = await client.get(`/api/escrows/${escrow.id}/preview`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.status).to.equal('paid');
    });
  });
});
