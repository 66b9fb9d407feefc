/**
 * GET /v1/enterprise/reports/summary (enterprise spec 4.8; decision 0020 "Reports"): every
 * figure against a hand-built workspace (deals made, funded, approved, released, disputed
 * and ruled through the routes at set times, before, inside and after the range), the
 * range rules (UTC days, both included, default the last 90 days ending today, at most
 * 366; 400 INVALID_QUERY), viewer access, 30 per minute, and another workspace's activity
 * never counted.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, workspaceKey } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { appendEvent } from '../../../shared/enterprise/events.js';
import { disputeRatePct } from '../../../shared/reports/service.js';
import { at, cancel, counterparty, dealVia, decide, dispute, fund, instruction, payoutsOf, release, reportWorld, REPORTS, rule, settle, submit, type ReportWorld } from './support.js';

const SUMMARY = `${REPORTS}/summary`;

describe('enterprise reports: summary', () => {
  const client = api();

  /**
   * The fixture (all 2026, UTC; default fee terms: 2%, the workspace pays it, so a
   * milestone funds amount + 2% share and pays out its amount):
   * - O (cp1, 1,000,000): created, funded, approved in May (outside); released 10-10 (inside).
   * - A (cp1, 1,000,000 + 2,000,000) 09-10: both funded; m1 evidence 09-11 09:00, approved
   *   14:00 (5 h), released 09-12 (payout stays queued). -> in_progress
   * - B (cp2, 3,000,000) 10-05: funded; evidence 09:00, revision 10:00, evidence 11:00,
   *   approved 14:00 (3 h); released 10-06, payout settled by staff. -> completed
   * - C (cp2, 1,500,000 + 500,000) 10-06: m1 funded and disputed, refunded by staff 10-07 (m1
   *   cancelled). -> awaiting_funding
   * - D (cp1) 10-08 draft; E (cp1) 10-08 created and cancelled.
   * - F (cp2, 700,000) 10-09: funded, disputed. G (cp2, 500,000) 10-09: funded.
   * - H (cp1) 11-02: created and funded (after the range).
   * - cp3: no activity. Another workspace: a deal created and funded on 10-15.
   */
  async function fixture(): Promise<ReportWorld & { cp2: string; cp3: string }> {
    at('2026-05-01T08:00:00Z');
    const w = await reportWorld(client, 'Laporan');
    const cp2 = await counterparty(client, w, 'PT Kedua');
    const cp3 = await counterparty(client, w, 'PT Ketiga');
    const i1 = await instruction(client, w, w.cpId, 'Rekening satu', '1234567890');
    const i2 = await instruction(client, w, cp2, 'Rekening dua', '2234567891');

    const O = await dealVia(client, w, w.cpId, [1_000_000]);
    await fund(client, w, O, O.mids[0]!);
    at('2026-05-02T08:00:00Z');
    await submit(client, w, O, O.mids[0]!);
    at('2026-05-02T10:00:00Z');
    await decide(client, w, O.mids[0]!, 'approve');

    at('2026-09-10T09:00:00Z');
    const A = await dealVia(client, w, w.cpId, [1_000_000, 2_000_000]);
    for (const mid of A.mids) await fund(client, w, A, mid);
    at('2026-09-11T09:00:00Z');
    await submit(client, w, A, A.mids[0]!);
    at('2026-09-11T14:00:00Z');
    await decide(client, w, A.mids[0]!, 'approve');
    at('2026-09-12T09:00:00Z');
    await release(client, w, A, A.mids[0]!, i1);

    at('2026-10-05T09:00:00Z');
    const B = await dealVia(client, w, cp2, [3_000_000]);
    await fund(client, w, B, B.mids[0]!);
    await submit(client, w, B, B.mids[0]!);
    at('2026-10-05T10:00:00Z');
    await decide(client, w, B.mids[0]!, 'revision');
    at('2026-10-05T11:00:00Z');
    await submit(client, w, B, B.mids[0]!);
    at('2026-10-05T14:00:00Z');
    await decide(client, w, B.mids[0]!, 'approve');
    at('2026-10-06T09:00:00Z');
    await release(client, w, B, B.mids[0]!, i2);
    await settle(client, w, (await payoutsOf(B.mids[0]!))[0]!.id);

    at('2026-10-06T10:00:00Z');
    const C = await dealVia(client, w, cp2, [1_500_000, 500_000]);
    await fund(client, w, C, C.mids[0]!);
    await dispute(client, w, C, C.mids[0]!);
    at('2026-10-07T10:00:00Z');
    await rule(client, w, C.mids[0]!, 'refund');

    at('2026-10-08T10:00:00Z');
    await dealVia(client, w, w.cpId, [400_000], { activate: false });
    await cancel(client, w, await dealVia(client, w, w.cpId, [400_000]));

    at('2026-10-09T10:00:00Z');
    const F = await dealVia(client, w, cp2, [700_000]);
    await fund(client, w, F, F.mids[0]!);
    await dispute(client, w, F, F.mids[0]!);
    const G = await dealVia(client, w, cp2, [500_000]);
    await fund(client, w, G, G.mids[0]!);

    at('2026-10-10T09:00:00Z');
    await release(client, w, O, O.mids[0]!, i1);

    at('2026-11-02T00:00:00Z');
    const H = await dealVia(client, w, w.cpId, [900_000]);
    await fund(client, w, H, H.mids[0]!);

    at('2026-10-15T10:00:00Z');
    const other = await reportWorld(client, 'Lain');
    const X = await dealVia(client, other, other.cpId, [9_000_000]);
    await fund(client, other, X, X.mids[0]!);

    at('2026-11-27T10:00:00Z');
    return { ...w, cp2, cp3 };
  }

  it('every figure of a range, checked against the hand-built workspace', async () => {
    const w = await fixture();
    const res = await client.get(`${SUMMARY}?from=2026-09-01&to=2026-10-31`).set(w.h.viewer);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers['cache-control']).to.equal('private, no-store');
    const d = res.body.data;
    expect(d.range).to.deep.equal({ from: '2026-09-01', to: '2026-10-31' });
    expect(d.deals).to.deep.equal({
      created: 7,
      by_status: { draft: 1, terms_review: 0, awaiting_funding: 1, funded: 1, in_progress: 1, disputed: 1, completed: 1, cancelled: 1 },
    });
    // Funding events carry funding_amount: A 1,020,000 + 2,040,000, B 3,060,000, C 1,530,000, F 714,000, G 510,000.
    // Releases carry the payout: A 1,000,000 (09-12), B 3,000,000 (10-06), O 1,000,000 (10-10). Queued now: A's and O's payouts (B's settled).
    expect(d.money).to.deep.equal({ funded: 8_874_000, released: 5_000_000, queued: 2_000_000 });
    // A approved 5 h after its evidence, B 3 h after its second evidence (O's approval was in May); B's revision.
    expect(d.approvals).to.deep.equal({ median_hours: 4, decided: 3, revisions: 1 });
    // C and F disputed, C resolved; 6 milestones funded in the range: 2 / 6 = 33.3%.
    expect(d.disputes).to.deep.equal({ opened: 2, resolved: 1, rate_pct: 33.3 });
    expect(d.top_counterparties).to.deep.equal([
      { id: w.cp2, name: 'PT Kedua', deals: 4, released: 3_000_000 },
      { id: w.cpId, name: 'PT Pemasok Jaya', deals: 3, released: 2_000_000 },
    ]);
    expect(d.monthly).to.deep.equal([
      { month: '2026-09', created: 1, funded: 3_060_000, released: 1_000_000, disputed: 0 },
      { month: '2026-10', created: 6, funded: 5_814_000, released: 4_000_000, disputed: 2 },
    ]);
    // The figures agree with the rows behind them.
    const funding = await db('workspace_events').where({ workspace_id: w.workspace.id, event: 'milestone.funded' }).whereBetween('created_at', [new Date('2026-09-01T00:00:00Z'), new Date('2026-10-31T23:59:59.999Z')]).sum<{ sum: string }[]>('amount as sum');
    expect(Number(funding[0]!.sum)).to.equal(d.money.funded);

    // A narrower range: only October; the month buckets follow.
    const oct = (await client.get(`${SUMMARY}?from=2026-10-06&to=2026-10-09`).set(w.h.viewer)).body.data;
    expect(oct.deals.created).to.equal(5);
    expect(oct.money).to.deep.equal({ funded: 1_530_000 + 714_000 + 510_000, released: 3_000_000, queued: 2_000_000 });
    expect(oct.approvals).to.deep.equal({ median_hours: null, decided: 0, revisions: 0 });
    expect(oct.disputes).to.deep.equal({ opened: 2, resolved: 1, rate_pct: 66.7 });
    expect(oct.monthly).to.deep.equal([{ month: '2026-10', created: 5, funded: 2_754_000, released: 3_000_000, disputed: 2 }]);
    expect((oct.top_counterparties as { name: string }[]).map((c) => c.name)).to.deep.equal(['PT Kedua', 'PT Pemasok Jaya']);
  });

  it('monthly: one bucket per calendar month the range touches, across a year end, zeros included', async () => {
    at('2026-02-10T12:00:00Z');
    const w = await reportWorld(client);
    at('2025-12-31T23:59:59Z');
    const first = await dealVia(client, w, w.cpId, [1_000_000], { activate: false });
    at('2026-01-01T00:00:00Z');
    await dealVia(client, w, w.cpId, [1_000_000], { activate: false });
    at('2026-02-10T12:00:00Z');
    const res = await client.get(`${SUMMARY}?from=2025-11-15&to=2026-02-10`).set(w.h.viewer);
    expect((res.body.data.monthly as { month: string; created: number }[]).map((m) => [m.month, m.created])).to.deep.equal([
      ['2025-11', 0],
      ['2025-12', 1],
      ['2026-01', 1],
      ['2026-02', 0],
    ]);
    expect(res.body.data.top_counterparties).to.deep.equal([{ id: w.cpId, name: 'PT Pemasok Jaya', deals: 2, released: 0 }]);
    // A one-day range holds only that day (both ends included).
    const day = await client.get(`${SUMMARY}?from=2025-12-31&to=2025-12-31`).set(w.h.viewer);
    expect(day.body.data.deals.created).to.equal(1);
    expect(day.body.data.monthly).to.deep.equal([{ month: '2025-12', created: 1, funded: 0, released: 0, disputed: 0 }]);
    expect(first.reference).to.be.a('string');
  });

  it('an empty workspace: zeros, null median, every status key', async () => {
    at('2026-11-27T10:00:00Z');
    const { workspace, owner } = await createWorkspace();
    const res = await client.get(`${SUMMARY}?from=2026-11-01&to=2026-11-27`).set(headersOf(await sessionOf(owner)));
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.equal({
      range: { from: '2026-11-01', to: '2026-11-27' },
      deals: { created: 0, by_status: { draft: 0, terms_review: 0, awaiting_funding: 0, funded: 0, in_progress: 0, disputed: 0, completed: 0, cancelled: 0 } },
      money: { funded: 0, released: 0, queued: 0 },
      approvals: { median_hours: null, decided: 0, revisions: 0 },
      disputes: { opened: 0, resolved: 0, rate_pct: 0 },
      top_counterparties: [],
      monthly: [{ month: '2026-11', created: 0, funded: 0, released: 0, disputed: 0 }],
    });
    expect(workspace.id).to.be.a('string');
  });

  it('the dispute rate: per milestone funded, one decimal, at most 100', () => {
    expect(disputeRatePct(0, 0)).to.equal(0);
    expect(disputeRatePct(3, 0)).to.equal(100);
    expect(disputeRatePct(1, 3)).to.equal(33.3);
    expect(disputeRatePct(2, 3)).to.equal(66.7);
    expect(disputeRatePct(5, 2)).to.equal(100);
    expect(disputeRatePct(0, 7)).to.equal(0);
  });

  it('top counterparties: at most 10, by released amount, then deals, then name', async () => {
    at('2026-11-20T10:00:00Z');
    const w = await reportWorld(client);
    const names = Array.from({ length: 12 }, (_, i) => `PT Mitra ${String(i + 1).padStart(2, '0')}`);
    for (const [i, name] of names.entries()) {
      const cp = await counterparty(client, w, name);
      // Deals created: 1 for the first six, 2 for the rest (no releases): more deals rank first, then the name.
      for (let k = 0; k < (i < 6 ? 1 : 2); k += 1) await dealVia(client, w, cp, [100_000], { activate: false });
    }
    const res = await client.get(SUMMARY).set(w.h.viewer);
    const top = res.body.data.top_counterparties as { name: string; deals: number; released: number }[];
    expect(top).to.have.length(10);
    expect(top.map((c) => c.name)).to.deep.equal([...names.slice(6), ...names.slice(0, 4)]);
    expect(top.map((c) => c.deals)).to.deep.equal([2, 2, 2, 2, 2, 2, 1, 1, 1, 1]);
  });

  describe('the range', () => {
    it('defaults to the last 90 days ending today (UTC), both ends included, and moves with the clock', async () => {
      at('2026-11-27T10:00:00Z');
      const { workspace, owner } = await createWorkspace();
      const h = headersOf(await personalKeyOf(owner)); // a session would idle out as the clock moves
      const amount = async (iso: string, value: number) => {
        at(iso);
        await db.transaction((trx) => appendEvent(trx, workspace.id, { event: 'milestone.funded', entityType: 'milestone', amount: value, summary: 'funded', sandbox: true }));
      };
      await amount('2026-08-29T23:59:59.999Z', 1); // one day before the default range
      await amount('2026-08-30T00:00:00.000Z', 10); // its first instant
      await amount('2026-11-27T23:59:59.999Z', 100); // the last instant of today
      await amount('2026-11-28T00:00:00.000Z', 1_000); // tomorrow
      at('2026-11-27T00:00:00Z');
      let res = await client.get(SUMMARY).set(h);
      expect(res.body.data.range).to.deep.equal({ from: '2026-08-30', to: '2026-11-27' });
      expect(res.body.data.money.funded).to.equal(110);
      expect((res.body.data.monthly as { month: string }[]).map((m) => m.month)).to.deep.equal(['2026-08', '2026-09', '2026-10', '2026-11']);
      // The last second of the day: still the same range.
      at('2026-11-27T23:59:59Z');
      expect((await client.get(SUMMARY).set(h)).body.data.range).to.deep.equal({ from: '2026-08-30', to: '2026-11-27' });
      // A day later the range has moved by a day.
      clock.advance(1000);
      res = await client.get(SUMMARY).set(h);
      expect(res.body.data.range).to.deep.equal({ from: '2026-08-31', to: '2026-11-28' });
      expect(res.body.data.money.funded).to.equal(1_100);
      // Only `to`: the 90 days ending then; only `from`: from then to today.
      expect((await client.get(`${SUMMARY}?to=2026-03-31`).set(h)).body.data.range).to.deep.equal({ from: '2026-01-01', to: '2026-03-31' });
      expect((await client.get(`${SUMMARY}?from=2026-11-01`).set(h)).body.data.range).to.deep.equal({ from: '2026-11-01', to: '2026-11-28' });
    });

    it('400 INVALID_QUERY for a bad date, from after to, or a range over 366 days', async () => {
      at('2026-11-27T10:00:00Z');
      const { owner } = await createWorkspace();
      const h = headersOf(await sessionOf(owner));
      for (const q of ['from=2026-02-30', 'to=2026-13-01', 'from=yesterday', 'to=2026-1-01', 'from=2026-11-10&to=2026-11-01', 'from=2025-01-01&to=2026-01-02', 'from=2024-02-28&to=2025-03-01', 'from=2026-11-28', 'colour=red']) {
        const res = await client.get(`${SUMMARY}?${q}`).set(h);
        expect(res.status, q).to.equal(400);
        expect(res.body.error.code, q).to.equal('INVALID_QUERY');
        expect(res.body.error.details, q).to.have.keys('formErrors', 'fieldErrors');
      }
      // 366 days exactly (2024 is a leap year), and a single day, are fine.
      for (const q of ['from=2025-01-01&to=2026-01-01', 'from=2024-01-01&to=2024-12-31', 'from=2026-11-27&to=2026-11-27']) {
        expect((await client.get(`${SUMMARY}?${q}`).set(h)).status, q).to.equal(200);
      }
    });
  });

  it('viewers and read keys may read it; 30 per minute per user', async () => {
    at('2026-11-27T10:00:00Z');
    const { workspace } = await createWorkspace();
    const viewer = await addMember(workspace.id, 'viewer');
    const h = headersOf(await sessionOf(viewer.user));
    const key = await workspaceKey(workspace.id, viewer, ['read']);
    expect((await client.get(SUMMARY).set(headersOf({ kind: 'workspace_key', key: key.key }))).status).to.equal(200);
    for (let i = 1; i < 30; i += 1) expect((await client.get(SUMMARY).set(h)).status, `request ${i + 1}`).to.equal(200);
    const over = await client.get(SUMMARY).set(h);
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(over.headers['retry-after'])).to.be.within(1, 60);
    // Another member is counted apart.
    const other = await addMember(workspace.id, 'viewer');
    expect((await client.get(SUMMARY).set(headersOf(await sessionOf(other.user)))).status).to.equal(200);
    expect((await client.get(SUMMARY)).status).to.equal(401);
  });

  it("another workspace's deals, events and payouts never count; naming its workspace is refused", async () => {
    at('2026-10-01T10:00:00Z');
    const a = await reportWorld(client, 'A');
    const b = await reportWorld(client, 'B');
    const ib = await instruction(client, b, b.cpId, 'Rekening B', '9876543210');
    const deal = await dealVia(client, b, b.cpId, [2_000_000]);
    await fund(client, b, deal, deal.mids[0]!);
    await submit(client, b, deal, deal.mids[0]!);
    await decide(client, b, deal.mids[0]!, 'approve');
    await release(client, b, deal, deal.mids[0]!, ib);
    const bView = (await client.get(SUMMARY).set(b.h.viewer)).body.data;
    expect(bView.deals.created).to.equal(1);
    expect(bView.money.queued).to.equal(2_000_000);
    const aView = (await client.get(SUMMARY).set(a.h.viewer)).body.data;
    expect(aView.deals.created).to.equal(0);
    expect(aView.money).to.deep.equal({ funded: 0, released: 0, queued: 0 });
    expect(aView.approvals.decided).to.equal(0);
    expect(aView.top_counterparties).to.deep.equal([]);
    const aSession = headersOf(await sessionOf(a.owner), b.workspace.id);
    const refused = await client.get(SUMMARY).set(aSession);
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('NO_WORKSPACE');
  });
});
