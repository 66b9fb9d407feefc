/**
 * Issue 46 in a real browser: every console page, with an item in every queue, passes an
 * automated accessibility check (axe-core through Playwright: no serious or critical
 * violation) on a 1280 px desktop and on a 390 px phone, where the page itself never scrolls
 * sideways (wide tables scroll inside their card); then in Indonesian (chosen through the nav's
 * language link), whose longer words are checked again on the phone.
 */
import { AxeBuilder } from '@axe-core/playwright';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { db } from '../../shared/db.js';
import * as orders from '../../shared/orders/service.js';
import { activeDeal, dealWorld } from '../factories/deals.js';
import { createEscrow } from '../factories/escrows.js';
import { submittedApplication } from '../factories/kyb-review.js';
import { createOrder } from '../factories/orders.js';
import { createInstruction } from '../factories/payouts.js';
import { approve, disbursementsOf, fundedDeal, makeLive, releasePath } from '../factories/releases.js';
import { createUser, DEFAULT_PASSWORD } from '../factories/users.js';
import { createWithdrawal } from '../factories/withdrawals.js';
import { api } from '../helpers/app.js';
import { fundUser } from '../helpers/platform-factories.js';
import { useHarness } from './browser.js';

interface Violation {
  id: string;
  impact: string | null | undefined;
  help: string;
  nodes: { target: unknown }[];
}

/** Serious and critical violations on the page as it is now, with where they are. */
async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return (result.violations as Violation[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join(', ')}`);
}

describe('operator console: accessibility and phone width in headless Chromium (issue 46)', function () {
  this.timeout(180_000);
  const harnessOf = useHarness();

  it('every page has no serious or critical axe violation at 1280 px and at 390 px, and never scrolls sideways on the phone', async () => {
    const client = api();
    const admin = (await createUser({ role: 'admin', fullName: 'Staf Aksesibel' })).user;
    // One item in every queue.
    const { escrow } = await createEscrow({ status: 'disputed', item: 'Kamera mirrorless' });
    const { withdrawal, user } = await createWithdrawal();
    const order = await createOrder(user.id, { label: 'Voucher belanja' });
    await fundUser(user.id, order.total);
    await orders.pay(undefined, { userId: user.id, role: 'user' }, order.id, { method: 'balance' });
    await db('payments').insert({
      escrow_id: escrow.id, buyer_id: escrow.buyer_id, provider: 'manual_bca', method: 'bank_transfer', is_manual: true, gateway_order_id: 'MANUAL-A11Y-1',
      escrow_amount: 150_000, surcharge: 0, amount: 150_000, status: 'awaiting_confirmation', claimed_at: new Date(), claim_reference: 'Transfer BCA 0101',
      created_at: new Date(), updated_at: new Date(),
    });
    const kyb = await submittedApplication({ name: 'Gudang Aksesibel' });
    const w = await dealWorld(client, 'PT Ruang Lebar');
    await makeLive(w);
    const awaiting = await activeDeal(client, w);
    const r = await fundedDeal(client, 'live', [1_000_000], {}, w);
    await approve(r.mids[0]!);
    const instruction = await createInstruction(w.workspace, w.cpId, { label: 'Rekening operasional', verified: true });
    const payout = Number((await db('deal_milestones').where({ id: r.mids[0]! }).first<{ payout_amount: string }>('payout_amount')).payout_amount);
    const released = await client.post(releasePath(r.deal.deal.id, r.mids[0]!)).set(w.h.finance).send({ splits: [{ payout_instruction_id: instruction.id, amount: payout }] });
    expect(released.status, JSON.stringify(released.body)).to.equal(200);
    expect((await disbursementsOf(r.mids[0]!)).map((p) => p.status)).to.deep.equal(['queued']);
    await createInstruction(w.workspace, w.cpId, { label: 'Rekening baru' });
    const sandbox = await dealWorld(client, 'Grosir Sengketa');
    const disputed = await fundedDeal(client, 'sandbox', [1_000_000], {}, sandbox);
    const dispute = await client.post(`/v1/enterprise/deals/${disputed.deal.deal.id}/milestones/${disputed.mids[0]!}/dispute`).set(sandbox.h.operator).send({ reason: 'Barang rusak' });
    expect(dispute.status, JSON.stringify(dispute.body)).to.equal(200);

    const pages = [
      '/admin', '/admin/disputes', '/admin/payments', '/admin/withdrawals', '/admin/orders', '/admin/kyb', '/admin/funding', '/admin/instructions', '/admin/payouts',
      '/admin/rulings', '/admin/users', `/admin/users/${user.id}`, `/admin/escrows/${escrow.id}`, `/admin/orders/${order.id}`, `/admin/workspaces/${w.workspace.id}`,
      `/admin/deals/${awaiting.deal.id}`, `/admin/kyb/${kyb.application.id}`,
    ];
    const h = harnessOf();
    const context = await h.browser.newContext({ baseURL: h.base, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto('/sign-in?next=%2Fadmin');
    expect(await seriousViolations(page), 'sign-in').to.deep.equal([]);
    await page.fill('#email', admin.email);
    await page.fill('#password', DEFAULT_PASSWORD);
    await Promise.all([page.waitForURL('**/admin'), page.click('#sign-in-button')]);

    const found: Record<string, string[]> = {};
    /** Every page and the reveal at `width`, in the console's language `lang` (each page must say so in <html lang>). */
    async function pass(width: number, lang: 'en' | 'id'): Promise<void> {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
      for (const path of pages) {
        const res = await page.goto(path);
        expect(res?.status(), path).to.equal(200);
        expect(await page.getAttribute('html', 'lang'), path).to.equal(lang);
        const problems = await seriousViolations(page);
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        if (width === 390 && overflow > 0) {
          const widest = await page.evaluate<string>(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 400).slice(0, 4).map((e) => e.tagName + '.' + e.className + '#' + e.id + ':' + Math.round(e.getBoundingClientRect().width)).join(' ')`);
          problems.push(`the page scrolls ${overflow} px sideways: ${widest}`);
        }
        if (problems.length > 0) found[`${path} at ${width} px (${lang})`] = problems;
      }
      // The reveal answers a POST: opened from the instruction queue's form.
      await page.goto(`/admin/instructions`);
      await Promise.all([page.waitForURL('**/reveal'), page.locator('form.reveal button[type="submit"]').first().click()]);
      expect(await page.locator('#account-number').count()).to.equal(1);
      expect(await page.getAttribute('html', 'lang'), 'reveal').to.equal(lang);
      const problems = await seriousViolations(page);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      if (width === 390 && overflow > 0) problems.push(`the page scrolls ${overflow} px sideways`);
      if (problems.length > 0) found[`reveal at ${width} px (${lang})`] = problems;
    }
    for (const width of [1280, 390]) await pass(width, 'en');

    // Indonesian, chosen through the nav's link on a queue page: back on the same page, in Indonesian.
    await page.goto('/admin/disputes?status=open');
    expect(await page.textContent('#lang-switch')).to.equal('Bahasa Indonesia');
    await Promise.all([page.waitForURL('**/admin/disputes?status=open'), page.click('#lang-switch')]);
    expect(await page.getAttribute('html', 'lang')).to.equal('id');
    expect(await page.textContent('h1')).to.equal('Sengketa yang perlu diputus');
    expect(await page.textContent('#lang-switch')).to.equal('English');
    await pass(390, 'id');
    expect(found).to.deep.equal({});
    expect(withdrawal.status).to.equal('pending');
    await context.close();
  });
});
