/**
 * GET /v1/enterprise/reports/deals.csv and disbursements.csv (enterprise spec 4.8, 4.5
 * rule 7; decision 0020 "Reports"): requested over HTTP (202 with the export id), built by
 * the exports worker, fetched as a CSV attachment streamed from its stored parts; the exact
 * columns and figures against hand-built deals and payouts, oldest first, accounts masked,
 * 10,000 rows with X-Export-Truncated at 10,001 (rows inserted in bulk), formula cells
 * defused, finance only, 5 new exports per minute each, another workspace's rows and
 * exports never reachable, a job run twice (or twice at once) building the file once.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { runJobs } from '../../helpers/jobs.js';
import { addMember, createWorkspace, headersOf, sessionOf, workspaceKey } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { buildExport, EXPORT_REUSE_MS } from '../../../shared/enterprise/exports.js';
import { PART_CHARS } from '../../../shared/enterprise/csv.js';
import { at, counterparty, dealVia, decide, exportCsv, failPayout, fund, instruction, payoutsOf, release, reportWorld, REPORTS, settle, submit } from './support.js';

const DEALS_CSV = `${REPORTS}/deals.csv`;
const PAYOUTS_CSV = `${REPORTS}/disbursements.csv`;
const DEAL_HEADER = 'reference,title,counterparty,status,currency,total_amount,funded_amount,released_amount,external_ref,created_at,updated_at,fee_rate_bp,platform_fee,fee_buyer_percent,buyer_fee,seller_fee';
const PAYOUT_HEADER = 'id,created_at,deal,milestone,instruction,bank,account,amount,currency,status,settled_at,failure_reason';

const iso = (d: Date) => d.toISOString();
const updatedAt = async (id: string) => iso((await db('deals').where({ id }).first<{ updated_at: Date }>('updated_at')).updated_at);

describe('enterprise reports: CSV exports', () => {
  const client = api();

  it('deals.csv: deals created in the range, oldest first, with the exact columns, computed figures and the fee columns', async () => {
    at('2026-09-01T08:00:00Z');
    const w = await reportWorld(client);
    const cp2 = await counterparty(client, w, 'CV Dua, "Kutip"');
    const inst = await instruction(client, w, cp2, 'Rekening utama', '1234567890');
    await dealVia(client, w, w.cpId, [1_000_000], { activate: false }); // before the range
    at('2026-10-01T09:00:00Z');
    const d1 = await dealVia(client, w, w.cpId, [1_000_000, 2_000_000], { extra: { external_ref: 'PO-1' } });
    await fund(client, w, d1, d1.mids[0]!);
    at('2026-10-02T09:00:00Z');
    const d2 = await dealVia(client, w, cp2, [1_000_000], { extra: { fee_allocation: 'split', fee_buyer_percent: 50 } });
    await fund(client, w, d2, d2.mids[0]!);
    await submit(client, w, d2, d2.mids[0]!);
    await decide(client, w, d2.mids[0]!, 'approve');
    at('2026-10-03T09:00:00Z');
    await release(client, w, d2, d2.mids[0]!, inst);
    at('2026-10-04T09:00:00Z');
    const d3 = await dealVia(client, w, w.cpId, [500_000], { activate: false });
    at('2026-11-01T00:00:00Z');
    await dealVia(client, w, w.cpId, [500_000], { activate: false }); // after the range
    const other = await reportWorld(client, 'Lain');
    at('2026-10-02T10:00:00Z');
    await dealVia(client, other, other.cpId, [7_000_000], { activate: false });

    at('2026-11-27T10:00:00Z');
    const { id, res, lines } = await exportCsv(client, w.h.finance, DEALS_CSV, '?from=2026-10-01&to=2026-10-31');
    expect(res.headers['content-type']).to.equal('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).to.equal(`attachment; filename="deals-${id}.csv"`);
    expect(res.headers['cache-control']).to.equal('private, no-store');
    expect(res.headers['x-export-truncated']).to.equal(undefined);
    expect(res.text.endsWith('\r\n')).to.equal(true);
    expect(lines).to.deep.equal([
      DEAL_HEADER,
      // 2% of 3,000,000 paid by the workspace: 60,000; one milestone funded (the fee is not in the deal's amounts).
      `${d1.reference},Pengadaan server,PT Pemasok Jaya,funded,IDR,3000000,1000000,0,PO-1,2026-10-01T09:00:00.000Z,${await updatedAt(d1.id)},200,60000,100,60000,0`,
      // 2% of 1,000,000 split half and half; released whole.
      `${d2.reference},Pengadaan server,"CV Dua, ""Kutip""",completed,IDR,1000000,1000000,1000000,,2026-10-02T09:00:00.000Z,${await updatedAt(d2.id)},200,20000,50,10000,10000`,
      `${d3.reference},Pengadaan server,PT Pemasok Jaya,draft,IDR,500000,0,0,,2026-10-04T09:00:00.000Z,${await updatedAt(d3.id)},200,10000,100,10000,0`,
    ]);
    const row = (await db('enterprise_exports').where({ id }).first()) as { kind: string; row_count: number; truncated: boolean; range_from: unknown };
    expect(row).to.include({ kind: 'deals', row_count: 3, truncated: false });
  });

  it('disbursements.csv: payouts created in the range, oldest first (splits in order), accounts always masked', async () => {
    at('2026-10-01T08:00:00Z');
    const w = await reportWorld(client);
    const a = await instruction(client, w, w.cpId, 'Rekening utama', '1234567890', 'BCA');
    const b = await instruction(client, w, w.cpId, 'Rekening cadangan', '9988776655', 'Bank Mandiri');
    const d1 = await dealVia(client, w, w.cpId, [1_000_000]);
    const d2 = await dealVia(client, w, w.cpId, [2_000_000], { extra: { fee_allocation: 'seller' } });
    for (const d of [d1, d2]) {
      await fund(client, w, d, d.mids[0]!);
      await submit(client, w, d, d.mids[0]!);
      await decide(client, w, d.mids[0]!, 'approve');
    }
    at('2026-10-02T09:00:00Z');
    await release(client, w, d1, d1.mids[0]!, a);
    at('2026-10-03T09:00:00Z');
    // d2 pays out 2,000,000 less the counterparty's 40,000 fee, in two splits.
    const rel = await client
      .post(`/v1/enterprise/deals/${d2.id}/milestones/${d2.mids[0]!}/release`)
      .set(w.h.finance)
      .send({ splits: [{ payout_instruction_id: b, amount: 1_000_000 }, { payout_instruction_id: a, amount: 960_000 }] });
    expect(rel.status, JSON.stringify(rel.body)).to.equal(200);
    const [p1] = await payoutsOf(d1.mids[0]!);
    const [s1, s2] = await payoutsOf(d2.mids[0]!);
    at('2026-10-04T09:00:00Z');
    await settle(client, w, p1!.id);
    await failPayout(client, w, s2!.id, 'Rekening ditutup, kata bank');

    at('2026-10-20T10:00:00Z');
    const { id, res, lines } = await exportCsv(client, w.h.finance, PAYOUTS_CSV, '?from=2026-10-01&to=2026-10-31');
    expect(res.headers['content-disposition']).to.equal(`attachment; filename="disbursements-${id}.csv"`);
    expect(lines).to.deep.equal([
      PAYOUT_HEADER,
      `${p1!.id},2026-10-02T09:00:00.000Z,${d1.reference},Tahap 1,Rekening utama,BCA,…7890,1000000,IDR,settled,2026-10-04T09:00:00.000Z,`,
      `${s1!.id},2026-10-03T09:00:00.000Z,${d2.reference},Tahap 1,Rekening cadangan,Bank Mandiri,…6655,1000000,IDR,queued,,`,
      `${s2!.id},2026-10-03T09:00:00.000Z,${d2.reference},Tahap 1,Rekening utama,BCA,…7890,960000,IDR,failed,,"Rekening ditutup, kata bank"`,
    ]);
    for (const full of ['1234567890', '9988776655']) expect(res.text).to.not.include(full);
    // A range that holds only the first day of payouts.
    const first = await exportCsv(client, w.h.finance, PAYOUTS_CSV, '?from=2026-10-02&to=2026-10-02');
    expect(first.lines.slice(1).map((l) => l.split(',')[0])).to.deep.equal([p1!.id]);
  });

  it('formula cells are defused with a leading single quote (=, +, -, @, tab, carriage return), quoted as needed', async () => {
    at('2026-10-01T08:00:00Z');
    const w = await reportWorld(client);
    const cp = await counterparty(client, w, '@SUM(1+1)');
    const inst = await instruction(client, w, cp, '-label', '5566778899');
    const d = await dealVia(client, w, cp, [1_000_000], { extra: { title: '=HYPERLINK("http://x","y")', external_ref: '+628123' } });
    await fund(client, w, d, d.mids[0]!);
    await submit(client, w, d, d.mids[0]!);
    await decide(client, w, d.mids[0]!, 'approve');
    await release(client, w, d, d.mids[0]!, inst);
    const [p] = await payoutsOf(d.mids[0]!);
    await failPayout(client, w, p!.id, '=cmd|calc');
    // What the API refuses (control characters) can still reach a row another way: tab and CR too.
    clock.advance(1000);
    const tab = await dealVia(client, w, cp, [100_000], { activate: false });
    await db('deals').where({ id: tab.id }).update({ title: '\tTab title', external_ref: '\rCR ref' });
    await db('deal_milestones').where({ id: d.mids[0]! }).update({ title: '-1+2' });

    const deals = await exportCsv(client, w.h.finance, DEALS_CSV);
    const [, first, second] = deals.res.text.split('\r\n');
    expect(first!.split(',').slice(0, 3)).to.deep.equal([d.reference, `"'=HYPERLINK(""http://x""`, `""y"")"`]);
    expect(first).to.include(",'@SUM(1+1),").and.include(",'+628123,");
    expect(second).to.match(new RegExp(`^${tab.reference},'\\tTab title,'@SUM\\(1\\+1\\),draft,IDR,100000,0,0,"'\\rCR ref",`));
    const payouts = await exportCsv(client, w.h.finance, PAYOUTS_CSV);
    expect(payouts.lines[1]).to.include(`,'-1+2,'-label,BCA,…8899,`).and.match(/,failed,,'=cmd\|calc$/);
  });

  it('at most 10,000 rows with X-Export-Truncated: true at 10,001 (deals), none at 10,000; the file is streamed from several parts', async () => {
    at('2026-11-27T10:00:00Z');
    const w = await reportWorld(client);
    await db.raw(
      `INSERT INTO deals (workspace_id, reference, title, currency, counterparty_id, owner_id, is_test, fee_rate_bp, fee_min, fee_volume_basis,
                          fee_allocation, fee_buyer_percent, platform_fee, buyer_fee, seller_fee, created_at, updated_at)
       SELECT ?, 'BULK-' || lpad(g::text, 5, '0'), 'Bulk deal ' || g, 'IDR', ?, ?, true, 200, 5000, 0, 'buyer', 100, 5000, 5000, 0,
              ?::timestamptz + g * interval '1 second', ?::timestamptz
         FROM generate_series(1, 10001) g`,
      [w.workspace.id, w.cpId, w.owner.id, new Date('2026-11-01T00:00:00Z'), clock.now()],
    );
    const { id, res, lines } = await exportCsv(client, w.h.finance, DEALS_CSV);
    expect(res.headers['x-export-truncated']).to.equal('true');
    expect(lines).to.have.length(10_001);
    expect(lines[1]!.startsWith('BULK-00001,Bulk deal 1,PT Pemasok Jaya,cancelled,IDR,0,0,0,,2026-11-01T00:00:01.000Z,')).to.equal(true);
    expect(lines[10_000]!.startsWith('BULK-10000,')).to.equal(true);
    expect(await db('enterprise_exports').where({ id }).first()).to.include({ row_count: 10_000, truncated: true, csv: null });
    const parts = (await db('enterprise_export_parts').where({ export_id: id }).orderBy('part_no')) as { part_no: number; body: string }[];
    expect(parts.length).to.be.greaterThan(5);
    expect(parts.map((p) => p.part_no)).to.deep.equal(parts.map((_, i) => i));
    for (const p of parts.slice(0, -1)) expect(p.body.length).to.be.at.least(PART_CHARS);
    expect(parts.map((p) => p.body).join('')).to.equal(res.text);

    // Exactly 10,000: all of them, no truncation header.
    await db('deals').where({ workspace_id: w.workspace.id, reference: 'BULK-10001' }).delete();
    clock.advance(EXPORT_REUSE_MS + 1000); // within the window the same range answers the first export (decision 0026)
    const whole = await exportCsv(client, w.h.finance, DEALS_CSV);
    expect(whole.res.headers['x-export-truncated']).to.equal(undefined);
    expect(whole.lines).to.have.length(10_001);
    expect(whole.lines[10_000]!.startsWith('BULK-10000,')).to.equal(true);
  });

  it('disbursements.csv: 10,000 rows of 10,001 with X-Export-Truncated: true', async () => {
    at('2026-11-27T10:00:00Z');
    const w = await reportWorld(client);
    const inst = await instruction(client, w, w.cpId, 'Rekening', '1122334455');
    const d = await dealVia(client, w, w.cpId, [1_000_000]);
    await db.raw(
      `INSERT INTO disbursements (workspace_id, deal_id, milestone_id, payout_instruction_id, instruction_label, destination_bank_name, destination_account_holder, destination_account_last4,
                                  amount, currency, is_test, release_no, split_no, status, created_at, updated_at)
       SELECT ?, ?, ?, ?, 'Rekening', 'BCA', 'PT Pemasok Jaya', '4455', 1000 + g, 'IDR', true, g, 1, 'queued', ?::timestamptz + g * interval '1 second', ?::timestamptz
         FROM generate_series(1, 10001) g`,
      [w.workspace.id, d.id, d.mids[0]!, inst, new Date('2026-11-01T00:00:00Z'), clock.now()],
    );
    const { res, lines } = await exportCsv(client, w.h.finance, PAYOUTS_CSV);
    expect(res.headers['x-export-truncated']).to.equal('true');
    expect(lines).to.have.length(10_001);
    expect(lines[1]).to.match(/,2026-11-01T00:00:01\.000Z,DL-000001,Tahap 1,Rekening,BCA,…4455,1001,IDR,queued,,$/);
    expect(lines[10_000]).to.match(/,2026-11-01T02:46:40\.000Z,DL-000001,Tahap 1,Rekening,BCA,…4455,11000,IDR,queued,,$/);
    // The 10,000 sums add up to the first 10,000 payouts, oldest first (no row twice across pages).
    expect(new Set(lines.slice(1).map((l) => l.split(',')[0])).size).to.equal(10_000);
  });

  it('202 until built (Location, Retry-After), the range rules, and a job run twice or twice at once building the file once', async () => {
    at('2026-11-27T10:00:00Z');
    const w = await reportWorld(client);
    await dealVia(client, w, w.cpId, [1_000_000], { activate: false });
    const req = await client.get(DEALS_CSV).set(w.h.finance);
    expect(req.status).to.equal(202);
    expect(req.headers['cache-control']).to.equal('private, no-store');
    const id = req.body.data.export_id as string;
    expect(req.body.data).to.deep.equal({ export_id: id, status: 'pending', from: '2026-08-30', to: '2026-11-27' });
    expect(req.headers.location).to.equal(`${DEALS_CSV}?export_id=${id}`);
    expect(req.headers['retry-after']).to.equal('2');
    const pending = await client.get(`${DEALS_CSV}?export_id=${id}`).set(w.h.finance);
    expect([pending.status, pending.body.data.status]).to.deep.equal([202, 'pending']);

    // Two runs at once: one builds, the other waits on the export row and then builds nothing.
    const both = await Promise.allSettled([buildExport(id), buildExport(id)]);
    const built = both.filter((r) => r.status === 'fulfilled' && r.value.status === 'built');
    expect(built).to.have.length(1);
    for (const r of both) if (r.status === 'rejected') expect((r.reason as { code?: string }).code).to.equal('40001');
    const parts = await db('enterprise_export_parts').where({ export_id: id }).count<{ count: number }[]>('* as count');
    expect(Number(parts[0]!.count)).to.equal(1);
    expect(await buildExport(id)).to.deep.equal({ status: 'already' });
    const ran = await runJobs(['exports']);
    expect(ran.map((j) => [j.name, j.result])).to.deep.equal([['exports.report-csv', { status: 'already' }]]);
    const file = await client.get(`${DEALS_CSV}?export_id=${id}`).set(w.h.finance);
    expect(file.status).to.equal(200);
    expect(file.text.split('\r\n')).to.have.length(3);

    for (const path of [DEALS_CSV, PAYOUTS_CSV]) {
      for (const q of ['from=2026-02-30', 'to=2026-1-1', 'from=2026-11-10&to=2026-11-01', 'from=2025-01-01&to=2026-01-02', 'export_id=' + 'x'.repeat(65)]) {
        const res = await client.get(`${path}?${q}`).set(w.h.owner);
        expect(res.status, `${path} ${q}`).to.equal(400);
        expect(res.body.error.code).to.equal('INVALID_QUERY');
      }
      const longest = await client.get(`${path}?from=2025-01-01&to=2026-01-01`).set(w.h.owner);
      expect(longest.status).to.equal(202);
      expect(longest.body.data).to.include({ from: '2025-01-01', to: '2026-01-01' });
    }
  });

  it('finance and up only (a read key acts as a viewer); 5 new exports per minute for each route, fetching is free', async () => {
    at('2026-11-27T10:00:00Z');
    const { workspace, owner, ownerMember } = await createWorkspace();
    for (const role of ['viewer', 'operator'] as const) {
      const m = await addMember(workspace.id, role);
      for (const path of [DEALS_CSV, PAYOUTS_CSV]) {
        const res = await client.get(path).set(headersOf(await sessionOf(m.user)));
        expect([res.status, res.body.error.code], `${role} ${path}`).to.deep.equal([403, 'FORBIDDEN']);
      }
    }
    const readKey = await workspaceKey(workspace.id, { member: ownerMember, user: owner }, ['read']);
    expect((await client.get(DEALS_CSV).set(headersOf({ kind: 'workspace_key', key: readKey.key }))).body.error.code).to.equal('FORBIDDEN');
    const rwKey = await workspaceKey(workspace.id, { member: ownerMember, user: owner }, ['read', 'write']);
    expect((await client.get(PAYOUTS_CSV).set(headersOf({ kind: 'workspace_key', key: rwKey.key }))).status).to.equal(202);
    expect((await client.get(DEALS_CSV)).status).to.equal(401);

    const fin = await addMember(workspace.id, 'finance');
    const h = headersOf(await sessionOf(fin.user));
    let id = '';
    for (let i = 0; i < 5; i += 1) {
      const r = await client.get(DEALS_CSV).set(h);
      expect(r.status).to.equal(202);
      id = r.body.data.export_id as string;
    }
    for (let i = 0; i < 3; i += 1) expect((await client.get(`${DEALS_CSV}?export_id=${id}`).set(h)).status).to.equal(202);
    const over = await client.get(DEALS_CSV).set(h);
    expect([over.status, over.body.error.code]).to.deep.equal([429, 'RATE_LIMITED']);
    expect(Number(over.headers['retry-after'])).to.be.within(1, 60);
    // The other export and the audit export keep their own counts.
    for (let i = 0; i < 5; i += 1) expect((await client.get(PAYOUTS_CSV).set(h)).status).to.equal(202);
    expect((await client.get(PAYOUTS_CSV).set(h)).status).to.equal(429);
    expect((await client.get('/v1/enterprise/audit/export.csv').set(h)).status).to.equal(202);
  });

  it("another workspace's rows never appear, and its export ids, or another kind's, answer 404 NOT_FOUND", async () => {
    at('2026-11-20T10:00:00Z');
    const a = await reportWorld(client, 'A');
    const b = await reportWorld(client, 'B');
    const ib = await instruction(client, b, b.cpId, 'Rahasia B', '4455667788');
    const bDeal = await dealVia(client, b, b.cpId, [1_000_000], { extra: { title: 'Rahasia B' } });
    await fund(client, b, bDeal, bDeal.mids[0]!);
    await submit(client, b, bDeal, bDeal.mids[0]!);
    await decide(client, b, bDeal.mids[0]!, 'approve');
    await release(client, b, bDeal, bDeal.mids[0]!, ib);
    await dealVia(client, a, a.cpId, [1_000_000], { extra: { title: 'Milik A' } });

    const aDeals = await exportCsv(client, a.h.finance, DEALS_CSV);
    expect(aDeals.lines).to.have.length(2);
    expect(aDeals.res.text).to.include('Milik A').and.not.include('Rahasia B');
    const aPayouts = await exportCsv(client, a.h.finance, PAYOUTS_CSV);
    expect(aPayouts.lines).to.deep.equal([PAYOUT_HEADER]);
    const bPayouts = await exportCsv(client, b.h.finance, PAYOUTS_CSV);
    expect(bPayouts.lines).to.have.length(2);

    const audit = await client.get('/v1/enterprise/audit/export.csv').set(a.h.finance);
    const attempts: [string, string][] = [
      [DEALS_CSV, bPayouts.id], // B's export
      [PAYOUTS_CSV, bPayouts.id],
      [DEALS_CSV, aPayouts.id], // A's own, of the other kind
      [PAYOUTS_CSV, aDeals.id],
      [DEALS_CSV, audit.body.data.export_id as string], // A's audit export
      [DEALS_CSV, 'nope'],
      [PAYOUTS_CSV, '5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3'],
    ];
    for (const [path, id] of attempts) {
      const res = await client.get(`${path}?export_id=${id}`).set(a.h.finance);
      expect([res.status, res.body.error?.code], `${path} ${id}`).to.deep.equal([404, 'NOT_FOUND']);
    }
    // The audit route does not serve a deals export either.
    const wrong = await client.get(`/v1/enterprise/audit/export.csv?export_id=${aDeals.id}`).set(a.h.finance);
    expect(wrong.status).to.equal(404);
  });
});
