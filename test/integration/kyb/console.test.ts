/**
 * The operator console's KYB review over HTTP (decision 0017): the queue (submitted
 * applications, oldest submission first), one application with its documents opened
 * through links signed for the staff member, and the three decisions, each through the
 * review service (staff audit, the subject's status) with the console's CSRF and refusals.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { REVIEW_ACCOUNT_NO, REVIEW_NIK, submittedApplication } from '../../factories/kyb-review.js';
import { createUser, signIn } from '../../factories/users.js';
import { photo } from '../../helpers/hostile-files.js';

const agent = () => supertest.agent(createApp().callback());
const tokenIn = (text: string): string => /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? '';
const form = (pairs: [string, string][]) => new URLSearchParams(pairs).toString();

async function adminAgent() {
  const admin = (await createUser({ role: 'admin', fullName: 'Staf KYB' })).user;
  const browser = agent();
  await signIn(browser, admin.email);
  return { admin, browser };
}

const statusOf = async (id: string) => (await db('kyb_applications').where({ id }).first<{ status: string }>('status')).status;

describe('operator console: KYB review (decision 0017)', () => {
  it('sends anonymous visitors to sign in and refuses non-staff (pages and decisions)', async () => {
    const { application, owner } = await submittedApplication();
    const anon = await agent().get('/admin/kyb');
    expect(anon.status).to.equal(303);
    expect(anon.headers.location).to.equal(`/sign-in?next=${encodeURIComponent('/admin/kyb')}`);

    // A signed-in non-admin: the applicant, the workspace's owner.
    const browser = agent();
    const csrf = await signIn(browser, owner.email);
    for (const path of ['/admin/kyb', `/admin/kyb/${application.id}`]) {
      const res = await browser.get(path);
      expect(res.status, path).to.equal(403);
      expect(res.text).to.not.include('Budi Santoso');
    }
    for (const [move, body] of [
      ['approve', { _csrf: csrf, risk_tier: 'low' }],
      ['reject', { _csrf: csrf, reason: 'no' }],
      ['request-changes', { _csrf: csrf, change_field: 'company.npwp', change_note: 'x' }],
    ] as const) {
      const res = await browser.post(`/admin/kyb/${application.id}/${move}`).type('form').send(body);
      expect(res.status, move).to.equal(403);
    }
    expect(await statusOf(application.id)).to.equal('submitted');
  });

  it('lists submitted applications oldest submission first, with their subject, and counts them on the overview', async () => {
    const base = clock.nowMs() - 6 * 3_600_000;
    // Made out of order: the list must follow the submission times.
    const late = await submittedApplication({ name: 'Gamma Niaga', counterparty: 'Beta Supplier', at: new Date(base + 3 * 3_600_000) });
    const first = await submittedApplication({ name: 'Alpha Retail', at: new Date(base + 1 * 3_600_000) });
    const middle = await submittedApplication({ name: 'Delta <Dagang>', at: new Date(base + 2 * 3_600_000) });
    await submittedApplication({ name: 'Epsilon Decided' }).then(async (e) => {
      await db('kyb_applications').where({ id: e.application.id }).update({ status: 'rejected', decided_at: clock.now(), decision_reason: 'x' });
    });

    const { browser } = await adminAgent();
    const res = await browser.get('/admin/kyb');
    expect(res.status).to.equal(200);
    expect(res.headers['content-security-policy']).to.include("script-src 'self'");
    const ids = [...res.text.matchAll(/<tr data-id="([0-9a-f-]{36})"/g)].map((m) => m[1]);
    expect(ids).to.deep.equal([first.application.id, middle.application.id, late.application.id]);
    expect(res.text).to.include('aria-current="page">KYB</a>');
    expect(res.text).to.include('Delta &lt;Dagang&gt;').and.not.include('Delta <Dagang>');
    expect(res.text).to.include('Beta Supplier').and.include('Gamma Niaga').and.include('Counterparty').and.include('Workspace application');
    expect(res.text).to.include(`href="/admin/kyb/${first.application.id}"`);
    const row = res.text.slice(res.text.indexOf(`data-id="${first.application.id}"`)).split('</tr>')[0]!;
    expect(row).to.include('v1').and.include('<td>pt</td>');
    expect(row).to.include(new Date(base + 3_600_000).toISOString().replace('T', ' ').slice(0, 16));

    const overview = await browser.get('/admin');
    expect(overview.text).to.match(/id="count-kyb">3</).and.include('href="/admin/kyb"');
  });

  it('shows an application with last four digits only and document links signed for the staff member', async () => {
    const bytes = await photo('jpeg');
    const { application } = await submittedApplication({ name: 'Toko Dokumen', bytes });
    const { admin, browser } = await adminAgent();
    const res = await browser.get(`/admin/kyb/${application.id}`);
    expect(res.status).to.equal(200);
    expect(res.text).to.include('Jl. Jend. Sudirman 1, Jakarta').and.include('012345678901234').and.include('Budi Santoso').and.include('Direktur Utama');
    expect(res.text).to.include(`···· ${REVIEW_NIK.slice(-4)}`).and.include(`···· ${REVIEW_ACCOUNT_NO.slice(-4)}`);
    expect(res.text).to.not.include(REVIEW_NIK).and.not.include(REVIEW_ACCOUNT_NO);
    const row = (await db('kyb_applications').where({ id: application.id }).first()) as { bank_account_number_sealed: string; people: { id_number_sealed: string }[] };
    expect(res.text).to.not.include(row.bank_account_number_sealed).and.not.include(row.people[0]!.id_number_sealed);
    expect(res.text).to.include('id="approve"').and.include('id="reject"').and.include('id="request-changes"');

    const links = [...res.text.matchAll(/class="doc-link"/g)];
    expect(links).to.have.length(4);
    const hrefs = [...res.text.matchAll(/href="(\/v1\/upload\/files\/[^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
    expect(hrefs).to.have.length(4);
    for (const href of hrefs) {
      const u = new URL(href, 'http://x');
      expect(u.searchParams.get('u')).to.equal(admin.id);
      expect(Number(u.searchParams.get('exp')) * 1000 - clock.nowMs()).to.be.within(290_000, 300_000);
    }
    const file = await browser.get(hrefs[0]!).responseType('blob');
    expect(file.status).to.equal(200);
    expect(createHash('sha256').update(file.body as Buffer).digest('hex')).to.equal(createHash('sha256').update(bytes).digest('hex'));
    // Signed for the staff member alone: another admin's session is refused.
    const other = (await adminAgent()).browser;
    expect((await other.get(hrefs[0]!)).status).to.equal(403);

    expect((await browser.get('/admin/kyb/00000000-0000-4000-8000-000000000000')).status).to.equal(404);
    expect((await browser.get('/admin/kyb/not-an-id')).status).to.equal(404);
  });

  it('requests changes: rows of field and note (at least one), a new draft version, the audit note; then nothing to decide', async () => {
    const { application, workspace } = await submittedApplication({ name: 'Toko Ubah' });
    const { admin, browser } = await adminAgent();
    const page = await browser.get(`/admin/kyb/${application.id}`);
    const token = tokenIn(page.text);
    const url = `/admin/kyb/${application.id}/request-changes`;

    expect((await browser.post(url).type('form').send(form([['change_field', 'company.npwp'], ['change_note', 'x']]))).status).to.equal(403);
    const none = await browser.post(url).type('form').send(form([['_csrf', token], ['change_field', ''], ['change_note', '']]));
    expect(none.status).to.equal(400);
    expect(none.text).to.include('data-code="INVALID_BODY"');
    const half = await browser.post(url).type('form').send(form([['_csrf', token], ['change_field', 'company.npwp'], ['change_note', '']]));
    expect(half.status).to.equal(400);
    expect(await statusOf(application.id)).to.equal('submitted');

    const ok = await browser.post(url).type('form').send(
      form([
        ['_csrf', token],
        ['change_field', 'company.npwp'],
        ['change_note', 'NPWP tidak cocok dengan akta'],
        ['change_field', ''],
        ['change_note', ''],
        ['change_field', 'documents.bank_proof'],
        ['change_note', 'Rekening koran lebih dari 3 bulan'],
        ['note', 'cek manual'],
      ]),
    );
    expect(ok.status, ok.text).to.equal(303);
    expect(ok.headers.location).to.equal('/admin/kyb?done=kyb.request_changes');
    const versions = (await db('kyb_applications').where({ workspace_id: workspace.id }).whereNull('counterparty_id').orderBy('version')) as {
      id: string;
      status: string;
      change_requests: { field: string; note: string }[];
    }[];
    expect(versions.map((v) => v.status)).to.deep.equal(['changes_requested', 'draft']);
    expect(versions[0]!.change_requests).to.deep.equal([
      { field: 'company.npwp', note: 'NPWP tidak cocok dengan akta' },
      { field: 'documents.bank_proof', note: 'Rekening koran lebih dari 3 bulan' },
    ]);
    expect(((await db('workspaces').where({ id: workspace.id }).first()) as { kyb_status: string }).kyb_status).to.equal('draft');
    const audit = (await db('staff_audit').where({ target_id: application.id })) as { action: string; actor_id: string; note: string }[];
    expect(audit).to.have.length(1);
    expect(audit[0]).to.deep.include({ action: 'kyb.changes_requested', actor_id: admin.id, note: 'cek manual' });

    const queue = await browser.get('/admin/kyb?done=kyb.request_changes');
    expect(queue.text).to.include('id="flash"').and.include('Nothing to review.');
    const next = await browser.get(`/admin/kyb/${versions[1]!.id}`);
    expect(next.text).to.include('id="change-requests"').and.include('NPWP tidak cocok dengan akta').and.include('id="no-decision"');
    expect(next.text).to.not.include('id="approve"');

    // The reviewed version is no longer submitted: the service's refusal, as the console shows refusals.
    const again = await browser.post(`/admin/kyb/${application.id}/approve`).type('form').send({ _csrf: token, risk_tier: 'low' });
    expect(again.status).to.equal(409);
    expect(again.text).to.include('data-code="INVALID_STATE"');
  });

  it('approves with a risk tier: the workspace goes live', async () => {
    const { application, workspace } = await submittedApplication({ name: 'Toko Setuju' });
    const { admin, browser } = await adminAgent();
    const token = tokenIn((await browser.get(`/admin/kyb/${application.id}`)).text);
    const url = `/admin/kyb/${application.id}/approve`;
    expect((await browser.post(url).type('form').send({ _csrf: 'wrong', risk_tier: 'low' })).status).to.equal(403);
    const bad = await browser.post(url).type('form').send({ _csrf: token, risk_tier: 'extreme' });
    expect(bad.status).to.equal(400);
    expect(bad.text).to.include('risk_tier must be');
    expect(await statusOf(application.id)).to.equal('submitted');

    const ok = await browser.post(url).type('form').send({ _csrf: token, risk_tier: 'elevated', note: 'semua dokumen sah' });
    expect(ok.status).to.equal(303);
    expect(ok.headers.location).to.equal('/admin/kyb?done=kyb.approve');
    expect(await db('kyb_applications').where({ id: application.id }).first()).to.deep.include({ status: 'approved', risk_tier_assigned: 'elevated', decided_by: admin.id });
    expect(await db('workspaces').where({ id: workspace.id }).first()).to.deep.include({ is_sandbox: false, kyb_status: 'verified', risk_tier: 'elevated' });
    const audit = (await db('staff_audit').where({ target_id: application.id })) as { action: string; note: string }[];
    expect(audit.map((a) => [a.action, a.note])).to.deep.equal([['kyb.approved', 'semua dokumen sah']]);

    const again = await browser.post(url).type('form').send({ _csrf: token, risk_tier: 'low' });
    expect(again.status).to.equal(409);
    expect(again.text).to.include('data-code="INVALID_STATE"');
    const shown = await browser.get(`/admin/kyb/${application.id}`);
    expect(shown.text).to.include('id="no-decision"').and.include('live');
  });

  it("rejects with a reason (a counterparty's application): the counterparty is rejected", async () => {
    const { application } = await submittedApplication({ name: 'Toko Induk', counterparty: 'Pemasok Tolak' });
    const { browser } = await adminAgent();
    const page = await browser.get(`/admin/kyb/${application.id}`);
    expect(page.text).to.include('Counterparty of Toko Induk').and.include('Pemasok Tolak');
    const token = tokenIn(page.text);
    const url = `/admin/kyb/${application.id}/reject`;
    const empty = await browser.post(url).type('form').send({ _csrf: token, reason: ' ' });
    expect(empty.status).to.equal(400);
    expect(await statusOf(application.id)).to.equal('submitted');

    const ok = await browser.post(url).type('form').send({ _csrf: token, reason: 'Akta tidak terbaca' });
    expect(ok.status).to.equal(303);
    expect(ok.headers.location).to.equal('/admin/kyb?done=kyb.reject');
    expect(await db('kyb_applications').where({ id: application.id }).first()).to.deep.include({ status: 'rejected', decision_reason: 'Akta tidak terbaca' });
    expect(((await db('counterparties').where({ id: application.counterparty_id }).first()) as { kyb_status: string }).kyb_status).to.equal('rejected');
    expect((await db('staff_audit').where({ target_id: application.id, action: 'kyb.rejected' })).length).to.equal(1);
  });
});
