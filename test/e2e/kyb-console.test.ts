/**
 * KYB review in a real browser (decision 0017): an admin signs in, opens the KYB queue and
 * an application, opens one of its documents through the link signed for them, and
 * approves it; the workspace is then live.
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { db } from '../../shared/db.js';
import { REVIEW_NIK, submittedApplication } from '../factories/kyb-review.js';
import { createUser, DEFAULT_PASSWORD } from '../factories/users.js';
import { photo } from '../helpers/hostile-files.js';
import { newPage, useHarness } from './browser.js';

describe('operator console KYB review in headless Chromium (decision 0017)', function () {
  this.timeout(60_000);
  const harnessOf = useHarness();

  it('an admin opens the queue, an application and a document, then approves it: the workspace goes live', async () => {
    const admin = (await createUser({ role: 'admin', fullName: 'Staf KYB' })).user;
    const bytes = await photo('jpeg');
    const { application, workspace } = await submittedApplication({ name: 'Toko Kopi Senja', bytes });

    const { page, problems } = await newPage(harnessOf());
    await page.goto('/admin/kyb');
    await page.waitForURL(/\/sign-in\?next=%2Fadmin%2Fkyb/);
    await page.fill('#email', admin.email);
    await page.fill('#password', DEFAULT_PASSWORD);
    await Promise.all([page.waitForURL('**/admin/kyb'), page.click('#sign-in-button')]);

    const row = page.locator(`#kyb tr[data-id="${application.id}"]`);
    expect(await row.textContent()).to.include('Toko Kopi Senja').and.include('Workspace application');
    await Promise.all([page.waitForURL(`**/admin/kyb/${application.id}`), row.locator('a.open').click()]);
    expect(await page.textContent('#application-status')).to.equal('submitted');
    const people = (await page.textContent('#people')) ?? '';
    expect(people).to.include('Budi Santoso').and.include(`···· ${REVIEW_NIK.slice(-4)}`).and.not.include(REVIEW_NIK);

    // The document opens in a new tab, through the file route, for this admin's session.
    const links = page.locator('a.doc-link');
    expect(await links.count()).to.equal(4);
    const [tab, served] = await Promise.all([
      page.context().waitForEvent('page'),
      page.context().waitForEvent('response', (r) => r.url().includes('/v1/upload/files/')),
      links.first().click(),
    ]);
    expect(served.status()).to.equal(200);
    expect(served.headers()['content-type']).to.equal('image/jpeg');
    expect(createHash('sha256').update(await served.body()).digest('hex')).to.equal(createHash('sha256').update(bytes).digest('hex'));
    await tab.waitForLoadState();
    expect(Number(await tab.evaluate('document.images[0]?.naturalWidth ?? 0'))).to.equal(64);
    await tab.close();

    await page.selectOption('#approve select[name="risk_tier"]', 'low');
    await page.fill('#approve input[name="note"]', 'Dokumen lengkap dan sah');
    page.once('dialog', (d) => void d.accept());
    await Promise.all([page.waitForURL('**/admin/kyb?done=kyb.approve'), page.click('#approve button[type="submit"]')]);
    expect(await page.textContent('#flash')).to.include('kyb.approve');
    expect(await page.locator(`#kyb tr[data-id="${application.id}"]`).count()).to.equal(0);

    expect(await db('workspaces').where({ id: workspace.id }).first()).to.deep.include({ is_sandbox: false, kyb_status: 'verified', risk_tier: 'low' });
    expect(await db('kyb_applications').where({ id: application.id }).first()).to.deep.include({ status: 'approved', decided_by: admin.id });
    const audit = (await db('staff_audit').where({ target_id: application.id })) as { actor_id: string; action: string; note: string }[];
    expect(audit).to.have.length(1);
    expect(audit[0]).to.deep.include({ actor_id: admin.id, action: 'kyb.approved', note: 'Dokumen lengkap dan sah' });
    expect(problems).to.deep.equal([]);
    await page.context().close();
  });
});
