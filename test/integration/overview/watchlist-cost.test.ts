/**
 * The watchlist alert costs what the page shows, not what the workspace holds (issue 42,
 * review R3; decision 0020 "Issue 42: one tenant's counterparties"): the match is stored on
 * the counterparty when its name or the watchlist changes, and the overview reads at most a
 * page of matching counterparties, whatever the number of counterparties without open deals.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { activateVia, counterpartyVia, createDealVia, dealWorld, type DealWorld } from '../../factories/deals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { WATCHLIST_HITS_SQL } from '../../../shared/overview/repo.js';
import { overviewOf, pinAt, type OverviewBody } from './support.js';

type Alert = OverviewBody['alerts'][number];

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Rows of `counterparties` the statement read (returned by its scans or removed by their filters), from EXPLAIN ANALYZE. */
async function counterpartyRowsRead(workspaceId: string): Promise<number> {
  // The planner's statistics as autovacuum would keep them after thousands of inserts: with
  // stale ones the plan depended on when autovacuum last ran (a flaky count under load).
  await db.raw('ANALYZE counterparties');
  const { rows } = await db.raw<{ rows: { 'QUERY PLAN': { Plan: PlanNode }[] }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${WATCHLIST_HITS_SQL}`, { ws: workspaceId, limit: 10 });
  let read = 0;
  const walk = (n: PlanNode): void => {
    if (n['Relation Name'] === 'counterparties') {
      read += ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0)) * (n['Actual Loops'] ?? 1);
    }
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(rows[0]!['QUERY PLAN'][0]!.Plan);
  return read;
}

async function insertCounterparties(workspaceId: string, createdBy: string, prefix: string, n: number): Promise<void> {
  await db.raw(
    `INSERT INTO counterparties (workspace_id, name, country_code, relationship, kyb_status, created_by, created_at, updated_at)
     SELECT ?, ? || ' ' || lpad(g::text, 6, '0'), 'ID', 'seller', 'not_started', ?, now(), now() FROM generate_series(1, ?) g`,
    [workspaceId, prefix, createdBy, n],
  );
  await db.raw('ANALYZE counterparties');
}

describe('issue 42: the watchlist alert reads a page, not the workspace', () => {
  const client = api();
  afterEach(() => clock.reset());

  async function hits(w: DealWorld): Promise<Alert[]> {
    clock.advance(15_000);
    return (await overviewOf(client, w.h.finance)).alerts.filter((a) => a.kind === 'watchlist_hit');
  }

  async function settings(w: DealWorld, body: Record<string, unknown>): Promise<void> {
    const res = await client.patch('/v1/enterprise/settings').set(w.h.owner).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }

  async function openDeal(w: DealWorld, cpId: string): Promise<string> {
    const made = await createDealVia(client, w.h.operator, { title: 'Pengadaan', counterparty_id: cpId, milestones: [{ title: 'Tahap 1', amount: 500_000 }] });
    return (await activateVia(client, w.h.operator, made.deal.id)).deal.id;
  }

  it('the match follows the counterparty: added after the watchlist, renamed out of it and into another entry (the first entry in the watchlist order)', async () => {
    pinAt('2026-12-10T08:00:00.000Z');
    const w = await dealWorld(client);
    await settings(w, { watchlist: ['  Sentosa ', 'ABADI'] });
    expect(await hits(w)).to.deep.equal([]);
    const cp = await counterpartyVia(client, w.h.owner, { name: 'CV Abadi Sentosa' });
    expect((await hits(w)).map((a) => a.detail)).to.deep.equal(['Counterparty "CV Abadi Sentosa" matches watchlist entry "Sentosa" (no open deals).']);
    const patch = async (name: string) => expect((await client.patch(`/v1/enterprise/counterparties/${cp}`).set(w.h.owner).send({ name })).status).to.equal(200);
    await patch('CV Lain Sekali');
    expect(await hits(w)).to.deep.equal([]);
    await patch('CV abadi jaya');
    expect((await hits(w)).map((a) => a.detail)).to.deep.equal(['Counterparty "CV abadi jaya" matches watchlist entry "ABADI" (no open deals).']);
    await settings(w, { watchlist: ['jaya'] });
    expect((await hits(w)).map((a) => a.detail)).to.deep.equal([
      'Counterparty "CV abadi jaya" matches watchlist entry "jaya" (no open deals).',
      // dealWorld's own counterparty, PT Pemasok Jaya, now matches too.
      'Counterparty "PT Pemasok Jaya" matches watchlist entry "jaya" (no open deals).',
    ]);
  });

  it('from 4,000 to 12,000 counterparties without open deals (matching or not) the statement reads the same few rows, and the page is unchanged: open deals first, then by name, 10 at most', async function () {
    this.timeout(120_000);
    pinAt('2026-12-10T08:00:00.000Z');
    const w = await dealWorld(client);
    // A matching counterparty whose name sorts last, with an open deal: it leads the page all the same.
    const zed = await counterpartyVia(client, w.h.owner, { name: 'ZZ Mitra Terbuka' });
    const dealId = await openDeal(w, zed);
    await settings(w, { watchlist: ['mitra'] });
    await insertCounterparties(w.workspace.id, w.owner.id, 'PT Mitra Sepi', 20);
    await insertCounterparties(w.workspace.id, w.owner.id, 'PT Lainnya', 20);
    const page = async () => (await hits(w)).map((a) => [a.severity, a.deal_id, a.detail.match(/^Counterparty "([^"]+)"/)![1]]);
    const before = await page();
    expect(before).to.have.length(10);
    expect(before[0]).to.deep.equal(['critical', dealId, 'ZZ Mitra Terbuka']);
    expect(before.slice(1).map((x) => x[2])).to.deep.equal(Array.from({ length: 9 }, (_, i) => `PT Mitra Sepi ${String(i + 1).padStart(6, '0')}`));
    // Names sorting after the page's, so the page itself stays the same.
    await insertCounterparties(w.workspace.id, w.owner.id, 'PT Mitra Sepi X', 2_000);
    await insertCounterparties(w.workspace.id, w.owner.id, 'PT Lainnya X', 2_000);
    expect(await page()).to.deep.equal(before);
    const readBefore = await counterpartyRowsRead(w.workspace.id);
    await insertCounterparties(w.workspace.id, w.owner.id, 'PT Mitra Sepi Y', 4_000);
    await insertCounterparties(w.workspace.id, w.owner.id, 'PT Lainnya Y', 4_000);
    expect(await page()).to.deep.equal(before);
    const readAfter = await counterpartyRowsRead(w.workspace.id);
    expect(readAfter).to.equal(readBefore);
    // A page of 10, the open-deal match and the page's rows read again: a few dozen rows, never thousands.
    expect(readAfter).to.be.at.most(40);
  });
});
