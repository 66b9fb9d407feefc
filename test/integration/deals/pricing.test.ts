/**
 * Operator pricing (spec 4.5: "Pricing is set by the operator and cannot be changed through
 * the API"; the CLI's set-pricing): the Fee terms show it, new deals take it, existing deals
 * keep theirs, the feed records it with the operator label, impossible pricing is refused.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { createWorkspace, headersOf, sessionOf } from '../../factories/enterprise.js';
import { db } from '../../../shared/db.js';
import { checkPricing, setPricing, type PricingInput } from '../../../shared/deals/pricing.js';

describe('operator pricing (set-pricing)', () => {
  const client = api();

  it('sets rate, minimum and tiers; Fee terms show them; a deal made before keeps its rate, one made after takes the new one', async () => {
    const { workspace, owner } = await createWorkspace();
    const h = headersOf(await sessionOf(owner));
    const cp = await client.post('/v1/enterprise/counterparties').set(h).send({ name: 'PT Pemasok' });
    const before = await client.post('/v1/enterprise/deals').set(h).send({ title: 'Before', counterparty_id: cp.body.data.id, milestones: [{ title: 'One', amount: 1_000_000 }] });
    expect(before.body.data.deal.fee.platform_fee).to.equal(20_000); // 2% of 1,000,000

    await setPricing(undefined, workspace.id, { rateBp: 150, minFee: 7_500, tiers: [{ minVolume: 1_000_000_000, rateBp: 100 }], setBy: 'Operator: agreement 2026-11' });
    const terms = await client.get('/v1/enterprise/fees').set(h);
    expect(terms.body.data).to.include({ rate_bp: 150, min_fee: 7_500, uses_platform_rate: false, uses_platform_min: false, pricing_set_by: 'Operator: agreement 2026-11' });
    expect(terms.body.data.tiers).to.deep.equal([{ min_volume: 1_000_000_000, rate_bp: 100, rate_percent: 1 }]);

    const after = await client.post('/v1/enterprise/deals').set(h).send({ title: 'After', counterparty_id: cp.body.data.id, milestones: [{ title: 'One', amount: 1_000_000 }] });
    expect(after.body.data.deal.fee).to.include({ rate_bp: 150, platform_fee: 15_000 }); // 1.5% of 1,000,000
    const old = await client.get(`/v1/enterprise/deals/${before.body.data.deal.id as string}`).set(h);
    expect(old.body.data.deal.fee).to.include({ rate_bp: 200, platform_fee: 20_000 });

    const ev = await db('workspace_events').where({ workspace_id: workspace.id, event: 'fees.pricing_changed' }).first();
    expect(ev).to.include({ actor_label: 'Operator', actor_id: null, livemode: false });
  });

  it('back to the platform pricing with null rate and minimum', async () => {
    const { workspace, owner } = await createWorkspace();
    await setPricing(undefined, workspace.id, { rateBp: 100, minFee: 0, tiers: [], setBy: 'Operator' });
    await setPricing(undefined, workspace.id, { rateBp: null, minFee: null, tiers: [], setBy: 'Operator' });
    const terms = await client.get('/v1/enterprise/fees').set(headersOf(await sessionOf(owner)));
    expect(terms.body.data).to.include({ rate_bp: 200, min_fee: 5_000, uses_platform_rate: true, uses_platform_min: true });
  });

  it('refuses impossible pricing and an unknown workspace; nothing changes', async () => {
    const ok: PricingInput = { rateBp: 100, minFee: 1000, tiers: [], setBy: 'Operator' };
    for (const bad of [
      { ...ok, rateBp: 10_001 },
      { ...ok, rateBp: 1.5 },
      { ...ok, minFee: -1 },
      { ...ok, tiers: [{ minVolume: 0, rateBp: 100 }] },
      { ...ok, tiers: [{ minVolume: 10, rateBp: 100 }, { minVolume: 10, rateBp: 50 }] },
      { ...ok, setBy: ' ' },
    ]) {
      expect(() => checkPricing(bad), JSON.stringify(bad)).to.throw(RangeError);
    }
    const { workspace } = await createWorkspace();
    let refused = false;
    await setPricing(undefined, workspace.id, { ...ok, rateBp: -5 }).catch(() => (refused = true));
    expect(refused).to.equal(true);
    expect((await db('workspaces').where({ id: workspace.id }).first()).fee_rate_bp).to.equal(null);
    let unknown = false;
    await setPricing(undefined, '5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3', ok).catch(() => (unknown = true));
    expect(unknown).to.equal(true);
  });
});
