/**
 * The console's other seven queues search, filter and page like the dispute and withdrawal
 * queues (issue 46; console-queues.test.ts): payments needing staff, orders to move, KYB
 * applications, live funding to confirm, payout instructions, open payouts and disputed deal
 * milestones. For each, `q` finds a tag in its text columns (oldest first), an id column's
 * uuid exactly, and one more text column it names (gateway order id and claim reference,
 * buyer e-mail in any case, workspace name, account holder, payout reference, deal
 * reference); `older_than_hours` keeps only items waiting since that long ago (the queue's
 * own since column); the form shows the search back. Every queue refuses filters out of
 * range with 400 INVALID_QUERY, and the order queue's keyset pages reach every item once
 * with the filters kept on the next page's link.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { db } from '../../../shared/db.js';
import { createCounterparty } from '../../../shared/enterprise/counterparties.js';
import { awaitingConfirmation } from '../../../shared/deals/staff.js';
import { QUEUE_PAGE } from '../../../shared/staff/queue.js';
import { activateVia, createDealVia, dealBody, dealWorld } from '../../factories/deals.js';
import { createWorkspace } from '../../factories/enterprise.js';
import { createEscrow } from '../../factories/escrows.js';
import { submittedApplication } from '../../factories/kyb-review.js';
import { createOrder } from '../../factories/orders.js';
import { createInstruction, ownerActor } from '../../factories/payouts.js';
import { approve, disbursementsOf, fundedDeal, makeLive, releasePath } from '../../factories/releases.js';
import { createUser, signIn } from '../../factories/users.js';
import { api } from '../../helpers/app.js';

const agent = () => supertest.agent(createApp().callback());
type Browser = ReturnType<typeof agent>;
const client = api();
const HOUR = 3_600_000;
const hoursAgo = (h: number) => new Date(Date.now() - h * HOUR);

/** Queue rows: `<tr data-id="...">`, with or without more attributes (data-deal, data-sandbox, data-attention). */
const ROW = /<tr data-id="([0-9a-f-]{36})"[ >]/g;
const idsIn = (text: string): string[] => [...text.matchAll(ROW)].map((m) => m[1]!);
const nextLink = (text: string): string | null => {
  const m = /<a id="next-page" href="([^"]+)">/.exec(text);
  return m ? m[1]!.replace(/&amp;/g, '&') : null;
};

/** A signed-in admin's browser. */
async function staffBrowser(): Promise<Browser> {
  const admin = (await createUser({ role: 'admin', fullName: 'Staf Pencarian' })).user;
  const browser = agent();
  await signIn(browser, admin.email);
  return browser;
}

/** The ids a queue's page lists for `query` (answered 200). */
function queue(browser: Browser, path: string) {
  return async (query: string): Promise<string[]> => {
    const res = await browser.get(`${path}?${query}`);
    expect(res.status, `${path}?${query}`).to.equal(200);
    return idsIn(res.text);
  };
}

const q = (term: string) => `q=${encodeURIComponent(term)}`;

/** The filter form shows the search and the waiting filter back. */
async function expectFormShows(browser: Browser, path: string, tag: string): Promise<void> {
  const res = await browser.get(`${path}?q=${tag}&older_than_hours=24`);
  expect(res.status).to.equal(200);
  expect(res.text).to.include(`name="q" value="${tag}"`);
  expect(res.text).to.match(/name="older_than_hours"[^>]*value="24"/);
}

describe('operator console: every queue searches and filters by waiting time (issue 46)', () => {
  let browser: Browser;
  beforeEach(async () => {
    browser = await staffBrowser();
  });

  it('payments needing staff: by item, payment or escrow id, gateway order id, claim reference; waiting since created', async () => {
    const tag = `Bayar${Date.now()}`;
    /**
     * A manual transfer link made `hours` ago for an escrow or an order, which the buyer
     * claimed half an hour ago (awaiting staff): the queue's age is the link's creation.
     */
    async function claimed(target: { escrow_id: string } | { order_id: string }, buyerId: string, hours: number) {
      const gatewayOrderId = `MANUAL-${randomUUID().slice(0, 13)}`;
      const claimReference = `Transfer BCA ${randomUUID().slice(0, 8)}`;
      const claimedAt = hoursAgo(0.5);
      const [row] = await db('payments')
        .insert({
          ...target,
          buyer_id: buyerId,
          provider: 'manual_bca',
          method: 'bank_transfer',
          is_manual: true,
          gateway_order_id: gatewayOrderId,
          escrow_amount: 150_000,
          surcharge: 2500,
          amount: 152_500,
          status: 'awaiting_confirmation',
          claimed_at: claimedAt,
          claim_reference: claimReference,
          created_at: hoursAgo(hours),
          updated_at: claimedAt,
        })
        .returning<{ id: string }[]>('id');
      return { id: row!.id, gatewayOrderId, claimReference };
    }
    // Made out of order: the list follows the creation times.
    const freshEscrow = await createEscrow({ item: `${tag} sepatu` });
    const fresh = await claimed({ escrow_id: freshEscrow.escrow.id }, freshEscrow.buyer.id, 2);
    const oldEscrow = await createEscrow({ item: `${tag} kamera` });
    const old = await claimed({ escrow_id: oldEscrow.escrow.id }, oldEscrow.buyer.id, 60);
    // An order's claimed transfer: the tag is in what the order buys.
    const orderBuyer = (await createUser()).user;
    const order = await createOrder(orderBuyer.id, { label: `${tag} pulsa` });
    await db('service_orders').where({ id: order.id }).update({ status: 'pending_review' });
    const middle = await claimed({ order_id: order.id }, orderBuyer.id, 30);
    // Not waiting for staff: a pending transfer not yet claimed.
    const unclaimedEscrow = await createEscrow({ item: `${tag} belum` });
    const [unclaimed] = await db('payments')
      .insert({
        escrow_id: unclaimedEscrow.escrow.id,
        buyer_id: unclaimedEscrow.buyer.id,
        provider: 'manual_bca',
        method: 'bank_transfer',
        is_manual: true,
        gateway_order_id: `MANUAL-${randomUUID().slice(0, 13)}`,
        escrow_amount: 150_000,
        surcharge: 2500,
        amount: 152_500,
        created_at: hoursAgo(90),
        updated_at: hoursAgo(90),
      })
      .returning<{ id: string }[]>('id');

    const list = queue(browser, '/admin/payments');
    expect(await list(q(tag))).to.deep.equal([old.id, middle.id, fresh.id]);
    expect(await list(q(tag))).to.not.include(unclaimed!.id);
    expect(await list(q(middle.id))).to.deep.equal([middle.id]);
    expect(await list(q(oldEscrow.escrow.id))).to.deep.equal([old.id]);
    expect(await list(q(fresh.gatewayOrderId.toLowerCase()))).to.deep.equal([fresh.id]);
    expect(await list(q(old.claimReference))).to.deep.equal([old.id]);
    expect(await list(`${q(tag)}&older_than_hours=24`)).to.deep.equal([old.id, middle.id]);
    expect(await list(`${q(tag)}&older_than_hours=48`)).to.deep.equal([old.id]);
    // Why it waits: all three are claimed transfers; none a late claim or a wrong amount.
    expect(await list(`${q(tag)}&status=claimed`)).to.deep.equal([old.id, middle.id, fresh.id]);
    expect(await list(`${q(tag)}&status=late_claim`)).to.deep.equal([]);
    await db('payments').where({ id: middle.id }).update({ flag: 'late_claim' });
    expect(await list(`${q(tag)}&status=late_claim`)).to.deep.equal([middle.id]);
    expect(await list(`${q(tag)}&status=claimed`)).to.deep.equal([old.id, fresh.id]);
    expect(await list(`${q(tag)}&status=amount_mismatch`)).to.deep.equal([]);
    await expectFormShows(browser, '/admin/payments', tag);
  });

  it('orders to move: by what is bought, order id, buyer e-mail in any case; waiting since created; other statuses left out', async () => {
    const tag = `Pesan${Date.now()}`;
    /** An order of a new buyer in `status`, created `hours` ago. */
    async function order(label: string, status: 'pending_review' | 'paid' | 'processing' | 'awaiting_payment', hours: number) {
      const buyer = (await createUser()).user;
      const made = await createOrder(buyer.id, { label: `${tag} ${label}` });
      const paid = status === 'paid' || status === 'processing' ? { paid_via: 'balance', paid_at: hoursAgo(hours), sla_deadline_at: new Date(Date.now() + 24 * HOUR) } : {};
      await db('service_orders').where({ id: made.id }).update({ status, ...paid, created_at: hoursAgo(hours) });
      return { id: made.id, buyer };
    }
    const fresh = await order('voucher', 'paid', 1);
    const old = await order('token listrik', 'pending_review', 72);
    const middle = await order('langganan', 'processing', 26);
    const waiting = await order('belum bayar', 'awaiting_payment', 100);

    const list = queue(browser, '/admin/orders');
    expect(await list(q(tag))).to.deep.equal([old.id, middle.id, fresh.id]);
    expect(await list(q(middle.id))).to.deep.equal([middle.id]);
    expect(await list(q(fresh.buyer.email.toUpperCase()))).to.deep.equal([fresh.id]);
    expect(await list(q(waiting.buyer.email))).to.deep.equal([]);
    expect(await list(q(`${tag} TOKEN`))).to.deep.equal([old.id]);
    // LIKE wildcards are taken literally.
    expect(await list(q(`${tag}%`))).to.deep.equal([]);
    expect(await list(q(`${tag}_`))).to.deep.equal([]);
    expect(await list(`${q(tag)}&older_than_hours=24`)).to.deep.equal([old.id, middle.id]);
    expect(await list(`${q(tag)}&older_than_hours=48`)).to.deep.equal([old.id]);
    expect(await list(`${q(tag)}&status=pending_review`)).to.deep.equal([old.id]);
    expect(await list(`${q(tag)}&status=paid`)).to.deep.equal([fresh.id]);
    expect(await list(`${q(tag)}&status=processing&older_than_hours=24`)).to.deep.equal([middle.id]);
    // The form shows the status chosen.
    const shown = await browser.get(`/admin/orders?${q(tag)}&status=paid`);
    expect(shown.text).to.match(/<option value="paid" selected>/);
    await expectFormShows(browser, '/admin/orders', tag);
  });

  it('KYB applications: by counterparty or legal name, application or counterparty id, workspace name; waiting since submitted', async () => {
    const tag = `Kyb${Date.now()}`;
    const unique = randomUUID().slice(0, 8);
    /** A counterparty's application (counterparty named with the tag) in a new workspace, submitted `hours` ago. */
    async function application(workspaceName: string, counterparty: string, hours: number) {
      const made = await submittedApplication({ name: workspaceName, counterparty: `${tag} ${counterparty}` });
      await db('kyb_applications').where({ id: made.application.id }).update({ submitted_at: hoursAgo(hours) });
      return { id: made.application.id, counterpartyId: made.application.counterparty_id! };
    }
    const fresh = await application(`Gudang Timur ${unique}`, 'Sinar', 3);
    const old = await application(`Toko Barat ${unique}`, 'Bahari', 80);
    const middle = await application(`Niaga Utara ${unique}`, 'Cahaya', 40);

    const list = queue(browser, '/admin/kyb');
    expect(await list(q(tag))).to.deep.equal([old.id, middle.id, fresh.id]);
    expect(await list(q(fresh.id))).to.deep.equal([fresh.id]);
    expect(await list(q(middle.counterpartyId))).to.deep.equal([middle.id]);
    expect(await list(q(`toko barat ${unique}`))).to.deep.equal([old.id]);
    // The legal name applied with (the factory's "PT <counterparty>").
    expect(await list(q(`PT ${tag} Cahaya`))).to.deep.equal([middle.id]);
    expect(await list(`${q(tag)}&older_than_hours=24`)).to.deep.equal([old.id, middle.id]);
    expect(await list(`${q(tag)}&older_than_hours=72`)).to.deep.equal([old.id]);
    await expectFormShows(browser, '/admin/kyb', tag);
  });

  it('funding to confirm: by deal title, milestone or deal id, deal reference; waiting since the deal was activated', async () => {
    const tag = `Dana${Date.now()}`;
    const w = await dealWorld(client, `Pabrik ${randomUUID().slice(0, 8)}`);
    await makeLive(w);
    /** A live deal with one milestone (awaiting funding), activated `hours` ago. */
    async function deal(title: string, hours: number) {
      const made = await createDealVia(client, w.h.owner, dealBody(w.cpId, [1_000_000], { title: `${tag} ${title}` }));
      const active = await activateVia(client, w.h.owner, made.deal.id);
      expect(active.milestones.map((m) => m.status)).to.deep.equal(['awaiting_funding']);
      await db('deals').where({ id: made.deal.id }).update({ activated_at: hoursAgo(hours) });
      return { id: active.milestones[0]!.id, dealId: made.deal.id, reference: String(made.deal.reference) };
    }
    const fresh = await deal('Mesin bubut', 5);
    const old = await deal('Server rak', 100);
    const middle = await deal('Genset', 50);

    const list = queue(browser, '/admin/funding');
    expect(await list(q(tag))).to.deep.equal([old.id, middle.id, fresh.id]);
    expect(await list(q(fresh.id))).to.deep.equal([fresh.id]);
    expect(await list(q(old.dealId))).to.deep.equal([old.id]);
    // References are per workspace (DL-000001, ...): this test's workspace is the only one with deals.
    expect(await list(q(middle.reference.toLowerCase()))).to.deep.equal([middle.id]);
    expect(await list(`${q(tag)}&older_than_hours=24`)).to.deep.equal([old.id, middle.id]);
    expect(await list(`${q(tag)}&older_than_hours=72`)).to.deep.equal([old.id]);
    await expectFormShows(browser, '/admin/funding', tag);
  });

  it("funding pages keep a deal's milestones in their order, even when a page ends inside a deal (the queue's rank key)", async () => {
    const tag = `Urut${Date.now()}`;
    const w = await dealWorld(client, `Urutan ${randomUUID().slice(0, 8)}`);
    await makeLive(w);
    const made = [];
    for (const [i, hours] of [[0, 30], [1, 20]] as const) {
      const created = await createDealVia(client, w.h.owner, dealBody(w.cpId, [1_000_000, 2_000_000, 3_000_000], { title: `${tag} ${i}` }));
      const active = await activateVia(client, w.h.owner, created.deal.id);
      await db('deals').where({ id: created.deal.id }).update({ activated_at: hoursAgo(hours) });
      made.push(...active.milestones.map((m) => m.id));
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    const cursors: string[] = [];
    do {
      const page: Awaited<ReturnType<typeof awaitingConfirmation>> = await awaitingConfirmation(db, { cursor, limit: 2 }, { q: tag, before: null });
      seen.push(...page.rows.map((r) => r.milestone_id));
      cursor = page.next;
      if (cursor) cursors.push(cursor);
    } while (cursor);
    expect(seen).to.deep.equal(made);
    expect(cursors).to.have.length(2);
    // A cursor of a queue without the rank (the orders queue's shape) is refused here.
    const orderShaped = Buffer.from(JSON.stringify([false, new Date().toISOString(), randomUUID()]), 'utf8').toString('base64url');
    const refused = await browser.get(`/admin/funding?cursor=${orderShaped}`);
    expect(refused.status).to.equal(400);
    expect(refused.text).to.include('INVALID_QUERY');
  });

  it('payout instructions: by label, instruction id, account holder; live workspaces first; waiting since pending', async () => {
    const tag = `Rek${Date.now()}`;
    /** A workspace (live or sandbox) with one counterparty. */
    async function world(live: boolean) {
      const { workspace } = await createWorkspace(undefined, `Usaha ${randomUUID().slice(0, 8)}`);
      if (live) await db('workspaces').where({ id: workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
      const cp = await createCounterparty(undefined, await ownerActor(workspace.id), { name: 'PT Pemasok Jaya', country_code: 'ID', relationship: 'seller' });
      return { workspace, cpId: cp.id };
    }
    const sandbox = await world(false);
    const live = await world(true);
    async function instruction(w: { workspace: { id: string }; cpId: string }, label: string, accountHolder: string, hours: number) {
      const made = await createInstruction(w.workspace, w.cpId, { label: `${tag} ${label}`, accountHolder });
      await db('payout_instructions').where({ id: made.id }).update({ pending_since: hoursAgo(hours) });
      return { id: made.id };
    }
    const fresh = await instruction(sandbox, 'Operasional', 'CV Sinar Terang', 3);
    const old = await instruction(sandbox, 'Utama', 'PT Bahari Nusantara', 50);
    // Live: listed before the sandbox ones though it waited less than `old`.
    const liveOne = await instruction(live, 'Cadangan', 'Ibu Ratna Dewi', 30);

    const list = queue(browser, '/admin/instructions');
    expect(await list(q(tag))).to.deep.equal([liveOne.id, old.id, fresh.id]);
    expect(await list(q(fresh.id))).to.deep.equal([fresh.id]);
    expect(await list(q('bahari nusantara'))).to.deep.equal([old.id]);
    expect(await list(q('RATNA'))).to.deep.equal([liveOne.id]);
    expect(await list(`${q(tag)}&older_than_hours=24`)).to.deep.equal([liveOne.id, old.id]);
    expect(await list(`${q(tag)}&older_than_hours=40`)).to.deep.equal([old.id]);
    await expectFormShows(browser, '/admin/instructions', tag);
  });

  it('open payouts: by workspace name, payout id, payout reference; waiting since created', async () => {
    const tag = `Cair${Date.now()}`;
    const w = await dealWorld(client, `${tag} Niaga`);
    await makeLive(w);
    const r = await fundedDeal(client, 'live', [1_000_000], {}, w);
    const mid = r.mids[0]!;
    await approve(mid);
    const instructions = [];
    for (const label of ['Satu', 'Dua', 'Tiga']) instructions.push(await createInstruction(w.workspace, w.cpId, { label, verified: true }));
    const payout = Number((await db('deal_milestones').where({ id: mid }).first<{ payout_amount: string }>('payout_amount')).payout_amount);
    const splits = instructions.map((i, n) => ({ payout_instruction_id: i.id, amount: n === 0 ? payout - 200_000 : 100_000 }));
    const released = await client.post(releasePath(r.deal.deal.id, mid)).set(w.h.finance).send({ splits });
    expect(released.status, JSON.stringify(released.body)).to.equal(200);
    const payouts = await disbursementsOf(mid);
    expect(payouts.map((p) => p.status)).to.deep.equal(['queued', 'queued', 'queued']);
    const [fresh, old, middle] = payouts.map((p) => p.id);
    const ages: [string, number][] = [[fresh!, 2], [old!, 70], [middle!, 30]];
    for (const [id, hours] of ages) await db('disbursements').where({ id }).update({ created_at: hoursAgo(hours) });
    // One is being sent (processing): still open. The provider's reference of another.
    await db('disbursements').where({ id: middle }).update({ status: 'processing', attempts: 1, lease_until: new Date(Date.now() - 60_000) });
    const reference = `TRF-${randomUUID().slice(0, 12)}`;
    await db('disbursements').where({ id: old }).update({ provider_reference: reference });

    const list = queue(browser, '/admin/payouts');
    expect(await list(q(tag))).to.deep.equal([old, middle, fresh]);
    expect(await list(q(middle!))).to.deep.equal([middle]);
    expect(await list(q(reference.toLowerCase()))).to.deep.equal([old]);
    expect(await list(`${q(tag)}&older_than_hours=24`)).to.deep.equal([old, middle]);
    expect(await list(`${q(tag)}&older_than_hours=48`)).to.deep.equal([old]);
    expect(await list(`${q(tag)}&status=processing`)).to.deep.equal([middle]);
    expect(await list(`${q(tag)}&status=queued`)).to.deep.equal([old, fresh]);
    await expectFormShows(browser, '/admin/payouts', tag);
  });

  it('disputed milestones to rule: by deal title, milestone id, deal reference; waiting since disputed', async () => {
    const tag = `Sengketa${Date.now()}`;
    const w = await dealWorld(client, `Grosir ${randomUUID().slice(0, 8)}`);
    /** A sandbox deal with one funded milestone that the operator disputed, `hours` ago. */
    async function disputed(title: string, hours: number) {
      const r = await fundedDeal(client, 'sandbox', [1_000_000], { title: `${tag} ${title}` }, w);
      const mid = r.mids[0]!;
      const res = await client.post(`/v1/enterprise/deals/${r.deal.deal.id}/milestones/${mid}/dispute`).set(w.h.operator).send({ reason: 'Barang rusak' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      await db('deal_milestones').where({ id: mid }).update({ disputed_at: hoursAgo(hours) });
      return { id: mid, reference: String(r.deal.deal.reference) };
    }
    const fresh = await disputed('Kain', 4);
    const old = await disputed('Benang', 90);
    const middle = await disputed('Kancing', 36);

    const list = queue(browser, '/admin/rulings');
    expect(await list(q(tag))).to.deep.equal([old.id, middle.id, fresh.id]);
    expect(await list(q(middle.id))).to.deep.equal([middle.id]);
    // References are per workspace (DL-000001, ...): this test's workspace is the only one with deals.
    expect(await list(q(fresh.reference.toLowerCase()))).to.deep.equal([fresh.id]);
    expect(await list(`${q(tag)}&older_than_hours=24`)).to.deep.equal([old.id, middle.id]);
    expect(await list(`${q(tag)}&older_than_hours=48`)).to.deep.equal([old.id]);
    await expectFormShows(browser, '/admin/rulings', tag);
  });

  it('every queue refuses filters out of range with 400 INVALID_QUERY and takes the bounds', async () => {
    const paths = ['/admin/payments', '/admin/orders', '/admin/kyb', '/admin/funding', '/admin/instructions', '/admin/payouts', '/admin/rulings'];
    for (const path of paths) {
      for (const query of ['older_than_hours=0', `q=${'x'.repeat(201)}`, 'older_than_hours=8785', 'older_than_hours=1.5', 'older_than_hours=x', 'cursor=bm90LWEtY3Vyc29y', 'status=closed']) {
        const res = await browser.get(`${path}?${query}`);
        expect(res.status, `${path}?${query}`).to.equal(400);
        expect(res.text, `${path}?${query}`).to.include('INVALID_QUERY');
      }
      for (const query of ['older_than_hours=1', 'older_than_hours=8784', `q=${'x'.repeat(200)}`]) {
        const res = await browser.get(`${path}?${query}`);
        expect(res.status, `${path}?${query}`).to.equal(200);
        expect(res.text, `${path}?${query}`).to.include('id="none"');
      }
    }
  });

  it('the order queue pages by keyset: every order once, oldest first (ties by id), the filters kept on the next link', async () => {
    const tag = `Halaman${Date.now()}`;
    const buyer = (await createUser()).user;
    const made: { id: string; at: Date }[] = [];
    const base = Date.now();
    for (let i = 0; i < QUEUE_PAGE + 1; i += 1) {
      const o = await createOrder(buyer.id, { label: `${tag} ${i}` });
      // Pairs share a creation time, one pair across the page boundary: the id decides between them.
      const at = new Date(base - (200 - Math.floor((i + 1) / 2)) * HOUR);
      await db('service_orders').where({ id: o.id }).update({ status: 'paid', paid_via: 'balance', paid_at: at, created_at: at });
      made.push({ id: o.id, at });
    }
    // Not on any page: waiting less than the filter asks, or not matching the search.
    const fresh = await createOrder(buyer.id, { label: `${tag} baru` });
    await db('service_orders').where({ id: fresh.id }).update({ status: 'paid', paid_via: 'balance', paid_at: new Date() });
    const other = await createOrder(buyer.id, { label: 'Lain sama sekali' });
    await db('service_orders').where({ id: other.id }).update({ status: 'paid', paid_via: 'balance', paid_at: hoursAgo(300), created_at: hoursAgo(300) });
    const expected = [...made].sort((a, b) => a.at.getTime() - b.at.getTime() || (a.id < b.id ? -1 : 1)).map((o) => o.id);
    // The last of the first page and the first of the second were created at the same instant.
    const at = (id: string) => made.find((o) => o.id === id)!.at.getTime();
    expect(at(expected[QUEUE_PAGE - 1]!)).to.equal(at(expected[QUEUE_PAGE]!));

    const first = await browser.get(`/admin/orders?q=${tag}&older_than_hours=24`);
    expect(first.status).to.equal(200);
    expect(idsIn(first.text)).to.deep.equal(expected.slice(0, QUEUE_PAGE));
    const link = nextLink(first.text);
    expect(link).to.be.a('string');
    const url = new URL(link!, 'http://console.test');
    expect(url.pathname).to.equal('/admin/orders');
    expect(url.searchParams.get('q')).to.equal(tag);
    expect(url.searchParams.get('older_than_hours')).to.equal('24');
    expect(url.searchParams.get('cursor')).to.be.a('string').and.not.equal('');
    const second = await browser.get(link!);
    expect(second.status).to.equal(200);
    expect(idsIn(second.text)).to.deep.equal(expected.slice(QUEUE_PAGE));
    expect(nextLink(second.text)).to.equal(null);
    const seen = [...idsIn(first.text), ...idsIn(second.text)];
    expect(new Set(seen).size).to.equal(QUEUE_PAGE + 1);
    expect(seen).to.not.include(fresh.id).and.not.include(other.id);
  });
});
