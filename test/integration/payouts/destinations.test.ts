/**
 * Issue 42, points 2 and 3 (decision 0019, "Issue 42" addendum): staff verify what they
 * see, and only that; a payout record says where the money went.
 *  - reveal: staff only (an admin session or an admin's personal key), the full account
 *    number and the destination_version, every reveal in the staff audit with who and when,
 *    never cached nor stored as an idempotent answer; a workspace member (even its owner)
 *    gets 403 FORBIDDEN;
 *  - verify names the version shown: a stale one is 409 CONCURRENT_MODIFICATION and nothing
 *    is signed (the release is still refused); none at all is 400 INVALID_BODY;
 *  - D7 as written: a label edit sends a verified instruction back (the release refused);
 *  - going live sends every instruction back to pending_verification (version bumped), and a
 *    sandbox signature copied onto a live row pays nothing (release refused, gate refused);
 *  - a settled payout's record (API, CSV, console, e-mail) keeps the destination it was
 *    released to after the instruction is edited; the payout-failed mail too.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { createApp } from '../../../api/app.js';
import { clock } from '../../../shared/clock.js';
import { decryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { checkDestination } from '../../../shared/payouts/instructions.js';
import { runDisbursement } from '../../../shared/payouts/worker.js';
import { up as backfillDestinations } from '../../../migrations/20261209020100_backfill-disbursement-destinations.js';
import { up as unverifyV1 } from '../../../migrations/20261209020300_unverify-v1-signed-instructions.js';
import { activateVia, counterpartyVia, createDealVia, dealBody, dealWorld, feedRows, staffHeaders, type Headers } from '../../factories/deals.js';
import { headersOf, personalKeyOf, sessionOf } from '../../factories/enterprise.js';
import { submittedApplication } from '../../factories/kyb-review.js';
import { approve, disbursementsOf, fundedDeal, instructionVia, releasePath, releasedMilestone } from '../../factories/releases.js';
import { createUser, signIn } from '../../factories/users.js';
import { exportCsv } from '../reports/support.js';
import { api } from '../../helpers/app.js';

const P = '/v1/enterprise/payout-instructions';
const revealPath = (id: string) => `/v1/admin/enterprise/payout-instructions/${id}/reveal`;
const verifyPath = (id: string) => `/v1/admin/enterprise/payout-instructions/${id}/verify`;
const client = api();

type Res = { status: number; body: { success?: boolean; error?: { code: string }; data?: Record<string, unknown> } };
function expectError(res: Res, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.error!.code).to.equal(code);
  expect(res.body).to.not.have.property('data');
}

interface InstructionRow {
  status: string;
  destination_version: number;
  verification_signature: string | null;
  verified_by: string | null;
}
const instructionRow = (id: string) => db('payout_instructions').where({ id }).first<InstructionRow>('*');
const auditOf = (id: string, action: string) => db('staff_audit').where({ target_id: id, action }).orderBy('id').select<{ actor_id: string; ip: string | null; note: string | null; details: Record<string, unknown>; created_at: Date }[]>('*');
const pinNow = () => clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));

async function createVia(h: Headers, cpId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await client
    .post(P)
    .set(h)
    .send({ label: 'Rekening utama', counterparty_id: cpId, bank_name: 'Bank Central Asia', account_number: '1234 5678-90', account_holder: 'PT Pemasok Jaya', ...extra });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data.id as string;
}

async function revealVia(staff: Headers, id: string): Promise<Record<string, unknown>> {
  const res = await client.post(revealPath(id)).set(staff).send({});
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.data as Record<string, unknown>;
}

describe('payout destinations: staff verify what they see; payouts keep where they went (issue 42)', () => {
  afterEach(() => clock.reset());

  describe('reveal', () => {
    it('staff see the full number and the version to verify; each reveal is audited with who and when; never cached', async () => {
      const w = await dealWorld(client);
      const id = await createVia(w.h.finance, w.cpId);
      const { user: admin } = await createUser({ role: 'admin', fullName: 'Staf Cek' });
      pinNow();
      const res = await client.post(revealPath(id)).set(headersOf(await sessionOf(admin))).send({ note: 'Telepon ke bank' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      expect(res.body.data).to.deep.include({
        id,
        label: 'Rekening utama',
        bank_name: 'Bank Central Asia',
        account_holder: 'PT Pemasok Jaya',
        account_number: '1234567890',
        account_number_masked: '…7890',
        status: 'pending_verification',
        destination_version: 1,
        livemode: false,
      });
      expect(res.body.data.workspace).to.deep.equal({ id: w.workspace.id, display_name: w.workspace.display_name, is_sandbox: true });
      const audit = await auditOf(id, 'payout_instruction.revealed');
      expect(audit).to.have.length(1);
      expect(audit[0]).to.deep.include({ actor_id: admin.id, note: 'Telepon ke bank' });
      expect(audit[0]!.created_at.toISOString()).to.equal(clock.now().toISOString());
      expect(audit[0]!.details).to.deep.include({ destination_version: 1, workspace_id: w.workspace.id });
      expect(audit[0]!.ip).to.be.a('string');

      // An admin's personal key reveals too, again audited; an Idempotency-Key stores nothing (the number is never kept in an answer cache).
      const key = headersOf(await personalKeyOf(admin));
      const again = await client.post(revealPath(id)).set(key).set('Idempotency-Key', randomUUID()).send({});
      expect(again.status).to.equal(200);
      expect(again.headers['idempotent-replay']).to.equal(undefined);
      expect(await auditOf(id, 'payout_instruction.revealed')).to.have.length(2);
      expect(await db('idempotency_keys').where('response_body', 'like', '%1234567890%').select('key')).to.deep.equal([]);
      // Nothing else holds the number in clear: the feed and the audit do not.
      expect(JSON.stringify(await feedRows(w.workspace.id))).to.not.include('1234567890');
      expect(JSON.stringify(await db('staff_audit').select('*'))).to.not.include('1234567890');
    });

    it('a workspace member, even its owner, gets 403 FORBIDDEN (no number, no audit); anonymous 401; unknown, malformed and deleted ids 404', async () => {
      const w = await dealWorld(client);
      const id = await createVia(w.h.finance, w.cpId);
      for (const h of [w.h.owner, w.h.finance, w.h.viewer]) {
        const res = await client.post(revealPath(id)).set(h).send({});
        expectError(res, 403, 'FORBIDDEN');
        expect(JSON.stringify(res.body)).to.not.include('1234567890');
        expect(res.headers['cache-control']).to.equal('private, no-store');
      }
      expect((await client.post(revealPath(id)).send({})).status).to.equal(401);
      expect(await auditOf(id, 'payout_instruction.revealed')).to.deep.equal([]);
      const staff = await staffHeaders();
      expectError(await client.post(revealPath(randomUUID())).set(staff).send({}), 404, 'NOT_FOUND');
      expectError(await client.post(revealPath('nope')).set(staff).send({}), 404, 'NOT_FOUND');
      expect((await client.delete(`${P}/${id}`).set(w.h.finance)).status).to.equal(200);
      expectError(await client.post(revealPath(id)).set(staff).send({}), 404, 'NOT_FOUND');
      expectError(await client.post(revealPath(id)).set(staff).send({ note: 'x'.repeat(2001) }), 400, 'INVALID_BODY');
    });
  });

  describe('verify names what was shown', () => {
    it('a stale destination_version is 409 CONCURRENT_MODIFICATION: nothing signed, no audit, the release still refused; the version shown now verifies', async () => {
      const r = await fundedDeal(client, 'sandbox', [1_000_000]);
      const mid = r.mids[0]!;
      await approve(mid);
      const id = await createVia(r.w.h.finance, r.w.cpId);
      const shown = await revealVia(r.staff, id);
      expect(shown.destination_version).to.equal(1);
      // The destination changes between the reveal and the click.
      expect((await client.patch(`${P}/${id}`).set(r.w.h.finance).send({ account_number: '5550001111' })).status).to.equal(200);
      expectError(await client.post(verifyPath(id)).set(r.staff).send({ destination_version: shown.destination_version }), 409, 'CONCURRENT_MODIFICATION');
      expect(await instructionRow(id)).to.deep.include({ status: 'pending_verification', verification_signature: null, verified_by: null, destination_version: 2 });
      expect(await auditOf(id, 'payout_instruction.verified')).to.deep.equal([]);
      expect((await feedRows(r.w.workspace.id)).filter((e) => e.event === 'payout_instruction.verified')).to.deep.equal([]);
      const payout = Number((await db('deal_milestones').where({ id: mid }).first<{ payout_amount: string }>('payout_amount')).payout_amount);
      const refused = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: id, amount: payout }] });
      expectError(refused, 409, 'INVALID_STATE');
      expect(await disbursementsOf(mid)).to.deep.equal([]);

      // A verify that names nothing (or not a whole number) is refused: fail-safe.
      for (const body of [{}, { destination_version: '2' }, { destination_version: 0 }, { destination_version: 2.5 }, { note: 'ok' }]) {
        expectError(await client.post(verifyPath(id)).set(r.staff).send(body), 400, 'INVALID_BODY');
      }
      expect((await instructionRow(id)).status).to.equal('pending_verification');

      // Revealed again: the new number and version 2; verifying it signs it, and the release goes.
      const now = await revealVia(r.staff, id);
      expect(now).to.deep.include({ account_number: '5550001111', destination_version: 2 });
      const ok = await client.post(verifyPath(id)).set(r.staff).send({ destination_version: 2 });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body.data).to.deep.include({ status: 'verified', destination_version: 2 });
      expect(JSON.stringify(ok.body)).to.not.include('5550001111');
      expect((await checkDestination(db, id, false)).ok).to.equal(true);
      const released = await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: id, amount: payout }] });
      expect(released.status, JSON.stringify(released.body)).to.equal(200);
    });

    it('D7 as written: a label edit sends a verified instruction back to pending_verification; the release is refused until staff verify it again', async () => {
      const r = await fundedDeal(client, 'sandbox', [1_000_000]);
      const mid = r.mids[0]!;
      await approve(mid);
      const id = await instructionVia(client, r, 'Rekening lama');
      expect((await instructionRow(id)).status).to.equal('verified');
      const res = await client.patch(`${P}/${id}`).set(r.w.h.finance).send({ label: 'Rekening baru' });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.include({ label: 'Rekening baru', status: 'pending_verification', destination_version: 2, verified_at: null });
      const payout = Number((await db('deal_milestones').where({ id: mid }).first<{ payout_amount: string }>('payout_amount')).payout_amount);
      const splits = [{ payout_instruction_id: id, amount: payout }];
      expectError(await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits }), 409, 'INVALID_STATE');
      expect((await client.post(verifyPath(id)).set(r.staff).send({ destination_version: 2 })).status).to.equal(200);
      expect((await client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance).send({ splits })).status).to.equal(200);
    });
  });

  describe('going live', () => {
    it('sends every sandbox-verified instruction back to pending_verification (version bumped, event); a sandbox signature copied onto the live row pays nothing', async () => {
      const app = await submittedApplication();
      const owner = headersOf(await sessionOf(app.owner));
      const staff = await staffHeaders();
      const cpId = await counterpartyVia(client, owner);
      const verifiedId = await createVia(owner, cpId, { label: 'Utama', account_number: '6611223344' });
      const pendingId = await createVia(owner, cpId, { label: 'Cadangan', account_number: '6655667788' });
      expect((await client.post(verifyPath(verifiedId)).set(staff).send({ destination_version: 1 })).status).to.equal(200);
      const sandboxSigned = await db('payout_instructions').where({ id: verifiedId }).first<{ verification_signature: string; verified_at: Date; verified_by: string }>('verification_signature', 'verified_at', 'verified_by');
      expect((await checkDestination(db, verifiedId, false)).ok).to.equal(true);
      // A sandbox verification never passes for live money, even before going live.
      expect(await checkDestination(db, verifiedId, true)).to.deep.equal({ ok: false, reason: 'signature_mismatch' });
      const shownInSandbox = await revealVia(staff, pendingId);

      // KYB approved by staff: the workspace goes live.
      const approved = await client.post(`/v1/admin/enterprise/kyb/${app.application.id}/approve`).set(staff).send({ risk_tier: 'standard' });
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      expect(await instructionRow(verifiedId)).to.deep.include({ status: 'pending_verification', verification_signature: null, verified_by: null, destination_version: 2 });
      expect(await instructionRow(pendingId)).to.deep.include({ status: 'pending_verification', destination_version: 2 });
      const events = (await feedRows(app.workspace.id)).filter((e) => e.event === 'payout_instruction.updated');
      expect(events.map((e) => [e.entity_id, e.actor_label, e.livemode])).to.deep.equal([[verifiedId, 'Operator', true]]);
      expect(events[0]!.summary).to.include('the workspace is live');
      // A verify prepared while it was a sandbox names an old version: refused, nothing signed.
      expectError(await client.post(verifyPath(pendingId)).set(staff).send({ destination_version: shownInSandbox.destination_version }), 409, 'CONCURRENT_MODIFICATION');
      expect((await revealVia(staff, pendingId)).livemode).to.equal(true);

      // A live deal with an approved milestone.
      await db('counterparties').where({ id: cpId }).update({ kyb_status: 'verified' });
      const made = await createDealVia(client, owner, dealBody(cpId, [1_000_000]));
      const deal = await activateVia(client, owner, made.deal.id);
      const mid = deal.milestones[0]!.id;
      const funded = await client.post(`/v1/admin/enterprise/milestones/${mid}/confirm-funding`).set(staff).send({});
      expect(funded.status, JSON.stringify(funded.body)).to.equal(200);
      await approve(mid);
      const payout = Number((await db('deal_milestones').where({ id: mid }).first<{ payout_amount: string }>('payout_amount')).payout_amount);
      const splits = [{ payout_instruction_id: verifiedId, amount: payout }];

      // The sandbox signature copied back onto the (now live) row: the release refuses it.
      await db('payout_instructions').where({ id: verifiedId }).update({ status: 'verified', ...sandboxSigned });
      expectError(await client.post(releasePath(deal.deal.id, mid)).set(owner).send({ splits }), 409, 'INVALID_STATE');
      expect(await disbursementsOf(mid)).to.deep.equal([]);

      // Verified again for live money: it releases; the sandbox signature put back afterwards stops the payout at the gate.
      await db('payout_instructions').where({ id: verifiedId }).update({ status: 'pending_verification', verification_signature: null, verified_at: null, verified_by: null });
      expect((await client.post(verifyPath(verifiedId)).set(staff).send({ destination_version: 2 })).status).to.equal(200);
      expect((await checkDestination(db, verifiedId, true)).ok).to.equal(true);
      expect((await client.post(releasePath(deal.deal.id, mid)).set(owner).send({ splits })).status).to.equal(200);
      const [d] = await disbursementsOf(mid);
      await db('payout_instructions').where({ id: verifiedId }).update({ verification_signature: sandboxSigned.verification_signature });
      expectError(await client.post(`/v1/admin/enterprise/disbursements/${d!.id}/settle`).set(staff).send({}), 409, 'INVALID_STATE');
      const run = await runDisbursement(d!.id);
      expect(run.outcome).to.equal('failed');
      expect((await db('disbursements').where({ id: d!.id }).first<{ status: string; provider_reference: string | null }>('status', 'provider_reference'))).to.deep.equal({ status: 'failed', provider_reference: null });
    });
  });

  describe('a payout record says where the money went', () => {
    it('a settled payout keeps its destination in the API, the CSV, the console and the e-mail after the instruction is edited', async () => {
      const r = await releasedMilestone(client, 'sandbox', ['Rekening lama']);
      const id = r.instructionIds[0]!;
      const [d] = r.disbursements;
      const old = (await instructionRow(id)) as InstructionRow & { account_number_last4: string };
      const oldMasked = `…${old.account_number_last4}`;
      const settled = await client.post(`/v1/admin/enterprise/disbursements/${d!.id}/settle`).set(r.staff).send({});
      expect(settled.status, JSON.stringify(settled.body)).to.equal(200);
      expect(settled.body.data).to.deep.include({ instruction_label: 'Rekening lama', bank_name: 'BCA', account_holder: 'PT Pemasok Jaya', account_number_masked: oldMasked });

      // The instruction is edited afterwards: another label, bank, holder and number.
      const edit = await client.patch(`${P}/${id}`).set(r.w.h.finance).send({ label: 'Rekening baru', bank_name: 'Bank Mandiri', account_holder: 'PT Orang Lain', account_number: '9990004321' });
      expect(edit.status, JSON.stringify(edit.body)).to.equal(200);

      // GET /payouts: the destination it was released to.
      const list = await client.get('/v1/enterprise/payouts').set(r.w.h.viewer);
      expect(list.status).to.equal(200);
      const item = (list.body.data as Record<string, unknown>[]).find((p) => p.id === d!.id)!;
      expect(item).to.deep.include({ status: 'settled', payout_instruction_id: id, instruction_label: 'Rekening lama', bank_name: 'BCA', account_holder: 'PT Pemasok Jaya', account_number_masked: oldMasked });
      expect(JSON.stringify(list.body)).to.not.include('Bank Mandiri').and.not.include('…4321').and.not.include('PT Orang Lain');

      // disbursements.csv: the same.
      const { lines } = await exportCsv(client, r.w.h.finance, '/v1/enterprise/reports/disbursements.csv');
      const row = lines.find((l) => l.startsWith(d!.id))!;
      expect(row).to.include(',Rekening lama,BCA,').and.include(`,${oldMasked},`).and.include(',settled,');
      expect(lines.join('\n')).to.not.include('Bank Mandiri').and.not.include('…4321');

      // The console's deal page: the same.
      const { user: admin } = await createUser({ role: 'admin' });
      const browser = supertest.agent(createApp().callback());
      await signIn(browser, admin.email);
      const page = await browser.get(`/admin/deals/${r.deal.deal.id}`);
      expect(page.status).to.equal(200);
      const section = page.text.slice(page.text.indexOf('id="deal-payouts"'));
      const tr = section.slice(section.indexOf(`<tr data-id="${d!.id}"`)).split('</tr>')[0]!;
      expect(tr).to.include('Rekening lama').and.include(`BCA ${oldMasked}`).and.include('PT Pemasok Jaya').and.include('settled');
      expect(section.split('</section>')[0]).to.not.include('Bank Mandiri').and.not.include('…4321');

      // The release e-mail named where each payout went; nothing sent since names the new destination.
      const mails = await db('outbound_emails').where('template', 'like', 'enterprise.%').select<{ template: string; body_sealed: string }[]>('template', 'body_sealed');
      const released = mails.filter((m) => m.template === 'enterprise.milestone-released').map((m) => decryptSecret(m.body_sealed));
      expect(released.length).to.be.greaterThan(0);
      for (const text of released) expect(text).to.include(`"Rekening lama" (BCA ${oldMasked}, PT Pemasok Jaya)`);
      for (const m of mails) expect(decryptSecret(m.body_sealed)).to.not.include('Bank Mandiri');
    });

    it('the payout-failed e-mail and answer name the destination kept on the payout, not an instruction altered behind the API', async () => {
      const r = await releasedMilestone(client, 'sandbox', ['Rekening lama']);
      const id = r.instructionIds[0]!;
      const [d] = r.disbursements;
      const old = (await db('payout_instructions').where({ id }).first<{ account_number_last4: string }>('account_number_last4')).account_number_last4;
      // Altered in the database while the payout is queued (the API refuses an edit now): the gate refuses to pay it.
      await db('payout_instructions').where({ id }).update({ bank_name: 'Bank Penipu', label: 'Rekening palsu' });
      expectError(await client.post(`/v1/admin/enterprise/disbursements/${d!.id}/settle`).set(r.staff).send({}), 409, 'INVALID_STATE');
      const failed = await client.post(`/v1/admin/enterprise/disbursements/${d!.id}/fail`).set(r.staff).send({ reason: 'Tujuan berubah' });
      expect(failed.status, JSON.stringify(failed.body)).to.equal(200);
      expect(failed.body.data).to.deep.include({ instruction_label: 'Rekening lama', bank_name: 'BCA', account_number_masked: `…${old}` });
      const bounced = await db('outbound_emails').where({ template: 'enterprise.payout-failed' }).select<{ body_sealed: string }[]>('body_sealed');
      expect(bounced.length).to.be.greaterThan(0);
      for (const m of bounced) {
        const text = decryptSecret(m.body_sealed);
        expect(text).to.include(`"Rekening lama" (BCA …${old}, PT Pemasok Jaya)`).and.include('Tujuan berubah');
        expect(text).to.not.include('Bank Penipu').and.not.include('Rekening palsu');
      }
    });

    it('a payout whose kept destination differs from its instruction is not paid (the money goes where the record says, or nowhere)', async () => {
      const r = await releasedMilestone(client, 'sandbox', ['Rekening lama']);
      const [d] = r.disbursements;
      await db('disbursements').where({ id: d!.id }).update({ destination_bank_name: 'Bank Lain' });
      const run = await runDisbursement(d!.id);
      expect(run).to.deep.equal({ outcome: 'failed', disbursement_id: d!.id, reason: 'destination refused: destination_not_as_recorded' });
    });
  });

  describe('migrations', () => {
    it('20261209020100 fills a payout without a kept destination from its instruction as it is now (older rows carry the then-current destination)', async () => {
      const r = await releasedMilestone(client, 'sandbox', ['Rekening lama']);
      const [d] = r.disbursements;
      const inst = await db('payout_instructions').where({ id: r.instructionIds[0]! }).first<{ bank_name: string; account_holder: string; account_number_last4: string }>('*');
      // As before 20261209020200: the columns nullable, the payout without a kept destination. Undone with the transaction.
      class Undo extends Error {}
      let after: Record<string, unknown> | undefined;
      await db
        .transaction(async (trx) => {
          await trx.raw(
            'ALTER TABLE disbursements ALTER COLUMN destination_bank_name DROP NOT NULL, ALTER COLUMN destination_account_holder DROP NOT NULL, ALTER COLUMN destination_account_last4 DROP NOT NULL, DROP CONSTRAINT disbursements_destination_last4',
          );
          await trx('disbursements').where({ id: d!.id }).update({ destination_bank_name: null, destination_account_holder: null, destination_account_last4: null });
          await backfillDestinations(trx);
          after = await trx('disbursements').where({ id: d!.id }).first('destination_bank_name', 'destination_account_holder', 'destination_account_last4');
          throw new Undo();
        })
        .catch((e: unknown) => {
          if (!(e instanceof Undo)) throw e;
        });
      expect(after).to.deep.equal({ destination_bank_name: inst.bank_name, destination_account_holder: inst.account_holder, destination_account_last4: inst.account_number_last4 });
    });

    it('20261209020300 sends instructions verified with a version 1 signature back to pending_verification and keeps version 2 ones', async () => {
      const w = await dealWorld(client);
      const staff = await staffHeaders();
      const v1Id = await createVia(w.h.finance, w.cpId, { label: 'Lama' });
      const v2Id = await createVia(w.h.finance, w.cpId, { label: 'Baru' });
      for (const id of [v1Id, v2Id]) expect((await client.post(verifyPath(id)).set(staff).send({ destination_version: 1 })).status).to.equal(200);
      // A version 1 signature as the code before issue 42 stored it (no prefix).
      await db('payout_instructions').where({ id: v1Id }).update({ verification_signature: 'bGVnYWN5LXNpZ25hdHVyZS1vZi10aGUtb2xkLWZvcm0' });
      expect(await checkDestination(db, v1Id, false)).to.deep.equal({ ok: false, reason: 'signature_mismatch' });
      await unverifyV1(db);
      expect(await instructionRow(v1Id)).to.deep.include({ status: 'pending_verification', verification_signature: null, verified_by: null });
      expect((await instructionRow(v2Id)).status).to.equal('verified');
      expect((await checkDestination(db, v2Id, false)).ok).to.equal(true);
    });
  });
});
