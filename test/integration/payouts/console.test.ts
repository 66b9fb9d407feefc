/**
 * The operator console's payouts and rulings over HTTP (decision 0019, issue 27): payout
 * instructions to verify, open payouts to settle or fail, disputed deal milestones to rule
 * (release, refund, split). Admins only (anonymous visitors sent to sign in, others 403);
 * lists oldest first, counted on the overview, account numbers only masked; every move
 * CSRF-checked, through the same staff service as the admin API, and a stale move (verify
 * a verified instruction, settle a settled payout, rule a ruled milestone) shows the
 * service's refusal on the page.
 */
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { feedRows, milestoneRows } from '../../factories/deals.js';
import { createInstruction } from '../../factories/payouts.js';
import { approve, balance, disbursementsOf, fundedDeal, instructionVia, releasePath, type ReleaseWorld } from '../../factories/releases.js';
import { createUser, signIn } from '../../factories/users.js';
import { api } from '../../helpers/app.js';

const agent = () => supertest.agent(createApp().callback());
const tokenIn = (text: string): string => /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? '';
const client = api();
const rowIds = (text: string, table: string) => {
  const section = text.slice(text.indexOf(`<table id="${table}">`));
  return [...section.matchAll(/<tr data-id="([0-9a-f-]{36})"/g)].map((m) => m[1]);
};
const rowOf = (text: string, id: string) => text.slice(text.indexOf(`<tr data-id="${id}"`)).split('</tr>')[0]!;
const MISSING = '00000000-0000-4000-8000-000000000000';

async function adminAgent() {
  const admin = (await createUser({ role: 'admin', fullName: 'Staf Bayar' })).user;
  const browser = agent();
  await signIn(browser, admin.email);
  return { admin, browser };
}

const instructionRow = (id: string) =>
  db('payout_instructions').where({ id }).first<{ status: string; verified_by: string | null; verified_at: Date | null; verification_signature: string | null }>('*');
const payoutRow = (id: string) => db('disbursements').where({ id }).first<{ status: string; failure_reason: string | null }>('status', 'failure_reason');
const milestoneRow = (id: string) =>
  db('deal_milestones').where({ id }).first<{ status: string; ruling: string | null; refunded_amount: number; amount: string; seller_fee: string }>('*');
/** The staff audit of a target, without the funding confirmations the fixtures made. */
const auditOf = (targetId: string) =>
  db('staff_audit').where({ target_id: targetId }).whereNot({ action: 'milestone.funding_confirmed' }).orderBy('id').select<{ action: string; actor_id: string; note: string | null; details: Record<string, unknown> }[]>('*');

/** A live deal's first milestone approved and released over HTTP to verified instructions with the given account numbers: one queued payout each. */
async function queuedPayouts(numbers: string[], world?: ReleaseWorld['w']) {
  const r = await fundedDeal(client, 'live', [1_000_000], {}, world);
  const mid = r.mids[0]!;
  await approve(mid);
  const ids: string[] = [];
  for (const [i, accountNumber] of numbers.entries()) ids.push(await instructionVia(client, r, `Rekening ${i + 1}`, { accountNumber }));
  const payout = Number((await db('deal_milestones').where({ id: mid }).first<{ payout_amount: string }>('payout_amount')).payout_amount);
  const splits = ids.map((id, i) => ({ payout_instruction_id: id, amount: i === 0 ? payout - (ids.length - 1) * 100_000 : 100_000 }));
  const res = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return { ...r, mid, payout, disbursements: await disbursementsOf(mid) };
}

/** A funded deal whose first milestone the workspace's operator disputed over HTTP. */
async function disputedMilestone(kind: 'sandbox' | 'live', reason: string, extra: Record<string, unknown> = {}) {
  const r = await fundedDeal(client, kind, [1_000_000, 2_000_000], extra);
  const mid = r.mids[0]!;
  const res = await client.post(`/v1/enterprise/deals/${r.deal.deal.id}/milestones/${mid}/dispute`).set(r.w.h.operator).send({ reason });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return { ...r, mid };
}

describe('operator console: payouts and rulings (decision 0019, issue 27)', () => {
  it('sends anonymous visitors to sign in and refuses non-staff (pages and moves); nothing moves', async () => {
    const p = await queuedPayouts(['8800112233']);
    const d = await disputedMilestone('live', 'Barang rusak');
    const pending = await createInstruction(p.w.workspace, p.w.cpId, { label: 'Rahasia' });
    for (const path of ['/admin/instructions', '/admin/payouts', '/admin/rulings']) {
      const anon = await agent().get(path);
      expect(anon.status, path).to.equal(303);
      expect(anon.headers.location, path).to.equal(`/sign-in?next=${encodeURIComponent(path)}`);
    }
    const anonMove = await agent().post(`/admin/payouts/${p.disbursements[0]!.id}/settle`).type('form').send({});
    expect(anonMove.status).to.equal(303);
    expect(anonMove.headers.location).to.equal(`/sign-in?next=${encodeURIComponent('/admin')}`);

    // A signed-in non-admin: the workspace's own owner.
    const browser = agent();
    const csrf = await signIn(browser, p.w.owner.email);
    for (const path of ['/admin/instructions', '/admin/payouts', '/admin/rulings']) {
      const res = await browser.get(path);
      expect(res.status, path).to.equal(403);
      expect(res.text, path).to.not.include('Rahasia').and.not.include(String(p.deal.deal.reference));
    }
    for (const [path, body] of [
      [`/admin/instructions/${pending.id}/reveal`, {}],
      [`/admin/instructions/${pending.id}/verify`, { destination_version: '1' }],
      [`/admin/payouts/${p.disbursements[0]!.id}/settle`, {}],
      [`/admin/payouts/${p.disbursements[0]!.id}/fail`, { reason: 'Ditolak bank' }],
      [`/admin/rulings/${d.mid}/resolve`, { outcome: 'refund' }],
    ] as const) {
      const res = await browser.post(path).type('form').send({ _csrf: csrf, ...body });
      expect(res.status, path).to.equal(403);
    }
    expect((await instructionRow(pending.id)).status).to.equal('pending_verification');
    expect((await payoutRow(p.disbursements[0]!.id)).status).to.equal('queued');
    expect((await milestoneRow(d.mid)).status).to.equal('disputed');
    expect(await db('staff_audit').whereIn('action', ['disbursement.settled', 'disbursement.failed', 'milestone.dispute_resolved'])).to.deep.equal([]);
    expect(await auditOf(pending.id)).to.deep.equal([]);
  });

  it('lists instructions awaiting verification oldest pending first, masked, and counts them; verifies one (CSRF, audit, event); a stale verify shows the refusal', async () => {
    const r = await fundedDeal(client, 'live', [1_000_000]);
    const second = await createInstruction(r.w.workspace, r.w.cpId, { label: 'Rekening <kedua>', bankName: 'Bank Mandiri', accountNumber: '5550001234', accountHolder: 'PT Pemasok "Jaya"' });
    clock.advance(60_000);
    const third = await createInstruction(r.w.workspace, r.w.cpId, { label: 'Cadangan', accountNumber: '5550009876' });
    // Made later but shown first: the list follows pending_since (review R4: when it became pending).
    const first = await createInstruction(r.w.workspace, r.w.cpId, { label: 'Utama', accountNumber: '5550004321' });
    await db('payout_instructions').where({ id: first.id }).update({ created_at: new Date(clock.nowMs() - 3_600_000), pending_since: new Date(clock.nowMs() - 3_600_000) });
    // Not listed: a verified one and a deleted one.
    const verified = await createInstruction(r.w.workspace, r.w.cpId, { label: 'Sudah dicek', verified: true });
    const deleted = await createInstruction(r.w.workspace, r.w.cpId, { label: 'Dihapus' });
    expect((await client.delete(`/v1/enterprise/payout-instructions/${deleted.id}`).set(r.w.h.finance)).status).to.equal(200);

    const { admin, browser } = await adminAgent();
    const res = await browser.get('/admin/instructions');
    expect(res.status).to.equal(200);
    expect(res.headers['content-security-policy']).to.include("script-src 'self'");
    expect(res.text).to.include('aria-current="page">Instructions</a>');
    expect(rowIds(res.text, 'instructions')).to.deep.equal([first.id, second.id, third.id]);
    expect(res.text).to.not.include(verified.id).and.not.include(deleted.id);
    const row = rowOf(res.text, second.id);
    expect(row).to.include(r.w.workspace.display_name).and.include('PT Pemasok Jaya').and.include('Rekening &lt;kedua&gt;').and.include('Bank Mandiri');
    expect(row).to.include('PT Pemasok &quot;Jaya&quot;').and.include('<td class="account">…1234</td>');
    // The list offers a reveal, never a verify: staff verify what the reveal showed them.
    expect(row).to.include(`action="/admin/instructions/${second.id}/reveal"`).and.include('name="_csrf"').and.not.include('/verify"');
    for (const n of [second.accountNumber, third.accountNumber, first.accountNumber]) expect(res.text).to.not.include(n);
    expect((await browser.get('/admin')).text).to.match(/id="count-instructions">3</).and.include('href="/admin/instructions"');

    const token = tokenIn(res.text);
    // The reveal: CSRF-checked, audited, the full number and the verify form naming the version shown; never cached.
    expect((await browser.post(`/admin/instructions/${second.id}/reveal`).type('form').send({ _csrf: 'wrong' })).status).to.equal(403);
    expect(await db('staff_audit').where({ target_id: second.id, action: 'payout_instruction.revealed' })).to.deep.equal([]);
    const shown = await browser.post(`/admin/instructions/${second.id}/reveal`).type('form').send({ _csrf: token, note: 'Cek' });
    expect(shown.status, shown.text).to.equal(200);
    expect(shown.headers['cache-control']).to.include('no-store');
    expect(shown.text).to.include('<strong id="account-number" class="account">5550001234</strong>').and.include('data-version="1"');
    expect(shown.text).to.include(`action="/admin/instructions/${second.id}/verify"`).and.include('<input type="hidden" name="destination_version" value="1">');
    expect((await db('staff_audit').where({ target_id: second.id, action: 'payout_instruction.revealed' }).select('actor_id')).map((a: { actor_id: string }) => a.actor_id)).to.deep.equal([admin.id]);

    const url = `/admin/instructions/${second.id}/verify`;
    expect((await browser.post(url).type('form').send({ note: 'x', destination_version: '1' })).status).to.equal(403);
    expect((await browser.post(url).type('form').send({ _csrf: 'wrong', destination_version: '1' })).status).to.equal(403);
    // No version (a form that was not the reveal's): refused, nothing signed.
    const unnamed = await browser.post(url).type('form').send({ _csrf: token });
    expect(unnamed.status).to.equal(400);
    expect(unnamed.text).to.include('data-code="INVALID_BODY"').and.include('destination_version');
    expect((await instructionRow(second.id)).status).to.equal('pending_verification');

    const ok = await browser.post(url).type('form').send({ _csrf: token, note: 'Telepon balik ke bendahara', destination_version: '1' });
    expect(ok.status, ok.text).to.equal(303);
    expect(ok.headers.location).to.equal('/admin/instructions?done=payout_instruction.verify');
    const after = (await instructionRow(second.id));
    expect(after).to.deep.include({ status: 'verified', verified_by: admin.id });
    expect(after.verification_signature).to.be.a('string');
    const audit = await auditOf(second.id);
    expect(audit.map((a) => [a.action, a.actor_id, a.note])).to.deep.equal([
      ['payout_instruction.revealed', admin.id, 'Cek'],
      ['payout_instruction.verified', admin.id, 'Telepon balik ke bendahara'],
    ]);
    const events = (await feedRows(r.w.workspace.id)).filter((e) => e.event === 'payout_instruction.verified' && e.entity_id === second.id);
    expect(events.map((e) => [e.actor_id, e.actor_label])).to.deep.equal([[null, 'Operator']]);

    const list = await browser.get('/admin/instructions?done=payout_instruction.verify');
    expect(list.text).to.include('id="flash"');
    expect(rowIds(list.text, 'instructions')).to.deep.equal([first.id, third.id]);
    expect((await browser.get('/admin')).text).to.match(/id="count-instructions">2</);

    // Verified already (another tab): the service's refusal on the page; nothing recorded twice.
    const again = await browser.post(url).type('form').send({ _csrf: token, destination_version: '1' });
    expect(again.status).to.equal(409);
    expect(again.text).to.include('data-code="INVALID_STATE"').and.include('already verified');
    expect(await auditOf(second.id)).to.have.length(2);
    const gone = await browser.post(`/admin/instructions/${deleted.id}/verify`).type('form').send({ _csrf: token, destination_version: '1' });
    expect(gone.status).to.equal(404);
    expect((await browser.post(`/admin/instructions/${deleted.id}/reveal`).type('form').send({ _csrf: token })).status).to.equal(404);
    for (const id of [MISSING, 'not-an-id']) expect((await browser.post(`/admin/instructions/${id}/verify`).type('form').send({ _csrf: token, destination_version: '1' })).status, id).to.equal(404);
    // Changed since it was shown (the page's version is 1, the row is at 2): the refusal on the page, nothing signed.
    await client.patch(`/v1/enterprise/payout-instructions/${third.id}`).set(r.w.h.finance).send({ label: 'Cadangan baru' });
    const stale = await browser.post(`/admin/instructions/${third.id}/verify`).type('form').send({ _csrf: token, destination_version: '1' });
    expect(stale.status).to.equal(409);
    expect(stale.text).to.include('data-code="CONCURRENT_MODIFICATION"');
    expect((await instructionRow(third.id)).status).to.equal('pending_verification');
    const long = await browser.post(`/admin/instructions/${third.id}/verify`).type('form').send({ _csrf: token, note: 'x'.repeat(2001), destination_version: '2' });
    expect(long.status).to.equal(400);
    expect(long.text).to.include('data-code="NOTE_TOO_LONG"');
    expect((await instructionRow(third.id)).status).to.equal('pending_verification');
  });

  it('lists open payouts oldest first with masked destinations and counts them; settles one and fails another with a reason; stale moves show the refusal', async () => {
    const older = await queuedPayouts(['7710002222', '7710003333']);
    clock.advance(60_000);
    const newer = await queuedPayouts(['7710004444'], older.w);
    const [a, b] = older.disbursements;
    const c = newer.disbursements[0]!;
    const { admin, browser } = await adminAgent();
    const res = await browser.get('/admin/payouts');
    expect(res.status).to.equal(200);
    expect(res.text).to.include('aria-current="page">Payouts</a>');
    // One release's payouts share their creation time (their order among themselves is the id's); the later release comes after.
    const order = rowIds(res.text, 'payouts');
    expect(order.slice(0, 2)).to.have.members([a!.id, b!.id]);
    expect(order[2]).to.equal(c.id);
    const row = rowOf(res.text, a!.id);
    expect(row).to.include(older.w.workspace.display_name).and.include(String(older.deal.deal.reference)).and.include('1. Tahap 1');
    expect(row).to.include('Rekening 1').and.include('BCA …2222').and.include('PT Pemasok Jaya');
    // Staff paying by hand reveal the full number (audited) from the payout's row.
    expect(row).to.include(`action="/admin/instructions/${a!.payout_instruction_id}/reveal"`);
    expect(row).to.include(`<strong>Rp${(older.payout - 100_000).toLocaleString('id-ID')}</strong>`).and.include('<td class="status">queued');
    expect(row).to.include(`href="/admin/deals/${older.deal.deal.id}"`).and.include(`action="/admin/payouts/${a!.id}/settle"`).and.include(`action="/admin/payouts/${a!.id}/fail"`);
    expect(rowOf(res.text, b!.id)).to.include('<strong>Rp100.000</strong>').and.include('BCA …3333');
    for (const n of ['7710002222', '7710003333', '7710004444']) expect(res.text).to.not.include(n);
    expect((await browser.get('/admin')).text).to.match(/id="count-payouts">3</).and.include('href="/admin/payouts"');

    const token = tokenIn(res.text);
    expect((await browser.post(`/admin/payouts/${a!.id}/settle`).type('form').send({})).status).to.equal(403);
    expect((await browser.post(`/admin/payouts/${b!.id}/fail`).type('form').send({ _csrf: 'wrong', reason: 'Ditolak' })).status).to.equal(403);

    const settled = await browser.post(`/admin/payouts/${a!.id}/settle`).type('form').send({ _csrf: token, note: 'Transfer BCA 12/11' });
    expect(settled.status, settled.text).to.equal(303);
    expect(settled.headers.location).to.equal('/admin/payouts?done=disbursement.settle');
    expect(await payoutRow(a!.id)).to.deep.include({ status: 'settled' });

    // Fail needs its reason (as the admin API's schema), at most 1000 characters.
    for (const reason of [undefined, '   ', 'x'.repeat(1001)]) {
      const refused = await browser.post(`/admin/payouts/${b!.id}/fail`).type('form').send({ _csrf: token, ...(reason === undefined ? {} : { reason }) });
      expect(refused.status, String(reason?.length)).to.equal(400);
      expect(refused.text).to.include('data-code="INVALID_BODY"').and.include('reason');
    }
    expect((await payoutRow(b!.id)).status).to.equal('queued');
    const failed = await browser.post(`/admin/payouts/${b!.id}/fail`).type('form').send({ _csrf: token, reason: ' Rekening ditutup ', note: 'Surat bank' });
    expect(failed.status, failed.text).to.equal(303);
    expect(failed.headers.location).to.equal('/admin/payouts?done=disbursement.fail');
    expect(await payoutRow(b!.id)).to.deep.equal({ status: 'failed', failure_reason: 'Rekening ditutup' });
    // The failed payout's money is back on the milestone for a new release; the settled one left.
    expect(await balance(`milestone:${older.mid}`)).to.equal(100_000);
    expect(await checkLedger(db)).to.deep.equal([]);

    expect((await auditOf(a!.id)).map((x) => [x.action, x.actor_id, x.note])).to.deep.equal([['disbursement.settled', admin.id, 'Transfer BCA 12/11']]);
    const failAudit = await auditOf(b!.id);
    expect(failAudit.map((x) => [x.action, x.actor_id, x.note])).to.deep.equal([['disbursement.failed', admin.id, 'Surat bank']]);
    expect(failAudit[0]!.details).to.deep.include({ reason: 'Rekening ditutup' });
    const feed = (await feedRows(older.w.workspace.id, older.deal.deal.id)).filter((e) => e.event === 'disbursement.settled' || e.event === 'disbursement.failed');
    expect(feed.map((e) => [e.event, e.entity_id, e.actor_id, e.actor_label])).to.deep.equal([
      ['disbursement.settled', a!.id, null, 'Operator'],
      ['disbursement.failed', b!.id, null, 'Operator'],
    ]);

    const list = await browser.get('/admin/payouts?done=disbursement.fail');
    expect(list.text).to.include('id="flash"');
    expect(rowIds(list.text, 'payouts')).to.deep.equal([c.id]);
    expect((await browser.get('/admin')).text).to.match(/id="count-payouts">1</);

    // Stale moves (another tab settled or failed it first): the service's refusal, nothing moves twice.
    for (const [id, path, body] of [
      [a!.id, 'settle', {}],
      [a!.id, 'fail', { reason: 'lagi' }],
      [b!.id, 'settle', {}],
      [b!.id, 'fail', { reason: 'lagi' }],
    ] as const) {
      const stale = await browser.post(`/admin/payouts/${id}/${path}`).type('form').send({ _csrf: token, ...body });
      expect(stale.status, `${path} ${id}`).to.equal(409);
      expect(stale.text).to.include('data-code="INVALID_STATE"').and.include('already settled or failed');
    }
    expect(await payoutRow(a!.id)).to.deep.include({ status: 'settled' });
    expect(await payoutRow(b!.id)).to.deep.equal({ status: 'failed', failure_reason: 'Rekening ditutup' });
    expect(await db('staff_audit').whereIn('target_id', [a!.id, b!.id])).to.have.length(2);

    // A payout the worker is sending right now (its claim still holds) cannot be moved.
    await db('disbursements').where({ id: c.id }).update({ status: 'processing', attempts: 1, lease_until: new Date(clock.nowMs() + 60_000) });
    const sending = await browser.get('/admin/payouts');
    expect(rowOf(sending.text, c.id)).to.include('<td class="status">processing').and.include('claimed until').and.include('attempts 1');
    const busy = await browser.post(`/admin/payouts/${c.id}/settle`).type('form').send({ _csrf: token });
    expect(busy.status).to.equal(409);
    expect(busy.text).to.include('data-code="CONCURRENT_MODIFICATION"').and.include('sending this payout now');
    expect((await payoutRow(c.id)).status).to.equal('processing');
    for (const id of [MISSING, 'not-an-id']) expect((await browser.post(`/admin/payouts/${id}/settle`).type('form').send({ _csrf: token })).status, id).to.equal(404);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('lists disputed milestones live first, oldest dispute first, and counts them; rules release, refund and split; refuses bad forms and stale rulings', async () => {
    const later = await disputedMilestone('live', 'Barang <rusak>', { fee_allocation: 'seller' });
    clock.advance(60_000);
    const sandbox = await disputedMilestone('sandbox', 'Terlambat');
    clock.advance(60_000);
    const refund = await disputedMilestone('live', 'Tidak dikirim');
    // Disputed first, though made last: the list follows disputed_at.
    await db('deal_milestones').where({ id: later.mid }).update({ disputed_at: new Date(clock.nowMs() - 3_600_000) });

    const { admin, browser } = await adminAgent();
    const res = await browser.get('/admin/rulings');
    expect(res.status).to.equal(200);
    expect(res.text).to.include('aria-current="page">Rulings</a>');
    // Review R4: live deals' disputes before sandbox ones (the sandbox one was disputed earlier than `refund`).
    expect(rowIds(res.text, 'rulings')).to.deep.equal([later.mid, refund.mid, sandbox.mid]);
    const m = await milestoneRow(later.mid);
    const [amount, sellerFee] = [Number(m.amount), Number(m.seller_fee)];
    expect(sellerFee).to.equal(20_000);
    const row = rowOf(res.text, later.mid);
    expect(row).to.include(later.w.workspace.display_name).and.include(String(later.deal.deal.reference)).and.include('Pengadaan server').and.include('1. Tahap 1');
    expect(row).to.include('<td class="amount">Rp1.000.000</td>').and.include('<td class="seller-fee">Rp20.000</td>').and.include('<td class="reason">Barang &lt;rusak&gt;</td>');
    expect(row).to.include('min="20001" max="999999"').and.include(`action="/admin/rulings/${later.mid}/resolve"`).and.not.include('sandbox: no real money');
    expect(rowOf(res.text, sandbox.mid)).to.include('sandbox: no real money');
    expect((await browser.get('/admin')).text).to.match(/id="count-rulings">3</).and.include('href="/admin/rulings"');

    const token = tokenIn(res.text);
    const url = `/admin/rulings/${later.mid}/resolve`;
    expect((await browser.post(url).type('form').send({ outcome: 'refund' })).status).to.equal(403);
    expect((await browser.post(url).type('form').send({ _csrf: 'wrong', outcome: 'refund' })).status).to.equal(403);
    // The admin API's body rules, then the service's own (the split amount against the milestone, named on the page).
    for (const [body, text] of [
      [{ outcome: 'hold' }, 'outcome must be release, refund or split'],
      [{ outcome: 'split' }, 'A split needs release_amount'],
      [{ outcome: 'split', release_amount: '600.000' }, 'A split needs release_amount'],
      [{ outcome: 'split', release_amount: '0' }, 'A split needs release_amount'],
      [{ outcome: 'refund', release_amount: '600000' }, 'release_amount is given only with the split outcome'],
      [{ outcome: 'split', release_amount: String(amount) }, `Request body is invalid: release_amount must be more than the seller fee (${sellerFee})`],
      [{ outcome: 'split', release_amount: String(sellerFee) }, 'release_amount must be more than the seller fee'],
    ] as const) {
      const refused = await browser.post(url).type('form').send({ _csrf: token, ...body });
      expect(refused.status, JSON.stringify(body)).to.equal(400);
      expect(refused.text, JSON.stringify(body)).to.include('data-code="INVALID_BODY"').and.include(text);
    }
    expect((await milestoneRow(later.mid)).status).to.equal('disputed');
    const refundsBefore = await balance('enterprise:refunds_sent');

    // Split: 600,000 stays for the counterparty, the rest is refunded now.
    const split = await browser.post(url).type('form').send({ _csrf: token, outcome: 'split', release_amount: '600000', note: 'Separuh barang diterima' });
    expect(split.status, split.text).to.equal(303);
    expect(split.headers.location).to.equal('/admin/rulings?done=milestone.resolve_dispute');
    expect(await milestoneRow(later.mid)).to.deep.include({ status: 'approved', ruling: 'split', refunded_amount: 400_000 });
    expect((await balance('enterprise:refunds_sent')) - refundsBefore).to.equal(400_000);
    expect(await balance(`milestone:${later.mid}`)).to.equal(600_000);
    const audit = await auditOf(later.mid);
    expect(audit.map((a) => [a.action, a.actor_id, a.note])).to.deep.equal([['milestone.dispute_resolved', admin.id, 'Separuh barang diterima']]);
    expect(audit[0]!.details).to.deep.equal({ outcome: 'split', release_amount: 600_000 });
    const ruled = (await feedRows(later.w.workspace.id, later.deal.deal.id)).filter((e) => e.event === 'milestone.dispute_resolved');
    expect(ruled.map((e) => [e.entity_id, e.actor_id, e.actor_label, e.amount])).to.deep.equal([[later.mid, null, 'Operator', 600_000]]);

    // Refund: everything held goes back; the milestone is cancelled.
    const refunded = await browser.post(`/admin/rulings/${refund.mid}/resolve`).type('form').send({ _csrf: token, outcome: 'refund', release_amount: '' });
    expect(refunded.status, refunded.text).to.equal(303);
    expect(await milestoneRow(refund.mid)).to.deep.include({ status: 'cancelled', ruling: 'refund' });
    expect(await balance(`milestone:${refund.mid}`)).to.equal(0);

    // Release (a sandbox deal: no money posted): approved again.
    const released = await browser.post(`/admin/rulings/${sandbox.mid}/resolve`).type('form').send({ _csrf: token, outcome: 'release' });
    expect(released.status, released.text).to.equal(303);
    expect(await milestoneRow(sandbox.mid)).to.deep.include({ status: 'approved', ruling: 'release' });
    expect((await milestoneRows(sandbox.deal.deal.id)).map((x) => x.status)).to.deep.equal(['approved', 'funded']);

    const list = await browser.get('/admin/rulings?done=milestone.resolve_dispute');
    expect(list.text).to.include('id="flash"').and.include('id="none"');
    expect(rowIds(list.text, 'rulings')).to.deep.equal([]);
    expect((await browser.get('/admin')).text).to.match(/id="count-rulings">0</);

    // Ruled already (another tab): the service's refusal; nothing posted twice.
    const again = await browser.post(url).type('form').send({ _csrf: token, outcome: 'refund' });
    expect(again.status).to.equal(409);
    expect(again.text).to.include('data-code="CONCURRENT_MODIFICATION"');
    expect(await milestoneRow(later.mid)).to.deep.include({ status: 'approved', ruling: 'split', refunded_amount: 400_000 });
    expect(await auditOf(later.mid)).to.have.length(1);
    for (const id of [MISSING, 'not-an-id']) expect((await browser.post(`/admin/rulings/${id}/resolve`).type('form').send({ _csrf: token, outcome: 'release' })).status, id).to.equal(404);

    // Disputed again after the split: the list shows what is still held, and a split's range ends below it.
    const redispute = await client.post(`/v1/enterprise/deals/${later.deal.deal.id}/milestones/${later.mid}/dispute`).set(later.w.h.operator).send({ reason: 'Sisa barang juga rusak' });
    expect(redispute.status, JSON.stringify(redispute.body)).to.equal(200);
    const second = rowOf((await browser.get('/admin/rulings')).text, later.mid);
    expect(second).to.include('held Rp600.000: Rp400.000 refunded by an earlier ruling').and.include('min="20001" max="599999"').and.include('Sisa barang juga rusak');
    const whole = await browser.post(url).type('form').send({ _csrf: token, outcome: 'split', release_amount: '600000' });
    expect(whole.status).to.equal(400);
    expect(whole.text).to.include('release_amount must be more than the seller fee');
    const rest = await browser.post(url).type('form').send({ _csrf: token, outcome: 'refund' });
    expect(rest.status, rest.text).to.equal(303);
    expect(await milestoneRow(later.mid)).to.deep.include({ status: 'cancelled', ruling: 'refund' });
    expect(await balance(`milestone:${later.mid}`)).to.equal(0);
    expect(await checkLedger(db)).to.deep.equal([]);
  });
});
