/**
 * GET /v1/enterprise/overview (enterprise spec 4.9; decision 0020 "Overview and
 * reconciliation"): every figure checked against a hand-built workspace (deals made, funded,
 * submitted, decided, released, settled, disputed and cancelled through the routes with the
 * clock pinned and moved), then the clock moved a day on; the exact keys of the answer; the
 * needs_you items per caller; recent as the feed serialises it; roles, a workspace's own
 * figures only, and 60 reads per minute.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { addMember, headersOf, sessionOf, workspaceKey } from '../../factories/enterprise.js';
import { activateVia, createDealVia, dealWorld, fundVia, staffHeaders, type DealWorld, type Headers } from '../../factories/deals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { DAY, HOUR, OVERVIEW, decideVia, disputeVia, later, overviewOf, pinAt, releaseVia, settleVia, submit, type OverviewBody } from './support.js';

const T0 = '2026-12-10T08:30:00.000Z';

describe('enterprise overview: figures', () => {
  const client = api();
  afterEach(() => clock.reset());

  interface Built {
    w: DealWorld;
    staff: Headers;
    a: { id: string; m1: string; m2: string };
    b: { id: string; m1: string };
    c: { id: string };
    d: { id: string };
    payoutId: string;
  }

  /**
   * T0 08:30  deal A (1,000,000 due in 2 days; 2,000,000) and deal B (500,000) activated and
   *           funded; deal C (300,000) left a draft; deal D (400,000) activated and cancelled.
   * 09:30     evidence for A.1 and A.2 (operator).
   * 11:30     finance approves A.1 and sends A.2 back (revision); the operator submits A.2 again;
   *           finance releases A.1 (one payout of 1,000,000).
   * 12:00     staff settle that payout (30 minutes after it was queued).
   * 12:30     the operator disputes B.1. Now.
   */
  async function build(): Promise<Built> {
    // The deals are made a second apart before T0 (the newest open deal is then well defined).
    pinAt('2026-12-10T08:29:50.000Z');
    const w = await dealWorld(client);
    const make = async (milestones: Record<string, unknown>[], activate = true) => {
      clock.advance(1000);
      const made = await createDealVia(client, w.h.operator, { title: 'Pengadaan', counterparty_id: w.cpId, milestones });
      return activate ? activateVia(client, w.h.operator, made.deal.id) : made;
    };
    const a = await make([
      { title: 'Tahap 1', amount: 1_000_000, due_offset_days: 2 },
      { title: 'Tahap 2', amount: 2_000_000 },
    ]);
    const b = await make([{ title: 'Tahap 1', amount: 500_000 }]);
    const c = await make([{ title: 'Tahap 1', amount: 300_000 }], false);
    const d = await make([{ title: 'Tahap 1', amount: 400_000 }]);
    const cancel = await client.post(`/v1/enterprise/deals/${d.deal.id}/cancel`).set(w.h.operator).send({});
    expect(cancel.status, JSON.stringify(cancel.body)).to.equal(200);
    pinAt(T0);
    const [am1, am2] = a.milestones.map((m) => m.id) as [string, string];
    const bm1 = b.milestones[0]!.id;
    for (const mid of [am1, am2]) await fundVia(client, w.h.finance, a.deal.id, mid);
    await fundVia(client, w.h.finance, b.deal.id, bm1);

    await later(w, HOUR);
    await submit(client, w.h.operator, a.deal.id, am1);
    await submit(client, w.h.operator, a.deal.id, am2);

    await later(w, 2 * HOUR);
    await decideVia(client, w.h.finance, am1, 'approve');
    await decideVia(client, w.h.finance, am2, 'revision');
    await submit(client, w.h.operator, a.deal.id, am2);
    const staff = await staffHeaders();
    const [payout] = await releaseVia(client, w, staff, a.deal.id, am1);

    clock.advance(30 * 60_000);
    await settleVia(client, staff, payout!.id);

    clock.advance(30 * 60_000);
    await disputeVia(client, w.h.operator, b.deal.id, bm1);
    return { w, staff, a: { id: a.deal.id, m1: am1, m2: am2 }, b: { id: b.deal.id, m1: bm1 }, c: { id: c.deal.id }, d: { id: d.deal.id }, payoutId: payout!.id };
  }

  const zeros = (n: number) => Array.from({ length: n }, () => 0);

  it('every figure of a hand-built workspace, for each caller', async () => {
    const x = await build();
    const o = await overviewOf(client, x.w.h.finance);

    expect(Object.keys(o).sort()).to.deep.equal(
      ['alerts', 'counterparty_performance', 'generated_at', 'greeting_name', 'needs_you', 'outcomes_90d', 'recent', 'series_24h', 'stats', 'trends_7d'].sort(),
    );
    expect(o.generated_at).to.equal('2026-12-10T12:30:00.000Z');
    expect(o.greeting_name).to.equal('Member');
    expect(o.stats).to.deep.equal({
      active_deal_value: 3_500_000,
      deals_active: 2,
      transactions_secured: 3,
      released_24h: 1_000_000,
      need_you: 1,
      median_approval_hours: 2,
      avg_settlement_minutes: 30,
    });

    // 24 hourly buckets, the last one the current hour (12:00), oldest first.
    expect(o.series_24h).to.have.length(24);
    expect(o.series_24h[0]!.hour).to.equal('2026-12-09T13:00:00.000Z');
    expect(o.series_24h[23]!.hour).to.equal('2026-12-10T12:00:00.000Z');
    const bucket = (iso: string) => o.series_24h.find((h) => h.hour === iso)!;
    expect(bucket('2026-12-10T08:00:00.000Z')).to.deep.include({ funded: 3, approved: 0, released: 0, disputed: 0 });
    expect(bucket('2026-12-10T11:00:00.000Z')).to.deep.include({ funded: 0, approved: 1, released: 1, disputed: 0 });
    expect(bucket('2026-12-10T12:00:00.000Z')).to.deep.include({ funded: 0, approved: 0, released: 0, disputed: 1 });
    const rest = o.series_24h.filter((h) => !['2026-12-10T08:00:00.000Z', '2026-12-10T11:00:00.000Z', '2026-12-10T12:00:00.000Z'].includes(h.hour));
    expect(rest.every((h) => h.funded + h.approved + h.released + h.disputed === 0)).to.equal(true);

    expect(o.trends_7d).to.deep.equal({
      days: ['2026-12-04', '2026-12-05', '2026-12-06', '2026-12-07', '2026-12-08', '2026-12-09', '2026-12-10'],
      automation_pct: [null, null, null, null, null, null, 100],
      revisions: [0, 0, 0, 0, 0, 0, 1],
    });
    // A.1 released, A.2 open, B.1 disputed, D.1 cancelled; C (a draft) is left out. A.1 and A.2
    // were decided, A.2 sent back once; A.1 went straight through.
    expect(o.outcomes_90d).to.deep.equal({ released: 1, open: 1, disputed: 1, cancelled: 1, revision_rate_pct: 50, automation_rate_pct: 100 });
    // Deals A, B, D (C never activated); A.1 due and released on time; B.1 of 3 funded disputed.
    expect(o.counterparty_performance).to.deep.equal([
      { id: x.w.cpId, name: 'PT Pemasok Jaya', deals: 3, on_time_pct: 100, dispute_pct: 33, spark: [0, 0, 0, 0, 0, 0, 1_000_000] },
    ]);
    expect(o.needs_you.map((i) => i.milestone_id)).to.deep.equal([x.a.m2]);
    expect(o.needs_you[0]).to.deep.include({ deal_id: x.a.id, status: 'evidence_submitted', amount: 2_000_000, approvals_done: 0, my_decision: null });
    // Sandbox workspace without KYB, and a counterparty not verified with open deals (A, B and the draft C; C newest).
    expect(o.alerts.map((a) => [a.kind, a.severity, a.deal_id, a.milestone_id])).to.deep.equal([
      ['kyb_gap', 'warning', null, null],
      ['kyb_gap', 'info', x.c.id, null],
    ]);

    // recent: the 8 newest events exactly as GET /events serialises them.
    const feed = await client.get('/v1/enterprise/events').query({ order: 'desc', limit: 8 }).set(x.w.h.finance);
    expect(feed.status).to.equal(200);
    expect(o.recent).to.deep.equal(feed.body.data);
    expect(o.recent).to.have.length(8);
    expect(o.recent[0]!.event).to.equal('milestone.disputed');

    // The owner may decide too; the operator (the submitter, below finance) and the viewer have nothing to decide.
    expect((await overviewOf(client, x.w.h.owner)).stats.need_you).to.equal(1);
    for (const h of [x.w.h.operator, x.w.h.viewer]) {
      const other = await overviewOf(client, h);
      expect(other.needs_you).to.deep.equal([]);
      expect(other.stats.need_you).to.equal(0);
      expect(other.stats.active_deal_value).to.equal(3_500_000);
    }
  });

  it('with the clock a day later: the 24 hours and 7 days move on, what happened before leaves the windows', async () => {
    const x = await build();
    await later(x.w, DAY + HOUR);
    const o = await overviewOf(client, x.w.h.finance);
    expect(o.generated_at).to.equal('2026-12-11T13:30:00.000Z');
    expect(o.stats).to.deep.include({ released_24h: 0, deals_active: 2, transactions_secured: 3, median_approval_hours: 2, avg_settlement_minutes: 30 });
    expect(o.series_24h[0]!.hour).to.equal('2026-12-10T14:00:00.000Z');
    expect(o.series_24h.every((h) => h.funded + h.approved + h.released + h.disputed === 0)).to.equal(true);
    expect(o.trends_7d.days[6]).to.equal('2026-12-11');
    expect(o.trends_7d.automation_pct).to.deep.equal([null, null, null, null, null, 100, null]);
    expect(o.trends_7d.revisions).to.deep.equal([0, 0, 0, 0, 0, 1, 0]);
    expect(o.counterparty_performance[0]!.spark).to.deep.equal([0, 0, 0, 0, 0, 1_000_000, 0]);

    // Past the stats window (30 days) the medians are null; past 90 days the deals leave the outcomes.
    await later(x.w, 31 * DAY);
    const month = await overviewOf(client, x.w.h.finance);
    expect(month.stats.median_approval_hours).to.equal(null);
    expect(month.stats.avg_settlement_minutes).to.equal(null);
    expect(month.outcomes_90d.released).to.equal(1);
    await later(x.w, 60 * DAY);
    const quarter = await overviewOf(client, x.w.h.finance);
    expect(quarter.outcomes_90d).to.deep.equal({ released: 0, open: 0, disputed: 0, cancelled: 0, revision_rate_pct: null, automation_rate_pct: null });
    expect(quarter.counterparty_performance).to.deep.equal([]);
    expect(quarter.trends_7d).to.deep.include({ automation_pct: [null, null, null, null, null, null, null], revisions: zeros(7) });
  });

  it('an empty workspace: zeros, nulls and no rows; 24 buckets and 7 days all the same', async () => {
    pinAt('2026-12-10T00:00:00.000Z');
    const w = await dealWorld(client);
    const o = await overviewOf(client, w.h.viewer);
    expect(o.stats).to.deep.equal({
      active_deal_value: 0,
      deals_active: 0,
      transactions_secured: 0,
      released_24h: 0,
      need_you: 0,
      median_approval_hours: null,
      avg_settlement_minutes: null,
    });
    expect(o.series_24h.map((h) => h.hour)).to.deep.equal(Array.from({ length: 24 }, (_, i) => new Date(Date.parse('2026-12-09T01:00:00.000Z') + i * HOUR).toISOString()));
    expect(o.trends_7d.days).to.deep.equal(['2026-12-04', '2026-12-05', '2026-12-06', '2026-12-07', '2026-12-08', '2026-12-09', '2026-12-10']);
    expect(o.outcomes_90d).to.deep.equal({ released: 0, open: 0, disputed: 0, cancelled: 0, revision_rate_pct: null, automation_rate_pct: null });
    expect(o.counterparty_performance).to.deep.equal([]);
    expect(o.needs_you).to.deep.equal([]);
    // The workspace's own creation events (workspace.created, member and counterparty events).
    expect(o.recent.length).to.be.at.most(8);
  });

  it('automation and revision rates: a milestone sent back, one disputed and ruled, one whose payout failed are not straight through', async () => {
    pinAt(T0);
    const w = await dealWorld(client);
    const staff = await staffHeaders();
    const made = await createDealVia(client, w.h.operator, { title: 'Campuran', counterparty_id: w.cpId, milestones: [1, 2, 3, 4].map((i) => ({ title: `Tahap ${i}`, amount: 100_000 * i })) });
    const deal = await activateVia(client, w.h.operator, made.deal.id);
    const [m1, m2, m3, m4] = deal.milestones.map((m) => m.id) as [string, string, string, string];
    for (const mid of [m1, m2, m3, m4]) await fundVia(client, w.h.finance, deal.deal.id, mid);
    for (const mid of [m1, m2, m3, m4]) await submit(client, w.h.operator, deal.deal.id, mid);
    // m1 straight; m2 rejected once then approved; m3 disputed and ruled released; m4 approved, its payout fails, released again.
    await decideVia(client, w.h.finance, m1);
    await decideVia(client, w.h.finance, m2, 'reject');
    await submit(client, w.h.operator, deal.deal.id, m2);
    await decideVia(client, w.h.finance, m2);
    await disputeVia(client, w.h.operator, deal.deal.id, m3);
    const ruled = await client.post(`/v1/admin/enterprise/milestones/${m3}/resolve-dispute`).set(staff).send({ outcome: 'release' });
    expect(ruled.status, JSON.stringify(ruled.body)).to.equal(200);
    await decideVia(client, w.h.finance, m4);
    for (const mid of [m1, m2, m3, m4]) await releaseVia(client, w, staff, deal.deal.id, mid);
    const [failing] = await db('disbursements').where({ milestone_id: m4 }).select<{ id: string }[]>('id');
    const failed = await client.post(`/v1/admin/enterprise/disbursements/${failing!.id}/fail`).set(staff).send({ reason: 'Rekening ditutup' });
    expect(failed.status, JSON.stringify(failed.body)).to.equal(200);
    await releaseVia(client, w, staff, deal.deal.id, m4);

    const o = await overviewOf(client, w.h.finance);
    // Decided: m1, m2, m4 (m3 was ruled, not decided); sent back: m2. Released 4, straight through 1.
    expect(o.outcomes_90d).to.deep.equal({ released: 4, open: 0, disputed: 0, cancelled: 0, revision_rate_pct: 33, automation_rate_pct: 25 });
    expect(o.trends_7d.automation_pct[6]).to.equal(25);
    expect(o.trends_7d.revisions[6]).to.equal(1);
    // Released pays out the payout amounts (the re-release of m4 is not a second milestone.released).
    expect(o.stats.released_24h).to.equal(1_000_000);
    expect(o.counterparty_performance[0]).to.deep.include({ deals: 1, on_time_pct: null, dispute_pct: 25 });
  });

  it('needs_you: finance and above only, never the evidence submitter, not after deciding in this round; a read key acts as a viewer', async () => {
    pinAt(T0);
    const w = await dealWorld(client);
    await db('workspaces').where({ id: w.workspace.id }).update({ four_eyes_threshold: 1_000_000 });
    const finance2 = await addMember(w.workspace.id, 'finance');
    const f2 = headersOf(await sessionOf(finance2.user));
    const admin = await addMember(w.workspace.id, 'admin');
    const made = await createDealVia(client, w.h.operator, { title: 'Empat mata', counterparty_id: w.cpId, milestones: [{ title: 'Besar', amount: 1_000_000 }, { title: 'Kecil', amount: 200_000 }] });
    const deal = await activateVia(client, w.h.operator, made.deal.id);
    const [big, small] = deal.milestones.map((m) => m.id) as [string, string];
    for (const mid of [big, small]) await fundVia(client, w.h.finance, deal.deal.id, mid);
    await submit(client, w.h.operator, deal.deal.id, big);
    clock.advance(60_000);
    await submit(client, f2, deal.deal.id, small); // finance2 submitted this one: never theirs to decide

    const ids = async (h: Headers) => {
      const o = await overviewOf(client, h);
      expect(o.stats.need_you).to.equal(o.needs_you.length);
      return o.needs_you.map((i) => i.milestone_id);
    };
    expect(await ids(w.h.finance)).to.deep.equal([big, small]);
    expect(await ids(f2)).to.deep.equal([big]);
    expect(await ids(headersOf(await sessionOf(admin.user)))).to.deep.equal([big, small]);
    expect(await ids(w.h.viewer)).to.deep.equal([]);
    // The first of two approvals: finance has decided in this round, finance2 still may.
    await decideVia(client, w.h.finance, big);
    expect(await ids(w.h.finance)).to.deep.equal([small]); // their own write cleared their cache
    clock.advance(15_000); // finance2's cached answer (from before the decision) runs out
    expect((await overviewOf(client, f2)).needs_you[0]).to.deep.include({ milestone_id: big, approvals_required: 2, approvals_done: 1, my_decision: null });

    // finance2's read key acts as a viewer: nothing to decide, even right after their session's read (kept apart in the cache).
    const key = await workspaceKey(w.workspace.id, finance2, ['read']);
    expect(await ids({ Authorization: `Bearer ${key.key}` })).to.deep.equal([]);
    expect(await ids(f2)).to.deep.equal([big]);
  });

  it("only the caller's workspace: another workspace's deals never count; its id in X-Enterprise-Account answers 403 NO_WORKSPACE", async () => {
    const x = await build();
    const other = await dealWorld(client, 'Lain');
    const mine = await overviewOf(client, other.h.finance);
    expect(mine.stats).to.deep.include({ deals_active: 0, active_deal_value: 0, transactions_secured: 0, released_24h: 0, need_you: 0 });
    expect(mine.counterparty_performance).to.deep.equal([]);
    expect(mine.recent.every((e) => e.deal_id === null)).to.equal(true);
    const res = await client.get(OVERVIEW).set({ ...other.h.finance, 'X-Enterprise-Account': x.w.workspace.id });
    expect(res.status).to.equal(403);
    expect(res.body.error.code).to.equal('NO_WORKSPACE');
  });

  it('60 reads per minute per user (cached answers count too): the 61st answers 429 RATE_LIMITED; another user is not affected', async () => {
    const w = await dealWorld(client);
    for (let i = 0; i < 60; i++) expect((await client.get(OVERVIEW).set(w.h.viewer)).status).to.equal(200);
    const res = await client.get(OVERVIEW).set(w.h.viewer);
    expect(res.status).to.equal(429);
    expect(res.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).to.be.greaterThan(0);
    expect((await client.get(OVERVIEW).set(w.h.finance)).status).to.equal(200);
  });

  it('needs a credential; any member reads it', async () => {
    const w = await dealWorld(client);
    const none = await client.get(OVERVIEW);
    expect(none.status).to.equal(401);
    const body: OverviewBody = await overviewOf(client, w.h.viewer);
    expect(body.greeting_name).to.equal('Member');
  });
});
