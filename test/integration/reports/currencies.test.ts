/**
 * Reports, overview and reconciliation never add amounts of two currencies (issue 42 point 4;
 * decision 0023): one live workspace with an IDR and a USD deal, each funded and released.
 * The overview's money figures are rupiah (IDR deals only), the summary's are its `currency`
 * query's (default IDR); reconciliation matches ledger and deals per currency.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { approve, fundedDeal, instructionVia, releasePath, type ReleaseWorld } from '../../factories/releases.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';

type Client = ReturnType<typeof api>;

async function releaseFirst(client: Client, r: ReleaseWorld, label: string): Promise<void> {
  const mid = r.mids[0]!;
  await approve(mid);
  const ins = await instructionVia(client, r, label);
  const m = await db('deal_milestones').where({ id: mid }).first<{ payout_amount: string }>('payout_amount');
  const res = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: ins, amount: Number(m.payout_amount) }] });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
}

/** Sums of the workspace's milestone.funded / milestone.released event amounts per deal currency. */
async function eventSums(workspaceId: string): Promise<Record<string, { funded: number; released: number }>> {
  const rows = await db('workspace_events as e')
    .join('deals as d', 'd.id', 'e.deal_id')
    .where('e.workspace_id', workspaceId)
    .whereIn('e.event', ['milestone.funded', 'milestone.released'])
    .select<{ currency: string; event: string; amount: string }[]>('d.currency', 'e.event', 'e.amount');
  const out: Record<string, { funded: number; released: number }> = {};
  for (const r of rows) {
    const c = (out[r.currency] ??= { funded: 0, released: 0 });
    if (r.event === 'milestone.funded') c.funded += Number(r.amount);
    else c.released += Number(r.amount);
  }
  return out;
}

describe('reports, overview and reconciliation per currency (decision 0023)', () => {
  const client = api();

  it('an IDR and a USD deal: the overview counts the IDR deal only, the summary the currency asked; reconciliation agrees per currency', async () => {
    const idr = await fundedDeal(client, 'live', [3_000_000, 1_000_000]);
    const usd = await fundedDeal(client, 'live', [7_000_000, 2_000_000], { currency: 'USD' }, idr.w);
    await releaseFirst(client, idr, 'Rupiah');
    await releaseFirst(client, usd, 'Dollar');
    const sums = await eventSums(idr.w.workspace.id);
    expect(Object.keys(sums).sort()).to.deep.equal(['IDR', 'USD']);
    const queued = async (currency: string) =>
      Number((await db('disbursements').where({ workspace_id: idr.w.workspace.id, currency }).whereIn('status', ['queued', 'processing']).sum<{ s: string }[]>('amount as s'))[0]!.s);

    for (const [query, currency] of [['', 'IDR'], ['?currency=usd', 'USD'], ['?currency=IDR', 'IDR']] as const) {
      const summary = await client.get(`/v1/enterprise/reports/summary${query}`).set(idr.w.h.viewer);
      expect(summary.status, JSON.stringify(summary.body)).to.equal(200);
      expect(summary.body.data.money, query).to.deep.equal({ funded: sums[currency]!.funded, released: sums[currency]!.released, queued: await queued(currency) });
      const month = (summary.body.data.monthly as { funded: number; released: number }[]).at(-1)!;
      expect([month.funded, month.released], query).to.deep.equal([sums[currency]!.funded, sums[currency]!.released]);
      expect((summary.body.data.top_counterparties as { released: number }[])[0]!.released, query).to.equal(sums[currency]!.released);
      // Counts are of every deal, whatever the currency; the answer keeps the spec's keys.
      expect(summary.body.data.deals.created, query).to.equal(2);
      expect(Object.keys(summary.body.data as object).sort(), query).to.deep.equal(['approvals', 'deals', 'disputes', 'money', 'monthly', 'range', 'top_counterparties']);
    }
    const bad = await client.get('/v1/enterprise/reports/summary?currency=dollars').set(idr.w.h.viewer);
    expect([bad.status, bad.body.error?.code]).to.deep.equal([400, 'INVALID_QUERY']);

    clock.advance(16_000); // past the overview's cache
    const overview = await client.get('/v1/enterprise/overview').set(idr.w.h.viewer);
    expect(overview.status, JSON.stringify(overview.body)).to.equal(200);
    // Active: both deals keep an unfinished milestone; the value counts the IDR deal's live milestones only.
    expect(overview.body.data.stats.deals_active).to.equal(2);
    expect(overview.body.data.stats.active_deal_value).to.equal(4_000_000);
    expect(overview.body.data.stats.released_24h).to.equal(sums.IDR!.released);
    expect(overview.body.data).to.not.have.property('currencies');

    const recon = await client.get('/v1/enterprise/reconciliation').set(idr.w.h.viewer);
    expect(recon.status, JSON.stringify(recon.body)).to.equal(200);
    const currencies = recon.body.data.currencies as { currency: string; ledger: Record<string, number>; derived: Record<string, number> }[];
    expect(currencies.map((c) => c.currency)).to.deep.equal(['IDR', 'USD']);
    for (const c of currencies) expect(c.ledger, c.currency).to.deep.equal(c.derived);
    expect(currencies[1]!.ledger.funded).to.equal(sums.USD!.funded);
    expect(recon.body.data.differences).to.deep.equal([]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });
});
