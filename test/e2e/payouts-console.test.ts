/**
 * Payouts and rulings in the operator console in a real browser (decision 0019, issue 27):
 * an admin signs in, follows the overview's counts, reveals a payout instruction and
 * verifies what the reveal showed (issue 42), settles one payout, fails another with a
 * reason, rules a disputed milestone as a split with a release amount, and finds the settled
 * payout on the deal's page with the destination it was released to even after the
 * instruction is edited; the database is checked after each move.
 */
import { expect } from 'chai';
import { db } from '../../shared/db.js';
import { checkLedger } from '../../shared/ledger/index.js';
import { feedRows } from '../factories/deals.js';
import { createInstruction } from '../factories/payouts.js';
import { approve, balance, disbursementsOf, fundedDeal, instructionVia, releasePath } from '../factories/releases.js';
import { createUser, DEFAULT_PASSWORD } from '../factories/users.js';
import { api } from '../helpers/app.js';
import { newPage, useHarness } from './browser.js';

describe('operator console payouts and rulings in headless Chromium (decision 0019)', function () {
  this.timeout(60_000);
  const harnessOf = useHarness();

  it('an admin reveals and verifies an instruction, settles a payout, fails another with a reason and rules a dispute as a split', async () => {
    const admin = (await createUser({ role: 'admin', fullName: 'Staf Bayar' })).user;
    const client = api();
    // A live deal's first milestone released to two verified instructions: two queued payouts.
    const r = await fundedDeal(client, 'live', [1_000_000]);
    const mid = r.mids[0]!;
    await approve(mid);
    const first = await instructionVia(client, r, 'Rekening utama', { accountNumber: '6612345678' });
    const second = await instructionVia(client, r, 'Rekening cadangan', { accountNumber: '6698765432' });
    const payout = Number((await db('deal_milestones').where({ id: mid }).first<{ payout_amount: string }>('payout_amount')).payout_amount);
    const released = await client
      .post(releasePath(r.deal.deal.id, mid))
      .set(r.w.h.finance)
      .send({ splits: [{ payout_instruction_id: first, amount: payout - 250_000 }, { payout_instruction_id: second, amount: 250_000 }] });
    expect(released.status, JSON.stringify(released.body)).to.equal(200);
    const byInstruction = new Map((await disbursementsOf(mid)).map((d) => [d.payout_instruction_id, d.id]));
    const [settleId, failId] = [byInstruction.get(first)!, byInstruction.get(second)!];
    // A new destination awaiting verification, and a disputed milestone of another deal (the counterparty bears the fee).
    const pending = await createInstruction(r.w.workspace, r.w.cpId, { label: 'Rekening baru', bankName: 'Bank Mandiri', accountNumber: '7001239999' });
    const disputed = await fundedDeal(client, 'live', [1_000_000], { fee_allocation: 'seller', title: 'Sewa alat berat' }, r.w);
    const dmid = disputed.mids[0]!;
    const dispute = await client.post(`/v1/enterprise/deals/${disputed.deal.deal.id}/milestones/${dmid}/dispute`).set(r.w.h.operator).send({ reason: 'Alat datang rusak' });
    expect(dispute.status, JSON.stringify(dispute.body)).to.equal(200);

    const { page, problems } = await newPage(harnessOf());
    await page.goto('/admin/payouts');
    await page.waitForURL(/\/sign-in\?next=%2Fadmin%2Fpayouts/);
    await page.fill('#email', admin.email);
    await page.fill('#password', DEFAULT_PASSWORD);
    await Promise.all([page.waitForURL('**/admin/payouts'), page.click('#sign-in-button')]);

    // The overview counts what waits and links to each list.
    await page.click('nav.console a[href="/admin"]');
    await page.waitForURL('**/admin');
    expect(await page.textContent('#count-instructions')).to.equal('1');
    expect(await page.textContent('#count-payouts')).to.equal('2');
    expect(await page.textContent('#count-rulings')).to.equal('1');

    // 1. Reveal the new instruction, then verify what the reveal showed.
    await Promise.all([page.waitForURL('**/admin/instructions'), page.click('#overview a[href="/admin/instructions"]')]);
    const instruction = page.locator(`#instructions tr[data-id="${pending.id}"]`);
    const shown = (await instruction.textContent()) ?? '';
    expect(shown).to.include('Rekening baru').and.include('Bank Mandiri').and.include('PT Pemasok Jaya').and.include('…9999').and.not.include('7001239999');
    expect(await instruction.locator('form[action$="/verify"]').count()).to.equal(0);
    await instruction.locator('form.reveal input[name="note"]').fill('Cek sebelum verifikasi');
    await Promise.all([page.waitForURL(`**/admin/instructions/${pending.id}/reveal`), instruction.locator('form.reveal button[type="submit"]').click()]);
    expect(await page.textContent('#account-number')).to.equal('7001239999');
    expect(await page.getAttribute('#revealed', 'data-version')).to.equal('1');
    expect(await page.inputValue('#verify input[name="destination_version"]')).to.equal('1');
    await page.fill('#verify input[name="note"]', 'Telepon balik ke bendahara');
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await Promise.all([page.waitForURL('**/admin/instructions?done=payout_instruction.verify'), page.click('#verify button[type="submit"]')]);
    expect(asked).to.include('Bank Mandiri 7001239999');
    expect(await page.textContent('#flash')).to.include('payout_instruction.verify');
    expect(await page.locator('#none').count()).to.equal(1);
    expect(await db('payout_instructions').where({ id: pending.id }).first('status', 'verified_by')).to.deep.equal({ status: 'verified', verified_by: admin.id });

    // 2. Settle the first payout.
    await Promise.all([page.waitForURL('**/admin/payouts'), page.click('nav.console a[href="/admin/payouts"]')]);
    const toSettle = page.locator(`#payouts tr[data-id="${settleId}"]`);
    expect(await toSettle.textContent()).to.include('Rekening utama').and.include('BCA …5678').and.include(String(r.deal.deal.reference)).and.not.include('6612345678');
    expect(await toSettle.locator('td.amount').textContent()).to.equal(`Rp${(payout - 250_000).toLocaleString('id-ID')}`);
    await toSettle.locator('form.settle input[name="note"]').fill('Transfer BCA 12/11');
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await Promise.all([page.waitForURL('**/admin/payouts?done=disbursement.settle'), toSettle.locator('form.settle button[type="submit"]').click()]);
    expect(asked).to.include('BCA …5678');
    expect(await page.locator(`#payouts tr[data-id="${settleId}"]`).count()).to.equal(0);
    expect(await db('disbursements').where({ id: settleId }).first('status')).to.deep.equal({ status: 'settled' });

    // 3. Fail the second with a reason: its money returns to the milestone.
    const toFail = page.locator(`#payouts tr[data-id="${failId}"]`);
    expect(await toFail.locator('td.amount').textContent()).to.equal('Rp250.000');
    await toFail.locator('form.fail input[name="reason"]').fill('Rekening ditutup');
    page.once('dialog', (d) => void d.accept());
    await Promise.all([page.waitForURL('**/admin/payouts?done=disbursement.fail'), toFail.locator('form.fail button[type="submit"]').click()]);
    expect(await page.textContent('#flash')).to.include('disbursement.fail');
    expect(await page.locator('#payouts tbody tr').count()).to.equal(0);
    expect(await db('disbursements').where({ id: failId }).first('status', 'failure_reason')).to.deep.equal({ status: 'failed', failure_reason: 'Rekening ditutup' });
    expect(await balance(`milestone:${mid}`)).to.equal(250_000);

    // 4. Rule the dispute as a split: Rp600.000 for the counterparty, the rest refunded.
    await Promise.all([page.waitForURL('**/admin/rulings'), page.click('nav.console a[href="/admin/rulings"]')]);
    const ruling = page.locator(`#rulings tr[data-id="${dmid}"]`);
    expect(await ruling.textContent()).to.include('Sewa alat berat').and.include('Alat datang rusak');
    expect(await ruling.locator('td.amount').textContent()).to.equal('Rp1.000.000');
    expect(await ruling.locator('td.seller-fee').textContent()).to.equal('Rp20.000');
    await ruling.locator('select[name="outcome"]').selectOption('split');
    await ruling.locator('input[name="release_amount"]').fill('600000');
    await ruling.locator('input[name="note"]').fill('Separuh alat bisa dipakai');
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await Promise.all([page.waitForURL('**/admin/rulings?done=milestone.resolve_dispute'), ruling.locator('button[type="submit"]').click()]);
    expect(asked).to.include(`milestone 1 of ${String(disputed.deal.deal.reference)}`);
    expect(await page.locator('#none').count()).to.equal(1);
    const ruled = await db('deal_milestones').where({ id: dmid }).first<{ status: string; ruling: string; refunded_amount: number }>('status', 'ruling', 'refunded_amount');
    expect(ruled).to.deep.equal({ status: 'approved', ruling: 'split', refunded_amount: 400_000 });
    expect(await balance(`milestone:${dmid}`)).to.equal(600_000);

    // The overview has nothing left; every move was audited under this admin and in the feed under the operator label.
    await page.click('nav.console a[href="/admin"]');
    await page.waitForURL('**/admin');
    expect([await page.textContent('#count-instructions'), await page.textContent('#count-payouts'), await page.textContent('#count-rulings')]).to.deep.equal(['0', '0', '0']);
    const audit = (await db('staff_audit').where({ actor_id: admin.id }).orderBy('id')) as { action: string; target_id: string; note: string | null }[];
    expect(audit.map((a) => [a.action, a.target_id, a.note])).to.deep.equal([
      ['payout_instruction.revealed', pending.id, 'Cek sebelum verifikasi'],
      ['payout_instruction.verified', pending.id, 'Telepon balik ke bendahara'],
      ['disbursement.settled', settleId, 'Transfer BCA 12/11'],
      ['disbursement.failed', failId, null],
      ['milestone.dispute_resolved', dmid, 'Separuh alat bisa dipakai'],
    ]);
    const staffEvents = (await feedRows(r.w.workspace.id)).filter((e) => ['payout_instruction.verified', 'disbursement.settled', 'disbursement.failed', 'milestone.dispute_resolved'].includes(e.event));
    expect(staffEvents.slice(-4).map((e) => [e.event, e.actor_id, e.actor_label])).to.deep.equal([
      ['payout_instruction.verified', null, 'Operator'],
      ['disbursement.settled', null, 'Operator'],
      ['disbursement.failed', null, 'Operator'],
      ['milestone.dispute_resolved', null, 'Operator'],
    ]);
    expect(await checkLedger(db)).to.deep.equal([]);

    // 5. The settled payout on its deal's page keeps the destination it was released to after the instruction is edited.
    const edited = await client.patch(`/v1/enterprise/payout-instructions/${first}`).set(r.w.h.finance).send({ label: 'Rekening pindah', bank_name: 'Bank Lain', account_number: '6600001111' });
    expect(edited.status, JSON.stringify(edited.body)).to.equal(200);
    await page.goto(`/admin/deals/${r.deal.deal.id}`);
    const kept = page.locator(`#deal-payouts tr[data-id="${settleId}"]`);
    expect(await kept.getAttribute('data-status')).to.equal('settled');
    expect(await kept.locator('td.destination').textContent()).to.include('Rekening utama').and.include('BCA …5678').and.not.include('Bank Lain');
    expect(problems).to.deep.equal([]);
    await page.context().close();
  });
});
