/**
 * A verified counterparty whose name or country changes is no longer verified (issue 42
 * point 5; decision 0019 "Issue 42: authority when money moves"): PATCH
 * /v1/enterprise/counterparties/:id sends it back to kyb_status `pending` with the event
 * counterparty.unverified, and a live deal's activation then waits in terms_review until
 * staff verify it again (D7, D10). Other fields, or the same name sent again, keep it verified.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { activateVia, createDealVia, dealBody, dealWorld, feedRows, staffHeaders, type DealWorld } from '../../factories/deals.js';
import { makeLive } from '../../factories/releases.js';
import { db } from '../../../shared/db.js';

describe('issue 42: a verified counterparty renamed or moved is no longer verified', () => {
  const client = api();
  const patch = (w: DealWorld, body: Record<string, unknown>) => client.patch(`/v1/enterprise/counterparties/${w.cpId}`).set(w.h.operator).send(body);
  const status = async (id: string) => (await db('counterparties').where({ id }).first<{ kyb_status: string }>('kyb_status')).kyb_status;
  const events = async (w: DealWorld) => (await feedRows(w.workspace.id)).filter((e) => e.entity_id === w.cpId).map((e) => e.event);

  it('a new name: kyb_status pending, counterparty.unverified after counterparty.updated; a live deal then waits in terms_review until staff verify again', async () => {
    const w = await dealWorld(client);
    await makeLive(w);
    const res = await patch(w, { name: 'PT Pemasok Baru' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data).to.include({ name: 'PT Pemasok Baru', kyb_status: 'pending' });
    expect(await status(w.cpId)).to.equal('pending');
    const feed = (await feedRows(w.workspace.id)).filter((e) => e.entity_id === w.cpId);
    expect(feed.slice(-2).map((e) => e.event)).to.deep.equal(['counterparty.updated', 'counterparty.unverified']);
    expect(feed.at(-1)).to.deep.include({ entity_type: 'counterparty', actor_id: w.users.operator.id, livemode: true });
    expect(feed.at(-1)!.summary).to.match(/no longer verified: its name \(was PT Pemasok Jaya\) changed/);
    // The consequence of D7: activation on a live workspace waits for the counterparty's verification.
    const d = await activateVia(client, w.h.operator, (await createDealVia(client, w.h.operator, dealBody(w.cpId))).deal.id);
    expect(d.deal.status).to.equal('terms_review');
    expect(d.deal.counterparty).to.deep.include({ kyb_status: 'pending' });
    expect(d.milestones.map((m) => m.status)).to.deep.equal(['draft', 'draft']);
    const v = await client.post(`/v1/admin/enterprise/counterparties/${w.cpId}/verify`).set(await staffHeaders()).send({});
    expect(v.status, JSON.stringify(v.body)).to.equal(200);
    expect(await status(w.cpId)).to.equal('verified');
    const after = await client.get(`/v1/enterprise/deals/${d.deal.id}`).set(w.h.viewer);
    expect(after.body.data.deal.status).to.equal('awaiting_funding');
  });

  it('a new country: pending as well (the event names it)', async () => {
    const w = await dealWorld(client);
    await makeLive(w);
    const res = await patch(w, { country_code: 'sg' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data).to.include({ country_code: 'SG', kyb_status: 'pending' });
    const last = (await feedRows(w.workspace.id)).at(-1)!;
    expect(last.event).to.equal('counterparty.unverified');
    expect(last.summary).to.match(/its country \(was ID\) changed/);
  });

  it('other fields, or the same name and country sent again, keep it verified and add no counterparty.unverified', async () => {
    const w = await dealWorld(client);
    await makeLive(w);
    for (const body of [{ relationship: 'buyer' }, { email: 'ap@pemasok.id' }, { name: 'PT Pemasok Jaya', country_code: 'id' }]) {
      const res = await patch(w, body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.kyb_status, JSON.stringify(body)).to.equal('verified');
    }
    expect(await events(w)).to.not.include('counterparty.unverified');
    const d = await activateVia(client, w.h.operator, (await createDealVia(client, w.h.operator, dealBody(w.cpId))).deal.id);
    expect(d.deal.status).to.equal('awaiting_funding');
  });

  it('a counterparty that was not verified keeps its status on a rename (not_started stays not_started)', async () => {
    const w = await dealWorld(client);
    const res = await patch(w, { name: 'PT Nama Lain' });
    expect(res.status).to.equal(200);
    expect(res.body.data.kyb_status).to.equal('not_started');
    expect(await events(w)).to.deep.equal(['counterparty.created', 'counterparty.updated']);
  });
});
