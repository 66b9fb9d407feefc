/**
 * The console's record pages (issue 46): one account, escrow, payment-service order or
 * workspace, and a deal's approvals and documents, each with
 * its history on one page, and the staff moves made from it returning to it (`back`) with
 * the result shown and the audit kept. Staff only (403 for a user, sign-in for anonymous),
 * 404 for an unknown or malformed id, never a password hash or an order's credentials.
 */
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import * as orders from '../../../shared/orders/service.js';
import { createEscrow } from '../../factories/escrows.js';
import { createOrder } from '../../factories/orders.js';
import { createGateway } from '../../factories/payments.js';
import { pay } from '../../../shared/payments/links.js';
import { claimPayment } from '../../../shared/payments/manual.js';
import { createUser, signIn } from '../../factories/users.js';
import { createWithdrawal } from '../../factories/withdrawals.js';
import { activeDeal, dealWorld } from '../../factories/deals.js';
import { insertDocument } from '../../factories/documents.js';
import { addMember, workspaceKey } from '../../factories/enterprise.js';
import { createInstruction } from '../../factories/payouts.js';
import { approve, disbursementsOf, fundedDeal, makeLive, releasePath } from '../../factories/releases.js';
import { api } from '../../helpers/app.js';
import { fundUser } from '../../helpers/platform-factories.js';

const agent = () => supertest.agent(createApp().callback());

async function browserOf(role: 'admin' | 'user', fullName: string) {
  const user = (await createUser({ role, fullName })).user;
  const browser = agent();
  await signIn(browser, user.email);
  return { browser, user };
}

/** The page's CSRF token (every signed-in console page carries it in its forms). */
const csrfOf = (text: string): string => /name="_csrf" value="([^"]+)"/.exec(text)![1]!;

describe('operator console: record pages (issue 46)', () => {
  let staff: Awaited<ReturnType<typeof browserOf>>;
  beforeEach(async () => {
    staff = await browserOf('admin', 'Staf Catatan');
  });

  it('an account: balance, escrows, orders, payments, withdrawals, sessions and the staff audit; suspended from its page, which shows the result', async () => {
    const { withdrawal, user } = await createWithdrawal();
    const { escrow } = await createEscrow({ buyer: user, item: 'Lensa tele 70-200' });
    const order = await createOrder(user.id, { label: 'Pulsa catatan' });
    // A session of the account (signed in once).
    await signIn(agent(), user.email);
    const path = `/admin/users/${user.id}`;

    const page = await staff.browser.get(path);
    expect(page.status).to.equal(200);
    expect(page.text).to.include(user.email);
    expect(page.text).to.match(/<strong id="balance">Rp[^<]*<\/strong>/);
    expect(page.text).to.include(`<tr data-id="${escrow.id}">`);
    expect(page.text).to.include(`href="/admin/escrows/${escrow.id}"`);
    expect(page.text).to.include(`<tr data-id="${order.id}">`);
    expect(page.text).to.include(`<tr data-id="${withdrawal.id}">`);
    // The pending withdrawal is decided here: its forms return to this page.
    expect(page.text).to.match(new RegExp(`action="/admin/withdrawals/${withdrawal.id}/approve"[^>]*>[^]*?name="back" value="/admin/users/${user.id}"`));
    expect(page.text).to.include(`action="/admin/withdrawals/${withdrawal.id}/reject"`);
    const sessions = (await db('sessions').where({ user_id: user.id }).pluck('id')) as string[];
    expect(sessions).to.have.length.greaterThan(0);
    for (const id of sessions) expect(page.text).to.include(`<tr data-id="${id}">`);
    expect(page.text).not.to.include('password_hash');
    expect(page.text).not.to.include('$argon2');

    const moved = await staff.browser
      .post(`/admin/users/${user.id}/suspend`)
      .type('form')
      .send({ _csrf: csrfOf(page.text), back: path, note: 'Akun dipakai penipu' });
    expect(moved.status).to.equal(303);
    expect(moved.headers.location).to.equal(`${path}?done=user.suspend`);
    const after = await staff.browser.get(moved.headers.location as string);
    expect(after.text).to.include('<strong id="user-status">suspended</strong>');
    expect(after.text).to.include('id="flash"');
    expect(after.text).to.match(/<tr data-action="user.suspend">[\s\S]*Akun dipakai penipu/);
    expect(after.text).to.include('id="reactivate"');
  });

  it("a claimed transfer is decided from its escrow's page, which shows the escrow paid and the audit", async () => {
    const { escrow, buyer } = await createEscrow({ amount: 150_000, item: 'Printer kantor' });
    await createGateway({ provider: 'manual_bca', displayName: 'Transfer BCA', isManual: true, methods: ['bank_transfer'], feePercent: '0', feeFixed: 0, sortOrder: 0, config: { bank_accounts: [{ bank: 'BCA', account_number: '8800112233', account_name: 'PT Rekber' }] } });
    const link = await pay(undefined, { userId: buyer.id, role: 'user' }, escrow.id, { method: 'bank_transfer', provider: 'manual_bca' });
    await claimPayment(undefined, { userId: buyer.id, role: 'user' }, escrow.id, { reference: 'BCA 1212' });
    const path = `/admin/escrows/${escrow.id}`;
    const page = await staff.browser.get(path);
    expect(page.text).to.include(`<tr data-id="${link.id}" data-attention="claimed">`);
    expect(page.text).to.include(`action="/admin/payments/${link.id}/confirm"`);
    expect(page.text).to.include(`action="/admin/payments/${link.id}/reject"`);
    const moved = await staff.browser.post(`/admin/payments/${link.id}/confirm`).type('form').send({ _csrf: csrfOf(page.text), back: path, note: 'Mutasi cocok' });
    expect(moved.headers.location).to.equal(`${path}?done=payment.confirm`);
    const after = await staff.browser.get(path);
    expect(after.text).to.include('<strong id="escrow-status">paid</strong>');
    expect(after.text).to.include(`<tr data-id="${link.id}" data-attention="">`);
    expect(after.text).not.to.include(`action="/admin/payments/${link.id}/confirm"`);
    expect(after.text).to.match(/<tr data-action="payment.confirm">[\s\S]*Mutasi cocok/);
    // The buyer's page lists the payment too, with nothing left to decide.
    const buyerPage = await staff.browser.get(`/admin/users/${buyer.id}`);
    expect(buyerPage.text).to.include(`<tr data-id="${link.id}" data-attention="">`);
  });

  it('a staff account lists the moves it made', async () => {
    const { user } = await createWithdrawal();
    const page = await staff.browser.get('/admin/users');
    await staff.browser.post(`/admin/users/${user.id}/suspend`).type('form').send({ _csrf: csrfOf(page.text), note: 'Catatan langkah' });
    const own = await staff.browser.get(`/admin/users/${staff.user.id}`);
    expect(own.text).to.match(/<section class="card" id="moves">[\s\S]*<tr data-action="user.suspend">[\s\S]*Catatan langkah/);
  });

  it('an escrow: both parties, its dispute with the ruling form, payments and events; ruled from its page, which shows the result and the audit', async () => {
    const { escrow, buyer, seller } = await createEscrow({ status: 'disputed', item: 'Drone rekaman' });
    const dispute = (await db('disputes').where({ escrow_id: escrow.id }).first()) as { id: string };
    const path = `/admin/escrows/${escrow.id}`;
    const page = await staff.browser.get(path);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('<strong id="escrow-status">disputed</strong>');
    expect(page.text).to.include(`href="/admin/users/${buyer.id}"`);
    expect(page.text).to.include(`href="/admin/users/${seller.id}"`);
    expect(page.text).to.include(`<tr data-id="${dispute.id}">`);
    expect(page.text).to.include(`action="/admin/disputes/${dispute.id}/resolve"`);
    expect(page.text).to.include('<tr data-event="escrow.disputed">');

    const ruled = await staff.browser
      .post(`/admin/disputes/${dispute.id}/resolve`)
      .type('form')
      .send({ _csrf: csrfOf(page.text), back: path, outcome: 'release', note: 'Bukti kirim sah' });
    expect(ruled.headers.location).to.equal(`${path}?done=dispute.resolve`);
    const after = await staff.browser.get(path);
    expect(after.text).to.include('<strong id="escrow-status">released</strong>');
    expect(after.text).not.to.include('id="resolve"');
    expect(after.text).to.match(/<tr data-action="dispute.release">[\s\S]*Bukti kirim sah/);
  });

  it('an order: its buyer, payments and events, the move its state allows, never its credentials; moved from its page', async () => {
    const buyer = (await createUser()).user;
    const order = await createOrder(buyer.id, { label: 'Top up catatan' });
    await fundUser(buyer.id, order.total);
    await orders.pay(undefined, { userId: buyer.id, role: 'user' }, order.id, { method: 'balance' });
    const path = `/admin/orders/${order.id}`;
    const page = await staff.browser.get(path);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('<strong id="order-status">paid</strong>');
    expect(page.text).to.include(`href="/admin/users/${buyer.id}"`);
    expect(page.text).to.include(`action="/admin/orders/${order.id}/process"`);

    const processed = await staff.browser.post(`/admin/orders/${order.id}/process`).type('form').send({ _csrf: csrfOf(page.text), back: path });
    expect(processed.headers.location).to.equal(`${path}?done=order.process`);
    const deliver = await staff.browser.get(path);
    expect(deliver.text).to.include('<strong id="order-status">processing</strong>');
    await staff.browser
      .post(`/admin/orders/${order.id}/deliver`)
      .type('form')
      .send({ _csrf: csrfOf(deliver.text), back: path, credentials: 'KODE-RAHASIA-123', delivery_note: 'Terkirim' });
    const done = await staff.browser.get(path);
    expect(done.text).to.include('<strong id="order-status">delivered</strong>');
    expect(done.text).not.to.include('KODE-RAHASIA-123');
    expect(done.text).not.to.include('id="order-moves"');
  });

  it('a workspace: members, KYB versions, counterparties, instructions (masked, with the reveal), API keys, deals and its feed; staff-only fields never leak', async () => {
    const client = api();
    const w = await dealWorld(client, 'PT Catatan Ruang');
    const deal = (await activeDeal(client, w)).deal;
    const instruction = await createInstruction(w.workspace, w.cpId, { label: 'Rekening utama', accountHolder: 'PT Pemasok Jaya' });
    const admin = await addMember(w.workspace.id, 'admin');
    const key = await workspaceKey(w.workspace.id, admin);
    const path = `/admin/workspaces/${w.workspace.id}`;
    const page = await staff.browser.get(path);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('PT Catatan Ruang');
    for (const user of [w.owner, w.users.operator, w.users.finance, w.users.viewer, admin.user]) expect(page.text).to.include(`href="/admin/users/${user.id}"`);
    expect(page.text).to.match(new RegExp(`<section class="card" id="counterparties">[\\s\\S]*<tr data-id="${w.cpId}">`));
    expect(page.text).to.include(`<tr data-id="${instruction.id}">`);
    expect(page.text).to.include(`action="/admin/instructions/${instruction.id}/reveal"`);
    expect(page.text).to.include(`···· ${instruction.accountNumber.slice(-4)}`);
    expect(page.text).not.to.include(instruction.accountNumber);
    expect(page.text).to.include(`<tr data-id="${key.id}">`);
    expect(page.text).not.to.include(key.key);
    expect(page.text).to.include(`href="/admin/deals/${deal.id}"`);
    expect(page.text).to.include('<tr data-event="deal.created">');
    // The queues and the deal page link here.
    const dealPage = await staff.browser.get(`/admin/deals/${deal.id}`);
    expect(dealPage.text).to.include(`href="${path}"`);
    const queue = await staff.browser.get(`/admin/instructions?q=${instruction.id}`);
    expect(queue.text).to.include(`href="${path}"`);
  });

  it("a deal: each milestone's approval slots and documents", async () => {
    const client = api();
    const w = await dealWorld(client, 'PT Dokumen Tahap');
    const made = await activeDeal(client, w);
    const deal = made.deal;
    const milestone = made.milestones[0]!;
    const docId = await insertDocument(w.workspace.id, w.owner.id, { dealId: deal.id, milestoneId: milestone.id, title: 'Berita acara serah terima' });
    const page = await staff.browser.get(`/admin/deals/${deal.id}`);
    expect(page.text).to.match(new RegExp(`<section class="card" id="documents">[\\s\\S]*<tr data-id="${docId}">[\\s\\S]*Berita acara serah terima`));
    expect(page.text).to.include('<section class="card" id="approvals">');
  });

  it("a deal's moves are made from its page: live funding confirmed, an open payout settled, a disputed milestone ruled; each returns to the deal", async () => {
    const client = api();
    const w = await dealWorld(client, 'PT Langkah Kesepakatan');
    await makeLive(w);
    const awaiting = await activeDeal(client, w, [1_000_000]);
    const fundPath = `/admin/deals/${awaiting.deal.id}`;
    const page = await staff.browser.get(fundPath);
    const mid = awaiting.milestones[0]!.id;
    expect(page.text).to.include(`action="/admin/funding/${mid}/confirm"`);
    const confirmed = await staff.browser.post(`/admin/funding/${mid}/confirm`).type('form').send({ _csrf: csrfOf(page.text), back: fundPath, note: 'Dana masuk BCA' });
    expect(confirmed.headers.location).to.equal(`${fundPath}?done=milestone.confirm_funding`);
    const funded = await staff.browser.get(fundPath);
    expect(funded.text).to.include(`<tr data-id="${mid}" data-status="funded">`);
    expect(funded.text).not.to.include(`action="/admin/funding/${mid}/confirm"`);

    // An open payout of a released milestone: settled from the deal's page.
    const r = await fundedDeal(client, 'live', [1_000_000], {}, w);
    await approve(r.mids[0]!);
    const instruction = await createInstruction(w.workspace, w.cpId, { label: 'Rekening langkah', verified: true });
    const payout = Number((await db('deal_milestones').where({ id: r.mids[0]! }).first<{ payout_amount: string }>('payout_amount')).payout_amount);
    const released = await client.post(releasePath(r.deal.deal.id, r.mids[0]!)).set(w.h.finance).send({ splits: [{ payout_instruction_id: instruction.id, amount: payout }] });
    expect(released.status, JSON.stringify(released.body)).to.equal(200);
    const [open] = await disbursementsOf(r.mids[0]!);
    const payoutPath = `/admin/deals/${r.deal.deal.id}`;
    const withPayout = await staff.browser.get(payoutPath);
    expect(withPayout.text).to.include(`action="/admin/payouts/${open!.id}/settle"`).and.include(`action="/admin/payouts/${open!.id}/fail"`);
    const settled = await staff.browser.post(`/admin/payouts/${open!.id}/settle`).type('form').send({ _csrf: csrfOf(withPayout.text), back: payoutPath, note: 'TRF 0099' });
    expect(settled.headers.location).to.equal(`${payoutPath}?done=disbursement.settle`);
    const after = await staff.browser.get(payoutPath);
    expect(after.text).to.include(`<tr data-id="${open!.id}" data-status="settled">`);
    expect(after.text).not.to.include(`action="/admin/payouts/${open!.id}/settle"`);

    // A disputed milestone of a sandbox deal: ruled from its page.
    const sandbox = await dealWorld(client, 'Grosir Langkah');
    const disputed = await fundedDeal(client, 'sandbox', [1_000_000], {}, sandbox);
    const dmid = disputed.mids[0]!;
    const opened = await client.post(`/v1/enterprise/deals/${disputed.deal.deal.id}/milestones/${dmid}/dispute`).set(sandbox.h.operator).send({ reason: 'Barang rusak' });
    expect(opened.status, JSON.stringify(opened.body)).to.equal(200);
    const rulePath = `/admin/deals/${disputed.deal.deal.id}`;
    const toRule = await staff.browser.get(rulePath);
    expect(toRule.text).to.include(`action="/admin/rulings/${dmid}/resolve"`);
    const ruled = await staff.browser.post(`/admin/rulings/${dmid}/resolve`).type('form').send({ _csrf: csrfOf(toRule.text), back: rulePath, outcome: 'refund', note: 'Tidak sesuai' });
    expect(ruled.headers.location).to.equal(`${rulePath}?done=milestone.resolve_dispute`);
    const afterRuling = await staff.browser.get(rulePath);
    expect(afterRuling.text).not.to.include(`action="/admin/rulings/${dmid}/resolve"`);
    expect(((await db('deal_milestones').where({ id: dmid }).first()) as { status: string }).status).to.not.equal('disputed');
  });

  it('a back that is not a record page is ignored: the move returns to its queue', async () => {
    const { withdrawal, user } = await createWithdrawal();
    void withdrawal;
    const page = await staff.browser.get('/admin/users');
    for (const back of ['https://evil.example/admin/users/x', '//evil.example', `/admin/users/${user.id}/../../x`, '/sign-out']) {
      const moved = await staff.browser.post(`/admin/users/${user.id}/suspend`).type('form').send({ _csrf: csrfOf(page.text), back });
      expect(moved.headers.location, back).to.match(/^\/admin\/users\?done=user\.(suspend)$/);
      await staff.browser.post(`/admin/users/${user.id}/reactivate`).type('form').send({ _csrf: csrfOf(page.text) });
    }
  });

  it('a staff session ends after the idle limit and at its absolute lifetime: the console sends to sign in, keeping the page asked for', async () => {
    const { escrow } = await createEscrow();
    const path = `/admin/escrows/${escrow.id}`;
    try {
      const start = clock.now().getTime();
      clock.set(new Date(start + (config.sessionIdleMinutes - 1) * 60_000));
      expect((await staff.browser.get(path)).status).to.equal(200);
      // Idle from this use for longer than the limit.
      clock.set(new Date(start + (2 * config.sessionIdleMinutes) * 60_000));
      const idle = await staff.browser.get(path);
      expect(idle.status).to.equal(303);
      expect(idle.headers.location).to.equal(`/sign-in?next=${encodeURIComponent(path)}`);

      const fresh = await browserOf('admin', 'Staf Lama');
      const begun = clock.now().getTime();
      // Never idle (last used a minute ago), but past the session's lifetime.
      const end = begun + config.sessionTtlHours * 3_600_000;
      clock.set(new Date(end + 60_000));
      await db('sessions').where({ user_id: fresh.user.id }).update({ last_seen_at: new Date(end) });
      const ended = await fresh.browser.get(path);
      expect(ended.status).to.equal(303);
      expect(ended.headers.location).to.equal(`/sign-in?next=${encodeURIComponent(path)}`);
    } finally {
      clock.reset();
    }
  });

  it('staff only: anonymous visitors sign in (the link survives), users get 403; unknown and malformed ids are 404', async () => {
    const { escrow } = await createEscrow();
    const anonymous = await agent().get(`/admin/escrows/${escrow.id}`);
    expect(anonymous.status).to.equal(303);
    expect(anonymous.headers.location).to.equal(`/sign-in?next=${encodeURIComponent(`/admin/escrows/${escrow.id}`)}`);
    const member = await browserOf('user', 'Bukan Staf');
    for (const path of [`/admin/users/${member.user.id}`, `/admin/escrows/${escrow.id}`, `/admin/orders/${escrow.id}`, `/admin/workspaces/${escrow.id}`]) {
      expect((await member.browser.get(path)).status, path).to.equal(403);
    }
    for (const path of ['/admin/users/00000000-0000-4000-8000-000000000000', '/admin/escrows/not-an-id', '/admin/orders/00000000-0000-4000-8000-000000000000', '/admin/workspaces/00000000-0000-4000-8000-000000000000']) {
      const res = await staff.browser.get(path);
      expect(res.status, path).to.equal(404);
      expect(res.text, path).to.include('NOT_FOUND');
    }
  });
});
