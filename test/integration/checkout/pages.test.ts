/**
 * Issue 12 over HTTP: the hosted checkout and sign-in pages, the operator console, their
 * CSRF checks and their headers. The browser flows are in test/e2e/.
 */
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { createEscrow } from '../../factories/escrows.js';
import { createGateway, sandboxCallback } from '../../factories/payments.js';
import { createUser, DEFAULT_PASSWORD, signIn } from '../../factories/users.js';
import { createWithdrawal, fundedUser } from '../../factories/withdrawals.js';
import { createOrder } from '../../factories/orders.js';
import { claimPayment as claimOrderPayment, pay as payOrder } from '../../../shared/orders/service.js';
import { cancel as cancelEscrow } from '../../../shared/escrows/service.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { claimPayment as claimEscrowPayment } from '../../../shared/payments/manual.js';
import { pay as payEscrow } from '../../../shared/payments/service.js';
import { runJobs } from '../../helpers/jobs.js';
import { MailSink } from '../../helpers/smtp.js';

const agent = () => supertest.agent(createApp().callback());

const CSRF_FIELD = /name="_csrf" value="([^"]+)"/;
const tokenIn = (text: string): string => CSRF_FIELD.exec(text)?.[1] ?? '';

function expectPageHeaders(res: supertest.Response): void {
  expect(res.headers['content-type']).to.match(/^text\/html/);
  const csp = String(res.headers['content-security-policy']);
  expect(csp).to.include("script-src 'self'");
  expect(csp).to.include("frame-ancestors 'none'");
  expect(csp).to.not.include('unsafe-inline');
  expect(res.headers['cache-control']).to.equal('no-store');
  expect(res.headers['x-frame-options']).to.equal('DENY');
  expect(res.text).to.not.match(/<script(?![^>]*\ssrc=)[^>]*>/); // no inline script
}

describe('hosted checkout pages (issue 12)', () => {
  beforeEach(async () => {
    await createGateway({ provider: 'sandbox', feePercent: '0.7', feeFixed: 500 });
  });

  it('shows the preview to anyone, escaped, with the seller badge, countdown and a sign-in link back', async () => {
    const seller = (await createUser({ fullName: 'Toko <b>Baik</b>' })).user;
    await db('users').where({ id: seller.id }).update({ kyc_status: 'verified' });
    const { escrow } = await createEscrow({ seller, item: '<script>alert(1)</script> Sepatu', amount: 150_000 });
    const res = await agent().get(`/pay/${escrow.id}`);
    expect(res.status).to.equal(200);
    expectPageHeaders(res);
    expect(res.text).to.include('&lt;script&gt;alert(1)&lt;/script&gt; Sepatu');
    expect(res.text).to.include('Toko &lt;b&gt;Baik&lt;/b&gt;');
    expect(res.text).to.include('Rp150.000');
    expect(res.text).to.match(/id="seller-badge">✓ Terverifikasi/);
    expect(res.text).to.include(`data-expires-at="${escrow.expires_at.toISOString()}"`);
    expect(res.text).to.include(`href="/sign-in?next=${encodeURIComponent(`/pay/${escrow.id}`)}"`);
    expect(res.text).to.include('<html lang="id">');
    const en = await agent().get(`/pay/${escrow.id}?lang=en`);
    expect(en.text).to.include('<html lang="en">').and.include('Sign in to pay').and.include('✓ Verified');
  });

  it('expired, cancelled and unknown escrows get a clear page, not an error envelope', async () => {
    const { escrow } = await createEscrow();
    clock.set(new Date(escrow.expires_at.getTime() + 1000));
    const expired = await agent().get(`/pay/${escrow.id}`);
    expect(expired.status).to.equal(200);
    expect(expired.text).to.include('id="expired"').and.include('kedaluwarsa');
    clock.reset();
    const cancelled = (await createEscrow({ status: 'cancelled' })).escrow;
    const c = await agent().get(`/pay/${cancelled.id}?lang=en`);
    expect(c.text).to.include('id="cancelled"').and.include('was cancelled');
    const missing = await agent().get('/pay/0b6f3a56-8d5e-4c1e-9a57-3c1b2a1d0e9f');
    expect(missing.status).to.equal(404);
    expectPageHeaders(missing);
    expect(missing.text).to.include('id="error"');
  });

  it('signs in through the form (double-submit token) and goes back to the checkout with a Lax HttpOnly cookie', async () => {
    const { escrow, buyer } = await createEscrow();
    const browser = agent();
    const next = `/pay/${escrow.id}`;
    const form = await browser.get(`/sign-in?next=${encodeURIComponent(next)}`);
    expectPageHeaders(form);
    const token = tokenIn(form.text);
    expect(token).to.not.equal('');
    const noToken = await browser.post('/sign-in').type('form').send({ email: buyer.email, password: DEFAULT_PASSWORD, next });
    expect(noToken.status).to.equal(403);
    expect(noToken.headers['set-cookie'] ?? []).to.satisfy((c: string[]) => !c.some((x) => x.startsWith('session')));
    const wrong = await agent().post('/sign-in').type('form').send({ _csrf: token, email: buyer.email, password: DEFAULT_PASSWORD, next });
    expect(wrong.status).to.equal(403); // the field without its cookie (another browser)
    const bad = await browser.post('/sign-in').type('form').send({ _csrf: token, email: buyer.email, password: 'Wrong1Horse', next });
    expect(bad.status).to.equal(401);
    expect(bad.text).to.include('id="sign-in-error"');
    const good = await browser.post('/sign-in').type('form').send({ _csrf: tokenIn(bad.text), email: buyer.email, password: DEFAULT_PASSWORD, next });
    expect(good.status).to.equal(303);
    expect(good.headers.location).to.equal(next);
    const cookie = (good.headers['set-cookie'] as unknown as string[]).find((c) => /^[^=]+=[^;]{20,}/.test(c) && /httponly/i.test(c) && !c.startsWith('signin_csrf'));
    expect(cookie).to.match(/samesite=lax/i);
    expect(cookie).to.not.match(/;\s*secure/i); // loopback http
    const page = await browser.get(next);
    expect(page.text).to.include('id="pay-form"');
  });

  it('never sends a signed-in person to another site', async () => {
    const { user } = await createUser();
    const browser = agent();
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', '/pay/../admin', '/admin/../pay', '/admin//evil.example', '/admin/kyb/../../x', '/admin?next=//evil.example', '/admin/kyb/x?a=1']) {
      const form = await browser.get(`/sign-in?next=${encodeURIComponent(next)}`);
      expect(form.text).to.not.include('name="next"');
      const res = await browser.post('/sign-in').type('form').send({ _csrf: tokenIn(form.text), email: user.email, password: DEFAULT_PASSWORD, next });
      expect(res.status).to.equal(200);
      expect(res.headers.location).to.equal(undefined);
    }
  });

  it('shows the buyer each method with surcharge and total, pays only with the session token, then renders the QRIS image', async () => {
    const { escrow, buyer } = await createEscrow({ amount: 150_000 });
    const browser = agent();
    await signIn(browser, buyer.email);
    const page = await browser.get(`/pay/${escrow.id}`);
    expectPageHeaders(page);
    // 0.7% of 150,000 = 1,050, plus 500 fixed
    expect(page.text).to.include('value="sandbox:qris"').and.include('Rp1.550').and.include('Rp151.550');
    const token = tokenIn(page.text);
    const none = await browser.post(`/pay/${escrow.id}/pay`).type('form').send({ choice: 'sandbox:qris' });
    expect(none.status).to.equal(403);
    expect(none.text).to.include('CSRF_FAILED');
    const wrong = await browser.post(`/pay/${escrow.id}/pay`).type('form').send({ choice: 'sandbox:qris', _csrf: `${token}x` });
    expect(wrong.status).to.equal(403);
    expect(await db('payments').where({ escrow_id: escrow.id })).to.have.length(0);
    const json = await browser.post(`/pay/${escrow.id}/pay`).set('Content-Type', 'application/json').send(JSON.stringify({ choice: 'sandbox:qris', _csrf: token }));
    expect(json.status).to.equal(415);
    const paid = await browser.post(`/pay/${escrow.id}/pay`).type('form').send({ choice: 'sandbox:qris', _csrf: token });
    expect(paid.status).to.equal(303);
    expect(paid.headers.location).to.equal(`/pay/${escrow.id}`);
    const row = (await db('payments').where({ escrow_id: escrow.id }).first()) as { amount: number; surcharge: number; method: string };
    expect(row).to.deep.include({ amount: 151_550, surcharge: 1550, method: 'qris' });
    const shown = await browser.get(`/pay/${escrow.id}`);
    expect(shown.text).to.match(/<img src="data:image\/png;base64,[A-Za-z0-9+/=]{200,}"/);
    expect(shown.text).to.include(`data-status-url="/api/escrows/${escrow.id}/payment-status"`).and.include('Rp151.550');
    // A resubmitted form reuses the live link; another method replaces it.
    await browser.post(`/pay/${escrow.id}/pay`).type('form').send({ choice: 'sandbox:qris', _csrf: token }).expect(303);
    expect(await db('payments').where({ escrow_id: escrow.id })).to.have.length(1);
    expect(shown.text).to.include('id="other-methods"');
    await browser.post(`/pay/${escrow.id}/pay`).type('form').send({ choice: 'sandbox:bank_transfer', _csrf: token }).expect(303);
    expect(await db('payments').where({ escrow_id: escrow.id })).to.have.length(2);
    expect((await browser.get(`/pay/${escrow.id}`)).text).to.match(/id="va-number">8808\d{12}</);
  });

  it('shows a virtual account number with a copy button', async () => {
    const { escrow, buyer } = await createEscrow();
    const browser = agent();
    await signIn(browser, buyer.email);
    const token = tokenIn((await browser.get(`/pay/${escrow.id}`)).text);
    await browser.post(`/pay/${escrow.id}/pay?lang=en`).type('form').send({ choice: 'sandbox:bank_transfer', _csrf: token }).expect(303);
    const shown = await browser.get(`/pay/${escrow.id}?lang=en`);
    const va = /id="va-number">(\d+)</.exec(shown.text)?.[1];
    expect(va).to.match(/^8808\d{12}$/);
    expect(shown.text).to.include(`data-copy="${va}"`).and.include('Virtual account number');
  });

  it('a manual transfer shows the accounts and takes the claim (CSRF-checked); then it waits for staff', async () => {
    await createGateway({
      provider: 'manual_bca', displayName: 'Transfer BCA', isManual: true, methods: ['bank_transfer'], feePercent: '0', feeFixed: 0,
      config: { bank_accounts: [{ bank: 'BCA', account_number: '8800112233', account_name: 'PT <Rekber> Aman' }], instructions: 'Transfer tepat sampai 3 digit terakhir' },
    });
    const { escrow, buyer } = await createEscrow({ amount: 150_000 });
    const browser = agent();
    await signIn(browser, buyer.email);
    const token = tokenIn((await browser.get(`/pay/${escrow.id}`)).text);
    await browser.post(`/pay/${escrow.id}/pay`).type('form').send({ choice: 'manual_bca:bank_transfer', _csrf: token }).expect(303);
    const shown = await browser.get(`/pay/${escrow.id}`);
    expect(shown.text).to.include('<code>8800112233</code>').and.include('PT &lt;Rekber&gt; Aman').and.include('Transfer tepat sampai 3 digit terakhir').and.include('id="claim-form"');
    expect((await browser.post(`/pay/${escrow.id}/claim`).type('form').send({ reference: 'TRF-9' })).status).to.equal(403);
    expect(((await db('payments').where({ escrow_id: escrow.id }).first()) as { status: string }).status).to.equal('pending');
    await browser.post(`/pay/${escrow.id}/claim`).type('form').send({ reference: 'TRF-9', _csrf: token }).expect(303);
    expect(await db('payments').where({ escrow_id: escrow.id }).first()).to.deep.include({ status: 'awaiting_confirmation', claim_reference: 'TRF-9' });
    const waiting = await browser.get(`/pay/${escrow.id}`);
    expect(waiting.text).to.include('id="awaiting-confirmation"').and.not.include('id="claim-form"').and.not.include('id="other-methods"');
  });

  it('does not let a signed-in stranger pay, and says why', async () => {
    const { escrow } = await createEscrow();
    const stranger = (await createUser()).user;
    const browser = agent();
    const csrf = await signIn(browser, stranger.email);
    const page = await browser.get(`/pay/${escrow.id}`);
    expect(page.text).to.include('id="not-buyer"').and.not.include('id="pay-form"');
    const res = await browser.post(`/pay/${escrow.id}/pay`).type('form').send({ choice: 'sandbox:qris', _csrf: csrf });
    expect(res.status).to.equal(403);
    expect(res.text).to.include('NOT_BUYER');
  });

  it('serves only the known static files, from our origin', async () => {
    const js = await agent().get('/static/pages/checkout.js');
    expect(js.status).to.equal(200);
    expect(js.headers['content-type']).to.match(/^text\/javascript/);
    expect(js.text).to.include('data-status-url');
    expect((await agent().get('/static/pages/html.ts')).status).to.equal(404);
    expect((await agent().get('/static/pages/..%2Fhtml.ts')).status).to.equal(404);
  });
});

describe('operator console (issue 12)', () => {
  const mail = new MailSink();
  before(() => mail.start());
  after(() => mail.stop());

  async function adminAgent() {
    const admin = (await createUser({ role: 'admin', fullName: 'Staff One' })).user;
    const browser = agent();
    await signIn(browser, admin.email);
    return { admin, browser };
  }

  it('a deep link survives sign-in, its query included, through the two-step sign-in too (issue 46)', async () => {
    const id = '8d5c2f0e-0000-4000-8000-000000000046';
    const deep = `/admin/kyb/${id}?cursor=abc_1-2&status=pending`;
    const anon = await agent().get(deep);
    expect(anon.status).to.equal(303);
    expect(anon.headers.location).to.equal(`/sign-in?next=${encodeURIComponent(deep)}`);
    // A page a sign-in may not send back to is replaced by the console's front page.
    const odd = await agent().get('/admin/kyb/not-an-id');
    expect(odd.headers.location).to.equal(`/sign-in?next=${encodeURIComponent('/admin')}`);

    const admin = (await createUser({ role: 'admin', fullName: 'Staff Deep' })).user;
    const browser = agent();
    const form = await browser.get(anon.headers.location as string);
    expect(form.text).to.include(`name="next" value="${deep.replace(/&/g, '&amp;')}"`);
    const res = await browser.post('/sign-in').type('form').send({ _csrf: tokenIn(form.text), email: admin.email, password: DEFAULT_PASSWORD, next: deep });
    expect(res.headers.location).to.equal(deep);

    const twoStep = (await createUser({ role: 'admin', fullName: 'Staff Two', twoFactor: 'email' })).user;
    const second = agent();
    const start = await second.get(`/sign-in?next=${encodeURIComponent(deep)}`);
    const step = await second.post('/sign-in').type('form').send({ _csrf: tokenIn(start.text), email: twoStep.email, password: DEFAULT_PASSWORD, next: deep });
    expect(step.status).to.equal(200);
    expect(step.text).to.include(`name="next" value="${deep.replace(/&/g, '&amp;')}"`);
    const ticket = /name="ticket" value="([^"]+)"/.exec(step.text)![1]!;
    await runJobs(['mail']);
    const done = await second.post('/sign-in/2fa').type('form').send({ _csrf: tokenIn(step.text), ticket, code: mail.lastCode(twoStep.email), next: deep });
    expect(done.headers.location).to.equal(deep);
  });

  it('sends anonymous visitors to sign in and refuses non-staff', async () => {
    const anon = await agent().get('/admin/disputes');
    expect(anon.status).to.equal(303);
    expect(anon.headers.location).to.equal(`/sign-in?next=${encodeURIComponent('/admin/disputes')}`);
    const user = (await createUser()).user;
    const browser = agent();
    const csrf = await signIn(browser, user.email);
    const refused = await browser.get('/admin');
    expect(refused.status).to.equal(403);
    expectPageHeaders(refused);
    const { escrow } = await createEscrow({ status: 'disputed' });
    const d = (await db('disputes').where({ escrow_id: escrow.id }).first()) as { id: string };
    const move = await browser.post(`/admin/disputes/${d.id}/resolve`).type('form').send({ _csrf: csrf, outcome: 'refund' });
    expect(move.status).to.equal(403);
    expect(((await db('disputes').where({ id: d.id }).first()) as { status: string }).status).to.equal('open');
  });

  it('rules a dispute only with the session token, through the service and its audit trail', async () => {
    const { browser } = await adminAgent();
    const { escrow } = await createEscrow({ status: 'disputed', item: 'Kamera <x>' });
    const d = (await db('disputes').where({ escrow_id: escrow.id }).first()) as { id: string };
    const list = await browser.get('/admin/disputes');
    expect(list.status).to.equal(200);
    expectPageHeaders(list);
    expect(list.text).to.include(`action="/admin/disputes/${d.id}/resolve"`).and.include('Kamera &lt;x&gt;');
    const token = tokenIn(list.text);
    const none = await browser.post(`/admin/disputes/${d.id}/resolve`).type('form').send({ outcome: 'refund' });
    expect(none.status).to.equal(403);
    const wrong = await browser.post(`/admin/disputes/${d.id}/resolve`).type('form').send({ outcome: 'refund', _csrf: 'not-the-token' });
    expect(wrong.status).to.equal(403);
    expect(((await db('disputes').where({ id: d.id }).first()) as { status: string }).status).to.equal('open');
    const ok = await browser.post(`/admin/disputes/${d.id}/resolve`).type('form').send({ outcome: 'refund', note: 'no tracking', _csrf: token });
    expect(ok.status).to.equal(303);
    expect(ok.headers.location).to.equal('/admin/disputes?done=dispute.resolve');
    expect(await db('disputes').where({ id: d.id }).first()).to.deep.include({ status: 'resolved', outcome: 'refund' });
    expect(((await db('escrows').where({ id: escrow.id }).first()) as { status: string }).status).to.equal('refunded');
    const audit = (await db('staff_audit').where({ target_id: d.id })) as { action: string; note: string }[];
    expect(audit).to.have.length(1);
    expect(audit[0]!.note).to.equal('no tracking');
    const again = await browser.post(`/admin/disputes/${d.id}/resolve`).type('form').send({ outcome: 'release', _csrf: token });
    expect(again.status).to.equal(409);
    expect(again.text).to.include('INVALID_STATE');
  });

  it('suspends and reactivates a user with an audit row each', async () => {
    const { browser } = await adminAgent();
    const target = (await createUser({ email: 'target-person@example.com' })).user;
    const list = await browser.get('/admin/users?q=target-person');
    expect(list.text).to.include(`action="/admin/users/${target.id}/suspend"`);
    const token = tokenIn(list.text);
    expect((await browser.post(`/admin/users/${target.id}/suspend`).type('form').send({ note: 'fraud' })).status).to.equal(403);
    await browser.post(`/admin/users/${target.id}/suspend`).type('form').send({ note: 'fraud', _csrf: token }).expect(303);
    expect(((await db('users').where({ id: target.id }).first()) as { status: string }).status).to.equal('suspended');
    await browser.post(`/admin/users/${target.id}/reactivate`).type('form').send({ _csrf: token }).expect(303);
    expect(((await db('users').where({ id: target.id }).first()) as { status: string }).status).to.equal('active');
    const actions = ((await db('staff_audit').where({ target_id: target.id }).orderBy('id')) as { action: string }[]).map((a) => a.action);
    expect(actions).to.deep.equal(['user.suspend', 'user.reactivate']);
  });

  it('approves and rejects withdrawals through the withdrawals service', async () => {
    const { browser } = await adminAgent();
    const a = (await createWithdrawal()).withdrawal;
    const b = (await createWithdrawal()).withdrawal;
    const list = await browser.get('/admin/withdrawals');
    expect(list.text).to.include(`/admin/withdrawals/${a.id}/approve`).and.include(`/admin/withdrawals/${b.id}/reject`);
    const token = tokenIn(list.text);
    expect((await browser.post(`/admin/withdrawals/${a.id}/approve`).type('form').send({ _csrf: 'x' })).status).to.equal(403);
    await browser.post(`/admin/withdrawals/${a.id}/approve`).type('form').send({ _csrf: token }).expect(303);
    await browser.post(`/admin/withdrawals/${b.id}/reject`).type('form').send({ _csrf: token, note: 'wrong account' }).expect(303);
    expect(((await db('withdrawals').where({ id: a.id }).first()) as { status: string }).status).to.equal('approved');
    expect(((await db('withdrawals').where({ id: b.id }).first()) as { status: string }).status).to.equal('rejected');
    const actions = ((await db('staff_audit').whereIn('target_id', [a.id, b.id]).orderBy('id')) as { action: string }[]).map((x) => x.action);
    expect(actions).to.deep.equal(['withdrawal.approve', 'withdrawal.reject']);
  });

  it('confirms a claimed manual transfer', async () => {
    const { browser } = await adminAgent();
    await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer'], feePercent: '0', config: { banks: [] } });
    const { escrow, buyer } = await createEscrow();
    const buyerAgent = agent();
    const csrf = await signIn(buyerAgent, buyer.email);
    await buyerAgent.post(`/api/escrows/${escrow.id}/pay`).set('X-CSRF-Token', csrf).send({ method: 'bank_transfer', provider: 'manual_bca' }).expect(201);
    const claim = await buyerAgent.post(`/api/escrows/${escrow.id}/claim-payment`).set('X-CSRF-Token', csrf).send({ reference: 'TRF-123' });
    expect(claim.status, JSON.stringify(claim.body)).to.equal(200);
    const p = (await db('payments').where({ escrow_id: escrow.id }).first()) as { id: string };
    const list = await browser.get('/admin/payments');
    expect(list.text).to.include(`/admin/payments/${p.id}/confirm`).and.include('TRF-123');
    await browser.post(`/admin/payments/${p.id}/confirm`).type('form').send({ _csrf: tokenIn(list.text) }).expect(303);
    expect(((await db('escrows').where({ id: escrow.id }).first()) as { status: string }).status).to.equal('paid');
    expect(await db('staff_audit').where({ target_id: p.id, action: 'payment.confirm' })).to.have.length(1);
  });

  it('moves payment-service orders (process, deliver, refund) through the orders service, never showing credentials', async () => {
    const { browser } = await adminAgent();
    const buyer = await fundedUser(500_000);
    const a = await createOrder(buyer.id, { label: 'Voucher <game>' });
    const b = await createOrder(buyer.id);
    for (const o of [a, b]) await payOrder(undefined, { userId: buyer.id, role: 'user' }, o.id, { method: 'balance' });
    const list = await browser.get('/admin/orders');
    expect(list.status).to.equal(200);
    expect(list.text).to.include(`/admin/orders/${a.id}/process`).and.include('Voucher &lt;game&gt;');
    const token = tokenIn(list.text);
    expect((await browser.post(`/admin/orders/${a.id}/process`).type('form').send({})).status).to.equal(403);
    expect(list.text).to.not.include(`/admin/orders/${a.id}/refund`); // refund needs processing
    await browser.post(`/admin/orders/${a.id}/process`).type('form').send({ _csrf: token }).expect(303);
    await browser.post(`/admin/orders/${b.id}/process`).type('form').send({ _csrf: token }).expect(303);
    const processing = await browser.get('/admin/orders');
    expect(processing.text).to.include(`/admin/orders/${a.id}/deliver`).and.include(`/admin/orders/${b.id}/refund`);
    const empty = await browser.post(`/admin/orders/${a.id}/deliver`).type('form').send({ _csrf: token });
    expect(empty.status).to.equal(400);
    expect(empty.text).to.include('MISSING_FIELDS');
    await browser.post(`/admin/orders/${a.id}/deliver`).type('form').send({ _csrf: token, credentials: 'CODE-1234-SECRET' }).expect(303);
    await browser.post(`/admin/orders/${b.id}/refund`).type('form').send({ _csrf: token, reason: 'out of stock' }).expect(303);
    expect(((await db('service_orders').where({ id: a.id }).first()) as { status: string }).status).to.equal('delivered');
    expect(await db('service_orders').where({ id: b.id }).first()).to.deep.include({ status: 'refunded', refund_reason: 'out of stock' });
    const actions = ((await db('staff_audit').whereIn('target_id', [a.id, b.id]).orderBy('id')) as { action: string }[]).map((x) => x.action);
    expect(actions).to.deep.equal(['order.startProcessing', 'order.startProcessing', 'order.deliver', 'order.refund']);
    const after = await browser.get('/admin/orders');
    expect(after.text).to.not.include('CODE-1234-SECRET');
  });

  it("lists an order's claimed transfer with the escrows' and rejects it through the payments service", async () => {
    const { browser } = await adminAgent();
    await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer'], feePercent: '0', config: { bank_accounts: [] } });
    const buyer = (await createUser()).user;
    const order = await createOrder(buyer.id, { label: 'Pulsa' });
    const asBuyer = { userId: buyer.id, role: 'user' as const };
    await payOrder(undefined, asBuyer, order.id, { method: 'bank_transfer', provider: 'manual_bca' });
    const claimed = (await claimOrderPayment(undefined, asBuyer, order.id, { reference: 'ORD-TRF' })).payment;
    const list = await browser.get('/admin/payments');
    expect(list.text).to.include(`/admin/payments/${claimed.id}/reject`).and.include(`order ${order.id}`).and.include('Pulsa');
    await browser.post(`/admin/payments/${claimed.id}/reject`).type('form').send({ _csrf: tokenIn(list.text), note: 'not received' }).expect(303);
    expect(((await db('payments').where({ id: claimed.id }).first()) as { status: string }).status).to.equal('failed');
    expect(((await db('service_orders').where({ id: order.id }).first()) as { status: string }).status).to.equal('awaiting_payment');
    expect(await db('staff_audit').where({ target_id: claimed.id, action: 'payment.reject' })).to.have.length(1);
  });

  it('lists late claims and amount mismatches and settles them (credit, mark returned) with the CSRF token, through the payments service', async () => {
    const { browser } = await adminAgent();
    await createGateway({ provider: 'manual_bca', isManual: true, methods: ['bank_transfer'], feePercent: '0', config: { bank_accounts: [] } });
    await createGateway({ provider: 'sandbox', feePercent: '0.7', sortOrder: 1 });
    const { escrow, buyer, seller } = await createEscrow({ amount: 150_000 });
    const asBuyer = { userId: buyer.id, role: 'user' as const };
    const late = await payEscrow(undefined, asBuyer, escrow.id, { method: 'bank_transfer', provider: 'manual_bca' });
    await cancelEscrow(undefined, { userId: seller.id, role: 'user' }, escrow.id, {});
    expect((await claimEscrowPayment(undefined, asBuyer, escrow.id, { reference: 'LATE-TRF' })).late).to.equal(true);
    const other = await createEscrow({ buyer, amount: 150_000 });
    const link = await payEscrow(undefined, asBuyer, other.escrow.id, { method: 'qris', provider: 'sandbox' });
    const cb = sandboxCallback(link.gateway_order_id, 'paid', 99_000);
    await supertest(createApp().callback()).post('/api/webhooks/inbound').set('Content-Type', 'application/json').set('X-Sandbox-Signature', cb.signature).send(cb.body).expect(200);
    expect((await runJobs()).filter((j) => j.error)).to.deep.equal([]);
    const list = await browser.get('/admin/payments');
    expect(list.status).to.equal(200);
    expectPageHeaders(list);
    expect(list.text).to.include(`/admin/payments/${late.id}/credit`).and.include(`/admin/payments/${late.id}/mark-returned`).and.include('LATE-TRF').and.include('Claimed late');
    expect(list.text).to.include(`/admin/payments/${link.id}/credit`).and.include('gateway reported Rp99.000');
    const overview = await browser.get('/admin');
    expect(overview.text).to.match(/id="count-payments">2</);
    const token = tokenIn(list.text);
    expect((await browser.post(`/admin/payments/${link.id}/credit`).type('form').send({})).status).to.equal(403);
    expect((await browser.post(`/admin/payments/${link.id}/credit`).type('form').send({ _csrf: 'wrong' })).status).to.equal(403);
    await browser.post(`/admin/payments/${link.id}/credit`).type('form').send({ _csrf: token, note: 'short' }).expect(303);
    const noNote = await browser.post(`/admin/payments/${late.id}/mark-returned`).type('form').send({ _csrf: token });
    expect(noNote.status).to.equal(400);
    await browser.post(`/admin/payments/${late.id}/mark-returned`).type('form').send({ _csrf: token, note: 'sent back by BCA' }).expect(303);
    expect(await db('payments').where({ id: link.id }).first()).to.deep.include({ status: 'paid', flag: 'credited_to_buyer', received_amount: 99_000 });
    expect(await db('payments').where({ id: late.id }).first()).to.deep.include({ status: 'paid', flag: 'returned_outside' });
    const actions = ((await db('staff_audit').whereIn('target_id', [link.id, late.id]).orderBy('id')) as { action: string; note: string }[]).map((a) => [a.action, a.note]);
    expect(actions).to.deep.equal([['payment.credit', 'short'], ['payment.mark_returned', 'sent back by BCA']]);
    expect(await checkLedger(db)).to.deep.equal([]);
    const after = await browser.get('/admin/payments');
    expect(after.text).to.include('Nothing waiting.');
  });

  it('links the queue dashboard and counts the work waiting', async () => {
    const { browser } = await adminAgent();
    await createEscrow({ status: 'disputed' });
    const res = await browser.get('/admin');
    expect(res.status).to.equal(200);
    expect(res.text).to.include('href="/admin/queues"').and.match(/id="count-disputes">1</);
  });
});
