/**
 * Issue 12 in a real browser: a buyer opens the checkout of an escrow made from a signed
 * partner link, signs in, pays with the sandbox gateway; the sandbox callback lands and
 * the worker's inbox drains; the page (polling payment-status) shows paid. And an expired
 * escrow's page.
 */
import { expect } from 'chai';
import { clock } from '../../shared/clock.js';
import { config } from '../../shared/config.js';
import { db } from '../../shared/db.js';
import { rotateLinkSecret } from '../../shared/escrows/links.js';
import { createFromLink } from '../../shared/escrows/service.js';
import { escrowUrl } from '../../shared/escrows/serialize.js';
import { simulateSandbox } from '../../shared/payments/service.js';
import { createEscrow, signFields } from '../factories/escrows.js';
import { createGateway } from '../factories/payments.js';
import { createUser, DEFAULT_PASSWORD } from '../factories/users.js';
import { runJobs } from '../helpers/jobs.js';
import { newPage, useHarness } from './browser.js';

describe('hosted checkout in headless Chromium (issue 12)', function () {
  this.timeout(60_000);
  const harnessOf = useHarness();

  it('signed link -> sign in -> pay with the sandbox -> callback lands -> the page shows paid', async () => {
    const harness = harnessOf();
    await createGateway({ provider: 'sandbox', feePercent: '0.7' });
    const seller = (await createUser({ fullName: 'Toko Sepatu' })).user;
    const buyer = (await createUser({ email: 'pembeli@example.com' })).user;
    const { secret } = await rotateLinkSecret(db, seller.id);
    const fields = { seller: seller.id, item: 'Sepatu lari', ref: 'INV-1', expires: String(Math.floor(clock.nowMs() / 1000) + 3600), v: '1' };
    const escrow = await createFromLink(undefined, buyer.id, { ...fields, amount: 150_000, sig: signFields(secret, fields) });
    const url = new URL(escrowUrl(escrow.id));
    expect(url.pathname).to.equal(`/pay/${escrow.id}`);
    expect(url.origin).to.equal(config.publicBaseUrl);

    const { page, problems } = await newPage(harness);
    await page.goto(url.pathname);
    expect(await page.textContent('#item-name')).to.equal('Sepatu lari');
    expect(await page.textContent('#amount')).to.equal('Rp150.000');
    await page.waitForFunction("(document.getElementById('countdown')?.textContent ?? '').startsWith('sisa ')");

    // Not signed in: to the sign-in page and back.
    await page.click('#sign-in-to-pay');
    await page.waitForURL(/\/sign-in\?next=/);
    await page.fill('#email', buyer.email);
    await page.fill('#password', DEFAULT_PASSWORD);
    await Promise.all([page.waitForURL(`**/pay/${escrow.id}`), page.click('#sign-in-button')]);
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === config.sessionCookieName);
    expect(session).to.deep.include({ httpOnly: true, sameSite: 'Lax' });

    // Method with surcharge and total shown before paying (0.7% of 150,000 = 1,050).
    const qris = page.locator('label.method', { has: page.locator('input[value="sandbox:qris"]') });
    expect(await qris.locator('.surcharge').textContent()).to.equal('Rp1.050');
    expect(await qris.locator('.total').textContent()).to.equal('Rp151.050');
    await qris.locator('input').check();
    await Promise.all([page.waitForURL(`**/pay/${escrow.id}`), page.click('#pay-button')]);

    // The QRIS image drawn on the server, and the page polling.
    const img = page.locator('#qris img');
    expect(await img.getAttribute('src')).to.match(/^data:image\/png;base64,/);
    expect(Number(await page.evaluate("document.querySelector('#qris img').naturalWidth"))).to.be.greaterThan(100);
    expect(await page.getAttribute('#payment', 'data-status')).to.equal('pending');

    // The sandbox gateway sends its signed callback; the callbacks inbox is drained as the worker does.
    const payment = (await db('payments').where({ escrow_id: escrow.id }).first()) as { gateway_order_id: string };
    await simulateSandbox({ userId: buyer.id, role: 'user' }, payment.gateway_order_id, 'paid');
    await runJobs(['gateway-callbacks']);
    expect(((await db('escrows').where({ id: escrow.id }).first()) as { status: string }).status).to.equal('paid');

    // The next poll (within 5 s) sees paid and the page shows the next steps.
    await page.waitForSelector('#paid', { timeout: 15_000 });
    expect(await page.textContent('#paid h2')).to.equal('Pembayaran diterima');
    expect(await page.locator('#paid li').count()).to.equal(4);

    // The English switch keeps the page.
    await Promise.all([page.waitForURL(`**/pay/${escrow.id}?lang=en`), page.click('#lang-switch')]);
    expect(await page.textContent('#paid h2')).to.equal('Payment received');
    expect(problems).to.deep.equal([]);
    await page.context().close();
  });

  it('polls payment-status every 5 s, stops after 2 minutes, and "check again" starts a new round', async () => {
    const harness = harnessOf();
    await createGateway({ provider: 'sandbox', feePercent: '0.7' });
    const { escrow, buyer } = await createEscrow();
    const { page, problems } = await newPage(harness);
    await page.clock.install();
    // Page time moves only by runFor, not with the wall clock as well: otherwise the real
    // time the 24 rounds below take (seconds on a busy machine) ran the 2-minute cap out early.
    await page.clock.pauseAt(Date.now() + 60_000);
    await page.goto(`/sign-in?next=${encodeURIComponent(`/pay/${escrow.id}`)}`);
    await page.fill('#email', buyer.email);
    await page.fill('#password', DEFAULT_PASSWORD);
    await Promise.all([page.waitForURL(`**/pay/${escrow.id}`), page.click('#sign-in-button')]);
    await page.check('input[value="sandbox:bank_transfer"]');
    await Promise.all([page.waitForURL(`**/pay/${escrow.id}`), page.click('#pay-button')]);
    expect(await page.textContent('#va-number')).to.match(/^8808\d{12}$/);

    let polls = 0;
    page.on('request', (r) => {
      if (r.url().endsWith(`/api/escrows/${escrow.id}/payment-status`)) polls += 1;
    });
    await page.clock.runFor(4_000);
    expect(polls).to.equal(0); // not faster than every 5 s
    for (let i = 1; i <= 24; i++) {
      await page.clock.runFor(5_000);
      // The answer handled and the next poll scheduled (before the fake clock moves again).
      await page.waitForSelector(`#payment[data-polls="${i}"]`, { state: 'attached' });
    }
    expect(polls).to.equal(24);
    await page.clock.runFor(30_000);
    expect(polls).to.equal(24); // capped at 2 minutes
    expect(await page.isVisible('#poll-stopped')).to.equal(true);
    await page.click('#check-again');
    await page.waitForSelector('#payment[data-polls="25"]', { state: 'attached' });
    expect(polls).to.equal(25);
    expect(await page.isVisible('#poll-stopped')).to.equal(false);
    expect(problems).to.deep.equal([]);
    await page.context().close();
  });

  it("an expired escrow's page says so clearly", async () => {
    const harness = harnessOf();
    const { escrow } = await createEscrow();
    clock.set(new Date(escrow.expires_at.getTime() + 60_000));
    const { page, problems } = await newPage(harness);
    const res = await page.goto(`/pay/${escrow.id}`);
    expect(res?.status()).to.equal(200);
    expect(await page.textContent('#expired h1')).to.equal('Rekber ini sudah kedaluwarsa');
    expect(await page.locator('#pay-form, #sign-in-to-pay').count()).to.equal(0);
    expect(problems).to.deep.equal([]);
    await page.context().close();
  });
});
