/** Issue 12 in a real browser: an admin signs in and rules a dispute in the operator console. */
import { expect } from 'chai';
import { db } from '../../shared/db.js';
import { createEscrow } from '../factories/escrows.js';
import { createUser, DEFAULT_PASSWORD } from '../factories/users.js';
import { newPage, useHarness } from './browser.js';

describe('operator console in headless Chromium (issue 12)', function () {
  this.timeout(60_000);
  const harnessOf = useHarness();

  it('an admin signs in, opens the disputes and rules one (release), recorded in the audit trail', async () => {
    const admin = (await createUser({ role: 'admin', fullName: 'Staf Satu' })).user;
    const { escrow } = await createEscrow({ status: 'disputed', item: 'Kamera bekas' });
    const dispute = (await db('disputes').where({ escrow_id: escrow.id }).first()) as { id: string };

    const { page, problems } = await newPage(harnessOf());
    await page.goto('/admin/disputes');
    await page.waitForURL(/\/sign-in\?next=%2Fadmin%2Fdisputes/);
    await page.fill('#email', admin.email);
    await page.fill('#password', DEFAULT_PASSWORD);
    await Promise.all([page.waitForURL('**/admin/disputes'), page.click('#sign-in-button')]);

    const row = page.locator(`tr[data-id="${dispute.id}"]`);
    expect(await row.textContent()).to.include('Kamera bekas');
    await row.locator('select[name="outcome"]').selectOption('release');
    await row.locator('input[name="note"]').fill('Resi valid, barang diterima');
    page.once('dialog', (d) => void d.accept());
    await Promise.all([page.waitForURL('**/admin/disputes?done=dispute.resolve'), row.locator('button[type="submit"]').click()]);
    expect(await page.textContent('#flash')).to.include('dispute.resolve');
    expect(await page.locator(`tr[data-id="${dispute.id}"]`).count()).to.equal(0);

    expect(await db('disputes').where({ id: dispute.id }).first()).to.deep.include({ status: 'resolved', outcome: 'release' });
    expect(((await db('escrows').where({ id: escrow.id }).first()) as { status: string }).status).to.equal('released');
    const audit = (await db('staff_audit').where({ target_id: dispute.id })) as { actor_id: string; note: string }[];
    expect(audit).to.have.length(1);
    expect(audit[0]).to.deep.include({ actor_id: admin.id, note: 'Resi valid, barang diterima' });
    expect(problems).to.deep.equal([]);
    await page.context().close();
  });
});
