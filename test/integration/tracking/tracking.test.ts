/**
 * Escrow tracking (consumer spec 4.2, "Tracking", 8): the parties' view, the courier list,
 * the worker's fetch, the forced refresh and its limit, and an upstream that is up, down,
 * slow or answering garbage (never an error to the user). The upstream is a fake on loopback.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { FakeCourier } from '../../helpers/fake-courier.js';
import { runJobs } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser } from '../../factories/users.js';
import * as escrows from '../../../shared/escrows/service.js';
import { trackingSettings } from '../../../shared/tracking/settings.js';

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

async function shipped(courier = 'jne', number = 'JNE0012345') {
  const made = await createEscrow({ status: 'paid' });
  await escrows.send(undefined, { userId: made.seller.id, role: 'user' }, made.escrow.id, { courier, tracking_number: number });
  return { ...made, buyerKey: await issueKey(made.buyer.id), sellerKey: await issueKey(made.seller.id) };
}

describe('escrow tracking', () => {
  const upstream = new FakeCourier();
  before(() => upstream.start());
  after(() => upstream.stop());
  beforeEach(() => {
    upstream.mode = 'up';
    upstream.requests.length = 0;
  });

  it('parties see the tracking and the courier list; the worker fetches the snapshot, events newest first', async () => {
    const { escrow, buyerKey, sellerKey } = await shipped('idexpress', 'IDX-77');
    const first = await api().get(`/api/escrows/${escrow.id}/tracking`).set(bearer(buyerKey));
    expect(first.status).to.equal(200);
    expect(first.body.data.tracking).to.deep.equal({ courier: 'idexpress', courier_name: 'ID Express', number: 'IDX-77', track_url: 'https://idexpress.com/tracking?awb=IDX-77' });
    expect(first.body.data.snapshot).to.equal(null);
    expect(first.body.data.couriers).to.deep.include({ slug: 'jne', name: 'JNE' });
    expect(upstream.requests).to.have.length(0); // GET never waits on the upstream

    await runJobs();
    expect(upstream.requests).to.have.length(1);
    expect(upstream.requests[0]!.searchParams.get('courier')).to.equal('ide');
    expect(upstream.requests[0]!.searchParams.get('awb')).to.equal('IDX-77');
    const res = await api().get(`/api/escrows/${escrow.id}/tracking`).set(bearer(sellerKey));
    const snap = res.body.data.snapshot as { events: { date: string; description: string }[]; checkedAt: string };
    expect(snap).to.include({ found: true, courier: 'idexpress', awb: 'IDX-77', status: 'DELIVERED', recipient: 'BUDI' });
    expect(snap.events.map((e) => e.date)).to.deep.equal(['2026-11-22 10:15:00', '2026-11-21 14:30:00', '2026-11-20 09:00:00']);
    expect(snap.events[2]!.description).to.equal('Paket diterima di gudang <Jakarta>');
    expect(snap.checkedAt).to.match(/^\d{4}-\d\d-\d\dT/);
    // Cached: more reads do not call the upstream again.
    await api().get(`/api/escrows/${escrow.id}/tracking`).set(bearer(buyerKey));
    await runJobs();
    expect(upstream.requests).to.have.length(1);
  });

  it('shipping with a number queues the first fetch, so the first look finds the snapshot; one fetch per cache period', async () => {
    const { escrow, buyerKey } = await shipped('jnt', 'JT-555');
    await runJobs();
    expect(upstream.requests).to.have.length(1);
    const res = await api().get(`/api/escrows/${escrow.id}/tracking`).set(bearer(buyerKey));
    expect(res.body.data.snapshot).to.include({ found: true, courier: 'jnt', awb: 'JT-555' });
    await runJobs();
    expect(upstream.requests).to.have.length(1);
  });

  it('with no upstream configured, the look answers found false at once', async () => {
    const { escrow, buyerKey } = await shipped('sicepat', 'SC-1');
    const saved = trackingSettings.apiKey;
    trackingSettings.apiKey = '';
    try {
      const res = await api().get(`/api/escrows/${escrow.id}/tracking`).set(bearer(buyerKey));
      expect(res.status).to.equal(200);
      expect(res.body.data.snapshot).to.include({ found: false, courier: 'sicepat', awb: 'SC-1', status: null, recipient: null });
      expect(res.body.data.snapshot.events).to.deep.equal([]);
      expect(upstream.requests).to.have.length(0);
    } finally {
      trackingSettings.apiKey = saved;
    }
  });

  it('refresh checks the upstream at once, once per escrow per 5 minutes; NO_TRACKING without a number', async () => {
    const { escrow, buyerKey, sellerKey } = await shipped();
    const res = await api().post(`/api/escrows/${escrow.id}/tracking/refresh`).set(bearer(buyerKey));
    expect(res.status).to.equal(200);
    expect(res.body.data.snapshot).to.include({ found: true, awb: 'JNE0012345' });
    expect(upstream.requests).to.have.length(1);
    const again = await api().post(`/api/escrows/${escrow.id}/tracking/refresh`).set(bearer(sellerKey));
    expect(again.status).to.equal(429);
    expect(again.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(again.headers['retry-after'])).to.be.within(1, 300);
    expect(upstream.requests).to.have.length(1);

    const { escrow: bare, buyer } = await createEscrow({ status: 'paid' });
    const bareKey = await issueKey(buyer.id);
    const none = await api().post(`/api/escrows/${bare.id}/tracking/refresh`).set(bearer(bareKey));
    expect(none.status).to.equal(400);
    expect(none.body.error.code).to.equal('NO_TRACKING');
    const view = await api().get(`/api/escrows/${bare.id}/tracking`).set(bearer(bareKey));
    expect(view.body.data).to.include({ tracking: null, snapshot: null });
  });

  for (const mode of ['down', 'slow', 'garbage', 'not-found'] as const) {
    it(`an upstream that is ${mode} gives snapshot.found false, never an error`, async () => {
      upstream.mode = mode;
      const { escrow, buyerKey } = await shipped();
      const started = Date.now();
      const res = await api().post(`/api/escrows/${escrow.id}/tracking/refresh`).set(bearer(buyerKey));
      expect(res.status).to.equal(200);
      expect(res.body.data.snapshot).to.include({ found: false, courier: 'jne', awb: 'JNE0012345', status: null, recipient: null });
      expect(res.body.data.snapshot.events).to.deep.equal([]);
      expect(Date.now() - started).to.be.lessThan(1500);
    });
  }

  it('strangers get 403, unknown escrows 404, no credentials 401; staff may read', async () => {
    const { escrow } = await shipped();
    const { user: stranger } = await createUser();
    const { user: admin } = await createUser({ role: 'admin' });
    const key = await issueKey(stranger.id);
    for (const [method, path] of [['get', `/api/escrows/${escrow.id}/tracking`], ['post', `/api/escrows/${escrow.id}/tracking/refresh`]] as const) {
      const res = await api()[method](path).set(bearer(key));
      expect(res.status, path).to.equal(403);
      expect(res.body.error.code).to.equal('FORBIDDEN');
      expect((await api()[method](path)).status).to.equal(401);
    }
    expect(upstream.requests).to.have.length(0);
    const unknown = await api().get('/api/escrows/6f1d2c3b-4a5e-4f60-8a7b-9c8d7e6f5a4b/tracking').set(bearer(key));
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error.code).to.equal('NOT_FOUND');
    expect((await api().get(`/api/escrows/${escrow.id}/tracking`).set(bearer(await issueKey(admin.id)))).status).to.equal(200);
  });
});
