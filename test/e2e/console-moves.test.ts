/**
 * Issue 46 in a real browser: the console's moves not driven elsewhere (test/e2e has the
 * dispute ruling, funding, fee override, KYB approval, reveal and verify, payouts and deal
 * rulings): a queue searched and filtered through its form, a claimed transfer confirmed, a
 * withdrawal approved and another rejected, an order moved from its record page to
 * delivered, an account suspended and reactivated from its page, a dispute ruled from its
 * escrow's page. Each lands with its flash, and the audit keeps who and why.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { db } from '../../shared/db.js';
import * as orders from '../../shared/orders/service.js';
import { pay } from '../../shared/payments/links.js';
import { claimPayment } from '../../shared/payments/manual.js';
import { createEscrow } from '../factories/escrows.js';
import { createOrder } from '../factories/orders.js';
import { createGateway } from '../factories/payments.js';
import { createUser, DEFAULT_PASSWORD } from '../factories/users.js';
import { createWithdrawal } from '../factories/withdrawals.js';
import { fundUser } from '../helpers/platform-factories.js';
import { newPage, useHarness } from './browser.js';

async function signInAsStaff(page: Page, email: string, next: string): Promise<void> {
  await page.goto(next);
  await page.waitForURL(/\/sign-in\?next=/);
  await page.fill('#email', email);
  await page.fill('#password', DEFAULT_PASSWORD);
  await Promise.all([page.waitForURL(`**${next}`), page.click('#sign-in-button')]);
}

/** Submits `form` (accepting its confirm dialog) and waits for the page it leads to. */
async function submit(page: Page, form: ReturnType<Page['locator']>, to: string | RegExp): Promise<void> {
  page.once('dialog', (d) => void d.accept());
  await Promise.all([page.waitForURL(to), form.locator('button[type="submit"]').click()]);
}

const auditOf = async (targetId: string) => (await db('staff_audit').where({ target_id: targetId }).orderBy('id')) as { action: string; note: string | null; actor_id: string }[];

describe('operator console moves in headless Chromium (issue 46)', function () {
  this.timeout(90_000);
  const harnessOf = useHarness();

  it('searches a queue through its form; confirms a claimed transfer; approves one withdrawal and rejects another', async () => {
    const admin = (await createUser({ role: 'admin', fullName: 'Staf Langkah' })).user;
    await createGateway({ provider: 'manual_bca', displayName: 'Transfer BCA', isManual: true, methods: ['bank_transfer'], feePercent: '0', feeFixed: 0, sortOrder: 0, config: { bank_accounts: [{ bank: 'BCA', account_number: '8800112233', account_name: 'PT Rekber' }] } });
    const { escrow, buyer } = await createEscrow({ amount: 150_000, item: 'Sepeda lipat' });
    const link = await pay(undefined, { userId: buyer.id, role: 'user' }, escrow.id, { method: 'bank_transfer', provider: 'manual_bca' });
    await claimPayment(undefined, { userId: buyer.id, role: 'user' }, escrow.id, { reference: 'BCA 0707 Budi' });
    const paymentId = link.id;
    const approveMe = await createWithdrawal();
    const rejectMe = await createWithdrawal();

    const { page, problems } = await newPage(harnessOf());
    await signInAsStaff(page, admin.email, '/admin/payments');
    // Search by the claim reference through the form.
    await page.fill('#payment-filters input[name="q"]', 'BCA 0707');
    await Promise.all([page.waitForURL(/\/admin\/payments\?q=BCA/), page.click('#payment-filters button[type="submit"]')]);
    expect(await page.locator('#payments tbody tr').count()).to.equal(1);
    const row = page.locator(`tr[data-id="${paymentId}"]`);
    await row.locator(`form[action$="/confirm"] input[name="note"]`).fill('Mutasi rekening cocok');
    await submit(page, row.locator(`form[action$="/confirm"]`), '**/admin/payments?done=payment.confirm');
    expect(await page.textContent('#flash')).to.include('payment.confirm');
    expect(((await db('escrows').where({ id: escrow.id }).first()) as { status: string }).status).to.equal('paid');
    expect((await auditOf(paymentId)).map((a) => [a.action, a.note])).to.deep.equal([['payment.confirm', 'Mutasi rekening cocok']]);

    // Withdrawals: the waiting filter keeps both; approve one, reject the other.
    await page.goto(`/admin/withdrawals?q=${approveMe.user.id}`);
    const a = page.locator(`tr[data-id="${approveMe.withdrawal.id}"]`);
    await a.locator('form[action$="/approve"] input[name="note"]').fill('Rekening atas nama sendiri');
    await submit(page, a.locator('form[action$="/approve"]'), '**/admin/withdrawals?done=withdrawal.approve');
    await page.goto(`/admin/withdrawals?q=${rejectMe.withdrawal.id}`);
    const r = page.locator(`tr[data-id="${rejectMe.withdrawal.id}"]`);
    await r.locator('form[action$="/reject"] input[name="note"]').fill('Nama rekening berbeda');
    await submit(page, r.locator('form[action$="/reject"]'), '**/admin/withdrawals?done=withdrawal.reject');
    const statuses = await db('withdrawals').whereIn('id', [approveMe.withdrawal.id, rejectMe.withdrawal.id]).select<{ id: string; status: string }[]>('id', 'status');
    const byId = new Map(statuses.map((w) => [w.id, w.status]));
    expect(byId.get(approveMe.withdrawal.id)).to.not.equal('pending');
    expect(byId.get(rejectMe.withdrawal.id)).to.equal('rejected');
    expect((await auditOf(rejectMe.withdrawal.id)).map((x) => [x.action, x.note, x.actor_id])).to.deep.equal([['withdrawal.reject', 'Nama rekening berbeda', admin.id]]);
    expect(problems).to.deep.equal([]);
    await page.context().close();
  });

  it("moves an order to delivered from its record page, suspends and reactivates its buyer from theirs, and rules a dispute from its escrow's page", async () => {
    const admin = (await createUser({ role: 'admin', fullName: 'Staf Halaman' })).user;
    const buyer = (await createUser({ fullName: 'Pembeli Halaman' })).user;
    const order = await createOrder(buyer.id, { label: 'Langganan musik' });
    await fundUser(buyer.id, order.total);
    await orders.pay(undefined, { userId: buyer.id, role: 'user' }, order.id, { method: 'balance' });
    const { escrow } = await createEscrow({ status: 'disputed', item: 'Konsol game' });
    const dispute = (await db('disputes').where({ escrow_id: escrow.id }).first()) as { id: string };

    const { page, problems } = await newPage(harnessOf());
    const orderPath = `/admin/orders/${order.id}`;
    await signInAsStaff(page, admin.email, orderPath);
    await submit(page, page.locator(`form[action="${orderPath}/process"]`), `**${orderPath}?done=order.process`);
    expect(await page.textContent('#order-status')).to.equal('processing');
    const deliver = page.locator(`form[action="${orderPath}/deliver"]`);
    await deliver.locator('textarea[name="credentials"]').fill('akun: musik@contoh.id / sandi: Rahasia1');
    await submit(page, deliver, `**${orderPath}?done=order.deliver`);
    expect(await page.textContent('#order-status')).to.equal('delivered');
    expect(await page.content()).to.not.include('Rahasia1');

    // The buyer's page, reached from the order's.
    await Promise.all([page.waitForURL(`**/admin/users/${buyer.id}`), page.click(`a[href="/admin/users/${buyer.id}"]`)]);
    await page.locator('#suspend input[name="note"]').fill('Laporan penipuan');
    await submit(page, page.locator('#suspend'), `**/admin/users/${buyer.id}?done=user.suspend`);
    expect(await page.textContent('#user-status')).to.equal('suspended');
    await page.locator('#reactivate input[name="note"]').fill('Laporan tidak terbukti');
    await submit(page, page.locator('#reactivate'), `**/admin/users/${buyer.id}?done=user.reactivate`);
    expect(await page.textContent('#user-status')).to.equal('active');
    expect((await auditOf(buyer.id)).map((a) => [a.action, a.note])).to.deep.equal([
      ['user.suspend', 'Laporan penipuan'],
      ['user.reactivate', 'Laporan tidak terbukti'],
    ]);

    const escrowPath = `/admin/escrows/${escrow.id}`;
    await page.goto(escrowPath);
    await page.locator('#resolve select[name="outcome"]').selectOption('refund');
    await page.locator('#resolve input[name="note"]').fill('Barang tidak dikirim');
    await submit(page, page.locator('#resolve'), `**${escrowPath}?done=dispute.resolve`);
    expect(await page.textContent('#escrow-status')).to.equal('refunded');
    expect((await auditOf(dispute.id)).map((a) => [a.action, a.note])).to.deep.equal([['dispute.refund', 'Barang tidak dikirim']]);
    expect(problems).to.deep.equal([]);
    await page.context().close();
  });
});
