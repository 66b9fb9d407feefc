/**
 * Public users (consumer spec 4.7, "Public user"): listing rules, filters and sorts, the
 * profile, data that must never appear, CORS, caching and the per-IP limit.
 */
import { expect } from 'chai';
import { routers } from '../../../api/app.js';
import { isPublicAnswer } from '../../../api/kit.js';
import { api } from '../../helpers/app.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { publicSettings, searchPlan } from '../../../shared/public/service.js';
import { rate } from '../../../shared/ratings/service.js';
import { redis } from '../../../shared/redis.js';

type Listed = { username: string };
const names = (body: { data: { users: Listed[] } }) => body.data.users.map((u) => u.username);

describe('public users', () => {
  beforeEach(() => {
    publicSettings.cache = false;
  });
  after(() => {
    publicSettings.cache = true;
  });

  it('lists active user accounts with verifiable activity only, with the public fields only', async () => {
    clock.set(new Date('2026-11-01T00:00:00.000Z'));
    const verified = (await createUser({ username: 'pub_verified', fullName: 'Verified Person' })).user;
    const idleUnverified = (await createUser({ username: 'pub_idle', verified: false })).user;
    const tradingUnverified = (await createUser({ username: 'pub_trader', verified: false })).user;
    await createUser({ username: 'pub_admin', role: 'admin' });
    await createUser({ username: 'pub_suspended', status: 'suspended' });
    await createUser({ username: 'pub_closed', status: 'closed' });
    await createEscrow({ buyer: tradingUnverified, status: 'pending_payment' });
    await db('users').where({ id: verified.id }).update({ phone: '+628123456789', balance: 0 });

    const res = await api().get('/v1/public/users?limit=50');
    expect(res.status).to.equal(200);
    const listed = names(res.body);
    expect(listed).to.include.members(['pub_verified', 'pub_trader']);
    for (const hidden of ['pub_idle', 'pub_admin', 'pub_suspended', 'pub_closed']) expect(listed).not.to.include(hidden);
    expect(res.body.data).to.include({ page: 1, limit: 50, has_more: false });
    expect(res.body.data.total).to.equal(listed.length);
    const me = (res.body.data.users as Record<string, unknown>[]).find((u) => u.username === 'pub_verified')!;
    expect(Object.keys(me).sort()).to.deep.equal(['average_rating', 'full_name', 'is_verified', 'joined_at', 'rating_count', 'total_escrows_completed', 'username']);
    expect(me).to.include({ full_name: 'Verified Person', is_verified: true, joined_at: '2026-11-01T00:00:00.000Z', total_escrows_completed: 0, average_rating: null, rating_count: 0 });
    const json = JSON.stringify(res.body);
    for (const secret of [verified.id, verified.email, idleUnverified.email, '+628123456789', 'balance', 'email', 'phone', tradingUnverified.id]) {
      expect(json).not.to.contain(secret);
    }
    expect(res.headers['access-control-allow-origin']).to.equal('*');
    const maxAge = Number(/max-age=(\d+)/.exec(String(res.headers['cache-control']))?.[1]);
    expect(maxAge).to.be.within(1, 60);
    expect(names((await api().get('/api/public/users?limit=50')).body)).to.deep.equal(listed);
  });

  it('sorts top (completed escrows) and new/newest (latest first), filters verified and searches names', async () => {
    clock.set(new Date('2026-10-01T00:00:00.000Z'));
    const old = (await createUser({ username: 'alpha_old', fullName: 'Budi Santoso' })).user;
    clock.advance(86_400_000);
    const star = (await createUser({ username: 'bravo_star', fullName: 'Siti Aminah' })).user;
    clock.advance(86_400_000);
    const fresh = (await createUser({ username: 'charlie_new', fullName: 'Budiman', verified: false })).user;
    await createEscrow({ seller: star, buyer: fresh, status: 'released' });
    clock.advance(86_400_000);
    await createEscrow({ seller: star, buyer: old, status: 'released' });

    const top = await api().get('/v1/public/users');
    expect(names(top.body)[0]).to.equal('bravo_star');
    expect(top.body.data.users[0].total_escrows_completed).to.equal(2);
    expect(top.body.data.limit).to.equal(24);
    const created = (await api().get('/v1/public/users?sort=new')).body;
    const newest = (await api().get('/v1/public/users?sort=newest')).body;
    const fromParties = (b: { data: { users: Listed[] } }) => names(b).filter((n) => ['alpha_old', 'bravo_star', 'charlie_new'].includes(n));
    expect(fromParties(created)).to.deep.equal(['charlie_new', 'bravo_star', 'alpha_old']);
    expect(fromParties(newest)).to.deep.equal(fromParties(created));

    for (const v of ['1', 'true']) expect(names((await api().get(`/v1/public/users?verified=${v}&limit=50`)).body)).not.to.include('charlie_new');
    for (const v of ['0', 'false']) expect(names((await api().get(`/v1/public/users?verified=${v}&limit=50`)).body)).to.include('charlie_new');
    expect(names((await api().get('/v1/public/users?search=BUDI&limit=50')).body).sort()).to.deep.equal(['alpha_old', 'charlie_new']);
    expect(names((await api().get('/v1/public/users?search=_STAR')).body)).to.deep.equal(['bravo_star']);
    expect(names((await api().get('/v1/public/users?search=%25')).body)).to.deep.equal([]);
    const page2 = await api().get('/v1/public/users?limit=1&page=2&sort=new');
    expect(page2.body.data).to.include({ page: 2, limit: 1, has_more: true });
    expect(old.id).to.be.a('string');

    for (const bad of ['verified=yes', 'verified=2', 'page=0', 'page=10001', 'limit=0', 'limit=51', 'sort=best', `search=${'a'.repeat(33)}`]) {
      const res = await api().get(`/v1/public/users?${bad}`);
      expect(res.status, bad).to.equal(400);
      expect(res.body.error.code, bad).to.equal('INVALID_QUERY');
    }
    expect((await api().get('/v1/public/users?page=10000')).status).to.equal(200);
  });

  it('search reads the same pages whichever plan serves them (sort index walk or matches first), and matches within one field only', async () => {
    clock.set(new Date('2026-09-01T00:00:00.000Z'));
    const made = [];
    for (const [username, fullName] of [
      ['plan_budi', 'Budi Hartono'],
      ['plan_ayu', 'Ayu Budiarti'],
      ['plan_end', 'Start Name'],
      ['plan_line', 'Line\nBreak'],
      ['plan_rina', 'Rina Wulandari'],
      ['plan_dewi', 'DEWI Budianto'],
      ['plan_eko', 'Eko Prasetyo'],
    ] as const) {
      made.push((await createUser({ username, fullName })).user);
      clock.advance(60_000);
    }
    await createEscrow({ seller: made[1]!, buyer: made[4]!, status: 'released' });
    await createEscrow({ seller: made[1]!, buyer: made[0]!, status: 'released' });
    await createEscrow({ seller: made[5]!, buyer: made[6]!, status: 'released' });

    type Row = { user_id: string; username: string; full_name: string; is_verified: boolean; joined_at: Date; completed_count: number; ratings_received: number };
    const all = await db('public_profiles').where({ listed: true }).select<Row[]>('user_id', 'username', 'full_name', 'is_verified', 'joined_at', 'completed_count', 'ratings_received');
    const expected = (term: string, sort: 'top' | 'new', verified: boolean) =>
      all
        .filter((r) => (r.username.includes(term) || r.full_name.toLowerCase().includes(term)) && (!verified || r.is_verified))
        .sort((a, b) =>
          sort === 'top'
            ? b.completed_count - a.completed_count || b.ratings_received - a.ratings_received || a.joined_at.getTime() - b.joined_at.getTime() || (a.user_id < b.user_id ? -1 : 1)
            : b.joined_at.getTime() - a.joined_at.getTime() || (a.user_id < b.user_id ? 1 : -1),
        )
        .map((r) => r.username);

    const terms = ['budi', 'BuDi', 'ud', 'a', 'plan_', 'i b', 'end\nstart', 'e\nb', 'zzq', '_'];
    try {
      for (const walkFactor of [0, 1e12]) {
        publicSettings.walkFactor = walkFactor;
        for (const term of terms) {
          await redis.flushdb(); // under the 100-a-minute limit per IP, which this test is not about
          for (const sort of ['top', 'new'] as const) {
            for (const verified of [false, true]) {
              const want = expected(term.toLowerCase(), sort, verified);
              const got: string[] = [];
              for (let page = 1; page <= Math.max(1, Math.ceil(want.length / 3)) + 1; page += 1) {
                const res = await api().get('/v1/public/users').query({ search: term, sort, page, limit: 3, ...(verified ? { verified: '1' } : {}) });
                expect(res.status).to.equal(200);
                expect(res.body.data.total, `${term} ${sort} plan factor ${walkFactor}`).to.equal(want.length);
                got.push(...names(res.body));
              }
              expect(got, `${JSON.stringify(term)} ${sort} verified=${verified} plan factor ${walkFactor}`).to.deep.equal(want);
            }
          }
        }
      }
    } finally {
      publicSettings.walkFactor = 4;
    }
    // One field at a time: a term never matches across the end of the username and the start of the name.
    expect(expected('end\nstart', 'top', false)).to.deep.equal([]);
    expect(expected('e\nb', 'top', false)).to.deep.equal(['plan_line']);
    expect(expected('budi', 'top', false)).to.include.members(['plan_budi', 'plan_ayu', 'plan_dewi']);
  });

  it('searchPlan walks the sort index for common terms and reads the matches first for rare ones or deep pages', () => {
    expect(searchPlan(0, 24, 20_000, 100_000)).to.equal('walk');
    expect(searchPlan(0, 24, 100, 100_000)).to.equal('matches');
    expect(searchPlan(0, 24, 0, 100_000)).to.equal('matches');
    expect(searchPlan(4_776, 24, 2_000, 100_000)).to.equal('matches');
    expect(searchPlan(0, 24, 40, -1)).to.equal('walk'); // never-analysed table: the matches stand in for the profiles
  });

  it('profile: the public fields, socials and recent published ratings; 404 USER_NOT_FOUND for staff, suspended, unknown or malformed', async () => {
    const seller = (await createUser({ username: 'prof_seller' })).user;
    const buyer = (await createUser({ username: 'prof_buyer' })).user;
    await db('users').where({ id: seller.id }).update({ social_instagram: 'toko.ig' });
    const { escrow } = await createEscrow({ seller, buyer, status: 'released' });
    await rate({ userId: buyer.id, role: 'user' }, escrow.id, { stars: 4, review: 'Mantap' });
    await rate({ userId: seller.id, role: 'user' }, escrow.id, { stars: 5, review: 'Pembeli baik' });
    const res = await api().get('/v1/public/users/PROF_SELLER');
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ username: 'prof_seller', total_escrows_completed: 1, average_rating: 4, rating_count: 1, social_instagram: 'toko.ig', social_shopee: null });
    expect(res.body.data.recent_ratings).to.have.length(1);
    expect(res.body.data.recent_ratings[0]).to.include({ stars: 4, rater_username: 'prof_buyer' });
    const json = JSON.stringify(res.body);
    for (const secret of [seller.id, buyer.id, seller.email, buyer.email, escrow.id]) expect(json).not.to.contain(secret);
    expect((await api().get('/api/public/users/prof_seller')).body.data.username).to.equal('prof_seller');

    await createUser({ username: 'prof_admin', role: 'admin' });
    await createUser({ username: 'prof_susp', status: 'suspended' });
    for (const u of ['prof_admin', 'prof_susp', 'nobody_here', 'bad-name!', 'x'.repeat(33)]) {
      const r = await api().get(`/v1/public/users/${encodeURIComponent(u)}`);
      expect(r.status, u).to.equal(404);
      expect(r.body.error.code, u).to.equal('USER_NOT_FOUND');
    }
  });

  it('caches answers in Redis up to 60 seconds, and limits each IP to 100 requests a minute', async () => {
    publicSettings.cache = true;
    await createUser({ username: 'cache_first' });
    const first = await api().get('/v1/public/users?sort=new');
    await createUser({ username: 'cache_second' });
    const again = await api().get('/v1/public/users?sort=new');
    expect(names(again.body)).to.deep.equal(names(first.body)); // served from the cache
    expect(names(again.body)).not.to.include('cache_second');
    expect(names((await api().get('/v1/public/users?sort=new&limit=23')).body)).to.include('cache_second'); // another query
    let last = 0;
    for (let i = 4; i <= 100; i += 1) last = (await api().get('/v1/public/auth-config')).status; // requests 4 to 100
    expect(last).to.equal(200);
    const limited = await api().get('/v1/public/users');
    expect(limited.status).to.equal(429);
    expect(limited.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).to.be.within(1, 60);
  });

  it('a cached answer may be kept by the client only for what is left of its 60 s; a cache-buster is ignored', async () => {
    publicSettings.cache = true;
    await createUser({ username: 'age_first' });
    const fresh = await api().get('/v1/public/users?sort=new&limit=7');
    expect(fresh.headers['cache-control']).to.equal('public, max-age=60');
    const [key] = await redis.keys('*:public:users:new:0:1:7:');
    expect(key, 'the answer is in the cache').to.be.a('string');
    await redis.expire(key!, 17); // as if 43 s had gone by
    const hit = await api().get('/v1/public/users?sort=new&limit=7&_=1795470917');
    expect(hit.status).to.equal(200);
    expect(hit.headers['cache-control']).to.equal('public, max-age=17');
    expect(hit.body).to.deep.equal(fresh.body);
  });

  it('answers the CORS preflight of every public path: any origin, GET, the headers asked for', async () => {
    await createUser({ username: 'preflight_user' });
    for (const path of [
      '/v1/public/auth-config',
      '/v1/public/users',
      '/v1/public/users/preflight_user',
      '/v1/public/users/preflight_user/ratings',
      '/api/public/users',
      '/api/public/users/preflight_user',
      '/api/public/users/preflight_user/ratings',
      '/api/escrows/00000000-0000-4000-8000-000000000000/preview',
      '/api/gateways/available-methods',
    ]) {
      const res = await api()
        .options(path)
        .set('Origin', 'https://toko.example')
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'x-service-lang, x-request-id');
      expect(res.status, path).to.equal(204);
      expect(res.headers['access-control-allow-origin'], path).to.equal('*');
      expect(res.headers['access-control-allow-methods'], path).to.contain('GET');
      expect(res.headers['access-control-allow-headers'], path).to.equal('x-service-lang, x-request-id');
      expect(res.headers['access-control-allow-credentials'], path).to.equal(undefined);
    }
  });

  it('every GET route that answers any origin is a publicGet route with its OPTIONS preflight', () => {
    const options = new Set<string>();
    const publicPaths: string[] = [];
    const corsWithoutKit: string[] = [];
    for (const router of routers) {
      for (const layer of router.stack) {
        if (layer.methods.includes('OPTIONS')) options.add(String(layer.path));
        if (layer.methods.includes('GET') && layer.stack.some(isPublicAnswer)) publicPaths.push(String(layer.path));
        if (layer.methods.includes('GET') && !layer.stack.some(isPublicAnswer) && layer.stack.some((fn) => fn.toString().includes('Access-Control-Allow-Origin'))) {
          corsWithoutKit.push(String(layer.path));
        }
      }
    }
    expect(publicPaths).to.include.members(['/api/escrows/:id/preview', '/api/gateways/available-methods', '/v1/public/users/:username']);
    expect(publicPaths.filter((p) => !options.has(p))).to.deep.equal([]);
    expect(corsWithoutKit).to.deep.equal([]);
  });
});
