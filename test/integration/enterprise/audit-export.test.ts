/**
 * The audit export (enterprise spec 4.9: finance, 5 per minute; decision 0011): requested
 * over HTTP, built by the exports worker from the event feed, fetched as a CSV attachment;
 * range rules, 10,000 rows with X-Export-Truncated, formula cells defused, a re-run job
 * changes nothing, another workspace's export is 404.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { runJobs } from '../../helpers/jobs.js';
import { addMember, createWorkspace, headersOf, sessionOf, workspaceKey, type Cred } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { appendEvent } from '../../../shared/enterprise/events.js';
import { buildAuditExport, EXPORT_RETENTION_MS, purgeExpiredExports } from '../../../shared/enterprise/exports.js';
import { MAINTENANCE_SCHEDULES } from '../../../workers/registry.js';

const PATH = '/v1/enterprise/audit/export.csv';

describe('enterprise audit export', () => {
  const client = api();

  async function world() {
    clock.set(new Date('2026-11-27T09:00:00Z'));
    const ws = await createWorkspace();
    const fin = await addMember(ws.workspace.id, 'finance');
    return { ...ws, fin, cred: await sessionOf(fin.user) };
  }

  const fetchCsv = (cred: Cred, id: string) => client.get(`${PATH}?export_id=${id}`).set(headersOf(cred)).buffer(true);

  it('202 with an export id, built by the worker, then the CSV as an attachment', async () => {
    const w = await world();
    await db.transaction((trx) => appendEvent(trx, w.workspace.id, { event: 'counterparty.created', entityType: 'counterparty', actor: { id: w.fin.user.id, name: '=HYPERLINK("x")' }, summary: 'Added "Sumber", with comma' }));
    const req = await client.get(`${PATH}?from=2026-11-01&to=2026-11-27`).set(headersOf(w.cred));
    expect(req.status, JSON.stringify(req.body)).to.equal(202);
    expect(req.headers['cache-control']).to.equal('private, no-store');
    const id = req.body.data.export_id as string;
    expect(req.body.data).to.include({ status: 'pending', from: '2026-11-01', to: '2026-11-27' });
    expect(req.headers.location).to.equal(`${PATH}?export_id=${id}`);
    expect((await fetchCsv(w.cred, id)).status).to.equal(202);
    const ran = await runJobs(['exports']);
    expect(ran.map((j) => j.name)).to.deep.equal(['exports.audit-csv']);
    const res = await fetchCsv(w.cred, id);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^text\/csv/);
    expect(res.headers['content-disposition']).to.match(/^attachment; filename="audit-/);
    expect(res.headers['cache-control']).to.equal('private, no-store');
    expect(res.headers['x-export-truncated']).to.equal(undefined);
    const lines = res.text.trimEnd().split('\r\n');
    expect(lines[0]).to.equal('seq,created_at,event,entity_type,entity_id,deal_id,deal_reference,actor_id,actor_name,actor_label,amount,summary,livemode');
    expect(lines).to.have.length(3);
    expect(lines[1]).to.match(/^1,2026-11-27T09:00:00\.000Z,workspace\.created,account,/);
    expect(lines[2]).to.include(`"'=HYPERLINK(""x"")"`);
    expect(lines[2]).to.include('"Added ""Sumber"", with comma"');
    expect(lines[2]!.endsWith(',false')).to.equal(true);
    // Nothing is left to run; a job sent again finds the export ready.
    expect(await runJobs(['exports'])).to.deep.equal([]);
    expect(await buildAuditExport(id)).to.deep.equal({ status: 'already' });
    expect((await fetchCsv(w.cred, id)).text).to.equal(res.text);
  });

  it('only events inside the range (UTC days, both included); the default is the last 90 days', async () => {
    const w = await world();
    clock.set(new Date('2026-11-20T23:59:59Z'));
    await db.transaction((trx) => appendEvent(trx, w.workspace.id, { event: 'a.in', entityType: 'x', summary: 'in' }));
    clock.set(new Date('2026-11-21T00:00:00Z'));
    await db.transaction((trx) => appendEvent(trx, w.workspace.id, { event: 'b.out', entityType: 'x', summary: 'out' }));
    const req = await client.get(`${PATH}?from=2026-11-20&to=2026-11-20`).set(headersOf(w.cred));
    await runJobs(['exports']);
    const text = (await fetchCsv(w.cred, req.body.data.export_id as string)).text;
    expect(text).to.include('a.in').and.not.include('b.out').and.not.include('workspace.created');
    const def = await client.get(PATH).set(headersOf(w.cred));
    expect(def.body.data).to.include({ from: '2026-08-24', to: '2026-11-21' });
  });

  it('400 INVALID_QUERY for a bad date, from after to, or more than 366 days', async () => {
    const w = await world();
    for (const q of ['from=2026-02-30', 'to=yesterday', 'from=2026-11-10&to=2026-11-01', 'from=2025-01-01&to=2026-01-02']) {
      const res = await client.get(`${PATH}?${q}`).set(headersOf(w.cred));
      expect(res.status, q).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_QUERY');
    }
    expect((await client.get(`${PATH}?from=2025-01-01&to=2026-01-01`).set(headersOf(w.cred))).status).to.equal(202);
  });

  it('at most 10,000 rows with X-Export-Truncated: true', async () => {
    const w = await world();
    await db.raw(
      `INSERT INTO workspace_events (workspace_id, seq, event, entity_type, summary, livemode, created_at)
       SELECT ?, g + 1, 'bulk.row', 'x', 'row', false, ? FROM generate_series(1, 10001) g`,
      [w.workspace.id, clock.now()],
    );
    const req = await client.get(PATH).set(headersOf(w.cred));
    await runJobs(['exports']);
    const res = await fetchCsv(w.cred, req.body.data.export_id as string);
    expect(res.headers['x-export-truncated']).to.equal('true');
    expect(res.text.trimEnd().split('\r\n')).to.have.length(10_001);
  });

  it('5 new exports per minute; fetching one does not count', async () => {
    const w = await world();
    let id = '';
    for (let i = 0; i < 5; i += 1) {
      const r = await client.get(PATH).set(headersOf(w.cred));
      expect(r.status).to.equal(202);
      id = r.body.data.export_id as string;
    }
    for (let i = 0; i < 3; i += 1) expect((await fetchCsv(w.cred, id)).status).to.equal(202);
    const over = await client.get(PATH).set(headersOf(w.cred));
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('RATE_LIMITED');
  });

  it("finance and up only; a finance creator's read+write key may export; another workspace's export is 404", async () => {
    const w = await world();
    const viewer = await sessionOf((await addMember(w.workspace.id, 'viewer')).user);
    expect((await client.get(PATH).set(headersOf(viewer))).body.error.code).to.equal('FORBIDDEN');
    const rw = await workspaceKey(w.workspace.id, w.fin, ['read', 'write']);
    const byKey = await client.get(PATH).set(headersOf({ kind: 'workspace_key', key: rw.key }));
    expect(byKey.status).to.equal(202);
    const other = await createWorkspace();
    const otherFin = await sessionOf(other.owner);
    const res = await fetchCsv(otherFin, byKey.body.data.export_id as string);
    expect(res.status).to.equal(404);
    expect(res.body.error.code).to.equal('NOT_FOUND');
    expect((await fetchCsv(otherFin, 'nope')).status).to.equal(404);
  });

  it('downloads of a ready export by id: 10 per minute per user, then 429 RATE_LIMITED with Retry-After (polling a pending one stays free)', async () => {
    const w = await world();
    const req = await client.get(PATH).set(headersOf(w.cred));
    const id = req.body.data.export_id as string;
    for (let i = 0; i < 15; i += 1) expect((await fetchCsv(w.cred, id)).status).to.equal(202);
    await runJobs(['exports']);
    for (let i = 0; i < 10; i += 1) expect((await fetchCsv(w.cred, id)).status).to.equal(200);
    const over = await fetchCsv(w.cred, id);
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(over.headers['retry-after'])).to.be.within(1, 60);
    // Another user's downloads are counted apart.
    const owner = await sessionOf(w.owner);
    expect((await fetchCsv(owner, id)).status).to.equal(200);
  });

  it('an export is kept 24 hours: the hourly purge then deletes its row and parts, and its id answers 404', async () => {
    expect(MAINTENANCE_SCHEDULES.find((s) => s.job === 'exports.purge-expired')).to.deep.equal({ id: 'purge-exports', job: 'exports.purge-expired', everyMs: 3600_000 });
    expect(EXPORT_RETENTION_MS).to.equal(24 * 3600_000);
    const w = await world();
    const old = (await client.get(PATH).set(headersOf(w.cred))).body.data.export_id as string;
    clock.set(new Date('2026-11-27T10:00:00Z'));
    const young = (await client.get(PATH).set(headersOf(w.cred))).body.data.export_id as string;
    await runJobs(['exports']);
    const parts = async (id: string) => Number((await db('enterprise_export_parts').where({ export_id: id }).count<{ n: string }[]>('* as n'))[0]!.n);
    expect(await parts(old)).to.be.above(0);
    clock.set(new Date('2026-11-28T09:00:00Z'));
    expect(await purgeExpiredExports()).to.deep.equal({ purged: 0 });
    clock.set(new Date('2026-11-28T09:00:00.001Z'));
    expect(await purgeExpiredExports()).to.deep.equal({ purged: 1 });
    expect(await parts(old)).to.equal(0);
    const cred = await sessionOf(w.fin.user);
    expect((await fetchCsv(cred, old)).status).to.equal(404);
    expect((await fetchCsv(cred, young)).status).to.equal(200);
    clock.set(new Date('2026-11-28T10:00:00.001Z'));
    expect(await purgeExpiredExports()).to.deep.equal({ purged: 1 });
    expect(await db('enterprise_exports').where({ workspace_id: w.workspace.id }).count<{ n: string }[]>('* as n')).to.deep.equal([{ n: 0 }]);
  });
});
