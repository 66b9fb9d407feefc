/**
 * Ratings after release (issue 6; consumer spec 4.7 "published once both sides have rated
 * or after 3 days"; section 8: ratings take no Idempotency-Key).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { createUser } from '../../factories/users.js';
import { createEscrow } from '../../factories/escrows.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import type { EscrowStatus } from '../../../shared/escrows/states.js';
import type { UserRow } from '../../../shared/users/repo.js';

type Client = ReturnType<typeof api>;

const T0 = new Date('2026-12-01T03:00:00.000Z');
const DAY = 24 * 3600_000;

function expectError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
}

function auth(key: string): [string, string] {
  return ['Authorization', `Bearer ${key}`];
}

async function countRows(table: string, where: Record<string, unknown> = {}): Promise<number> {
  const row = (await db(table).where(where).count<{ count: string }[]>('* as count'))[0];
  return Number(row?.count ?? 0);
}

interface Deal {
  escrowId: string;
  buyer: UserRow;
  seller: UserRow;
  buyerKey: string;
  sellerKey: string;
}

async function deal(status: EscrowStatus = 'released'): Promise<Deal> {
  const made = await createEscrow({ status, amount: 150_000 });
  return {
    escrowId: made.escrow.id,
    buyer: made.buyer,
    seller: made.seller,
    buyerKey: await issueKey(made.buyer.id),
    sellerKey: await issueKey(made.seller.id),
  };
}

describe('ratings after release', () => {
  let client: Client;

  before(() => {
    client = api();
  });

  beforeEach(() => {
    clock.set(T0);
  });

  function rate(key: string, escrowId: string, payload: object, idempotencyKey?: string): Promise<Response> {
    const req = client.post(`/api/escrows/${escrowId}/rating`).set(...auth(key));
    if (idempotencyKey) void req.set('Idempotency-Key', idempotencyKey);
    return req.send(payload);
  }

  interface Visible {
    rater_id: string;
    published: boolean;
    published_at: string | null;
    stars: number;
  }

  async function visible(key: string, escrowId: string): Promise<Visible[]> {
    const res = await client.get(`/api/escrows/${escrowId}/ratings`).set(...auth(key));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.success).to.equal(true);
    return res.body.data as Visible[];
  }

  it('each party rates the other once: 201 with the right ratee and ratee_role', async () => {
    const d = await deal();
    const byBuyer = await rate(d.buyerKey, d.escrowId, { stars: 5, review: 'Penjual ramah, barang sesuai' });
    expect(byBuyer.status, JSON.stringify(byBuyer.body)).to.equal(201);
    expect(byBuyer.body.success).to.equal(true);
    expect(byBuyer.body.data).to.deep.include({
      escrow_id: d.escrowId,
      rater_id: d.buyer.id,
      ratee_id: d.seller.id,
      ratee_role: 'seller',
      stars: 5,
      review: 'Penjual ramah, barang sesuai',
      published: false,
      published_at: null,
      created_at: T0.toISOString(),
    });
    clock.advance(3600_000);
    const bySeller = await rate(d.sellerKey, d.escrowId, { stars: 4 });
    expect(bySeller.status, JSON.stringify(bySeller.body)).to.equal(201);
    expect(bySeller.body.data).to.deep.include({
      rater_id: d.seller.id,
      ratee_id: d.buyer.id,
      ratee_role: 'buyer',
      stars: 4,
      review: null,
      published: true,
    });
    const rows = await db('ratings').where({ escrow_id: d.escrowId }).orderBy('created_at').select<object[]>('rater_id', 'ratee_id', 'ratee_role', 'stars');
    expect(rows).to.deep.equal([
      { rater_id: d.buyer.id, ratee_id: d.seller.id, ratee_role: 'seller', stars: 5 },
      { rater_id: d.seller.id, ratee_id: d.buyer.id, ratee_role: 'buyer', stars: 4 },
    ]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a second rating by the same party answers 409 ALREADY_RATED and changes nothing', async () => {
    const d = await deal();
    expect((await rate(d.buyerKey, d.escrowId, { stars: 2, review: 'lambat' })).status).to.equal(201);
    const again = await rate(d.buyerKey, d.escrowId, { stars: 5, review: 'ternyata bagus' });
    expectError(again, 409, 'ALREADY_RATED');
    const rows = await db('ratings').where({ escrow_id: d.escrowId }).select<object[]>('stars', 'review');
    expect(rows).to.deep.equal([{ stars: 2, review: 'lambat' }]);
    // The seller's own first rating is still accepted, then refused the second time.
    expect((await rate(d.sellerKey, d.escrowId, { stars: 3 })).status).to.equal(201);
    expectError(await rate(d.sellerKey, d.escrowId, { stars: 3 }), 409, 'ALREADY_RATED');
    expect(await countRows('ratings', { escrow_id: d.escrowId })).to.equal(2);
  });

  it('ignores Idempotency-Key (spec section 8): a retry with the same key answers 409 ALREADY_RATED', async () => {
    const d = await deal();
    const key = randomUUID();
    const first = await rate(d.buyerKey, d.escrowId, { stars: 5 }, key);
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    expect(first.headers['idempotent-replay']).to.equal(undefined);
    const retry = await rate(d.buyerKey, d.escrowId, { stars: 5 }, key);
    expectError(retry, 409, 'ALREADY_RATED');
    expect(retry.headers['idempotent-replay']).to.equal(undefined);
    expect(await countRows('ratings')).to.equal(1);
    expect(await countRows('idempotency_keys')).to.equal(0);
  });

  for (const status of ['pending_payment', 'paid', 'sent', 'received', 'disputed', 'refunded', 'cancelled'] as const) {
    it(`refuses a rating on a ${status} escrow: 409 INVALID_STATE`, async () => {
      const d = await deal(status);
      for (const key of [d.buyerKey, d.sellerKey]) {
        const res = await rate(key, d.escrowId, { stars: 5 });
        expectError(res, 409, 'INVALID_STATE');
        expect(res.body.error.status).to.equal(status);
      }
      expect(await countRows('ratings')).to.equal(0);
    });
  }

  it('validates stars (whole 1 to 5) and review (at most 1000 characters): 400 INVALID_BODY', async () => {
    const d = await deal();
    const bad: { payload: object; field: string }[] = [
      { payload: { stars: 0 }, field: 'stars' },
      { payload: { stars: 6 }, field: 'stars' },
      { payload: { stars: 2.5 }, field: 'stars' },
      { payload: { stars: -1 }, field: 'stars' },
      { payload: { stars: 'lima' }, field: 'stars' },
      { payload: {}, field: 'stars' },
      { payload: { stars: 4, review: 'r'.repeat(1001) }, field: 'review' },
    ];
    for (const c of bad) {
      const res = await rate(d.buyerKey, d.escrowId, c.payload);
      expectError(res, 400, 'INVALID_BODY');
      expect(res.body.error.details.fieldErrors, JSON.stringify(c.payload).slice(0, 60)).to.have.property(c.field);
    }
    expect(await countRows('ratings')).to.equal(0);
    const longest = 'r'.repeat(1000);
    const ok = await rate(d.buyerKey, d.escrowId, { stars: 1, review: longest });
    expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).to.equal(201);
    expect(ok.body.data).to.deep.include({ stars: 1, review: longest });
  });

  it('a stranger (and an admin) cannot rate: 403 FORBIDDEN; an unknown escrow is 404 ESCROW_NOT_FOUND', async () => {
    const d = await deal();
    const stranger = (await createUser()).user;
    const admin = (await createUser({ role: 'admin' })).user;
    for (const user of [stranger, admin]) {
      expectError(await rate(await issueKey(user.id), d.escrowId, { stars: 1 }), 403, 'FORBIDDEN');
    }
    expectError(await rate(d.buyerKey, randomUUID(), { stars: 5 }), 404, 'ESCROW_NOT_FOUND');
    expectError(await client.post(`/api/escrows/${d.escrowId}/rating`).send({ stars: 5 }), 401, 'UNAUTHORIZED');
    expect(await countRows('ratings')).to.equal(0);
  });

  it('the first rating stays hidden from the other party until that party rates; then both are published', async () => {
    const d = await deal();
    expect((await rate(d.buyerKey, d.escrowId, { stars: 5, review: 'mantap' })).status).to.equal(201);
    // The rater sees their own (unpublished) rating; the other side sees nothing yet.
    const own = await visible(d.buyerKey, d.escrowId);
    expect(own.map((r) => [r.rater_id, r.published, r.published_at])).to.deep.equal([[d.buyer.id, false, null]]);
    expect(await visible(d.sellerKey, d.escrowId)).to.deep.equal([]);
    // Still hidden a moment before the three days are up.
    clock.advance(2 * DAY);
    expect(await visible(d.sellerKey, d.escrowId)).to.deep.equal([]);

    expect((await rate(d.sellerKey, d.escrowId, { stars: 4 })).status).to.equal(201);
    const at = clock.now().toISOString();
    for (const key of [d.buyerKey, d.sellerKey]) {
      const list = await visible(key, d.escrowId);
      expect(list.map((r) => [r.rater_id, r.stars, r.published, r.published_at])).to.deep.equal([
        [d.buyer.id, 5, true, at],
        [d.seller.id, 4, true, at],
      ]);
    }
  });

  it('a rating the other party never answers is published 3 days after it was given', async () => {
    const d = await deal();
    expect((await rate(d.sellerKey, d.escrowId, { stars: 3, review: 'pembayaran cepat' })).status).to.equal(201);
    clock.advance(3 * DAY - 1000);
    expect(await visible(d.buyerKey, d.escrowId)).to.deep.equal([]);
    clock.advance(1000);
    const list = await visible(d.buyerKey, d.escrowId);
    expect(list).to.have.length(1);
    expect(list[0]).to.deep.include({
      rater_id: d.seller.id,
      ratee_id: d.buyer.id,
      ratee_role: 'buyer',
      stars: 3,
      review: 'pembayaran cepat',
      published: true,
      published_at: new Date(T0.getTime() + 3 * DAY).toISOString(),
    });
    // The buyer can still answer after publication; both stay published.
    expect((await rate(d.buyerKey, d.escrowId, { stars: 5 })).status).to.equal(201);
    const both = await visible(d.sellerKey, d.escrowId);
    expect(both.map((r) => [r.rater_id, r.published])).to.deep.equal([
      [d.seller.id, true],
      [d.buyer.id, true],
    ]);
    expect(both[0]!.published_at).to.equal(new Date(T0.getTime() + 3 * DAY).toISOString());
  });

  it('GET ratings: a stranger gets 403 FORBIDDEN; an unknown escrow 404 ESCROW_NOT_FOUND', async () => {
    const d = await deal();
    expect((await rate(d.buyerKey, d.escrowId, { stars: 5, review: 'rahasia dulu' })).status).to.equal(201);
    const stranger = await issueKey((await createUser()).user.id);
    const denied = await client.get(`/api/escrows/${d.escrowId}/ratings`).set(...auth(stranger));
    expectError(denied, 403, 'FORBIDDEN');
    expect(JSON.stringify(denied.body)).not.to.include('rahasia');
    expectError(await client.get(`/api/escrows/${randomUUID()}/ratings`).set(...auth(d.buyerKey)), 404, 'ESCROW_NOT_FOUND');
  });
});
