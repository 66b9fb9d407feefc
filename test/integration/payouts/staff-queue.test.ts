/**
 * Review R4 (staff queues) over HTTP: the queue of payout instructions awaiting verification
 * shows live workspaces first and is paged (a sandbox workspace with 101 pending instructions
 * does not hide a live workspace's one; every item is reachable); age is `pending_since`
 * (moves on an edit); a workspace holds at most 20 instructions not verified (the 21st is 409
 * TOO_MANY_PENDING_INSTRUCTIONS, deleting one frees a slot); staff decline a pending
 * instruction with a reason (staff only, audited, never payable, the workspace sees it and an
 * edit sends it back to pending_verification), by the admin API and the console.
 */
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { PENDING_INSTRUCTIONS_PER_WORKSPACE, unverifyForLive, type PayoutInstructionRow } from '../../../shared/payouts/instructions.js';
import { dealWorld, feedRows, staffHeaders } from '../../factories/deals.js';
import { headersOf, sessionOf } from '../../factories/enterprise.js';
import { createInstruction } from '../../factories/payouts.js';
import { approve, fundedDeal, instructionVia, makeLive, releasePath } from '../../factories/releases.js';
import { createUser, signIn } from '../../factories/users.js';
import { api } from '../../helpers/app.js';

const P = '/v1/enterprise/payout-instructions';
const QUEUE = '/v1/admin/enterprise/payout-instructions';
const declinePath = (id: string) => `${QUEUE}/${id}/decline`;
const client = api();
const row = (id: string) => db('payout_instructions').where({ id }).first<PayoutInstructionRow>();
const pinNow = () => clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));

interface Queued {
  id: string;
  workspace: { id: string; is_sandbox: boolean };
  pending_since: string;
  destination_version: number;
}

/** `n` pending instructions of the workspace written straight to the table (as a workspace made them before the cap), older than now. */
async function floodPending(workspaceId: string, cpId: string, n: number): Promise<string[]> {
  const template = await createInstruction({ id: workspaceId }, cpId);
  const base = clock.now().getTime() - 10 * 86_400_000;
  const rows = Array.from({ length: n - 1 }, (_, i) => ({
    workspace_id: workspaceId,
    counterparty_id: cpId,
    label: `Banjir ${i}`,
    bank_name: template.bank_name,
    account_holder: template.account_holder,
    account_number_sealed: template.account_number_sealed,
    account_number_last4: template.account_number_last4,
    created_by: template.created_by,
    created_at: new Date(base + i * 1000),
    updated_at: new Date(base + i * 1000),
    pending_since: new Date(base + i * 1000),
  }));
  const ids = (await db('payout_instructions').insert(rows).returning('id')).map((r: { id: string }) => r.id);
  await db('payout_instructions').where({ id: template.id }).update({ pending_since: new Date(base - 1000) });
  return [template.id, ...ids];
}

async function readAll(staff: Record<string, string>, limit: number): Promise<Queued[][]> {
  const pages: Queued[][] = [];
  let cursor: string | null = null;
  do {
    const res = await client.get(QUEUE).set(staff).query(cursor ? { limit, cursor } : { limit });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    pages.push(res.body.data.items as Queued[]);
    cursor = res.body.data.next_cursor as string | null;
  } while (cursor !== null && pages.length < 20);
  return pages;
}

describe('staff queues (review R4)', () => {
  afterEach(() => clock.reset());

  describe('the payout-instruction queue', () => {
    it('a sandbox workspace with 101 pending instructions does not hide a live workspace\'s one; paging reaches every item, live first, oldest pending first', async () => {
      pinNow();
      const sandbox = await dealWorld(client, 'Sandbox Banjir');
      const flooded = await floodPending(sandbox.workspace.id, sandbox.cpId, 101);
      const live = await dealWorld(client, 'Live Sekali');
      await makeLive(live);
      clock.advance(60_000);
      const liveOne = await createInstruction(live.workspace, live.cpId);
      const staff = await staffHeaders();

      const first = await client.get(QUEUE).set(staff);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const items = first.body.data.items as Queued[];
      expect(items).to.have.length(50);
      expect(items[0]).to.deep.include({ id: liveOne.id, workspace: { id: live.workspace.id, display_name: live.workspace.display_name, is_sandbox: false } });
      expect(items[0]!.pending_since).to.equal(clock.now().toISOString());
      expect(first.body.data.next_cursor).to.be.a('string');
      expect(JSON.stringify(first.body)).to.not.include(liveOne.accountNumber);

      const pages = await readAll(staff, 30);
      expect(pages.map((p) => p.length)).to.deep.equal([30, 30, 30, 12]);
      const all = pages.flat();
      expect(all.map((q) => q.id)).to.deep.equal([liveOne.id, ...flooded]);
      expect(new Set(all.map((q) => q.id)).size).to.equal(102);
      const sandboxSince = all.slice(1).map((q) => Date.parse(q.pending_since));
      expect(sandboxSince).to.deep.equal([...sandboxSince].sort((a, b) => a - b));

      // The console's first page shows the live one first, and its next link reaches the rest.
      const admin = (await createUser({ role: 'admin', fullName: 'Staf Antrean' })).user;
      const browser = supertest.agent(createApp().callback());
      await signIn(browser, admin.email);
      const page1 = await browser.get('/admin/instructions');
      expect(page1.status).to.equal(200);
      const ids1 = [...page1.text.matchAll(/<tr data-id="([0-9a-f-]{36})"/g)].map((m) => m[1]);
      expect(ids1[0]).to.equal(liveOne.id);
      expect(ids1).to.have.length(50);
      const next = /id="next-page" href="([^"]+)"/.exec(page1.text)?.[1];
      expect(next).to.be.a('string');
      const page2 = await browser.get(next!.replace(/&amp;/g, '&'));
      expect(page2.status).to.equal(200);
      const ids2 = [...page2.text.matchAll(/<tr data-id="([0-9a-f-]{36})"/g)].map((m) => m[1]);
      expect(ids2).to.deep.equal(all.slice(50, 100).map((q) => q.id));

      // Not staff: a workspace owner is refused; a cursor the queue did not give is 400.
      expect((await client.get(QUEUE).set(live.h.owner)).status).to.equal(403);
      const bad = await client.get(QUEUE).set(staff).query({ cursor: 'bm90LWEtY3Vyc29y' });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.code).to.equal('INVALID_QUERY');
    });

    it('pending_since is set on create and moves when an edit sends the instruction back to pending; the queue orders by it', async () => {
      pinNow();
      const w = await dealWorld(client);
      const staff = await staffHeaders();
      const older = await createInstruction(w.workspace, w.cpId, { verified: true });
      const created = clock.now().toISOString();
      expect((await row(older.id)).pending_since.toISOString()).to.equal(created);
      clock.advance(60_000);
      const newer = await createInstruction(w.workspace, w.cpId);
      clock.advance(60_000);
      const edited = await client.patch(`${P}/${older.id}`).set(w.h.finance).send({ bank_name: 'Bank Mandiri' });
      expect(edited.status, JSON.stringify(edited.body)).to.equal(200);
      expect(edited.body.data).to.deep.include({ status: 'pending_verification', pending_since: clock.now().toISOString() });
      expect((await row(older.id)).pending_since.toISOString()).to.equal(clock.now().toISOString());
      // Created first, but pending again only since the edit: it waits behind the newer one.
      const q = await client.get(QUEUE).set(staff);
      expect((q.body.data.items as Queued[]).map((i) => i.id)).to.deep.equal([newer.id, older.id]);
    });
  });

  it('going live: a verified instruction is pending again from that moment; a declined one stays declined (its version bumped); a pending one keeps its age', async () => {
    pinNow();
    const w = await dealWorld(client);
    const staff = await staffHeaders();
    const verified = await createInstruction(w.workspace, w.cpId, { verified: true });
    const pending = await createInstruction(w.workspace, w.cpId);
    const declined = await createInstruction(w.workspace, w.cpId);
    expect((await client.post(declinePath(declined.id)).set(staff).send({ destination_version: 1, reason: 'Tidak cocok' })).status).to.equal(200);
    const created = clock.now().toISOString();
    clock.advance(60_000);
    await db.transaction(async (t) => {
      await db('workspaces').transacting(t).where({ id: w.workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
      await unverifyForLive(t, w.workspace.id, 'Operator');
    });
    expect(await row(verified.id)).to.deep.include({ status: 'pending_verification', destination_version: 2 });
    expect((await row(verified.id)).pending_since.toISOString()).to.equal(clock.now().toISOString());
    expect(await row(pending.id)).to.deep.include({ status: 'pending_verification', destination_version: 2 });
    expect((await row(pending.id)).pending_since.toISOString()).to.equal(created);
    expect(await row(declined.id)).to.deep.include({ status: 'declined', decline_reason: 'Tidak cocok', destination_version: 2 });
  });

  describe('the per-workspace cap of pending instructions', () => {
    it('20 are accepted, the 21st is 409 TOO_MANY_PENDING_INSTRUCTIONS, deleting one frees a slot; a declined one holds its slot', async () => {
      expect(PENDING_INSTRUCTIONS_PER_WORKSPACE).to.equal(20);
      const w = await dealWorld(client);
      const staff = await staffHeaders();
      const body = (i: number) => ({ label: `R ${i}`, counterparty_id: w.cpId, bank_name: 'BCA', account_number: `55500${String(10_000 + i)}`, account_holder: 'PT Pemasok Jaya' });
      // A verified one holds no slot; editing it back to pending at the cap is refused (it stays verified).
      const verified = await createInstruction(w.workspace, w.cpId, { verified: true });
      const ids: string[] = [];
      for (let i = 0; i < 20; i += 1) {
        const res = await client.post(P).set(w.h.finance).send(body(i));
        expect(res.status, `${i} ${JSON.stringify(res.body)}`).to.equal(201);
        ids.push(res.body.data.id as string);
      }
      const refused = await client.post(P).set(w.h.finance).send(body(20));
      expect(refused.status).to.equal(409);
      expect(refused.body.error.code).to.equal('TOO_MANY_PENDING_INSTRUCTIONS');
      expect(refused.body.error.message).to.include('20');
      const edit = await client.patch(`${P}/${verified.id}`).set(w.h.finance).send({ label: 'Ganti' });
      expect(edit.status).to.equal(409);
      expect(edit.body.error.code).to.equal('TOO_MANY_PENDING_INSTRUCTIONS');
      expect(await row(verified.id)).to.deep.include({ status: 'verified', label: verified.label });
      expect(Number((await db('payout_instructions').where({ workspace_id: w.workspace.id }).count<{ count: string }[]>('* as count'))[0]!.count)).to.equal(21);
      // Declined still holds the slot.
      const dec = await client.post(declinePath(ids[0]!)).set(staff).send({ destination_version: 1, reason: 'Nama pemilik tidak cocok' });
      expect(dec.status, JSON.stringify(dec.body)).to.equal(200);
      expect((await client.post(P).set(w.h.finance).send(body(21))).status).to.equal(409);
      const del = await client.delete(`${P}/${ids[0]}`).set(w.h.finance);
      expect(del.status).to.equal(200);
      expect((await client.post(P).set(w.h.finance).send(body(22))).status).to.equal(201);
      expect((await client.post(P).set(w.h.finance).send(body(23))).status).to.equal(409);
      // Another workspace is not affected.
      const other = await dealWorld(client);
      expect((await client.post(P).set(other.h.finance).send({ ...body(24), counterparty_id: other.cpId })).status).to.equal(201);
    });
  });

  describe('staff decline', () => {
    it('staff only; audited; the workspace sees status and reason; never payable; an edit sends it back to pending, then it can be verified', async () => {
      pinNow();
      const r = await fundedDeal(client, 'sandbox', [1_000_000]);
      const mid = r.mids[0]!;
      await approve(mid);
      const id = await instructionVia(client, r, 'Akan ditolak', { verified: false });
      const staffUser = (await createUser({ role: 'admin', fullName: 'Staf Tolak' })).user;
      const staff = headersOf(await sessionOf(staffUser));

      // Not staff: the workspace's owner and finance are refused; nothing changes.
      for (const h of [r.w.h.owner, r.w.h.finance]) {
        const res = await client.post(declinePath(id)).set(h).send({ destination_version: 1, reason: 'x' });
        expect(res.status).to.equal(403);
      }
      expect((await row(id)).status).to.equal('pending_verification');
      // Body rules and the version shown.
      expect((await client.post(declinePath(id)).set(staff).send({ destination_version: 1 })).status).to.equal(400);
      expect((await client.post(declinePath(id)).set(staff).send({ destination_version: 1, reason: 'x'.repeat(1001) })).status).to.equal(400);
      const stale = await client.post(declinePath(id)).set(staff).send({ destination_version: 2, reason: 'Nama tidak cocok' });
      expect(stale.status).to.equal(409);
      expect(stale.body.error.code).to.equal('CONCURRENT_MODIFICATION');
      expect((await client.post(declinePath('00000000-0000-4000-8000-000000000000')).set(staff).send({ destination_version: 1, reason: 'x' })).status).to.equal(404);

      const res = await client.post(declinePath(id)).set(staff).send({ destination_version: 1, reason: 'Nama pemilik tidak cocok', note: 'telepon bank' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data).to.deep.include({ id, status: 'declined', decline_reason: 'Nama pemilik tidak cocok', declined_at: clock.now().toISOString(), pending_since: null });
      const audit = await db('staff_audit').where({ target_id: id }).select<{ action: string; actor_id: string; note: string; details: Record<string, unknown> }[]>('*');
      expect(audit.map((a) => [a.action, a.actor_id, a.note])).to.deep.equal([['payout_instruction.declined', staffUser.id, 'telepon bank']]);
      expect(audit[0]!.details).to.deep.include({ destination_version: 1, reason: 'Nama pemilik tidak cocok' });
      const events = (await feedRows(r.w.workspace.id)).filter((e) => e.entity_id === id && e.event === 'payout_instruction.updated');
      expect(events.map((e) => [e.actor_id, e.actor_label])).to.deep.equal([[null, 'Operator']]);
      expect(events[0]!.summary).to.include('declined: Nama pemilik tidak cocok');

      // The workspace sees it; it leaves the staff queue; twice is 409; verify is refused.
      const list = await client.get(P).set(r.w.h.viewer);
      const mine = (list.body.data as { id: string; status: string; decline_reason: string | null }[]).find((i) => i.id === id);
      expect(mine).to.deep.include({ status: 'declined', decline_reason: 'Nama pemilik tidak cocok' });
      expect((await client.get(P).set(r.w.h.viewer).query({ status: 'declined' })).body.data).to.have.length(1);
      expect(((await client.get(QUEUE).set(staff)).body.data.items as Queued[]).map((i) => i.id)).to.not.include(id);
      const again = await client.post(declinePath(id)).set(staff).send({ destination_version: 1, reason: 'lagi' });
      expect(again.status).to.equal(409);
      expect(again.body.error.code).to.equal('INVALID_STATE');
      const verify = await client.post(`${QUEUE}/${id}/verify`).set(staff).send({ destination_version: 1 });
      expect(verify.status).to.equal(409);
      expect(verify.body.error.code).to.equal('INVALID_STATE');

      // Release refuses it exactly as a pending one: 409 INVALID_STATE, no payout.
      const payout = Number((await db('deal_milestones').where({ id: mid }).first<{ payout_amount: string }>('payout_amount')).payout_amount);
      const rel = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: id, amount: payout }] });
      expect(rel.status, JSON.stringify(rel.body)).to.equal(409);
      expect(rel.body.error.code).to.equal('INVALID_STATE');
      expect(rel.body.error.message).to.include('Akan ditolak');
      expect(await db('disbursements').where({ milestone_id: mid })).to.have.length(0);

      // The workspace edits it: back to pending_verification, the reason cleared, pending from now; staff can verify it.
      clock.advance(60_000);
      const edited = await client.patch(`${P}/${id}`).set(r.w.h.finance).send({ account_holder: 'PT Pemasok Jaya Abadi' });
      expect(edited.status, JSON.stringify(edited.body)).to.equal(200);
      expect(edited.body.data).to.deep.include({ status: 'pending_verification', decline_reason: null, declined_at: null, destination_version: 2, pending_since: clock.now().toISOString() });
      expect(((await client.get(QUEUE).set(staff)).body.data.items as Queued[]).map((i) => i.id)).to.include(id);
      const ok = await client.post(`${QUEUE}/${id}/verify`).set(staff).send({ destination_version: 2 });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      const rel2 = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: id, amount: payout }] });
      expect(rel2.status, JSON.stringify(rel2.body)).to.equal(200);
    });

    it('the console declines from the queue row (CSRF-checked, a reason required), non-staff get 403, and a declined instruction can be deleted', async () => {
      const w = await dealWorld(client);
      const made = await createInstruction(w.workspace, w.cpId);
      const admin = (await createUser({ role: 'admin', fullName: 'Staf Konsol' })).user;
      const browser = supertest.agent(createApp().callback());
      await signIn(browser, admin.email);
      const list = await browser.get('/admin/instructions');
      const token = /name="_csrf" value="([^"]+)"/.exec(list.text)?.[1] ?? '';
      expect(list.text).to.include(`action="/admin/instructions/${made.id}/decline"`);
      const url = `/admin/instructions/${made.id}/decline`;
      expect((await browser.post(url).type('form').send({ _csrf: token, destination_version: '1', reason: ' ' })).status).to.equal(400);
      expect((await browser.post(url).type('form').send({ _csrf: 'wrong', destination_version: '1', reason: 'Salah' })).status).to.equal(403);
      expect((await row(made.id)).status).to.equal('pending_verification');
      const done = await browser.post(url).type('form').send({ _csrf: token, destination_version: '1', reason: 'Rekening ditutup' });
      expect(done.status).to.equal(303);
      expect(done.headers.location).to.equal('/admin/instructions?done=payout_instruction.decline');
      expect(await row(made.id)).to.deep.include({ status: 'declined', decline_reason: 'Rekening ditutup', declined_by: admin.id });

      const member = (await createUser({ fullName: 'Bukan Staf' })).user;
      const other = supertest.agent(createApp().callback());
      await signIn(other, member.email);
      expect((await other.get('/admin/instructions')).status).to.equal(403);

      const del = await client.delete(`${P}/${made.id}`).set(w.h.finance);
      expect(del.status).to.equal(200);
    });
  });
});
