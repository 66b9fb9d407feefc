/**
 * Decision 0026: an identical export (same workspace, kind and range) made ready within
 * EXPORT_REUSE_MS is answered again rather than built anew; a workspace's unexpired exports
 * are capped in bytes (config.exportBytesPerWorkspace), over it 429 EXPORT_STORAGE_FULL.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows } from '../../helpers/auth-signin-util.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { EXPORT_REUSE_MS } from '../../../shared/enterprise/exports.js';
import { at, exportCsv, reportWorld, REPORTS } from './support.js';

const DEALS_CSV = `${REPORTS}/deals.csv`;
const AUDIT_CSV = '/v1/enterprise/audit/export.csv';

describe('enterprise exports: reuse of a recent identical export, and a byte cap per workspace (decision 0026)', () => {
  const client = api();
  const before = config.exportBytesPerWorkspace;
  afterEach(() => {
    config.exportBytesPerWorkspace = before;
  });

  it('the same kind and range again within the window answers the ready export (200, same id); another range, kind or workspace, or after the window, builds anew', async () => {
    at('2026-11-20T10:00:00Z');
    const w = await reportWorld(client);
    const first = await exportCsv(client, w.h.finance, DEALS_CSV, '?from=2026-11-01&to=2026-11-20');
    const exportsOf = () => countRows('enterprise_exports', { workspace_id: w.workspace.id });
    expect(await exportsOf()).to.equal(1);

    clock.advance(EXPORT_REUSE_MS - 1000);
    const again = await client.get(`${DEALS_CSV}?from=2026-11-01&to=2026-11-20`).set(w.h.owner).buffer(true);
    expect(again.status, again.text).to.equal(200);
    expect(again.headers['content-disposition']).to.equal(`attachment; filename="deals-${first.id}.csv"`);
    expect(again.text).to.equal(first.res.text);
    expect(await exportsOf()).to.equal(1);

    // A different range, or another kind, is a new export.
    expect((await client.get(`${DEALS_CSV}?from=2026-11-02&to=2026-11-20`).set(w.h.finance)).status).to.equal(202);
    expect((await client.get(`${AUDIT_CSV}?from=2026-11-01&to=2026-11-20`).set(w.h.finance)).status).to.equal(202);
    expect(await exportsOf()).to.equal(3);
    // Another workspace never gets this one's export.
    const other = await reportWorld(client, 'Lain');
    const theirs = await client.get(`${DEALS_CSV}?from=2026-11-01&to=2026-11-20`).set(other.h.finance);
    expect(theirs.status).to.equal(202);
    expect(theirs.body.data.export_id).to.not.equal(first.id);

    // Past the window: built anew.
    clock.advance(2000);
    const late = await client.get(`${DEALS_CSV}?from=2026-11-01&to=2026-11-20`).set(w.h.finance);
    expect(late.status).to.equal(202);
    expect(late.body.data.export_id).to.not.equal(first.id);
  });

  it('a pending identical export is not reused as if ready: the request still gets its own', async () => {
    at('2026-11-20T10:00:00Z');
    const w = await reportWorld(client);
    const a = await client.get(`${DEALS_CSV}?from=2026-11-01&to=2026-11-20`).set(w.h.finance);
    const b = await client.get(`${DEALS_CSV}?from=2026-11-01&to=2026-11-20`).set(w.h.finance);
    expect([a.status, b.status]).to.deep.equal([202, 202]);
    expect(a.body.data.export_id).to.not.equal(b.body.data.export_id);
  });

  it('over the byte cap a new export is 429 EXPORT_STORAGE_FULL with Retry-After until the oldest expires; a fetch by id still works', async () => {
    at('2026-11-20T10:00:00Z');
    const w = await reportWorld(client);
    const first = await exportCsv(client, w.h.finance, DEALS_CSV, '?from=2026-11-01&to=2026-11-20');
    const stored = Number(
      (await db('enterprise_export_parts').where({ export_id: first.id }).first<{ n: string }>(db.raw('sum(octet_length(body)) AS n'))).n,
    );
    expect(stored).to.be.greaterThan(0);
    config.exportBytesPerWorkspace = stored; // the one export fills the workspace's share

    clock.advance(3600_000);
    const refused = await client.get(`${DEALS_CSV}?from=2026-11-02&to=2026-11-20`).set(w.h.finance);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(429);
    expect(refused.body.error.code).to.equal('EXPORT_STORAGE_FULL');
    expect(Number(refused.headers['retry-after'])).to.equal(23 * 3600);
    expect(await countRows('enterprise_exports', { workspace_id: w.workspace.id })).to.equal(1);
    // The stored one is still fetched by id.
    expect((await client.get(`${DEALS_CSV}?export_id=${first.id}`).set(w.h.finance)).status).to.equal(200);
    // Another workspace is not held back.
    const other = await reportWorld(client, 'Lain');
    expect((await client.get(`${DEALS_CSV}?from=2026-11-02&to=2026-11-20`).set(other.h.finance)).status).to.equal(202);

    // One byte under the cap: allowed again.
    config.exportBytesPerWorkspace = stored + 1;
    expect((await client.get(`${DEALS_CSV}?from=2026-11-03&to=2026-11-20`).set(w.h.finance)).status).to.equal(202);
  });
});
