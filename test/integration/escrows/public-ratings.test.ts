import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { rate, PUBLISH_AFTER_MS } from '../../../shared/ratings/service.js';

describe('escrows: public ratings (GET /v1/public/users/:username/ratings)', () => {
  it('lists only published ratings, newest first, with the spec item shape, under /v1 and /api', async () => {
    const seller = (await createUser()).user;
    const first = await createEscrow({ seller, status: 'released' });
    const second = await createEscrow({ seller, status: 'released' });
    // first: both sides rate -> published at once; second: only the buyer -> published after 3 days.
    await rate({ userId: first.buyer.id, role: 'user' }, first.escrow.id, { stars: 5, review: 'Mantap' });
    await rate({ userId: seller.id, role: 'user' }, first.escrow.id, { stars: 4 });
    clock.advance(60_000);
    await rate({ userId: second.buyer.id, role: 'user' }, second.escrow.id, { stars: 2, review: '<b>lambat</b>' });

    const client = api();
    const res = await client.get(`/v1/public/users/${seller.username.toUpperCase()}/ratings`);
    expect(res.status).to.equal(200);
    expect(res.headers['access-control-allow-origin']).to.equal('*');
    expect(res.body.data).to.deep.include({ page: 1, limit: 20, total: 1 });
    expect(res.body.data.items).to.have.length(1);
    expect(res.body.data.items[0]).to.have.all.keys('stars', 'review', 'created_at', 'rater_username', 'rater_is_verified', 'ratee_role');
    expect(res.body.data.items[0]).to.deep.include({ stars: 5, review: 'Mantap', rater_username: first.buyer.username, rater_is_verified: true, ratee_role: 'seller' });

    clock.advance(PUBLISH_AFTER_MS);
    const later = await client.get(`/api/public/users/${seller.username}/ratings?limit=1`);
    expect(later.status).to.equal(200);
    expect(later.body.data.total).to.equal(2);
    expect((later.body.data.items as { stars: number }[]).map((i) => i.stars)).to.deep.equal([2]);
    const page2 = await client.get(`/api/public/users/${seller.username}/ratings?limit=1&page=2`);
    expect((page2.body.data.items as { stars: number }[]).map((i) => i.stars)).to.deep.equal([5]);
  });

  it('orders by the time the rating was given, not the time it was published', async () => {
    const seller = (await createUser()).user;
    const early = await createEscrow({ seller, status: 'released' });
    const late = await createEscrow({ seller, status: 'released' });
    await rate({ userId: early.buyer.id, role: 'user' }, early.escrow.id, { stars: 3 }); // published after 3 days
    clock.advance(60_000);
    await rate({ userId: late.buyer.id, role: 'user' }, late.escrow.id, { stars: 5 });
    await rate({ userId: seller.id, role: 'user' }, late.escrow.id, { stars: 4 }); // both sides: published now
    clock.advance(PUBLISH_AFTER_MS);
    const res = await api().get(`/v1/public/users/${seller.username}/ratings?cache_buster=1`);
    expect(res.status).to.equal(200); // an unknown query parameter is ignored on public routes
    const items = res.body.data.items as { stars: number; created_at: string }[];
    expect(items.map((i) => i.stars)).to.deep.equal([5, 3]);
    expect(items[0]!.created_at > items[1]!.created_at).to.equal(true);
  });

  it('answers 404 USER_NOT_FOUND for unknown, malformed, admin and suspended users, 400 INVALID_QUERY for bad paging', async () => {
    const client = api();
    const admin = (await createUser({ role: 'admin' })).user;
    const suspended = (await createUser({ status: 'suspended' })).user;
    for (const name of ['nobody_here', 'bad name!', 'a'.repeat(33), admin.username, suspended.username]) {
      const res = await client.get(`/v1/public/users/${encodeURIComponent(name)}/ratings`);
      expect(res.status, name).to.equal(404);
      expect(res.body.error.code, name).to.equal('USER_NOT_FOUND');
    }
    const user = (await createUser()).user;
    for (const q of ['page=0', 'page=10001', 'limit=0', 'limit=51', 'page=x']) {
      const res = await client.get(`/v1/public/users/${user.username}/ratings?${q}`);
      expect(res.status, q).to.equal(400);
      expect(res.body.error.code, q).to.equal('INVALID_QUERY');
    }
    const ok = await client.get(`/v1/public/users/${user.username}/ratings?page=10000&limit=50`);
    expect(ok.status).to.equal(200);
    expect(ok.body.data).to.deep.equal({ page: 10000, limit: 50, total: 0, items: [] });
  });
});
