/**
 * Issue 46 in a real browser: the console's moves not driven elsewhere (test/e2e has the
 * dispute ruling, funding, fee override, KYB approval, reveal and verify, payouts and deal
 * rulings): a queue searched and filtered through its form, a claimed transfer confirmed, a
 * withdrawal approved and another rejected, an order moved from its record page to
 * delivered, an account suspended and reactivated from its page, a dispute ruled from its
 * escrow's page; KYB changes requested and an application rejected, an instruction declined,
 * a late transfer credited, another marked returned and a claim rejected, an order's transfer
 * confirmed and another order refunded, a dispute held. Each lands
 * with its flash, and the audit keeps who and why.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { db } from '../../shared/db.js';
import * as orders from '../../shared/orders/service.js';
import { pay } from '../../shared/payments/links.js';
import { claimPayment } from '../../shared/payments/manual.js';
import { clock } from '../../shared/clock.js';
import { dealWorld } from '../factories/deals.js';
import { createEscrow } from '../factories/escrows.js';
import { submittedApplication } from '../factories/kyb-review.js';
import { createInstruction } from '../factories/payouts.js';
import { api } from '../helpers/app.js';
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
  it("requests KYB changes and rejects another application, declines an instruction, credits a late transfer, marks another returned and rejects a claim, confirms an order's transfer and refunds another order, holds a dispute", async () => {
    const admin = (await createUser({ role: 'admin', fullName: 'Staf Keputusan' })).user;
    const changes = await submittedApplication({ name: 'Gudang Perubahan' });
    const rejected = await submittedApplication({ name: 'Gudang Tolak' });
    const w = await dealWorld(api(), 'PT Instruksi Tolak');
    const instruction = await createInstruction(w.workspace, w.cpId, { label: 'Rekening ragu' });
    await createGateway({ provider: 'manual_bca', displayName: 'Transfer BCA', isManual: true, methods: ['bank_transfer'], feePercent: '0', feeFixed: 0, sortOrder: 0, config: { bank_accounts: [{ bank: 'BCA', account_number: '8800112233', account_name: 'PT Rekber' }] } });
    // A claim that came after the escrow's payment deadline (late: staff credit it to the buyer) and a plain claim (rejected).
    const late = await createEscrow({ amount: 150_000, item: 'Klaim terlambat' });
    const lateLink = await pay(undefined, { userId: late.buyer.id, role: 'user' }, late.escrow.id, { method: 'bank_transfer', provider: 'manual_bca' });
    try {
      clock.set(new Date(late.escrow.expires_at.getTime() + 1000));
      await claimPayment(undefined, { userId: late.buyer.id, role: 'user' }, late.escrow.id, { reference: 'BCA terlambat' });
    } finally {
      clock.reset();
    }
    // A second late claim: the money went back to the payer outside the service (marked returned, saying where).
    const returned = await createEscrow({ amount: 150_000, item: 'Klaim dikembalikan' });
    const returnedLink = await pay(undefined, { userId: returned.buyer.id, role: 'user' }, returned.escrow.id, { method: 'bank_transfer', provider: 'manual_bca' });
    try {
      clock.set(new Date(returned.escrow.expires_at.getTime() + 1000));
      await claimPayment(undefined, { userId: returned.buyer.id, role: 'user' }, returned.escrow.id, { reference: 'BCA kembali' });
    } finally {
      clock.reset();
    }
    // An order paid by a claimed manual transfer: staff confirm it from the order's page.
    const claimer = (await createUser()).user;
    const claimedOrder = await createOrder(claimer.id, { label: 'Pulsa transfer' });
    await orders.pay(undefined, { userId: claimer.id, role: 'user' }, claimedOrder.id, { method: 'bank_transfer', provider: 'manual_bca' });
    await orders.claimPayment(undefined, { userId: claimer.id, role: 'user' }, claimedOrder.id, { reference: 'BCA pulsa' });
    const plain = await createEscrow({ amount: 150_000, item: 'Klaim palsu' });
    const plainLink = await pay(undefined, { userId: plain.buyer.id, role: 'user' }, plain.escrow.id, { method: 'bank_transfer', provider: 'manual_bca' });
    await claimPayment(undefined, { userId: plain.buyer.id, role: 'user' }, plain.escrow.id, { reference: 'BCA palsu' });
    const buyer = (await createUser()).user;
    const order = await createOrder(buyer.id, { label: 'Tiket konser' });
    await fundUser(buyer.id, order.total);
    await orders.pay(undefined, { userId: buyer.id, role: 'user' }, order.id, { method: 'balance' });
    await orders.startProcessing(undefined, { actorId: admin.id, note: null, ip: '127.0.0.1' }, order.id);
    const disputed = await createEscrow({ status: 'disputed', item: 'Tahan dulu' });
    const dispute = (await db('disputes').where({ escrow_id: disputed.escrow.id }).first()) as { id: string };

    const { page, problems } = await newPage(harnessOf());
    await signInAsStaff(page, admin.email, `/admin/kyb/${changes.application.id}`);
    await page.locator('#request-changes input[name="change_field"]').first().fill('company.npwp');
    await page.locator('#request-changes input[name="change_note"]').first().fill('NPWP tidak terbaca');
    await submit(page, page.locator('#request-changes'), '**/admin/kyb?done=kyb.request_changes');
    await page.goto(`/admin/kyb/${rejected.application.id}`);
    await page.locator('#reject input[name="reason"]').fill('Dokumen palsu');
    await submit(page, page.locator('#reject'), '**/admin/kyb?done=kyb.reject');
    const apps = await db('kyb_applications').whereIn('id', [changes.application.id, rejected.application.id]).select<{ id: string; status: string }[]>('id', 'status');
    expect(new Map(apps.map((x) => [x.id, x.status]))).to.deep.equal(new Map([[changes.application.id, 'changes_requested'], [rejected.application.id, 'rejected']]));

    await page.goto(`/admin/instructions?q=${instruction.id}`);
    const row = page.locator(`tr[data-id="${instruction.id}"]`);
    await row.locator('form.decline input[name="reason"]').fill('Nama pemilik tidak cocok');
    await submit(page, row.locator('form.decline'), '**/admin/instructions?done=payout_instruction.decline');
    expect(((await db('payout_instructions').where({ id: instruction.id }).first()) as { status: string }).status).to.equal('declined');

    // The late claim is credited from its escrow's page; the plain claim rejected from the queue, filtered by why it waits.
    const latePath = `/admin/escrows/${late.escrow.id}`;
    await page.goto(latePath);
    await submit(page, page.locator(`form[action="/admin/payments/${lateLink.id}/credit"]`), `**${latePath}?done=payment.credit`);
    expect(((await db('payments').where({ id: lateLink.id }).first()) as { status: string }).status).to.not.equal('awaiting_confirmation');
    await page.goto('/admin/payments?status=claimed&q=BCA%20palsu');
    await submit(page, page.locator(`form[action="/admin/payments/${plainLink.id}/reject"]`), /\/admin\/payments\?done=payment\.reject/);
    expect(((await db('payments').where({ id: plainLink.id }).first()) as { status: string }).status).to.equal('failed');

    const returnedPath = `/admin/escrows/${returned.escrow.id}`;
    await page.goto(returnedPath);
    const markReturned = page.locator(`form[action="/admin/payments/${returnedLink.id}/mark-returned"]`);
    await markReturned.locator('input[name="note"]').fill('Dikembalikan ke rekening BCA pembeli');
    await submit(page, markReturned, `**${returnedPath}?done=payment.mark_returned`);
    expect((await auditOf(returnedLink.id)).map((x) => [x.action, x.note])).to.deep.equal([['payment.mark_returned', 'Dikembalikan ke rekening BCA pembeli']]);

    const claimedPath = `/admin/orders/${claimedOrder.id}`;
    await page.goto(claimedPath);
    expect(await page.textContent('#order-status')).to.equal('pending_review');
    await submit(page, page.locator(`form[action="${claimedPath}/confirm-payment"]`), `**${claimedPath}?done=order.confirm_payment`);
    expect(await page.textContent('#order-status')).to.equal('paid');

    const orderPath = `/admin/orders/${order.id}`;
    await page.goto(orderPath);
    await page.locator(`form[action="${orderPath}/refund"] input[name="reason"]`).fill('Tiket habis');
    await submit(page, page.locator(`form[action="${orderPath}/refund"]`), `**${orderPath}?done=order.refund`);
    expect(await page.textContent('#order-status')).to.equal('refunded');

    await page.goto(`/admin/disputes?q=${dispute.id}`);
    const d = page.locator(`tr[data-id="${dispute.id}"]`);
    await d.locator('select[name="outcome"]').selectOption('hold');
    await d.locator('input[name="note"]').fill('Menunggu bukti resi');
    await submit(page, d.locator('form'), '**/admin/disputes?done=dispute.resolve');
    expect(((await db('disputes').where({ id: dispute.id }).first()) as { status: string }).status).to.equal('on_hold');
    expect(problems).to.deep.equal([]);
    await page.context().close();
  });
});
