/**
 * The operator console's enterprise deals over HTTP (decision 0018, issue 26): the live
 * milestones awaiting funding (oldest activation first, counted on the overview), their
 * confirmation (the milestone funded, the money posted to the ledger, the staff audit), a
 * deal's page (fee, milestones and their shares) and the fee-split override (only shares
 * not yet funded recomputed; unreachable splits refused), each through the same staff
 * service as the admin API, with the console's CSRF and refusals.
 */
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { closeSandboxDeals } from '../../../shared/deals/lifecycle.js';
import { confirmFunding } from '../../../shared/deals/staff.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import { createWorkspace, headersOf, sessionOf } from '../../factories/enterprise.js';
import {
  activateVia,
  activeDeal,
  counterpartyVia,
  createDealVia,
  dealBody,
  dealRow,
  dealWorld,
  DEALS,
  feedRows,
  milestoneRows,
  setMilestoneStatus,
  type DealData,
} from '../../factories/deals.js';
import { createUser, signIn } from '../../factories/users.js';
import { api } from '../../helpers/app.js';

const agent = () => supertest.agent(createApp().callback());
const tokenIn = (text: string): string => /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? '';
const client = api();

async function adminAgent() {
  const admin = (await createUser({ role: 'admin', fullName: 'Staf Dana' })).user;
  const browser = agent();
  await signIn(browser, admin.email);
  return { admin, browser };
}

/** A live workspace (verified) with a verified counterparty, and a deal made and activated over HTTP (milestones awaiting funding). */
async function liveDeal(options: { name?: string; title?: string; amounts?: number[]; activatedAt?: Date; counterpartyVerified?: boolean } = {}) {
  const { workspace, owner } = await createWorkspace(undefined, options.name);
  await db('workspaces').where({ id: workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
  const h = headersOf(await sessionOf(owner));
  const cpId = await counterpartyVia(client, h, { name: 'PT Pemasok Jaya' });
  if (options.counterpartyVerified !== false) await db('counterparties').where({ id: cpId }).update({ kyb_status: 'verified' });
  const made = await createDealVia(client, h, dealBody(cpId, options.amounts ?? [1_000_000, 2_000_001], options.title ? { title: options.title } : {}));
  const deal = await activateVia(client, h, made.deal.id);
  if (options.activatedAt) await db('deals').where({ id: deal.deal.id }).update({ activated_at: options.activatedAt });
  return { workspace, owner, h, cpId, deal, ids: deal.milestones.map((m) => m.id) };
}

const staffActor = async () => ({ actorId: (await createUser({ role: 'admin' })).user.id, ip: '127.0.0.1', note: null });
const statusOf = async (milestoneId: string) => ((await db('deal_milestones').where({ id: milestoneId }).first()) as { status: string }).status;
const rowIds = (text: string) => [...text.matchAll(/<tr data-id="([0-9a-f-]{36})" data-deal=/g)].map((m) => m[1]);
const rowOf = (text: string, id: string) => text.slice(text.indexOf(`<tr data-id="${id}"`)).split('</tr>')[0]!;

describe('operator console: enterprise deals (decision 0018)', () => {
  it('sends anonymous visitors to sign in and refuses non-staff (pages and moves)', async () => {
    const { owner, deal, ids } = await liveDeal({ name: 'Toko Rahasia' });
    const anon = await agent().get('/admin/funding');
    expect(anon.status).to.equal(303);
    expect(anon.headers.location).to.equal(`/sign-in?next=${encodeURIComponent('/admin/funding')}`);
    const anonDeal = await agent().get(`/admin/deals/${deal.deal.id}`);
    expect(anonDeal.status).to.equal(303);
    // The deal page itself survives sign-in (issue 46: deep links).
    expect(anonDeal.headers.location).to.equal(`/sign-in?next=${encodeURIComponent(`/admin/deals/${deal.deal.id}`)}`);

    // A signed-in non-admin: the workspace's own owner.
    const browser = agent();
    const csrf = await signIn(browser, owner.email);
    for (const path of ['/admin/funding', `/admin/deals/${deal.deal.id}`]) {
      const res = await browser.get(path);
      expect(res.status, path).to.equal(403);
      expect(res.text).to.not.include('Toko Rahasia').and.not.include(deal.deal.reference);
    }
    const confirm = await browser.post(`/admin/funding/${ids[0]}/confirm`).type('form').send({ _csrf: csrf });
    expect(confirm.status).to.equal(403);
    const override = await browser.post(`/admin/deals/${deal.deal.id}/fee-allocation`).type('form').send({ _csrf: csrf, fee_allocation: 'seller', reason: 'kami minta' });
    expect(override.status).to.equal(403);
    expect(await statusOf(ids[0]!)).to.equal('awaiting_funding');
    expect(await dealRow(deal.deal.id)).to.deep.include({ fee_allocation: 'buyer', fee_buyer_percent: 100 });
    expect(await db('staff_audit').select('id')).to.deep.equal([]);
  });

  it('lists only live milestones awaiting funding, oldest activation first, and counts them on the overview', async () => {
    const base = clock.nowMs() - 6 * 3_600_000;
    // Made out of order: the list follows the activation times.
    const later = await liveDeal({ name: 'Gamma <Niaga>', title: 'Mesin <produksi>', activatedAt: new Date(base + 2 * 3_600_000) });
    const first = await liveDeal({ name: 'Alpha Retail', amounts: [5_000_000], activatedAt: new Date(base + 1 * 3_600_000) });
    const partly = await liveDeal({ name: 'Delta Dagang', activatedAt: new Date(base + 3 * 3_600_000) });
    await confirmFunding(undefined, await staffActor(), partly.ids[0]!);
    // Not listed: a cancelled live deal, a live deal in terms review (milestones still draft), a sandbox deal.
    const cancelled = await liveDeal({ name: 'Epsilon Batal', activatedAt: new Date(base) });
    expect((await client.post(`${DEALS}/${cancelled.deal.deal.id}/cancel`).set(cancelled.h).send({})).status).to.equal(200);
    const review = await liveDeal({ name: 'Zeta Review', counterpartyVerified: false });
    expect(review.deal.deal.status).to.equal('terms_review');
    const sandbox = await dealWorld(client, 'Eta Sandbox');
    const sandboxDeal = await activeDeal(client, sandbox);
    await db('deals').where({ id: sandboxDeal.deal.id }).update({ activated_at: new Date(base) });

    const { browser } = await adminAgent();
    const res = await browser.get('/admin/funding');
    expect(res.status).to.equal(200);
    expect(res.headers['content-security-policy']).to.include("script-src 'self'");
    expect(res.text).to.include('aria-current="page">Funding</a>');
    expect(rowIds(res.text)).to.deep.equal([first.ids[0], later.ids[0], later.ids[1], partly.ids[1]]);
    expect(res.text).to.include('Gamma &lt;Niaga&gt;').and.include('Mesin &lt;produksi&gt;').and.not.include('Gamma <Niaga>');
    expect(res.text).to.not.include('Epsilon Batal').and.not.include('Zeta Review').and.not.include('Eta Sandbox');

    // 2% of Rp5.000.000 = Rp100.000, paid by the workspace (the default allocation): funding Rp5.100.000.
    const row = rowOf(res.text, first.ids[0]!);
    expect(row).to.include('Alpha Retail').and.include(first.deal.deal.reference).and.include('Pengadaan server').and.include('1. Tahap 1');
    expect(row).to.include('<td>Rp5.000.000</td>').and.include('<td>Rp100.000</td>').and.include('<strong>Rp5.100.000</strong>').and.include('<td>IDR</td>');
    expect(row).to.include(new Date(base + 3_600_000).toISOString().replace('T', ' ').slice(0, 16));
    expect(row).to.include(`href="/admin/deals/${first.deal.deal.id}"`).and.include(`action="/admin/funding/${first.ids[0]}/confirm"`).and.include('name="_csrf"');
    // 2% of Rp3.000.001 = Rp60.000 spread floor(60000 x 2000001 / 3000001) on the first, the remainder on the last.
    const second = rowOf(res.text, later.ids[1]!);
    expect(second).to.include('2. Tahap 2').and.include('<td>Rp2.000.001</td>').and.include('<td>Rp40.001</td>').and.include('<strong>Rp2.040.002</strong>');

    const overview = await browser.get('/admin');
    expect(overview.text).to.match(/id="count-funding">4</).and.include('href="/admin/funding"');
  });

  it('confirms a milestone: funded, posted to the ledger and audited; a second confirm and a sandbox milestone are refused', async () => {
    const { workspace, deal, ids } = await liveDeal({ name: 'Toko Dana' });
    const { admin, browser } = await adminAgent();
    const token = tokenIn((await browser.get('/admin/funding')).text);
    const url = `/admin/funding/${ids[0]}/confirm`;

    expect((await browser.post(url).type('form').send({ note: 'x' })).status).to.equal(403);
    expect((await browser.post(url).type('form').send({ _csrf: 'wrong' })).status).to.equal(403);
    const long = await browser.post(url).type('form').send({ _csrf: token, note: 'x'.repeat(2001) });
    expect(long.status).to.equal(400);
    expect(long.text).to.include('data-code="NOTE_TOO_LONG"');
    expect(await statusOf(ids[0]!)).to.equal('awaiting_funding');

    const ok = await browser.post(url).type('form').send({ _csrf: token, note: 'BCA 0987 diterima' });
    expect(ok.status, ok.text).to.equal(303);
    expect(ok.headers.location).to.equal('/admin/funding?done=milestone.confirm_funding');
    const [m1, m2] = await milestoneRows(deal.deal.id);
    expect(m1).to.deep.include({ status: 'funded', funding_method: 'wire', amount: 1_000_000, buyer_fee: 19_999, funding_amount: 1_019_999 });
    expect(m1!.funded_at).to.be.instanceOf(Date);
    expect(m2!.status).to.equal('awaiting_funding');

    expect(await checkLedger(db)).to.deep.equal([]);
    expect(await balanceOf(db, { milestoneId: ids[0]!, currency: 'IDR' })).to.equal(1_000_000);
    expect(await balanceOf(db, { system: 'enterpriseFeesHeld', currency: 'IDR' })).to.equal(19_999);
    expect(await balanceOf(db, { system: 'enterpriseFunding', currency: 'IDR' })).to.equal(-1_019_999);
    expect(await balanceOf(db, { milestoneId: ids[1]!, currency: 'IDR' })).to.equal(0);

    const audit = (await db('staff_audit').where({ target_id: ids[0] })) as { action: string; actor_id: string; target_type: string; note: string }[];
    expect(audit).to.have.length(1);
    expect(audit[0]).to.deep.include({ action: 'milestone.funding_confirmed', actor_id: admin.id, target_type: 'deal_milestone', note: 'BCA 0987 diterima' });
    const funded = (await feedRows(workspace.id, deal.deal.id)).filter((e) => e.event === 'milestone.funded');
    expect(funded).to.have.length(1);
    expect(funded[0]).to.deep.include({ entity_id: ids[0], actor_id: null, actor_label: 'Operator', amount: 1_019_999, livemode: true });

    const list = await browser.get('/admin/funding?done=milestone.confirm_funding');
    expect(list.text).to.include('id="flash"').and.include('milestone.confirm_funding');
    expect(rowIds(list.text)).to.deep.equal([ids[1]]);

    // Confirmed already: the service's refusal, as the console shows refusals; nothing posted twice.
    const again = await browser.post(url).type('form').send({ _csrf: token });
    expect(again.status).to.equal(409);
    expect(again.text).to.include('data-code="CONCURRENT_MODIFICATION"');
    expect(await balanceOf(db, { milestoneId: ids[0]!, currency: 'IDR' })).to.equal(1_000_000);
    expect(await db('staff_audit').where({ target_id: ids[0] })).to.have.length(1);

    // A sandbox deal is funded by its workspace, never confirmed by the operator.
    const sandbox = await dealWorld(client, 'Toko Sandbox');
    const sandboxDeal = await activeDeal(client, sandbox);
    const refused = await browser.post(`/admin/funding/${sandboxDeal.milestones[0]!.id}/confirm`).type('form').send({ _csrf: token });
    expect(refused.status).to.equal(409);
    expect(refused.text).to.include('data-code="INVALID_STATE"');
    expect(await statusOf(sandboxDeal.milestones[0]!.id)).to.equal('awaiting_funding');

    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const missing = await browser.post(`/admin/funding/${id}/confirm`).type('form').send({ _csrf: token });
      expect(missing.status, id).to.equal(404);
    }
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it("shows a deal: the workspace, the fee, the milestones with their status and shares, and the override form", async () => {
    const { deal, ids } = await liveDeal({ name: 'Toko Lihat', title: 'Sewa <gudang>' });
    await confirmFunding(undefined, await staffActor(), ids[0]!);
    const { browser } = await adminAgent();
    const list = await browser.get('/admin/funding');
    expect(list.text).to.include(`href="/admin/deals/${deal.deal.id}"`);
    const res = await browser.get(`/admin/deals/${deal.deal.id}`);
    expect(res.status).to.equal(200);
    expect(res.text).to.include('aria-current="page">Funding</a>');
    expect(res.text).to.include(`Deal ${String(deal.deal.reference)}: Sewa &lt;gudang&gt;`).and.include('Toko Lihat').and.include('PT Pemasok Jaya');
    expect(res.text).to.include('id="deal-status">funded<');
    expect(res.text).to.include('id="platform-fee">Rp60.000<').and.include('id="fee-allocation">buyer<');
    expect(res.text).to.include('workspace 100% · counterparty 0%').and.include('id="buyer-fee">Rp60.000<').and.include('id="seller-fee">Rp0<');
    const m1 = rowOf(res.text, ids[0]!);
    expect(m1).to.include('data-status="funded"').and.include('Rp19.999').and.include('Rp1.019.999').and.include('<td>fixed</td>').and.include('wire');
    const m2 = rowOf(res.text, ids[1]!);
    expect(m2).to.include('data-status="awaiting_funding"').and.include('Rp40.001').and.include('Rp2.040.002').and.include('<td>open</td>');
    expect(res.text).to.include('id="override"').and.include(`action="/admin/deals/${deal.deal.id}/fee-allocation"`).and.include('name="_csrf"');
    expect(res.text).to.include('<option value="buyer" selected>');
    expect(res.text).to.include('data-event="milestone.funded"');

    expect((await browser.get('/admin/deals/00000000-0000-4000-8000-000000000000')).status).to.equal(404);
    expect((await browser.get('/admin/deals/not-an-id')).status).to.equal(404);
  });

  it('overrides the split: only shares not yet funded are recomputed, with the reason in the event under the operator label', async () => {
    const { workspace, deal, ids } = await liveDeal({ name: 'Toko Bagi' });
    await confirmFunding(undefined, await staffActor(), ids[0]!);
    const { admin, browser } = await adminAgent();
    const token = tokenIn((await browser.get(`/admin/deals/${deal.deal.id}`)).text);
    const url = `/admin/deals/${deal.deal.id}/fee-allocation`;

    // The admin API's body rules, then the service's own: nothing changes.
    expect((await browser.post(url).type('form').send({ fee_allocation: 'split', fee_buyer_percent: '50', reason: 'ok ok' })).status).to.equal(403);
    for (const [body, text] of [
      [{ fee_allocation: 'split', fee_buyer_percent: '50', reason: ' ' }, 'reason for the override'],
      [{ fee_allocation: 'split', fee_buyer_percent: '101', reason: 'ok ok' }, 'fee_buyer_percent must be'],
      [{ fee_allocation: 'split', fee_buyer_percent: '5.5', reason: 'ok ok' }, 'fee_buyer_percent must be'],
      [{ fee_allocation: 'half', reason: 'ok ok' }, 'fee_allocation must be'],
      [{ fee_allocation: '', fee_buyer_percent: '', reason: 'ok ok' }, 'Choose fee_allocation'],
      [{ fee_allocation: 'split', reason: 'ok ok' }, 'Request body is invalid'],
      [{ fee_allocation: 'buyer', fee_buyer_percent: '50', reason: 'ok ok' }, 'Request body is invalid'],
    ] as const) {
      const res = await browser.post(url).type('form').send({ _csrf: token, ...body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.text, JSON.stringify(body)).to.include('data-code="INVALID_BODY"').and.include(text);
    }
    expect(await dealRow(deal.deal.id)).to.deep.include({ fee_allocation: 'buyer', fee_buyer_percent: 100, buyer_fee: 60_000, seller_fee: 0 });

    const ok = await browser.post(url).type('form').send({ _csrf: token, fee_allocation: 'split', fee_buyer_percent: '50', reason: 'Kedua pihak sepakat 50:50', note: 'tiket #42' });
    expect(ok.status, ok.text).to.equal(303);
    expect(ok.headers.location).to.equal(`/admin/deals/${deal.deal.id}?done=deal.fee_allocation`);
    expect(await dealRow(deal.deal.id)).to.deep.include({ fee_allocation: 'split', fee_buyer_percent: 50, platform_fee: 60_000, buyer_fee: 30_000, seller_fee: 30_000 });
    const [m1, m2] = await milestoneRows(deal.deal.id);
    // The funded milestone keeps its shares; the open one takes the rest of the new split.
    expect(m1).to.deep.include({ status: 'funded', buyer_fee: 19_999, seller_fee: 0, funding_amount: 1_019_999, payout_amount: 1_000_000 });
    expect(m2).to.deep.include({ status: 'awaiting_funding', buyer_fee: 10_001, seller_fee: 30_000, funding_amount: 2_010_002, payout_amount: 1_970_001 });
    expect(await checkLedger(db)).to.deep.equal([]);

    const events = (await feedRows(workspace.id, deal.deal.id)).filter((e) => e.event === 'deal.fee_allocation_overridden');
    expect(events).to.have.length(1);
    expect(events[0]).to.deep.include({ actor_id: null, actor_name: null, actor_label: 'Operator', deal_reference: deal.deal.reference });
    expect(events[0]!.summary).to.include('split').and.include('50%').and.include('Kedua pihak sepakat 50:50');
    const audit = (await db('staff_audit').where({ target_id: deal.deal.id })) as { action: string; actor_id: string; note: string; details: Record<string, unknown> }[];
    expect(audit).to.have.length(1);
    expect(audit[0]).to.deep.include({ action: 'deal.fee_allocation_overridden', actor_id: admin.id, note: 'tiket #42' });
    expect(audit[0]!.details).to.deep.include({ reason: 'Kedua pihak sepakat 50:50' });

    const shown = await browser.get(`/admin/deals/${deal.deal.id}?done=deal.fee_allocation`);
    expect(shown.text).to.include('id="flash"').and.include('id="fee-allocation">split<').and.include('workspace 50% · counterparty 50%');
    expect(shown.text).to.include('id="buyer-fee">Rp30.000<').and.include('id="seller-fee">Rp30.000<').and.include('data-event="deal.fee_allocation_overridden"');
    // The funding list expects the new funding amount of the open milestone.
    expect(rowOf((await browser.get('/admin/funding')).text, ids[1]!)).to.include('<strong>Rp2.010.002</strong>');
  });

  it('refuses an override the open shares cannot reach, and one of a cancelled or closed deal', async () => {
    const { deal, ids } = await liveDeal({ name: 'Toko Tolak' });
    await confirmFunding(undefined, await staffActor(), ids[0]!);
    const { browser } = await adminAgent();
    const token = tokenIn((await browser.get(`/admin/deals/${deal.deal.id}`)).text);
    const before = { deal: await dealRow(deal.deal.id), milestones: await milestoneRows(deal.deal.id) };

    // Seller-pays would need the funded milestone's buyer share (Rp19.999) back.
    const unreachable = await browser.post(`/admin/deals/${deal.deal.id}/fee-allocation`).type('form').send({ _csrf: token, fee_allocation: 'seller', reason: 'Penjual menanggung' });
    expect(unreachable.status).to.equal(409);
    expect(unreachable.text).to.include('data-code="INVALID_STATE"').and.include('cannot be reached');
    expect({ deal: await dealRow(deal.deal.id), milestones: await milestoneRows(deal.deal.id) }).to.deep.equal(before);
    expect(await db('staff_audit').where({ target_id: deal.deal.id })).to.have.length(0);

    // A cancelled deal: no form, and the move is refused.
    const cancelled = await liveDeal({ name: 'Toko Batal' });
    expect((await client.post(`${DEALS}/${cancelled.deal.deal.id}/cancel`).set(cancelled.h).send({})).status).to.equal(200);
    const page = await browser.get(`/admin/deals/${cancelled.deal.deal.id}`);
    expect(page.text).to.include('id="no-override"').and.not.include('id="override"');
    const refused = await browser.post(`/admin/deals/${cancelled.deal.deal.id}/fee-allocation`).type('form').send({ _csrf: token, fee_allocation: 'seller', reason: 'Penjual menanggung' });
    expect(refused.status).to.equal(409);
    expect(refused.text).to.include('data-code="INVALID_STATE"');

    // Sandbox deals closed when their workspace went live: every milestone cancelled, or the unreleased ones.
    const sandbox = await dealWorld(client, 'Toko Tutup');
    const closed = await activeDeal(client, sandbox);
    const partly: DealData = await activeDeal(client, sandbox);
    await setMilestoneStatus(partly.milestones[0]!.id, 'released');
    await db.transaction((t) => closeSandboxDeals(t, sandbox.workspace.id, 'Operator'));
    expect((await milestoneRows(closed.deal.id)).map((m) => m.status)).to.deep.equal(['cancelled', 'cancelled']);
    expect((await milestoneRows(partly.deal.id)).map((m) => m.status)).to.deep.equal(['released', 'cancelled']);
    for (const d of [closed, partly]) {
      const res = await browser.post(`/admin/deals/${d.deal.id}/fee-allocation`).type('form').send({ _csrf: token, fee_allocation: 'split', fee_buyer_percent: '50', reason: 'Dibagi dua' });
      expect(res.status, d.deal.id).to.equal(409);
      expect(res.text).to.include('data-code="INVALID_STATE"');
      expect(await dealRow(d.deal.id)).to.deep.include({ fee_allocation: 'buyer' });
    }
    expect((await browser.get(`/admin/deals/${closed.deal.id}`)).text).to.include('id="no-override"');
  });
});
