/**
 * The platform fee routes (enterprise spec 2 "Fee terms", 4.5, 8; issue 26): the fee terms
 * for platform and operator pricing (set in the database: pricing is staff-only), tiers
 * from the trailing released volume (the 30-day edge by the clock, sandbox and live volume
 * apart, other currencies left out), preview figures computed by hand, the preview saving
 * nothing and its 60 per minute, and the owner's default allocation (access, validation,
 * event, Idempotency-Key, existing deals untouched, later previews using it).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows } from '../../helpers/auth-signin-util.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, workspaceKey, type Cred } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { defaultAllocation, pricingFor } from '../../../shared/deals/fee-terms.js';
import type { WorkspaceRow } from '../../../shared/enterprise/repo.js';

const E = '/v1/enterprise';
const DAY = 86_400_000;
const KEY = '3f1d2c4b-5a69-4e7f-8a1b-2c3d4e5f6a7b';

/** The Fee terms of a workspace on the platform's pricing, nothing released, the default allocation. */
const PLATFORM_TERMS = {
  rate_bp: 200,
  rate_percent: 2,
  min_fee: 5000,
  tiers: [],
  default_allocation: 'buyer',
  default_buyer_percent: 100,
  default_seller_percent: 0,
  uses_platform_rate: true,
  uses_platform_min: true,
  volume_window_days: 30,
  trailing_volume: 0,
  rate_in_force_bp: 200,
  rate_in_force_percent: 2,
  tier_in_force: null,
  can_edit_default_allocation: true,
  pricing_set_by: null,
};

let dealSeq = 0;

/** A counterparty and a deal row of the workspace, inserted directly (the deal routes are not needed here). */
async function insertDeal(workspaceId: string, ownerId: string, opts: { isTest: boolean; currency?: string }): Promise<string> {
  const now = clock.now();
  const [cp] = await db('counterparties')
    .insert({ workspace_id: workspaceId, name: `PT Pemasok ${++dealSeq}`, country_code: 'ID', relationship: 'seller', created_at: now, updated_at: now })
    .returning<{ id: string }[]>('id');
  const [deal] = await db('deals')
    .insert({
      workspace_id: workspaceId,
      reference: `DL-${dealSeq}`,
      title: `Deal ${dealSeq}`,
      currency: opts.currency ?? 'IDR',
      counterparty_id: cp!.id,
      owner_id: ownerId,
      is_test: opts.isTest,
      fee_rate_bp: 200,
      fee_min: 5000,
      fee_volume_basis: 0,
      fee_allocation: 'buyer',
      fee_buyer_percent: 100,
      platform_fee: 0,
      buyer_fee: 0,
      seller_fee: 0,
      created_at: now,
      updated_at: now,
    })
    .returning<{ id: string }[]>('id');
  return deal!.id;
}

/** Milestones of a deal with their status and release time (no fee shares: only the amounts count toward volume). */
async function insertMilestones(dealId: string, workspaceId: string, items: { amount: number; status?: string; releasedAt?: Date | null }[]): Promise<void> {
  const now = clock.now();
  const base = await countRows('deal_milestones', { deal_id: dealId });
  await db('deal_milestones').insert(
    items.map((m, i) => ({
      deal_id: dealId,
      workspace_id: workspaceId,
      sequence_no: base + i + 1,
      title: `Milestone ${base + i + 1}`,
      amount: m.amount,
      status: m.status ?? 'released',
      released_at: m.releasedAt === undefined ? ((m.status ?? 'released') === 'released' ? now : null) : m.releasedAt,
      buyer_fee: 0,
      seller_fee: 0,
      funding_amount: m.amount,
      payout_amount: m.amount,
      created_at: now,
      updated_at: now,
    })),
  );
}

const ago = (ms: number) => new Date(clock.nowMs() - ms);

async function makeLive(workspaceId: string): Promise<void> {
  await db('workspaces').where({ id: workspaceId }).update({ is_sandbox: false, kyb_status: 'verified' });
}

async function workspaceRow(id: string): Promise<WorkspaceRow> {
  return (await db('workspaces').where({ id }).first()) as WorkspaceRow;
}

describe('enterprise platform fee routes', () => {
  const client = api();

  async function setup() {
    const ws = await createWorkspace();
    const owner = await sessionOf(ws.owner);
    return { ...ws, session: owner, h: headersOf(owner) };
  }

  const terms = (cred: Cred) => client.get(`${E}/fees`).set(headersOf(cred));
  const preview = (cred: Cred, body: Record<string, unknown>) => client.post(`${E}/fees/preview`).set(headersOf(cred)).send(body);
  const putDefault = (cred: Cred, body: Record<string, unknown>, key?: string) => {
    const req = client.put(`${E}/fees/default-allocation`).set(headersOf(cred));
    if (key) req.set('Idempotency-Key', key);
    return req.send(body);
  };

  describe('GET /fees: the Fee terms', () => {
    it("a new workspace on the platform's pricing: 2%, Rp5.000, no tiers, buyer pays; only an owner with a session may edit the default", async () => {
      const { workspace, session, owner, ownerMember } = await setup();
      const res = await terms(session);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      expect(res.body.data).to.deep.equal(PLATFORM_TERMS);

      const viewers: Cred[] = [
        await sessionOf((await addMember(workspace.id, 'admin')).user),
        await sessionOf((await addMember(workspace.id, 'viewer')).user),
        await personalKeyOf(owner),
        { kind: 'workspace_key', key: (await workspaceKey(workspace.id, { member: ownerMember, user: owner }, ['read', 'write'])).key },
        { kind: 'workspace_key', key: (await workspaceKey(workspace.id, { member: ownerMember, user: owner }, ['read'])).key },
      ];
      for (const cred of viewers) {
        const r = await terms(cred);
        expect(r.status, cred.kind).to.equal(200);
        expect(r.body.data, cred.kind).to.deep.equal({ ...PLATFORM_TERMS, can_edit_default_allocation: false });
      }
    });

    it('the platform rate and minimum are the operator settings enterprise_fee_rate_bp and enterprise_fee_min (invalid values fall back to 2% / Rp5.000)', async () => {
      const { session } = await setup();
      await db('settings').insert([
        { key: 'enterprise_fee_rate_bp', value: JSON.stringify(150), updated_at: clock.now() },
        { key: 'enterprise_fee_min', value: JSON.stringify(7500), updated_at: clock.now() },
      ]);
      const res = await terms(session);
      expect(res.body.data).to.deep.include({ rate_bp: 150, rate_percent: 1.5, min_fee: 7500, rate_in_force_bp: 150, rate_in_force_percent: 1.5, uses_platform_rate: true, uses_platform_min: true });
      const p = await preview(session, { milestones: [{ amount: 1_000_000 }] });
      expect(p.body.data).to.deep.include({ rate_bp: 150, min_fee: 7500, platform_fee: 15_000 });

      await db('settings').where({ key: 'enterprise_fee_rate_bp' }).update({ value: JSON.stringify(10_001) });
      await db('settings').where({ key: 'enterprise_fee_min' }).update({ value: JSON.stringify('7500') });
      expect((await terms(session)).body.data).to.deep.include({ rate_bp: 200, min_fee: 5000 });
    });

    it("operator pricing of the workspace: its own rate, minimum and tiers (ascending), and who set them", async () => {
      const { workspace, session } = await setup();
      await db('settings').insert({ key: 'enterprise_fee_rate_bp', value: JSON.stringify(150), updated_at: clock.now() });
      await db('workspaces')
        .where({ id: workspace.id })
        .update({
          fee_rate_bp: 125,
          fee_min: 10_000,
          fee_tiers: JSON.stringify([
            { min_volume: 100_000_000, rate_bp: 100 },
            { min_volume: 10_000_000, rate_bp: 110 },
          ]),
          fee_pricing_set_by: 'Operator',
        });
      const res = await terms(session);
      expect(res.body.data).to.deep.equal({
        ...PLATFORM_TERMS,
        rate_bp: 125,
        rate_percent: 1.25,
        min_fee: 10_000,
        tiers: [
          { min_volume: 10_000_000, rate_bp: 110, rate_percent: 1.1 },
          { min_volume: 100_000_000, rate_bp: 100, rate_percent: 1 },
        ],
        uses_platform_rate: false,
        uses_platform_min: false,
        rate_in_force_bp: 125,
        rate_in_force_percent: 1.25,
        pricing_set_by: 'Operator',
      });

      // Only the minimum set: the rate is the platform's.
      await db('workspaces').where({ id: workspace.id }).update({ fee_rate_bp: null });
      expect((await terms(session)).body.data).to.deep.include({ rate_bp: 150, min_fee: 10_000, uses_platform_rate: true, uses_platform_min: false });
    });
  });

  describe('tiers and the trailing volume', () => {
    async function tiered() {
      const s = await setup();
      await db('workspaces')
        .where({ id: s.workspace.id })
        .update({ fee_tiers: JSON.stringify([{ min_volume: 10_000_000, rate_bp: 150 }, { min_volume: 100_000_000, rate_bp: 100 }]) });
      return s;
    }

    it('counts released IDR milestones of the last 30 days by the clock: a release exactly 30 days old counts, a millisecond older does not', async () => {
      clock.set(new Date('2026-12-20T10:00:00.000Z'));
      const { workspace, owner } = await tiered();
      // A key, not a session: the clock moves by a day (a session would go idle).
      const key = await personalKeyOf(owner);
      await makeLive(workspace.id);
      const live = await insertDeal(workspace.id, owner.id, { isTest: false });
      await insertMilestones(live, workspace.id, [
        { amount: 6_000_000, releasedAt: ago(1 * DAY) },
        { amount: 5_000_000, releasedAt: ago(29 * DAY) },
        { amount: 2_000_000, releasedAt: ago(30 * DAY) },
        { amount: 40_000_000, releasedAt: ago(30 * DAY + 1) },
        // Not released: never counted, whatever their amount.
        { amount: 90_000_000, status: 'approved', releasedAt: null },
        { amount: 90_000_000, status: 'funded', releasedAt: null },
      ]);
      const at = async () => (await terms(key)).body.data as Record<string, unknown>;

      // 6M + 5M + 2M = 13M >= 10M: the 1.5% tier.
      expect(await at()).to.deep.include({ trailing_volume: 13_000_000, rate_in_force_bp: 150, rate_in_force_percent: 1.5, tier_in_force: { min_volume: 10_000_000 } });
      clock.advance(1); // the 2M release is now 30 days and 1 ms old
      expect(await at()).to.deep.include({ trailing_volume: 11_000_000, rate_in_force_bp: 150 });
      clock.advance(DAY - 1); // the 5M one is now exactly 30 days old: still in
      expect(await at()).to.deep.include({ trailing_volume: 11_000_000, tier_in_force: { min_volume: 10_000_000 } });
      clock.advance(1); // 6M alone: below the first tier, the base rate
      expect(await at()).to.deep.include({ trailing_volume: 6_000_000, rate_in_force_bp: 200, rate_in_force_percent: 2, tier_in_force: null });

      // The preview takes the same volume (volume_basis) and rate.
      const p = await preview(key, { milestones: [{ amount: 1_000_000 }] });
      expect(p.body.data).to.deep.include({ volume_basis: 6_000_000, rate_bp: 200, tier: null, platform_fee: 20_000, is_test: false });
    });

    it('sandbox volume counts only for a sandbox, live volume only for a live workspace; other currencies never count', async () => {
      const { workspace, owner, session } = await tiered();
      const sandboxDeal = await insertDeal(workspace.id, owner.id, { isTest: true });
      await insertMilestones(sandboxDeal, workspace.id, [{ amount: 120_000_000, releasedAt: ago(DAY) }]);
      const usd = await insertDeal(workspace.id, owner.id, { isTest: true, currency: 'USD' });
      await insertMilestones(usd, workspace.id, [{ amount: 500_000_000, releasedAt: ago(DAY) }]);
      // Another workspace's volume never counts.
      const other = await createWorkspace();
      const otherDeal = await insertDeal(other.workspace.id, other.owner.id, { isTest: true });
      await insertMilestones(otherDeal, other.workspace.id, [{ amount: 300_000_000, releasedAt: ago(DAY) }]);

      // A sandbox: sandbox IDR volume only (120M: the 1% tier).
      expect((await terms(session)).body.data).to.deep.include({ trailing_volume: 120_000_000, rate_in_force_bp: 100, tier_in_force: { min_volume: 100_000_000 } });
      const sp = await preview(session, { milestones: [{ amount: 1_000_000 }] });
      expect(sp.body.data).to.deep.include({ volume_basis: 120_000_000, rate_bp: 100, tier: { min_volume: 100_000_000 }, platform_fee: 10_000, is_test: true });

      // Live: the sandbox deals no longer count; live IDR volume does.
      await makeLive(workspace.id);
      expect((await terms(session)).body.data).to.deep.include({ trailing_volume: 0, rate_in_force_bp: 200, tier_in_force: null });
      const liveDeal = await insertDeal(workspace.id, owner.id, { isTest: false });
      await insertMilestones(liveDeal, workspace.id, [{ amount: 15_000_000, releasedAt: ago(DAY) }]);
      const liveUsd = await insertDeal(workspace.id, owner.id, { isTest: false, currency: 'USD' });
      await insertMilestones(liveUsd, workspace.id, [{ amount: 900_000_000, releasedAt: ago(DAY) }]);
      expect((await terms(session)).body.data).to.deep.include({ trailing_volume: 15_000_000, rate_in_force_bp: 150, tier_in_force: { min_volume: 10_000_000 } });

      // pricingFor (deal creation) takes the kind of the deal, not of the workspace.
      const row = await workspaceRow(workspace.id);
      expect((await pricingFor(db, row, true)).trailingVolume).to.equal(120_000_000);
      expect((await pricingFor(db, row, false)).trailingVolume).to.equal(15_000_000);
      expect((await pricingFor(db, row, false)).pricing).to.deep.equal({
        rateBp: 200,
        minFee: 5000,
        tiers: [
          { minVolume: 10_000_000, rateBp: 150 },
          { minVolume: 100_000_000, rateBp: 100 },
        ],
      });
    });
  });

  describe('POST /fees/preview', () => {
    it('2% of Rp1.000.000 is Rp20.000, paid by the workspace by default; a sandbox previews a test deal', async () => {
      const { session } = await setup();
      const res = await preview(session, { milestones: [{ amount: 1_000_000 }] });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      expect(res.body.data).to.deep.equal({
        total_amount: 1_000_000,
        rate_bp: 200,
        rate_percent: 2,
        min_fee: 5000,
        tier: null,
        volume_basis: 0,
        platform_fee: 20_000,
        allocation: 'buyer',
        buyer_percent: 100,
        seller_percent: 0,
        buyer_fee: 20_000,
        seller_fee: 0,
        funding_total: 1_020_000,
        payout_total: 1_000_000,
        payer: 'workspace',
        payee: 'counterparty',
        milestones: [{ amount: 1_000_000, buyer_fee: 20_000, seller_fee: 0, funding_amount: 1_020_000, payout_amount: 1_000_000 }],
        is_test: true,
      });
    });

    it('the Rp5.000 minimum for IDR (any case), never above the total minus 1 per milestone', async () => {
      const { session } = await setup();
      // 2% of 100,000 = 2,000 < 5,000.
      const small = await preview(session, { milestones: [{ amount: 100_000 }], fee_allocation: 'seller' });
      expect(small.body.data).to.deep.include({ platform_fee: 5000, buyer_fee: 0, seller_fee: 5000, funding_total: 100_000, payout_total: 95_000 });
      expect(small.body.data.milestones).to.deep.equal([{ amount: 100_000, buyer_fee: 0, seller_fee: 5000, funding_amount: 100_000, payout_amount: 95_000 }]);
      const lower = await preview(session, { milestones: [{ amount: 100_000 }], currency: 'idr' });
      expect(lower.body.data.platform_fee).to.equal(5000);
      // A minimum above the total: capped at 10,000 - 1 = 9,999 (the payout stays 1).
      await db('workspaces').update({ fee_min: 50_000 });
      const capped = await preview(session, { milestones: [{ amount: 10_000 }], fee_allocation: 'seller' });
      expect(capped.body.data).to.deep.include({ min_fee: 50_000, platform_fee: 9_999, seller_fee: 9_999, payout_total: 1 });
    });

    it('USD pays the rate with no minimum', async () => {
      const { session } = await setup();
      const res = await preview(session, { milestones: [{ amount: 100_000 }], currency: 'usd' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      // 2% of 100,000 = 2,000 (the minimum applies to IDR only).
      expect(res.body.data).to.deep.include({ total_amount: 100_000, platform_fee: 2000, buyer_fee: 2000, seller_fee: 0, funding_total: 102_000, payout_total: 100_000 });
    });

    it('split 37%: the workspace pays floor(37%), the counterparty the odd rupiah; each milestone floors its share and the last takes the remainder', async () => {
      const { session } = await setup();
      const res = await preview(session, { milestones: [{ amount: 333_333 }, { amount: 333_333 }, { amount: 333_384 }], fee_allocation: 'split', fee_buyer_percent: 37 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      // total 1,000,050; fee floor(1,000,050 x 2%) = floor(20,001) = 20,001;
      // buyer floor(20,001 x 37 / 100) = floor(7,400.37) = 7,400; seller 20,001 - 7,400 = 12,601.
      // Buyer shares: floor(7,400 x 333,333 / 1,000,050) = floor(2,466.54) = 2,466 twice, last 7,400 - 4,932 = 2,468.
      // Seller shares: floor(12,601 x 333,333 / 1,000,050) = floor(4,200.12) = 4,200 twice, last 12,601 - 8,400 = 4,201.
      expect(res.body.data).to.deep.include({
        total_amount: 1_000_050,
        platform_fee: 20_001,
        allocation: 'split',
        buyer_percent: 37,
        seller_percent: 63,
        buyer_fee: 7_400,
        seller_fee: 12_601,
        funding_total: 1_007_450,
        payout_total: 987_449,
      });
      expect(res.body.data.milestones).to.deep.equal([
        { amount: 333_333, buyer_fee: 2_466, seller_fee: 4_200, funding_amount: 335_799, payout_amount: 329_133 },
        { amount: 333_333, buyer_fee: 2_466, seller_fee: 4_200, funding_amount: 335_799, payout_amount: 329_133 },
        { amount: 333_384, buyer_fee: 2_468, seller_fee: 4_201, funding_amount: 335_852, payout_amount: 329_183 },
      ]);
      // A percent alone means split.
      const alone = await preview(session, { milestones: [{ amount: 1_000_050 }], fee_buyer_percent: 37 });
      expect(alone.body.data).to.deep.include({ allocation: 'split', buyer_fee: 7_400, seller_fee: 12_601 });
      // Seller pays all; buyer with its 100 stated.
      expect((await preview(session, { milestones: [{ amount: 1_000_000 }], fee_allocation: 'seller', fee_buyer_percent: 0 })).body.data).to.deep.include({ buyer_fee: 0, seller_fee: 20_000, payout_total: 980_000 });
      expect((await preview(session, { milestones: [{ amount: 1_000_000 }], fee_allocation: 'buyer', fee_buyer_percent: 100 })).body.data).to.deep.include({ buyer_fee: 20_000, seller_fee: 0 });
    });

    it('refuses a disagreeing allocation and bodies outside 4.5 with 400 INVALID_BODY and field errors', async () => {
      const { session } = await setup();
      const cases: [Record<string, unknown>, string][] = [
        [{ milestones: [{ amount: 1_000_000 }], fee_allocation: 'buyer', fee_buyer_percent: 50 }, 'fee_buyer_percent'],
        [{ milestones: [{ amount: 1_000_000 }], fee_allocation: 'seller', fee_buyer_percent: 100 }, 'fee_buyer_percent'],
        [{ milestones: [{ amount: 1_000_000 }], fee_allocation: 'split' }, 'fee_buyer_percent'],
        [{ milestones: [{ amount: 1_000_000 }], fee_buyer_percent: 101 }, 'fee_buyer_percent'],
        [{ milestones: [{ amount: 1_000_000 }], fee_buyer_percent: 12.5 }, 'fee_buyer_percent'],
        [{ milestones: [{ amount: 1_000_000 }], fee_allocation: 'both' }, 'fee_allocation'],
        [{ milestones: [{ amount: 9_999 }] }, 'milestones.0.amount'],
        [{ milestones: [{ amount: 50_000_000_001 }] }, 'milestones.0.amount'],
        [{ milestones: [{ amount: '1000000' }] }, 'milestones.0.amount'],
        [{ milestones: [{ amount: 1_000_000.5 }] }, 'milestones.0.amount'],
        [{ milestones: [] }, 'milestones'],
        [{ milestones: Array.from({ length: 21 }, () => ({ amount: 10_000 })) }, 'milestones'],
        [{}, 'milestones'],
        [{ milestones: [{ amount: 1_000_000 }], currency: 'RP' }, 'currency'],
        [{ milestones: [{ amount: 1_000_000 }], extra: true }, 'extra'],
      ];
      for (const [body, field] of cases) {
        const res = await preview(session, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_BODY');
        expect(res.body.error.details.fieldErrors, JSON.stringify(body)).to.have.property(field);
      }
    });

    it('saves nothing (even with an Idempotency-Key)', async () => {
      const { workspace, session, owner } = await setup();
      await insertDeal(workspace.id, owner.id, { isTest: true });
      const tables = ['deals', 'deal_milestones', 'workspace_events', 'idempotency_keys', 'counterparties'];
      const count = async () => Promise.all(tables.map((t) => countRows(t)));
      const before = await count();
      const ws = await workspaceRow(workspace.id);
      for (let i = 0; i < 3; i += 1) {
        const res = await client
          .post(`${E}/fees/preview`)
          .set(headersOf(session))
          .set('Idempotency-Key', KEY)
          .send({ milestones: [{ amount: 1_000_000 + i }] });
        expect(res.status).to.equal(200);
        expect(res.headers).to.not.have.property('idempotent-replay');
        expect(res.body.data.total_amount).to.equal(1_000_000 + i);
      }
      expect(await count()).to.deep.equal(before);
      expect(await workspaceRow(workspace.id)).to.deep.equal(ws);
    });

    it('60 previews per minute per user: the 61st answers 429 RATE_LIMITED; another user is not held back', async () => {
      const { workspace, session } = await setup();
      for (let i = 0; i < 60; i += 1) expect((await preview(session, { milestones: [{ amount: 1_000_000 }] })).status, `preview ${i + 1}`).to.equal(200);
      const res = await preview(session, { milestones: [{ amount: 1_000_000 }] });
      expect(res.status).to.equal(429);
      expect(res.body.error.code).to.equal('RATE_LIMITED');
      expect(Number(res.headers['retry-after'])).to.be.greaterThan(0);
      // Invalid bodies count too (the limit runs before validation); reads are not limited by it.
      expect((await preview(session, {})).status).to.equal(429);
      expect((await terms(session)).status).to.equal(200);
      const viewer = await sessionOf((await addMember(workspace.id, 'viewer')).user);
      expect((await preview(viewer, { milestones: [{ amount: 1_000_000 }] })).status).to.equal(200);
    });
  });

  describe('PUT /fees/default-allocation', () => {
    it('the owner sets the default: the Fee terms answer, the event (live: the workspace is, issue 42), existing deals unchanged, later previews use it', async () => {
      const { workspace, session, owner } = await setup();
      await makeLive(workspace.id);
      const existing = await insertDeal(workspace.id, owner.id, { isTest: false });
      const dealBefore = await db('deals').where({ id: existing }).first();

      const res = await putDefault(session, { fee_allocation: 'split', fee_buyer_percent: 37 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      expect(res.body.data).to.deep.equal({ ...PLATFORM_TERMS, default_allocation: 'split', default_buyer_percent: 37, default_seller_percent: 63 });
      expect(defaultAllocation(await workspaceRow(workspace.id))).to.deep.equal({ allocation: 'split', buyerPercent: 37 });

      const events = await db('workspace_events').where({ workspace_id: workspace.id, event: 'fees.default_allocation_changed' });
      expect(events).to.have.length(1);
      expect(events[0]).to.deep.include({ entity_type: 'account', entity_id: workspace.id, actor_id: owner.id, actor_name: owner.full_name, livemode: true });
      expect(events[0].summary).to.include('split').and.include('37%');
      expect(await db('deals').where({ id: existing }).first()).to.deep.equal(dealBefore);

      // GET agrees; a preview without an allocation takes the new default.
      expect((await terms(session)).body.data).to.deep.include({ default_allocation: 'split', default_buyer_percent: 37, default_seller_percent: 63 });
      const p = await preview(session, { milestones: [{ amount: 1_000_050 }] });
      expect(p.body.data).to.deep.include({ allocation: 'split', buyer_percent: 37, seller_percent: 63, buyer_fee: 7_400, seller_fee: 12_601, is_test: false });
      // A body's own allocation still wins.
      expect((await preview(session, { milestones: [{ amount: 1_000_000 }], fee_allocation: 'buyer' })).body.data).to.deep.include({ allocation: 'buyer', buyer_fee: 20_000 });

      // Seller with no percent (0 implied); the same default again writes no second event.
      expect((await putDefault(session, { fee_allocation: 'seller' })).body.data).to.deep.include({ default_allocation: 'seller', default_buyer_percent: 0, default_seller_percent: 100 });
      expect((await putDefault(session, { fee_allocation: 'seller', fee_buyer_percent: 0 })).status).to.equal(200);
      expect(await countRows('workspace_events', { workspace_id: workspace.id, event: 'fees.default_allocation_changed' })).to.equal(2);
      expect((await preview(session, { milestones: [{ amount: 1_000_000 }] })).body.data).to.deep.include({ allocation: 'seller', buyer_fee: 0, seller_fee: 20_000 });
    });

    it('owner with a session only: admin 403 FORBIDDEN, any API key 403 KEY_NOT_ALLOWED; nothing changes', async () => {
      const { workspace, owner, ownerMember } = await setup();
      const admin = await addMember(workspace.id, 'admin');
      const body = { fee_allocation: 'seller' };
      const forbidden = await putDefault(await sessionOf(admin.user), body);
      expect(forbidden.status).to.equal(403);
      expect(forbidden.body.error.code).to.equal('FORBIDDEN');
      const keys: Cred[] = [
        await personalKeyOf(owner),
        { kind: 'workspace_key', key: (await workspaceKey(workspace.id, { member: ownerMember, user: owner }, ['read', 'write'])).key },
        { kind: 'workspace_key', key: (await workspaceKey(workspace.id, { member: ownerMember, user: owner }, ['read'])).key },
      ];
      for (const cred of keys) {
        const res = await putDefault(cred, body);
        expect(res.status, cred.kind).to.equal(403);
        expect(res.body.error.code, cred.kind).to.equal('KEY_NOT_ALLOWED');
      }
      expect(defaultAllocation(await workspaceRow(workspace.id))).to.deep.equal({ allocation: 'buyer', buyerPercent: 100 });
      expect(await countRows('workspace_events', { event: 'fees.default_allocation_changed' })).to.equal(0);
    });

    it('refuses a disagreeing or incomplete body with 400 INVALID_BODY and a field error', async () => {
      const { workspace, session } = await setup();
      const cases: [Record<string, unknown>, string][] = [
        [{ fee_allocation: 'split' }, 'fee_buyer_percent'],
        [{ fee_allocation: 'buyer', fee_buyer_percent: 37 }, 'fee_buyer_percent'],
        [{ fee_allocation: 'seller', fee_buyer_percent: 100 }, 'fee_buyer_percent'],
        [{ fee_allocation: 'split', fee_buyer_percent: -1 }, 'fee_buyer_percent'],
        [{ fee_allocation: 'split', fee_buyer_percent: '37' }, 'fee_buyer_percent'],
        [{ fee_buyer_percent: 37 }, 'fee_allocation'],
        [{ fee_allocation: 'nobody' }, 'fee_allocation'],
        [{ fee_allocation: 'buyer', note: 'x' }, 'note'],
      ];
      for (const [body, field] of cases) {
        const res = await putDefault(session, body, randomUUID());
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_BODY');
        expect(res.body.error.details.fieldErrors, JSON.stringify(body)).to.have.property(field);
      }
      expect(defaultAllocation(await workspaceRow(workspace.id))).to.deep.equal({ allocation: 'buyer', buyerPercent: 100 });
      expect(await countRows('workspace_events', { event: 'fees.default_allocation_changed' })).to.equal(0);
      expect(await countRows('idempotency_keys')).to.equal(0);
    });

    it('Idempotency-Key: the same body replays the first answer and writes one event; another body is 422', async () => {
      const { workspace, session } = await setup();
      const first = await putDefault(session, { fee_allocation: 'split', fee_buyer_percent: 40 }, KEY);
      expect(first.status).to.equal(200);
      // Changed meanwhile without the key: the replay still answers the first answer and changes nothing.
      expect((await putDefault(session, { fee_allocation: 'buyer' })).status).to.equal(200);
      const again = await putDefault(session, { fee_allocation: 'split', fee_buyer_percent: 40 }, KEY);
      expect(again.status).to.equal(200);
      expect(again.headers['idempotent-replay']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect(defaultAllocation(await workspaceRow(workspace.id))).to.deep.equal({ allocation: 'buyer', buyerPercent: 100 });
      const other = await putDefault(session, { fee_allocation: 'split', fee_buyer_percent: 41 }, KEY);
      expect(other.status).to.equal(422);
      expect(other.body.error.code).to.equal('IDEMPOTENCY_KEY_CONFLICT');
      expect(await countRows('workspace_events', { workspace_id: workspace.id, event: 'fees.default_allocation_changed' })).to.equal(2);
    });
  });
});
