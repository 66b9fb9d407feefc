/**
 * Payout instructions over HTTP (enterprise spec 1, 4.6, 5, 7, 8; D7, D10): create (finance;
 * the body's rules; pending_verification; the account number sealed, only `…last4` in
 * answers), list and get (viewers; newest first; filters; another workspace's or a deleted
 * one is 404), PATCH (a destination change sends it back to pending_verification, a
 * label-only change too, D7 as written since issue 42), DELETE (soft), refusals while a disbursement to the
 * instruction is queued or processing, staff verification (signature, audit, event with
 * the operator label, twice is 409), the payout gate `checkDestination` (refuses rows
 * changed behind the API), `instructionsForRelease`, roles and keys, the shared
 * 30-per-minute write limit, Idempotency-Key, and races (verify against edit, two verifies,
 * a release against an edit).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { addMember, createWorkspace, headersOf, personalKeyOf, sessionOf, workspaceKey } from '../../factories/enterprise.js';
import { activeDeal, counterpartyVia, dealWorld, feedRows, staffHeaders, type DealWorld, type Headers } from '../../factories/deals.js';
import { createInstruction } from '../../factories/payouts.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { decryptSecret, encryptSecret } from '../../../shared/crypto.js';
import { db } from '../../../shared/db.js';
import { lockWorkspace } from '../../../shared/enterprise/repo.js';
import { checkDestination, instructionsForRelease, type PayoutInstructionRow } from '../../../shared/payouts/instructions.js';
import { signDestination } from '../../../shared/payouts/signature.js';

const P = '/v1/enterprise/payout-instructions';
const verifyPath = (id: string) => `/v1/admin/enterprise/payout-instructions/${id}/verify`;
const NUMBER = '1234567890';
const pinNow = () => clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));

type Res = { status: number; body: { success?: boolean; error?: { code: string; details?: { fieldErrors: Record<string, string[]> } }; data?: unknown }; headers: Record<string, string> };

function expectError(res: Res, status: number, code: string, label = ''): void {
  expect(res.status, `${label} ${JSON.stringify(res.body)}`).to.equal(status);
  expect(res.body.success, label).to.equal(false);
  expect(res.body.error!.code, label).to.equal(code);
  expect(res.body, label).to.not.have.property('data');
}

const body = (cpId: string, extra: Record<string, unknown> = {}) => ({
  label: 'Rekening utama',
  counterparty_id: cpId,
  bank_name: 'Bank Central Asia',
  account_number: '1234 5678-90',
  account_holder: 'PT Pemasok Jaya',
  ...extra,
});

interface Instruction {
  id: string;
  label: string;
  status: string;
  bank_name: string;
  account_holder: string;
  account_number_masked: string;
  verified_at: string | null;
  counterparty: { id: string; name: string };
}

const row = (id: string) => db('payout_instructions').where({ id }).first<PayoutInstructionRow>();
const countOf = async (q: ReturnType<typeof db>): Promise<number> => Number((await q.count<{ count: string | number }[]>('* as count'))[0]?.count ?? 0);

describe('enterprise payout instructions', () => {
  const client = api();
  afterEach(() => clock.reset());

  async function createVia(h: Headers, b: Record<string, unknown>): Promise<Instruction> {
    const res = await client.post(P).set(h).send(b);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data as Instruction;
  }

  /** Staff verify the instruction's current version (what a reveal would show now). */
  async function verifyVia(h: Headers, id: string, b: Record<string, unknown> = {}): Promise<Instruction> {
    const res = await client.post(verifyPath(id)).set(h).send({ destination_version: (await row(id)).destination_version, ...b });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as Instruction;
  }

  /** A world with one instruction made by finance over HTTP, verified by staff when asked. */
  async function withInstruction(verified = false): Promise<{ w: DealWorld; staff: Headers; id: string }> {
    const w = await dealWorld(client);
    const staff = await staffHeaders();
    const made = await createVia(w.h.finance, body(w.cpId));
    if (verified) await verifyVia(staff, made.id);
    return { w, staff, id: made.id };
  }

  /** A disbursement row to the instruction (the release is not this file's: put straight into the table). */
  async function disbursementTo(w: DealWorld, instructionId: string, status: 'queued' | 'processing' | 'settled' | 'failed'): Promise<string> {
    const d = await activeDeal(client, w, [1_000_000]);
    const now = clock.now();
    const [made] = await db('disbursements')
      .insert({
        workspace_id: w.workspace.id,
        deal_id: d.deal.id,
        milestone_id: d.milestones[0]!.id,
        payout_instruction_id: instructionId,
        instruction_label: 'Rekening utama',
        destination_bank_name: 'Bank Central Asia',
        destination_account_holder: 'PT Pemasok Jaya',
        destination_account_last4: '7890',
        amount: 1_000_000,
        currency: 'IDR',
        is_test: true,
        release_no: 1,
        split_no: 1,
        status,
        settled_at: status === 'settled' ? now : null,
        failed_at: status === 'failed' ? now : null,
        created_at: now,
        updated_at: now,
      })
      .returning<{ id: string }[]>('id');
    return made!.id;
  }

  describe('create', () => {
    it('finance creates: 201 with exactly the answer fields, pending_verification, the number masked; payout_instruction.created', async () => {
      pinNow();
      const w = await dealWorld(client);
      const res = await client.post(P).set(w.h.finance).send(body(w.cpId));
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.headers['cache-control']).to.equal('private, no-store');
      const data = res.body.data as Instruction & { id: string };
      expect(res.body).to.deep.equal({
        success: true,
        data: {
          id: data.id,
          label: 'Rekening utama',
          counterparty: { id: w.cpId, name: 'PT Pemasok Jaya' },
          bank_name: 'Bank Central Asia',
          account_holder: 'PT Pemasok Jaya',
          account_number_masked: '…7890',
          status: 'pending_verification',
          destination_version: 1,
          verified_at: null,
          pending_since: clock.now().toISOString(),
          declined_at: null,
          decline_reason: null,
          created_by: { id: w.users.finance.id, name: w.users.finance.full_name },
          created_at: clock.now().toISOString(),
          updated_at: clock.now().toISOString(),
        },
      });
      expect(JSON.stringify(res.body)).to.not.include(NUMBER);
      const events = (await feedRows(w.workspace.id)).filter((e) => e.event.startsWith('payout_instruction.'));
      expect(events).to.have.length(1);
      expect(events[0]).to.deep.include({
        event: 'payout_instruction.created',
        entity_type: 'payout_instruction',
        entity_id: data.id,
        deal_id: null,
        actor_id: w.users.finance.id,
        actor_name: w.users.finance.full_name,
        actor_label: null,
        livemode: false,
      });
      expect(events[0]!.summary).to.include('…7890').and.not.include(NUMBER);
    });

    it('seals the account number at rest: no column of the table (nor the feed, audit or stored answers) holds it; it opens to the digits only', async () => {
      const { w, staff, id } = await withInstruction();
      await client.post(P).set(w.h.finance).set('Idempotency-Key', randomUUID()).send(body(w.cpId, { account_number: '9876-5432-10' }));
      await verifyVia(staff, id);
      const rows = await db('payout_instructions').select('*');
      expect(rows).to.have.length(2);
      const dump = JSON.stringify(rows);
      expect(dump).to.not.include(NUMBER);
      expect(dump).to.not.include('9876543210');
      const r = (await row(id));
      expect(r.account_number_sealed).to.match(/^v1\./);
      expect(decryptSecret(r.account_number_sealed)).to.equal(NUMBER);
      expect(r.account_number_last4).to.equal('7890');
      for (const table of ['workspace_events', 'staff_audit', 'idempotency_keys']) {
        const all = JSON.stringify(await db(table).select('*'));
        expect(all, table).to.not.include(NUMBER);
        expect(all, table).to.not.include('9876543210');
      }
    });

    it('refuses bodies outside the rules with 400 INVALID_BODY field errors, and saves nothing', async () => {
      const w = await dealWorld(client);
      const cases: [Record<string, unknown>, string][] = [
        [{ label: '' }, 'label'],
        [{ label: 'x'.repeat(121) }, 'label'],
        [{ bank_name: 'B' }, 'bank_name'],
        [{ bank_name: 'B'.repeat(101) }, 'bank_name'],
        [{ account_holder: 'P' }, 'account_holder'],
        [{ account_holder: 'P'.repeat(181) }, 'account_holder'],
        [{ account_number: '12345' }, 'account_number'],
        [{ account_number: '12-34 5' }, 'account_number'],
        [{ account_number: '1'.repeat(35) }, 'account_number'],
        [{ account_number: '12345678a' }, 'account_number'],
        [{ account_number: '١٢٣٤٥٦٧٨' }, 'account_number'],
        [{ account_number: 1234567890 }, 'account_number'],
        [{ counterparty_id: 'not-a-uuid' }, 'counterparty_id'],
        [{ counterparty_id: undefined }, 'counterparty_id'],
        [{ bank_name: undefined }, 'bank_name'],
        [{ extra: true }, 'extra'],
      ];
      for (const [change, field] of cases) {
        const res = await client.post(P).set(w.h.finance).send(body(w.cpId, change));
        expectError(res, 400, 'INVALID_BODY', JSON.stringify(change));
        expect(res.body.error!.details!.fieldErrors, JSON.stringify(change)).to.have.property(field);
      }
      // Bounds that pass: 1-char label, 120-char label, 6 and 34 digits, spaces and dashes ignored.
      for (const change of [{ label: 'x' }, { label: 'x'.repeat(120) }, { account_number: '123456' }, { account_number: '1'.repeat(34) }, { account_number: ' 12 34-56 ' }]) {
        const res = await client.post(P).set(w.h.finance).send(body(w.cpId, change));
        expect(res.status, JSON.stringify(change)).to.equal(201);
      }
      const last = (await db('payout_instructions').orderBy('created_at', 'desc').orderBy('id').select('*')) as PayoutInstructionRow[];
      expect(last.map((r) => decryptSecret(r.account_number_sealed)).sort()).to.include.members(['123456', '1'.repeat(34)]);
      expect(await countOf(db('payout_instructions'))).to.equal(5);
    });

    it("a counterparty of another workspace, or none, is 400 INVALID_BODY on counterparty_id (as deals say it)", async () => {
      const w = await dealWorld(client);
      const other = await dealWorld(client, 'Lain');
      for (const cpId of [other.cpId, randomUUID()]) {
        const res = await client.post(P).set(w.h.finance).send(body(cpId));
        expectError(res, 400, 'INVALID_BODY');
        expect(res.body.error!.details).to.deep.equal({ formErrors: [], fieldErrors: { counterparty_id: ['is not a counterparty of this workspace'] } });
      }
      expect(await countOf(db('payout_instructions'))).to.equal(0);
    });

    it('a live workspace records the event with livemode true', async () => {
      const w = await dealWorld(client);
      await db('workspaces').where({ id: w.workspace.id }).update({ is_sandbox: false, kyb_status: 'verified' });
      await createVia(w.h.finance, body(w.cpId));
      const [e] = (await feedRows(w.workspace.id)).filter((r) => r.event === 'payout_instruction.created');
      expect(e!.livemode).to.equal(true);
    });
  });

  describe('roles and credentials', () => {
    it('viewers read; viewers and operators cannot write (403 FORBIDDEN); finance, admin and owner write', async () => {
      const { w, id } = await withInstruction();
      const admin = headersOf(await sessionOf((await addMember(w.workspace.id, 'admin')).user));
      expect((await client.get(P).set(w.h.viewer)).status).to.equal(200);
      expect((await client.get(`${P}/${id}`).set(w.h.viewer)).status).to.equal(200);
      for (const [who, h] of [['viewer', w.h.viewer], ['operator', w.h.operator]] as const) {
        expectError(await client.post(P).set(h).send(body(w.cpId)), 403, 'FORBIDDEN', who);
        expectError(await client.patch(`${P}/${id}`).set(h).send({ label: 'x' }), 403, 'FORBIDDEN', who);
        expectError(await client.delete(`${P}/${id}`).set(h), 403, 'FORBIDDEN', who);
      }
      expect((await row(id)).label).to.equal('Rekening utama');
      for (const h of [w.h.finance, admin, w.h.owner]) {
        const made = await createVia(h, body(w.cpId));
        expect((await client.patch(`${P}/${made.id}`).set(h).send({ label: 'Baru' })).status).to.equal(200);
        expect((await client.delete(`${P}/${made.id}`).set(h)).status).to.equal(200);
      }
    });

    it('a read-only workspace key reads and gets 403 SCOPE_REQUIRED on every write; a read+write key of finance writes; a personal key acts as its user', async () => {
      const { w, id } = await withInstruction();
      const finance = (await db('workspace_members').where({ workspace_id: w.workspace.id, user_id: w.users.finance.id }).first()) as Parameters<typeof workspaceKey>[1]['member'];
      const readKey = headersOf({ kind: 'workspace_key', key: (await workspaceKey(w.workspace.id, { member: w.ownerMember, user: w.owner }, ['read'])).key });
      expect((await client.get(P).set(readKey)).status).to.equal(200);
      expect((await client.get(`${P}/${id}`).set(readKey)).status).to.equal(200);
      expectError(await client.post(P).set(readKey).send(body(w.cpId)), 403, 'SCOPE_REQUIRED');
      expectError(await client.patch(`${P}/${id}`).set(readKey).send({ label: 'x' }), 403, 'SCOPE_REQUIRED');
      expectError(await client.delete(`${P}/${id}`).set(readKey), 403, 'SCOPE_REQUIRED');
      const rwKey = headersOf({ kind: 'workspace_key', key: (await workspaceKey(w.workspace.id, { member: finance, user: w.users.finance }, ['read', 'write'])).key });
      expect((await client.patch(`${P}/${id}`).set(rwKey).send({ label: 'Dengan kunci' })).status).to.equal(200);
      const operatorKey = headersOf(await personalKeyOf(w.users.operator), w.workspace.id);
      expectError(await client.post(P).set(operatorKey).send(body(w.cpId)), 403, 'FORBIDDEN');
      const financeKey = headersOf(await personalKeyOf(w.users.finance), w.workspace.id);
      expect((await client.post(P).set(financeKey).send(body(w.cpId))).status).to.equal(201);
    });
  });

  describe('list and get', () => {
    it('newest first, paginated, filtered by counterparty_id and status; deleted and other workspaces left out', async () => {
      const w = await dealWorld(client);
      const staff = await staffHeaders();
      const cp2 = await counterpartyVia(client, w.h.owner, { name: 'CV Kedua' });
      const t0 = Date.now();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        clock.set(new Date(t0 + i * 60_000));
        ids.push((await createVia(w.h.finance, body(i % 2 === 0 ? w.cpId : cp2, { label: `R${i}` }))).id);
      }
      await verifyVia(staff, ids[0]!);
      await verifyVia(staff, ids[3]!);
      expect((await client.delete(`${P}/${ids[4]!}`).set(w.h.finance)).status).to.equal(200);
      const other = await dealWorld(client, 'Lain');
      await createVia(other.h.finance, body(other.cpId));

      const all = await client.get(P).set(w.h.viewer);
      expect(all.status).to.equal(200);
      expect(all.headers['cache-control']).to.equal('private, no-store');
      expect((all.body.data as Instruction[]).map((i) => i.label)).to.deep.equal(['R3', 'R2', 'R1', 'R0']);
      expect(all.body.pagination).to.deep.equal({ page: 1, limit: 20, total: 4, total_pages: 1 });
      const page2 = await client.get(`${P}?page=2&limit=3`).set(w.h.viewer);
      expect((page2.body.data as Instruction[]).map((i) => i.label)).to.deep.equal(['R0']);
      expect(page2.body.pagination).to.deep.equal({ page: 2, limit: 3, total: 4, total_pages: 2 });
      const byCp = await client.get(`${P}?counterparty_id=${cp2}`).set(w.h.viewer);
      expect((byCp.body.data as Instruction[]).map((i) => i.label)).to.deep.equal(['R3', 'R1']);
      expect((byCp.body.data as Instruction[])[0]!.counterparty).to.deep.equal({ id: cp2, name: 'CV Kedua' });
      const verified = await client.get(`${P}?status=verified`).set(w.h.viewer);
      expect((verified.body.data as Instruction[]).map((i) => i.label)).to.deep.equal(['R3', 'R0']);
      expect(verified.body.pagination.total).to.equal(2);
      const pending = await client.get(`${P}?status=pending_verification&counterparty_id=${w.cpId}`).set(w.h.viewer);
      expect((pending.body.data as Instruction[]).map((i) => i.label)).to.deep.equal(['R2']);
      expect(JSON.stringify([all.body, byCp.body, verified.body])).to.not.include(NUMBER);
      for (const q of ['status=deleted', 'counterparty_id=nope', 'limit=51', 'page=0']) expectError(await client.get(`${P}?${q}`).set(w.h.viewer), 400, 'INVALID_QUERY', q);
    });

    it("get: the instruction; 404 NOT_FOUND for another workspace's, a deleted one, an unknown id or a malformed one", async () => {
      const { w, id } = await withInstruction();
      const res = await client.get(`${P}/${id}`).set(w.h.viewer);
      expect(res.status).to.equal(200);
      expect((res.body.data as Instruction).account_number_masked).to.equal('…7890');
      expect(JSON.stringify(res.body)).to.not.include(NUMBER);
      const other = await dealWorld(client, 'Lain');
      expectError(await client.get(`${P}/${id}`).set(other.h.owner), 404, 'NOT_FOUND');
      expectError(await client.get(`${P}/${randomUUID()}`).set(w.h.viewer), 404, 'NOT_FOUND');
      expectError(await client.get(`${P}/123`).set(w.h.viewer), 404, 'NOT_FOUND');
      await client.delete(`${P}/${id}`).set(w.h.finance).expect(200);
      expectError(await client.get(`${P}/${id}`).set(w.h.viewer), 404, 'NOT_FOUND');
    });

    it("another workspace's finance cannot change, delete or list it (404 NOT_FOUND), and nothing changes", async () => {
      const { w, id } = await withInstruction(true);
      const other = await dealWorld(client, 'Lain');
      const before = await db('payout_instructions').where({ workspace_id: w.workspace.id }).select('*');
      const feed = await feedRows(w.workspace.id);
      expectError(await client.patch(`${P}/${id}`).set(other.h.finance).send({ label: 'Milik saya' }), 404, 'NOT_FOUND');
      expectError(await client.patch(`${P}/${id}`).set(other.h.finance).send({ account_number: '5555555555' }), 404, 'NOT_FOUND');
      expectError(await client.delete(`${P}/${id}`).set(other.h.finance), 404, 'NOT_FOUND');
      expect((await client.get(P).set(other.h.owner)).body.data).to.deep.equal([]);
      expect((await client.get(`${P}?counterparty_id=${w.cpId}`).set(other.h.owner)).body.data).to.deep.equal([]);
      // A workspace key of the other workspace naming this one: 403 NO_WORKSPACE.
      const otherKey = await workspaceKey(other.workspace.id, { member: other.ownerMember, user: other.owner }, ['read', 'write']);
      expectError(await client.get(`${P}/${id}`).set(headersOf({ kind: 'workspace_key', key: otherKey.key }, w.workspace.id)), 403, 'NO_WORKSPACE');
      expect(await db('payout_instructions').where({ workspace_id: w.workspace.id }).select('*')).to.deep.equal(before);
      expect(await feedRows(w.workspace.id)).to.deep.equal(feed);
      expect((await checkDestination(db, id, false)).ok).to.equal(true);
    });
  });

  describe('update', () => {
    it('each destination field sent with a new value sends a verified instruction back to pending_verification and clears the signature', async () => {
      const w = await dealWorld(client);
      const staff = await staffHeaders();
      for (const change of [{ bank_name: 'Bank Negara Indonesia' }, { account_number: '5555-666-777' }, { account_holder: 'PT Orang Lain' }, { label: 'Baru', bank_name: 'BRI' }]) {
        const made = await createVia(w.h.finance, body(w.cpId));
        await verifyVia(staff, made.id);
        pinNow();
        const res = await client.patch(`${P}/${made.id}`).set(w.h.finance).send(change);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        const data = res.body.data as Instruction & { updated_at: string };
        expect(data.status, JSON.stringify(change)).to.equal('pending_verification');
        expect(data.verified_at).to.equal(null);
        expect(data.updated_at).to.equal(clock.now().toISOString());
        const r = (await row(made.id));
        expect(r).to.deep.include({ status: 'pending_verification', verification_signature: null, verified_at: null, verified_by: null });
        if ('account_number' in change) {
          expect(data.account_number_masked).to.equal('…6777');
          expect(decryptSecret(r.account_number_sealed)).to.equal('5555666777');
          expect(r.account_number_last4).to.equal('6777');
        }
        expect(await checkDestination(db, made.id, false)).to.deep.equal({ ok: false, reason: 'not_verified' });
        const [e] = (await feedRows(w.workspace.id)).filter((x) => x.event === 'payout_instruction.updated').slice(-1);
        expect(e).to.deep.include({ entity_id: made.id, actor_id: w.users.finance.id, entity_type: 'payout_instruction' });
        expect(e!.summary).to.include('waiting for verification again').and.not.include('5555666777');
        clock.reset();
        // Verified again by staff: the new destination is signed and passes the gate.
        await verifyVia(staff, made.id);
        const check = await checkDestination(db, made.id, false);
        expect(check.ok).to.equal(true);
      }
    });

    it('D7 as written (issue 42): a label-only change sends a verified instruction back to pending_verification and bumps its version', async () => {
      const { w, id } = await withInstruction(true);
      const before = (await row(id));
      expect(before.destination_version).to.equal(1);
      const res = await client.patch(`${P}/${id}`).set(w.h.finance).send({ label: 'Rekening operasional' });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.include({ label: 'Rekening operasional', status: 'pending_verification', verified_at: null, destination_version: 2 });
      const after = (await row(id));
      expect(after).to.deep.include({ verification_signature: null, verified_by: null, verified_at: null, destination_version: 2 });
      expect(await checkDestination(db, id, false)).to.deep.equal({ ok: false, reason: 'not_verified' });
      const [e] = (await feedRows(w.workspace.id)).filter((x) => x.event === 'payout_instruction.updated');
      expect(e!.summary).to.include('changed: label').and.include('waiting for verification again');
      // The old signature put back on the renamed row does not pass the gate (the label is signed).
      await db('payout_instructions').where({ id }).update({ status: 'verified', verified_at: before.verified_at, verification_signature: before.verification_signature });
      expect(await checkDestination(db, id, false)).to.deep.equal({ ok: false, reason: 'signature_mismatch' });
    });

    it('destination fields sent with the values they have change nothing (no write, no event, still verified)', async () => {
      const { w, id } = await withInstruction(true);
      const before = (await row(id));
      const feed = await feedRows(w.workspace.id);
      const res = await client.patch(`${P}/${id}`).set(w.h.finance).send({ bank_name: 'Bank Central Asia', account_number: '12-34-56-78-90', account_holder: 'PT Pemasok Jaya', label: 'Rekening utama' });
      expect(res.status).to.equal(200);
      expect((res.body.data as Instruction).status).to.equal('verified');
      expect(await row(id)).to.deep.equal(before);
      expect(await feedRows(w.workspace.id)).to.deep.equal(feed);
    });

    it('refuses an empty body, a counterparty change and bad values with 400 INVALID_BODY; unknown ids are 404', async () => {
      const { w, id } = await withInstruction(true);
      for (const b of [{}, { counterparty_id: w.cpId }, { account_number: '123' }, { label: '' }, { bank_name: 'x' }]) {
        expectError(await client.patch(`${P}/${id}`).set(w.h.finance).send(b), 400, 'INVALID_BODY', JSON.stringify(b));
      }
      expectError(await client.patch(`${P}/${randomUUID()}`).set(w.h.finance).send({ label: 'x' }), 404, 'NOT_FOUND');
      expectError(await client.patch(`${P}/abc`).set(w.h.finance).send({ label: 'x' }), 404, 'NOT_FOUND');
      expect((await row(id)).status).to.equal('verified');
    });
  });

  describe('delete', () => {
    it('soft-deletes: { id, deleted: true }, deleted_at set, gone from reads and the payout gate; again is 404; payout_instruction.deleted', async () => {
      const { w, id, staff } = await withInstruction(true);
      pinNow();
      const res = await client.delete(`${P}/${id}`).set(w.h.finance);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ success: true, data: { id, deleted: true } });
      const r = (await row(id));
      expect(r.deleted_at!.toISOString()).to.equal(clock.now().toISOString());
      expect(r.status).to.equal('verified');
      expect(await checkDestination(db, id, false)).to.deep.equal({ ok: false, reason: 'deleted' });
      expect(await instructionsForRelease(db, w.workspace.id, [id])).to.deep.equal([]);
      expectError(await client.delete(`${P}/${id}`).set(w.h.finance), 404, 'NOT_FOUND');
      expectError(await client.patch(`${P}/${id}`).set(w.h.finance).send({ label: 'x' }), 404, 'NOT_FOUND');
      expectError(await client.post(verifyPath(id)).set(staff).send({ destination_version: 1 }), 404, 'NOT_FOUND');
      const events = (await feedRows(w.workspace.id)).filter((e) => e.event === 'payout_instruction.deleted');
      expect(events).to.have.length(1);
      expect(events[0]).to.deep.include({ entity_id: id, actor_id: w.users.finance.id });
    });
  });

  describe('while money is on its way to the instruction', () => {
    for (const status of ['queued', 'processing'] as const) {
      it(`PATCH and DELETE are refused with 409 INVALID_STATE while a disbursement is ${status}; nothing changes`, async () => {
        const { w, id } = await withInstruction(true);
        await disbursementTo(w, id, status);
        const before = (await row(id));
        const feed = await feedRows(w.workspace.id);
        for (const b of [{ label: 'x' }, { account_number: '99999999' }, { bank_name: 'BRI' }]) {
          expectError(await client.patch(`${P}/${id}`).set(w.h.finance).send(b), 409, 'INVALID_STATE', JSON.stringify(b));
        }
        expectError(await client.delete(`${P}/${id}`).set(w.h.finance), 409, 'INVALID_STATE');
        expect(await row(id)).to.deep.equal(before);
        expect(await feedRows(w.workspace.id)).to.deep.equal(feed);
        expect((await checkDestination(db, id, false)).ok).to.equal(true);
      });
    }

    it('once the disbursements are settled or failed, PATCH and DELETE work again', async () => {
      const { w, id } = await withInstruction(true);
      await disbursementTo(w, id, 'settled');
      await disbursementTo(w, id, 'failed');
      expect((await client.patch(`${P}/${id}`).set(w.h.finance).send({ label: 'Lunas' })).status).to.equal(200);
      expect((await client.delete(`${P}/${id}`).set(w.h.finance)).status).to.equal(200);
    });

    it("another instruction's queued disbursement does not hold this one", async () => {
      const { w, id } = await withInstruction(true);
      const other = await createVia(w.h.finance, body(w.cpId, { label: 'Lain' }));
      await disbursementTo(w, other.id, 'queued');
      expect((await client.patch(`${P}/${id}`).set(w.h.finance).send({ bank_name: 'BRI' })).status).to.equal(200);
    });
  });

  describe('staff verification', () => {
    it('an admin verifies: verified with the signature of the current destination, the audit row, the event with the operator label and no actor', async () => {
      const { w, id } = await withInstruction();
      const { user: admin } = await createUser({ role: 'admin', fullName: 'Staff Satu' });
      pinNow();
      const res = await client.post(verifyPath(id)).set(headersOf(await sessionOf(admin))).send({ note: 'Dicek lewat telepon ke bank', destination_version: 1 });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data).to.deep.include({ id, status: 'verified', verified_at: clock.now().toISOString(), account_number_masked: '…7890' });
      expect(JSON.stringify(res.body)).to.not.include(NUMBER);
      const r = (await row(id));
      expect(r.verified_by).to.equal(admin.id);
      expect(r.verification_signature).to.equal(
        signDestination({ instructionId: id, workspaceId: w.workspace.id, counterpartyId: w.cpId, label: 'Rekening utama', bankName: 'Bank Central Asia', accountHolder: 'PT Pemasok Jaya', accountNumber: NUMBER, livemode: false }),
      );
      const audit = await db('staff_audit').where({ target_type: 'payout_instruction', target_id: id }).select('*');
      expect(audit).to.have.length(1);
      expect(audit[0]).to.deep.include({ actor_id: admin.id, action: 'payout_instruction.verified', note: 'Dicek lewat telepon ke bank', details: { destination_version: 1, livemode: false } });
      const [e] = (await feedRows(w.workspace.id)).filter((x) => x.event === 'payout_instruction.verified');
      expect(e).to.deep.include({ entity_type: 'payout_instruction', entity_id: id, actor_id: null, actor_name: null, actor_label: 'Operator', livemode: false, deal_id: null });
      expect(e!.summary).to.not.include('Staff Satu');
    });

    it('an admin personal key verifies; a second verification is 409 INVALID_STATE; non-admins are refused; unknown ids 404', async () => {
      const { w, id } = await withInstruction();
      const { user: admin } = await createUser({ role: 'admin' });
      const key = headersOf(await personalKeyOf(admin));
      const v1 = { destination_version: 1 };
      expect((await client.post(verifyPath(id)).set(key).send(v1)).status).to.equal(200);
      const signed = (await row(id));
      expectError(await client.post(verifyPath(id)).set(key).send(v1), 409, 'INVALID_STATE');
      expect(await row(id)).to.deep.equal(signed);
      expect(await countOf(db('staff_audit').where({ target_id: id }))).to.equal(1);
      const other = await createVia(w.h.finance, body(w.cpId));
      // The workspace's own owner is no staff member: 403.
      const ownerRes = await client.post(verifyPath(other.id)).set(w.h.owner).send(v1);
      expect(ownerRes.status).to.equal(403);
      expect((await client.post(verifyPath(other.id)).send(v1)).status).to.equal(401);
      expect((await row(other.id)).status).to.equal('pending_verification');
      expectError(await client.post(verifyPath(randomUUID())).set(key).send(v1), 404, 'NOT_FOUND');
      expectError(await client.post(verifyPath('x')).set(key).send(v1), 404, 'NOT_FOUND');
      expectError(await client.post(verifyPath(other.id)).set(key).send({ ...v1, note: 'n'.repeat(2001) }), 400, 'INVALID_BODY');
    });

    it('Idempotency-Key: the same key replays the first answer (Idempotent-Replay), one verification', async () => {
      const { id, staff } = await withInstruction();
      const k = randomUUID();
      const first = await client.post(verifyPath(id)).set(staff).set('Idempotency-Key', k).send({ note: 'ok', destination_version: 1 });
      expect(first.status).to.equal(200);
      const again = await client.post(verifyPath(id)).set(staff).set('Idempotency-Key', k).send({ note: 'ok', destination_version: 1 });
      expect(again.status).to.equal(200);
      expect(again.headers['idempotent-replay']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expect(await countOf(db('staff_audit').where({ target_id: id }))).to.equal(1);
    });
  });

  describe('the payout gate: checkDestination', () => {
    it('ok for a verified instruction, with the destination decrypted; pending, unknown and malformed ids are refused', async () => {
      const { w, id } = await withInstruction(true);
      const check = await checkDestination(db, id, false);
      expect(check.ok).to.equal(true);
      if (check.ok) {
        expect(check.destination).to.deep.equal({ bank_name: 'Bank Central Asia', account_holder: 'PT Pemasok Jaya', account_number: NUMBER });
        expect(check.row.id).to.equal(id);
      }
      const pending = await createVia(w.h.finance, body(w.cpId));
      expect(await checkDestination(db, pending.id, false)).to.deep.equal({ ok: false, reason: 'not_verified' });
      expect(await checkDestination(db, randomUUID(), false)).to.deep.equal({ ok: false, reason: 'not_found' });
      expect(await checkDestination(db, 'nope', false)).to.deep.equal({ ok: false, reason: 'not_found' });
    });

    it('refuses a verified row whose signed fields were changed behind the API (number, bank, holder, counterparty)', async () => {
      const w = await dealWorld(client);
      const cp2 = await counterpartyVia(client, w.h.owner, { name: 'CV Kedua' });
      const edits: Record<string, unknown>[] = [
        { account_number_sealed: encryptSecret('9999999999') },
        { account_number_sealed: encryptSecret('9999997890') },
        { bank_name: 'Bank Lain' },
        { account_holder: 'Penipu' },
        { counterparty_id: cp2 },
      ];
      for (const edit of edits) {
        const made = await createInstruction(w.workspace, w.cpId, { verified: true, accountNumber: NUMBER });
        expect((await checkDestination(db, made.id, false)).ok).to.equal(true);
        await db('payout_instructions').where({ id: made.id }).update(edit);
        expect(await checkDestination(db, made.id, false), Object.keys(edit).join()).to.deep.equal({ ok: false, reason: 'signature_mismatch' });
      }
    });

    it('refuses a number that cannot be opened, a last-four that does not match the number, and a forged status', async () => {
      const w = await dealWorld(client);
      const a = await createInstruction(w.workspace, w.cpId, { verified: true });
      await db('payout_instructions').where({ id: a.id }).update({ account_number_sealed: 'v1.AAAA.BBBB.CCCC' });
      expect(await checkDestination(db, a.id, false)).to.deep.equal({ ok: false, reason: 'sealed_unreadable' });
      const b = await createInstruction(w.workspace, w.cpId, { verified: true, accountNumber: NUMBER });
      await db('payout_instructions').where({ id: b.id }).update({ account_number_last4: '1111' });
      expect(await checkDestination(db, b.id, false)).to.deep.equal({ ok: false, reason: 'last4_mismatch' });
      // A row set to verified with a signature that is not the service's.
      const c = await createInstruction(w.workspace, w.cpId);
      await db('payout_instructions').where({ id: c.id }).update({ status: 'verified', verified_at: clock.now(), verification_signature: 'forged' });
      expect(await checkDestination(db, c.id, false)).to.deep.equal({ ok: false, reason: 'signature_mismatch' });
      // Another instruction's valid signature copied over.
      const d = await createInstruction(w.workspace, w.cpId, { verified: true, accountNumber: NUMBER });
      const e = await createInstruction(w.workspace, w.cpId, { accountNumber: NUMBER });
      await db('payout_instructions').where({ id: e.id }).update({ status: 'verified', verified_at: clock.now(), verification_signature: (await row(d.id)).verification_signature });
      expect(await checkDestination(db, e.id, false)).to.deep.equal({ ok: false, reason: 'signature_mismatch' });
    });
  });

  describe('instructionsForRelease', () => {
    it("answers the workspace's live instructions among the ids (deleted, other workspaces' and malformed ids left out), in id order", async () => {
      const w = await dealWorld(client);
      const a = await createInstruction(w.workspace, w.cpId, { verified: true });
      const b = await createInstruction(w.workspace, w.cpId);
      const gone = await createInstruction(w.workspace, w.cpId, { verified: true });
      await client.delete(`${P}/${gone.id}`).set(w.h.finance).expect(200);
      const other = await dealWorld(client, 'Lain');
      const foreign = await createInstruction(other.workspace, other.cpId, { verified: true });
      const rows = await db.transaction((t) => instructionsForRelease(t, w.workspace.id, [b.id, a.id, a.id.toUpperCase(), gone.id, foreign.id, 'bad', randomUUID()]));
      expect(rows.map((r) => r.id)).to.deep.equal([a.id, b.id].sort());
      expect(await instructionsForRelease(db, w.workspace.id, [])).to.deep.equal([]);
    });

    it('holds the rows FOR SHARE: an edit waits until the release transaction ends', async () => {
      const w = await dealWorld(client);
      const a = await createInstruction(w.workspace, w.cpId, { verified: true });
      const trx = await db.transaction();
      let answered = false;
      let patch: Promise<{ status: number }> | undefined;
      try {
        expect((await instructionsForRelease(trx, w.workspace.id, [a.id])).map((r) => r.id)).to.deep.equal([a.id]);
        patch = Promise.resolve(client.patch(`${P}/${a.id}`).set(w.h.finance).send({ bank_name: 'BRI' })).then((r) => {
          answered = true;
          return r;
        });
        // Wait until the edit is blocked on a lock (a row lock of the instruction), not answered.
        for (let i = 0; i < 200; i++) {
          const waiting = await db.raw<{ rows: unknown[] }>(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`);
          if (waiting.rows.length > 0) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        expect(answered).to.equal(false);
        expect((await row(a.id)).bank_name).to.equal('BCA');
      } finally {
        await trx.commit();
      }
      expect((await patch).status).to.equal(200);
      expect((await row(a.id)).status).to.equal('pending_verification');
    });
  });

  describe('limits and idempotency', () => {
    it('30 writes per minute per user across create, change and delete (invalid bodies count): then 429 RATE_LIMITED; reads and other users go on', async () => {
      const { w, id } = await withInstruction();
      // The setup made 1 write; 28 more of every kind (most refused by validation), then the 30th.
      for (let i = 2; i <= 29; i++) {
        const res = i % 3 === 0 ? await client.patch(`${P}/${id}`).set(w.h.finance).send({}) : await client.post(P).set(w.h.finance).send({ label: 'x' });
        expect(res.status, `write ${i}`).to.equal(400);
      }
      expect((await client.patch(`${P}/${id}`).set(w.h.finance).send({ label: 'Ke-30' })).status).to.equal(200);
      for (const res of [
        await client.post(P).set(w.h.finance).send(body(w.cpId)),
        await client.patch(`${P}/${id}`).set(w.h.finance).send({ label: 'Ke-31' }),
        await client.delete(`${P}/${id}`).set(w.h.finance),
      ]) {
        expectError(res, 429, 'RATE_LIMITED');
        expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
      }
      expect((await row(id)).label).to.equal('Ke-30');
      expect((await client.get(P).set(w.h.finance)).status).to.equal(200);
      expect((await client.get(`${P}/${id}`).set(w.h.finance)).status).to.equal(200);
      expect((await client.patch(`${P}/${id}`).set(w.h.owner).send({ label: 'Pemilik' })).status).to.equal(200);
    });

    it('Idempotency-Key on create: the same key and body replay (one row, one event); another body is 422', async () => {
      const w = await dealWorld(client);
      const k = randomUUID();
      const first = await client.post(P).set(w.h.finance).set('Idempotency-Key', k).send(body(w.cpId));
      expect(first.status).to.equal(201);
      const again = await client.post(P).set(w.h.finance).set('Idempotency-Key', k).send(body(w.cpId));
      expect(again.status).to.equal(201);
      expect(again.headers['idempotent-replay']).to.equal('true');
      expect(again.body).to.deep.equal(first.body);
      expectError(await client.post(P).set(w.h.finance).set('Idempotency-Key', k).send(body(w.cpId, { label: 'Lain' })), 422, 'IDEMPOTENCY_KEY_CONFLICT');
      expect(await countOf(db('payout_instructions'))).to.equal(1);
      expect((await feedRows(w.workspace.id)).filter((e) => e.event === 'payout_instruction.created')).to.have.length(1);
      // A keyed PATCH and DELETE commit with their answers.
      const id = (first.body.data as Instruction).id;
      expect((await client.patch(`${P}/${id}`).set(w.h.finance).set('Idempotency-Key', randomUUID()).send({ bank_name: 'BRI' })).status).to.equal(200);
      expect((await row(id)).bank_name).to.equal('BRI');
      expect((await client.delete(`${P}/${id}`).set(w.h.finance).set('Idempotency-Key', randomUUID())).status).to.equal(200);
      expect((await row(id)).deleted_at).to.not.equal(null);
    });
  });

  describe('races', () => {
    it('two staff verifying at once: one 200, one 409 INVALID_STATE, one audit row and one event', async () => {
      const w = await dealWorld(client);
      const s1 = await staffHeaders();
      const s2 = await staffHeaders();
      for (let round = 0; round < 4; round++) {
        const made = await createVia(w.h.finance, body(w.cpId));
        const results = await Promise.all([client.post(verifyPath(made.id)).set(s1).send({ destination_version: 1 }), client.post(verifyPath(made.id)).set(s2).send({ destination_version: 1 })]);
        expect(results.map((r) => r.status).sort()).to.deep.equal([200, 409]);
        expect(results.find((r) => r.status === 409)!.body.error.code).to.equal('INVALID_STATE');
        expect(await countOf(db('staff_audit').where({ target_id: made.id }))).to.equal(1);
        expect((await feedRows(w.workspace.id)).filter((e) => e.event === 'payout_instruction.verified' && e.entity_id === made.id)).to.have.length(1);
      }
    });

    it('verify (naming version 1) against a destination edit: the verify first signs what it was shown, then the edit unverifies; the edit first makes the verify 409 CONCURRENT_MODIFICATION, nothing signed', async () => {
      const w = await dealWorld(client);
      const staff = await staffHeaders();
      const outcomes = new Set<string>();
      for (let round = 0; round < 8; round++) {
        const made = await createVia(w.h.finance, body(w.cpId));
        const verify = () => client.post(verifyPath(made.id)).set(staff).send({ destination_version: 1 });
        const edit = () => client.patch(`${P}/${made.id}`).set(w.h.finance).send({ account_number: `77777${round}0000` });
        const [v, e] = round % 2 === 0 ? await Promise.all([verify(), edit()]) : (await Promise.all([edit(), verify()])).reverse();
        expect(e!.status).to.equal(200);
        const r = (await row(made.id));
        // Either way the edit is the last word: pending, version 2, nothing signed.
        expect(r).to.deep.include({ status: 'pending_verification', verification_signature: null, destination_version: 2 });
        expect(await checkDestination(db, made.id, false)).to.deep.equal({ ok: false, reason: 'not_verified' });
        if (v!.status === 200) outcomes.add('verify-then-edit');
        else {
          outcomes.add('edit-then-verify');
          expectError(v!, 409, 'CONCURRENT_MODIFICATION');
          expect(await countOf(db('staff_audit').where({ target_id: made.id, action: 'payout_instruction.verified' }))).to.equal(0);
        }
      }
      expect(outcomes.size).to.be.greaterThan(0);
    });

    it('a release against a destination edit: never a queued disbursement to a destination changed after it was checked', async () => {
      const w = await dealWorld(client);
      const d = await activeDeal(client, w, [1_000_000]);
      const outcomes = new Set<string>();
      for (let round = 0; round < 8; round++) {
        const made = await createInstruction(w.workspace, w.cpId, { verified: true });
        // A release as the release will do it: the workspace row, the instructions FOR SHARE, the gate, then the disbursement.
        const release = () =>
          db.transaction(async (t) => {
            await lockWorkspace(t, w.workspace.id);
            const [r] = await instructionsForRelease(t, w.workspace.id, [made.id]);
            const check = r ? await checkDestination(t, r.id, false) : { ok: false as const, reason: 'not_found' };
            if (!check.ok) return false;
            const now = clock.now();
            await t('disbursements').insert({
              workspace_id: w.workspace.id,
              deal_id: d.deal.id,
              milestone_id: d.milestones[0]!.id,
              payout_instruction_id: made.id,
              instruction_label: made.label,
              destination_bank_name: made.bank_name,
              destination_account_holder: made.account_holder,
              destination_account_last4: made.account_number_last4,
              amount: 1_000,
              currency: 'IDR',
              is_test: true,
              release_no: round + 1,
              split_no: 1,
              status: 'queued',
              created_at: now,
              updated_at: now,
            });
            return true;
          });
        const edit = () => client.patch(`${P}/${made.id}`).set(w.h.finance).send({ account_number: `88888${round}0000` });
        let released: boolean;
        let edited: Awaited<ReturnType<typeof edit>>;
        if (round % 2 === 0) [released, edited] = await Promise.all([release(), edit()]);
        else [edited, released] = await Promise.all([edit(), release()]);
        const queued = await db('disbursements').where({ payout_instruction_id: made.id, status: 'queued' }).select('*');
        if (released) {
          outcomes.add('release-first');
          expect(edited.status, JSON.stringify(edited.body)).to.equal(409);
          expect(queued).to.have.length(1);
          expect(decryptSecret((await row(made.id)).account_number_sealed)).to.equal(made.accountNumber);
        } else {
          outcomes.add('edit-first');
          expect(edited.status).to.equal(200);
          expect(queued).to.have.length(0);
        }
      }
      expect(outcomes.size).to.be.greaterThan(0);
    });
  });

  describe('factory', () => {
    it('createInstruction makes a pending or a verified (signed) instruction through the services', async () => {
      const ws = await createWorkspace();
      const [cp] = await db('counterparties')
        .insert({ workspace_id: ws.workspace.id, name: 'PT A', country_code: 'ID', relationship: 'seller', created_at: clock.now(), updated_at: clock.now() })
        .returning<{ id: string }[]>('id');
      const pending = await createInstruction(ws.workspace, cp!.id);
      expect(pending.status).to.equal('pending_verification');
      const verified = await createInstruction(ws.workspace, cp!.id, { verified: true, accountNumber: '123456789' });
      expect(verified.status).to.equal('verified');
      expect(verified.account_number_last4).to.equal('6789');
      expect(await checkDestination(db, verified.id, false)).to.have.property('ok', true);
    });
  });
});
