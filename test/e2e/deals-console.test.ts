/**
 * Enterprise deals in the operator console in a real browser (decision 0018, issue 26): an
 * admin signs in, opens Funding to confirm, confirms a live milestone's funding, opens the
 * deal's page and overrides its fee split; the milestone is funded on the ledger and only
 * the unfunded milestone's shares change.
 */
import { expect } from 'chai';
import { db } from '../../shared/db.js';
import { balanceOf, checkLedger } from '../../shared/ledger/index.js';
import { activateVia, counterpartyVia, createDealVia, dealBody, dealRow, feedRows, milestoneRows } from '../factories/deals.js';
import { createWorkspace, headersOf, sessionOf } from '../factories/enterprise.js';
import { createUser, DEFAULT_PASSWORD } from '../factories/users.js';
import { api } from '../helpers/app.js';
import { newPage, useHarness } from './browser.js';

describe('operator console deals in headless Chromium (decision 0018)', function () {
  this.timeout(60_000);
  const harnessOf = useHarness();

  it('an admin confirms a live milestone, opens its deal and overrides the fee split', async () => {
    const admin = (await createUser({ role: 'admin', fullName: 'Staf Dana' })).user;
    // A live workspace with a verified counterparty; the deal made and activated over the API.
    const client = api();
    const { workspace, owner } = await createWorkspace(undefined, 'Pabrik Baja Timur');
    await db('workspaces').where({ id: workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
    const h = headersOf(await sessionOf(owner));
    const cpId = await counterpartyVia(client, h, { name: 'PT Bijih Besi' });
    await db('counterparties').where({ id: cpId }).update({ kyb_status: 'verified' });
    const made = await createDealVia(client, h, dealBody(cpId, [1_000_000, 2_000_001], { title: 'Pasokan bijih besi' }));
    const deal = await activateVia(client, h, made.deal.id);
    const [m1, m2] = deal.milestones.map((m) => m.id);

    const { page, problems } = await newPage(harnessOf());
    await page.goto('/admin/funding');
    await page.waitForURL(/\/sign-in\?next=%2Fadmin%2Ffunding/);
    await page.fill('#email', admin.email);
    await page.fill('#password', DEFAULT_PASSWORD);
    await Promise.all([page.waitForURL('**/admin/funding'), page.click('#sign-in-button')]);

    const row = page.locator(`#funding tr[data-id="${m1}"]`);
    const text = (await row.textContent()) ?? '';
    expect(text).to.include('Pabrik Baja Timur').and.include(deal.deal.reference).and.include('Pasokan bijih besi').and.include('1. Tahap 1');
    expect(await row.locator('td.expect').textContent()).to.equal('Rp1.019.999');
    await row.locator('input[name="note"]').fill('BCA ref 7781 diterima');
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await Promise.all([page.waitForURL('**/admin/funding?done=milestone.confirm_funding'), row.locator('button[type="submit"]').click()]);
    expect(asked).to.include('Rp1.019.999').and.include(`milestone 1 of ${String(deal.deal.reference)}`);
    expect(await page.textContent('#flash')).to.include('milestone.confirm_funding');
    expect(await page.locator(`#funding tr[data-id="${m1}"]`).count()).to.equal(0);

    // The second milestone still waits; its deal's page is one click away.
    const next = page.locator(`#funding tr[data-id="${m2}"]`);
    await Promise.all([page.waitForURL(`**/admin/deals/${deal.deal.id}`), next.locator('a.open').click()]);
    expect(await page.textContent('#deal-status')).to.equal('funded');
    expect(await page.textContent('#fee-allocation')).to.equal('buyer');
    expect(await page.textContent(`#milestones tr[data-id="${m1}"] td.status`)).to.equal('funded');

    await page.selectOption('#override select[name="fee_allocation"]', 'split');
    await page.fill('#override input[name="fee_buyer_percent"]', '50');
    await page.fill('#override input[name="reason"]', 'Kedua pihak sepakat biaya dibagi dua');
    await page.fill('#override input[name="note"]', 'Surat 12/XI');
    page.once('dialog', (d) => void d.accept());
    await Promise.all([page.waitForURL(`**/admin/deals/${deal.deal.id}?done=deal.fee_allocation`), page.click('#override button[type="submit"]')]);
    expect(await page.textContent('#flash')).to.include('deal.fee_allocation');
    expect(await page.textContent('#fee-allocation')).to.equal('split');
    expect(await page.textContent('#buyer-fee')).to.equal('Rp30.000');
    expect(await page.textContent('#seller-fee')).to.equal('Rp30.000');
    expect(await page.textContent(`#milestones tr[data-id="${m2}"] td.seller-fee`)).to.equal('Rp30.000');

    // In the database: the first milestone funded on the ledger with its shares kept, the second re-spread.
    const [r1, r2] = await milestoneRows(deal.deal.id);
    expect(r1).to.deep.include({ status: 'funded', funding_method: 'wire', buyer_fee: 19_999, seller_fee: 0, funding_amount: 1_019_999 });
    expect(r2).to.deep.include({ status: 'awaiting_funding', buyer_fee: 10_001, seller_fee: 30_000, funding_amount: 2_010_002, payout_amount: 1_970_001 });
    expect(await dealRow(deal.deal.id)).to.deep.include({ fee_allocation: 'split', fee_buyer_percent: 50, buyer_fee: 30_000, seller_fee: 30_000 });
    expect(await balanceOf(db, { milestoneId: m1!, currency: 'IDR' })).to.equal(1_000_000);
    expect(await checkLedger(db)).to.deep.equal([]);
    const audit = (await db('staff_audit').where({ actor_id: admin.id }).orderBy('id')) as { action: string; target_id: string; note: string }[];
    expect(audit.map((a) => [a.action, a.target_id, a.note])).to.deep.equal([
      ['milestone.funding_confirmed', m1, 'BCA ref 7781 diterima'],
      ['deal.fee_allocation_overridden', deal.deal.id, 'Surat 12/XI'],
    ]);
    const overridden = (await feedRows(workspace.id, deal.deal.id)).filter((e) => e.event === 'deal.fee_allocation_overridden');
    expect(overridden).to.have.length(1);
    expect(overridden[0]).to.deep.include({ actor_id: null, actor_label: 'Operator' });
    expect(overridden[0]!.summary).to.include('Kedua pihak sepakat biaya dibagi dua');
    expect(problems).to.deep.equal([]);
    await page.context().close();
  });
});
