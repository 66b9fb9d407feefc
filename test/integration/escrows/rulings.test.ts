/**
 * Staff rulings on disputes and the staff cancel (decisions D2 and D10, consumer spec
 * section 3 "disputed -> released, refunded, or hold" and "pending_payment -> cancelled by
 * admin"; section 6 event names; section 8 idempotency). Every money test ends with the
 * ledger check.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { newAgent } from '../../helpers/auth-account-support.js';
import { runJobs } from '../../helpers/jobs.js';
import { createUser, signIn } from '../../factories/users.js';
import { createEscrow } from '../../factories/escrows.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import type { EscrowStatus } from '../../../shared/escrows/states.js';
import type { UserRow } from '../../../shared/users/repo.js';

type Client = ReturnType<typeof api>;

const T0 = new Date('2026-12-01T03:00:00.000Z');
const HOUR = 3600_000;

function expectError(res: Response, status: number, code: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.success).to.equal(false);
  expect(res.body.error.code).to.equal(code);
}

function auth(key: string): [string, string] {
  return ['Authorization', `Bearer ${key}`];
}

/** One live personal key per user (the schema allows one): issued once per test, then reused. */
const keys = new Map<string, string>();
async function keyOf(userId: string): Promise<string> {
  const known = keys.get(userId);
  if (known) return known;
  const key = await issueKey(userId);
  keys.set(userId, key);
  return key;
}

async function countRows(table: string, where: Record<string, unknown> = {}): Promise<number> {
  const row = (await db(table).where(where).count<{ count: string }[]>('* as count'))[0];
  return Number(row?.count ?? 0);
}

interface Money {
  buyer: number;
  seller: number;
  fees: number;
  held: number;
}

/** Balances as the ledger holds them, checked against the users.balance projection. */
async function money(escrowId: string, buyer: UserRow, seller: UserRow): Promise<Money> {
  const projected = async (id: string) => Number(((await db('users').where({ id }).first()) as { balance: string | number }).balance);
  const m = {
    buyer: Number(await balanceOf(db, { userId: buyer.id })),
    seller: Number(await balanceOf(db, { userId: seller.id })),
    fees: Number(await balanceOf(db, { system: 'platformFees' })),
    held: Number(await balanceOf(db, { escrowId })),
  };
  expect(await projected(buyer.id)).to.equal(m.buyer);
  expect(await projected(seller.id)).to.equal(m.seller);
  return m;
}

interface EventRow {
  event: string;
  actor_id: string | null;
  actor_role: string;
  data: Record<string, unknown>;
}

async function events(escrowId: string, names: string[]): Promise<EventRow[]> {
  return await db('escrow_events').where({ escrow_id: escrowId }).whereIn('event', names).orderBy('id').select<EventRow[]>('event', 'actor_id', 'actor_role', 'data');
}

interface AuditRow {
  actor_id: string;
  action: string;
  target_type: string;
  target_id: string;
  note: string | null;
  details: Record<string, unknown>;
}

async function audit(): Promise<AuditRow[]> {
  return await db('staff_audit').orderBy('id').select<AuditRow[]>('actor_id', 'action', 'target_type', 'target_id', 'note', 'details');
}

interface DisputedCase {
  escrowId: string;
  disputeId: string;
  buyer: UserRow;
  seller: UserRow;
  admin: UserRow;
  adminKey: string;
  amount: number;
}

/** A paid escrow disputed by its buyer, and an admin with a personal key. */
async function disputedCase(amount: number): Promise<DisputedCase> {
  const made = await createEscrow({ status: 'disputed', amount });
  const d = (await db('disputes').where({ escrow_id: made.escrow.id }).first()) as { id: string };
  const admin = (await createUser({ role: 'admin' })).user;
  return { escrowId: made.escrow.id, disputeId: d.id, buyer: made.buyer, seller: made.seller, admin, adminKey: await keyOf(admin.id), amount };
}

describe('staff rulings and staff cancel (D10)', () => {
  let client: Client;

  before(() => {
    client = api();
  });

  beforeEach(() => {
    clock.set(T0);
    keys.clear();
  });

  function resolve(key: string, disputeId: string, payload: object, idempotencyKey?: string): Promise<Response> {
    const req = client.post(`/v1/admin/disputes/${disputeId}/resolve`).set(...auth(key));
    if (idempotencyKey) void req.set('Idempotency-Key', idempotencyKey);
    return req.send(payload);
  }

  describe('POST /v1/admin/disputes/:id/resolve', () => {
    it('release: the escrow is released, the seller gets amount - fee, the platform the fee; the ruling is recorded', async () => {
      const c = await disputedCase(1_000_000);
      expect(await money(c.escrowId, c.buyer, c.seller)).to.deep.equal({ buyer: 0, seller: 0, fees: 0, held: 1_000_000 });
      clock.advance(HOUR);
      const at = clock.now().toISOString();
      const res = await resolve(c.adminKey, c.disputeId, { outcome: 'release', note: 'Resi valid, barang diterima pembeli' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.data.dispute).to.deep.include({
        id: c.disputeId,
        escrow_id: c.escrowId,
        initiator_id: c.buyer.id,
        status: 'resolved',
        resolution_note: 'Resi valid, barang diterima pembeli',
        resolved_by: c.admin.id,
        resolved_at: at,
        updated_at: at,
        escrow_status: 'released',
        amount: '1000000.00',
      });
      const row = (await db('disputes').where({ id: c.disputeId }).first()) as { status: string; outcome: string };
      expect({ status: row.status, outcome: row.outcome }).to.deep.equal({ status: 'resolved', outcome: 'release' });

      const escrow = (await db('escrows').where({ id: c.escrowId }).first()) as { status: string; fee_amount: number; released_at: Date };
      expect(escrow.status).to.equal('released');
      expect(Number(escrow.fee_amount)).to.equal(10_000);
      expect(escrow.released_at.toISOString()).to.equal(at);
      expect(await money(c.escrowId, c.buyer, c.seller)).to.deep.equal({ buyer: 0, seller: 990_000, fees: 10_000, held: 0 });
      const seen = await client.get(`/api/escrows/${c.escrowId}`).set(...auth(await keyOf(c.seller.id)));
      expect(seen.body.data).to.deep.include({ status: 'released', platform_fee: 10_000, seller_amount: 990_000 });

      expect(await events(c.escrowId, ['escrow.released', 'escrow.refunded', 'dispute.resolved'])).to.deep.equal([
        {
          event: 'escrow.released',
          actor_id: c.admin.id,
          actor_role: 'admin',
          data: { escrow_amount: 1_000_000, platform_fee: 10_000, seller_amount: 990_000, by: 'rulingRelease' },
        },
        // Spec section 6: dispute.resolved carries the outcome as released, refunded or hold.
        { event: 'dispute.resolved', actor_id: c.admin.id, actor_role: 'admin', data: { dispute_id: c.disputeId, outcome: 'released' } },
      ]);
      expect(await audit()).to.deep.equal([
        {
          actor_id: c.admin.id,
          action: 'dispute.release',
          target_type: 'dispute',
          target_id: c.disputeId,
          note: 'Resi valid, barang diterima pembeli',
          details: { escrow_id: c.escrowId },
        },
      ]);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('with an Idempotency-Key the ruling writes its events and notices in the same order as without one (writes held for COMMIT go before any later statement)', async () => {
      const trail = async (escrowId: string) => ({
        events: (await db('escrow_events').where({ escrow_id: escrowId }).orderBy('id').pluck('event')) as string[],
        outbox: (await db('outbox').whereRaw("payload->>'escrow_id' = ?", [escrowId]).orderBy('id').select<{ job: string; payload: { type?: string; user_id?: string } }[]>('job', 'payload')).map(
          (r) => `${r.job}:${r.payload.type ?? ''}`,
        ),
      });
      for (const outcome of ['release', 'refund'] as const) {
        const plain = await disputedCase(200_000);
        const keyed = await disputedCase(200_000);
        const before = { plain: await trail(plain.escrowId), keyed: await trail(keyed.escrowId) };
        expect((await resolve(plain.adminKey, plain.disputeId, { outcome, note: 'Putusan staf' })).status).to.equal(200);
        expect((await resolve(keyed.adminKey, keyed.disputeId, { outcome, note: 'Putusan staf' }, randomUUID())).status).to.equal(200);
        const after = { plain: await trail(plain.escrowId), keyed: await trail(keyed.escrowId) };
        const added = (a: string[], b: string[]) => a.slice(b.length);
        const plainAdded = { events: added(after.plain.events, before.plain.events), outbox: added(after.plain.outbox, before.plain.outbox) };
        const keyedAdded = { events: added(after.keyed.events, before.keyed.events), outbox: added(after.keyed.outbox, before.keyed.outbox) };
        expect(plainAdded.events, outcome).to.deep.equal([outcome === 'release' ? 'escrow.released' : 'escrow.refunded', 'dispute.resolved']);
        expect(keyedAdded, outcome).to.deep.equal(plainAdded);
      }
    });

    it('refund: the escrow is refunded, the buyer balance gets the whole amount, no fee is taken', async () => {
      const c = await disputedCase(150_000);
      const res = await resolve(c.adminKey, c.disputeId, { outcome: 'refund', note: 'Penjual tidak mengirim barang' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.dispute).to.deep.include({
        status: 'resolved',
        resolved_by: c.admin.id,
        resolved_at: T0.toISOString(),
        resolution_note: 'Penjual tidak mengirim barang',
        escrow_status: 'refunded',
      });
      expect(((await db('disputes').where({ id: c.disputeId }).first()) as { outcome: string }).outcome).to.equal('refund');
      const escrow = (await db('escrows').where({ id: c.escrowId }).first()) as { status: string; refunded_at: Date; fee_amount: number | null };
      expect(escrow.status).to.equal('refunded');
      expect(escrow.refunded_at.toISOString()).to.equal(T0.toISOString());
      expect(escrow.fee_amount).to.equal(null);
      expect(await money(c.escrowId, c.buyer, c.seller)).to.deep.equal({ buyer: 150_000, seller: 0, fees: 0, held: 0 });
      expect(await countRows('journal_entries', { posting_key: `escrow-release:${c.escrowId}` })).to.equal(0);
      expect(await events(c.escrowId, ['escrow.released', 'escrow.refunded', 'dispute.resolved'])).to.deep.equal([
        { event: 'escrow.refunded', actor_id: c.admin.id, actor_role: 'admin', data: { amount: 150_000 } },
        { event: 'dispute.resolved', actor_id: c.admin.id, actor_role: 'admin', data: { dispute_id: c.disputeId, outcome: 'refunded' } },
      ]);
      expect((await audit()).map((a) => [a.action, a.target_id, a.note])).to.deep.equal([['dispute.refund', c.disputeId, 'Penjual tidak mengirim barang']]);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('hold keeps the escrow disputed and the dispute on_hold; a later refund by another admin still works', async () => {
      const c = await disputedCase(300_000);
      const hold = await resolve(c.adminKey, c.disputeId, { outcome: 'hold', note: 'Menunggu bukti kurir' });
      expect(hold.status, JSON.stringify(hold.body)).to.equal(200);
      expect(hold.body.data.dispute).to.deep.include({
        status: 'on_hold',
        resolved_by: c.admin.id,
        resolved_at: T0.toISOString(),
        resolution_note: 'Menunggu bukti kurir',
        escrow_status: 'disputed',
      });
      expect(((await db('disputes').where({ id: c.disputeId }).first()) as { outcome: string }).outcome).to.equal('hold');
      expect(((await db('escrows').where({ id: c.escrowId }).first()) as { status: string }).status).to.equal('disputed');
      expect(await money(c.escrowId, c.buyer, c.seller)).to.deep.equal({ buyer: 0, seller: 0, fees: 0, held: 300_000 });
      expect(await checkLedger(db)).to.deep.equal([]);

      const second = (await createUser({ role: 'admin' })).user;
      clock.advance(24 * HOUR);
      const refund = await resolve(await keyOf(second.id), c.disputeId, { outcome: 'refund', note: 'Kurir konfirmasi hilang' });
      expect(refund.status, JSON.stringify(refund.body)).to.equal(200);
      expect(refund.body.data.dispute).to.deep.include({
        status: 'resolved',
        resolved_by: second.id,
        resolved_at: new Date(T0.getTime() + 24 * HOUR).toISOString(),
        resolution_note: 'Kurir konfirmasi hilang',
        escrow_status: 'refunded',
      });
      expect(await money(c.escrowId, c.buyer, c.seller)).to.deep.equal({ buyer: 300_000, seller: 0, fees: 0, held: 0 });
      expect((await events(c.escrowId, ['dispute.resolved'])).map((e) => [e.actor_id, e.data.outcome])).to.deep.equal([
        [c.admin.id, 'hold'],
        [second.id, 'refunded'],
      ]);
      expect((await audit()).map((a) => [a.actor_id, a.action])).to.deep.equal([
        [c.admin.id, 'dispute.hold'],
        [second.id, 'dispute.refund'],
      ]);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a resolved dispute cannot be ruled again: 409 INVALID_STATE, no money moves twice', async () => {
      const c = await disputedCase(200_000);
      expect((await resolve(c.adminKey, c.disputeId, { outcome: 'release' })).status).to.equal(200);
      const after = await money(c.escrowId, c.buyer, c.seller);
      expect(after).to.deep.equal({ buyer: 0, seller: 198_000, fees: 2_000, held: 0 });
      for (const outcome of ['release', 'refund', 'hold']) {
        const res = await resolve(c.adminKey, c.disputeId, { outcome });
        expectError(res, 409, 'INVALID_STATE');
        expect(res.body.error.status).to.equal('resolved');
      }
      expect(await money(c.escrowId, c.buyer, c.seller)).to.deep.equal(after);
      expect(await countRows('staff_audit')).to.equal(1);
      expect(await countRows('escrow_events', { escrow_id: c.escrowId, event: 'dispute.resolved' })).to.equal(1);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('validates the body: unknown or missing outcome and a note over 2000 characters answer 400 INVALID_BODY', async () => {
      const c = await disputedCase(150_000);
      for (const payload of [{ outcome: 'split' }, {}, { outcome: 'release', note: 'n'.repeat(2001) }]) {
        expectError(await resolve(c.adminKey, c.disputeId, payload), 400, 'INVALID_BODY');
      }
      expect(((await db('disputes').where({ id: c.disputeId }).first()) as { status: string }).status).to.equal('open');
      expect(await countRows('staff_audit')).to.equal(0);
      const longest = 'n'.repeat(2000);
      const ok = await resolve(c.adminKey, c.disputeId, { outcome: 'hold', note: longest });
      expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).to.equal(200);
      expect(ok.body.data.dispute.resolution_note).to.equal(longest);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('only staff rule: the parties and other users get 403 FORBIDDEN, no credentials 401', async () => {
      const c = await disputedCase(150_000);
      const stranger = (await createUser()).user;
      for (const user of [c.buyer, c.seller, stranger]) {
        expectError(await resolve(await keyOf(user.id), c.disputeId, { outcome: 'release' }), 403, 'FORBIDDEN');
      }
      expectError(await client.post(`/v1/admin/disputes/${c.disputeId}/resolve`).send({ outcome: 'release' }), 401, 'UNAUTHORIZED');
      expect(((await db('escrows').where({ id: c.escrowId }).first()) as { status: string }).status).to.equal('disputed');
      expect(await money(c.escrowId, c.buyer, c.seller)).to.deep.equal({ buyer: 0, seller: 0, fees: 0, held: 150_000 });
      expect(await countRows('staff_audit')).to.equal(0);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('an unknown or malformed dispute id answers 404 NOT_FOUND', async () => {
      const admin = (await createUser({ role: 'admin' })).user;
      const key = await keyOf(admin.id);
      expectError(await resolve(key, randomUUID(), { outcome: 'release' }), 404, 'NOT_FOUND');
      expectError(await resolve(key, 'not-a-uuid', { outcome: 'release' }), 404, 'NOT_FOUND');
      expect(await countRows('staff_audit')).to.equal(0);
    });

    it('an admin session rules too (with its CSRF token; without it 403 CSRF_FAILED)', async () => {
      const c = await disputedCase(150_000);
      const { user: admin, password } = await createUser({ role: 'admin' });
      const agent = newAgent();
      const csrf = await signIn(agent, admin.email, password);
      expectError(await agent.post(`/v1/admin/disputes/${c.disputeId}/resolve`).send({ outcome: 'refund' }), 403, 'CSRF_FAILED');
      const res = await agent.post(`/v1/admin/disputes/${c.disputeId}/resolve`).set('X-CSRF-Token', csrf).send({ outcome: 'refund' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.dispute).to.deep.include({ status: 'resolved', resolved_by: admin.id, resolution_note: null });
      expect(await money(c.escrowId, c.buyer, c.seller)).to.deep.equal({ buyer: 150_000, seller: 0, fees: 0, held: 0 });
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('an idempotent replay answers the same ruling with Idempotent-Replay and posts once', async () => {
      const c = await disputedCase(1_000_000);
      const key = randomUUID();
      const payload = { outcome: 'release', note: 'Dilepas ke penjual' };
      const first = await resolve(c.adminKey, c.disputeId, payload, key);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.headers['idempotent-replay']).to.equal(undefined);
      clock.advance(HOUR);
      const replay = await resolve(c.adminKey, c.disputeId, payload, key);
      expect(replay.status, JSON.stringify(replay.body)).to.equal(200);
      expect(replay.headers['idempotent-replay']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
      // The same key with another body is refused; without a key the ruling is refused as resolved.
      expectError(await resolve(c.adminKey, c.disputeId, { outcome: 'refund' }, key), 422, 'IDEMPOTENCY_KEY_CONFLICT');
      expectError(await resolve(c.adminKey, c.disputeId, payload), 409, 'INVALID_STATE');

      expect(await money(c.escrowId, c.buyer, c.seller)).to.deep.equal({ buyer: 0, seller: 990_000, fees: 10_000, held: 0 });
      expect(await countRows('journal_entries', { posting_key: `escrow-release:${c.escrowId}` })).to.equal(1);
      expect(await countRows('staff_audit')).to.equal(1);
      expect(await countRows('escrow_events', { escrow_id: c.escrowId, event: 'dispute.resolved' })).to.equal(1);
      expect(await countRows('escrow_events', { escrow_id: c.escrowId, event: 'escrow.released' })).to.equal(1);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a ruling notifies both parties once (through the outbox)', async () => {
      const c = await disputedCase(150_000);
      await runJobs();
      await db('notifications').del();
      expect((await resolve(c.adminKey, c.disputeId, { outcome: 'refund' })).status).to.equal(200);
      const ran = await runJobs();
      expect(ran.filter((j) => j.error)).to.deep.equal([]);
      const ruled = await db('notifications').where({ type: 'dispute_resolved' }).select<{ user_id: string }[]>('user_id');
      expect(ruled.map((n) => n.user_id).sort()).to.deep.equal([c.buyer.id, c.seller.id].sort());
    });
  });

  describe('POST /v1/admin/escrows/:id/cancel', () => {
    async function escrowWithAdmin(status: EscrowStatus) {
      const made = await createEscrow({ status, amount: 150_000 });
      const admin = (await createUser({ role: 'admin' })).user;
      return { ...made, admin, adminKey: await keyOf(admin.id) };
    }

    function staffCancel(key: string, id: string, payload: object): Promise<Response> {
      return client.post(`/v1/admin/escrows/${id}/cancel`).set(...auth(key)).send(payload);
    }

    it('cancels a pending_payment escrow with cancel_reason staff_cancelled; recorded and both parties notified', async () => {
      const m = await escrowWithAdmin('pending_payment');
      clock.advance(HOUR);
      const res = await staffCancel(m.adminKey, m.escrow.id, { reason: 'Penipuan terdeteksi' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.escrow).to.deep.include({
        id: m.escrow.id,
        status: 'cancelled',
        cancel_reason: 'staff_cancelled',
        cancelled_at: new Date(T0.getTime() + HOUR).toISOString(),
      });
      const row = (await db('escrows').where({ id: m.escrow.id }).first()) as { status: string; cancel_reason: string };
      expect({ status: row.status, cancel_reason: row.cancel_reason }).to.deep.equal({ status: 'cancelled', cancel_reason: 'staff_cancelled' });
      expect(await events(m.escrow.id, ['escrow.cancelled'])).to.deep.equal([
        { event: 'escrow.cancelled', actor_id: m.admin.id, actor_role: 'admin', data: { reason: 'staff_cancelled', note: 'Penipuan terdeteksi' } },
      ]);
      expect(await audit()).to.deep.equal([
        { actor_id: m.admin.id, action: 'escrow.cancel', target_type: 'escrow', target_id: m.escrow.id, note: 'Penipuan terdeteksi', details: {} },
      ]);
      const ran = await runJobs();
      expect(ran.filter((j) => j.error)).to.deep.equal([]);
      const notes = await db('notifications').where({ type: 'escrow_cancelled' }).select<{ user_id: string }[]>('user_id');
      expect(notes.map((n) => n.user_id).sort()).to.deep.equal([m.buyer.id, m.seller.id].sort());
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('needs a reason (400 MISSING_FIELDS) of at most 2000 characters (400 REASON_TOO_LONG)', async () => {
      const m = await escrowWithAdmin('pending_payment');
      for (const payload of [{}, { reason: '' }, { reason: '   ' }]) {
        expectError(await staffCancel(m.adminKey, m.escrow.id, payload), 400, 'MISSING_FIELDS');
      }
      expectError(await staffCancel(m.adminKey, m.escrow.id, { reason: 'r'.repeat(2001) }), 400, 'REASON_TOO_LONG');
      expect(((await db('escrows').where({ id: m.escrow.id }).first()) as { status: string }).status).to.equal('pending_payment');
      expect(await countRows('staff_audit')).to.equal(0);
      const ok = await staffCancel(m.adminKey, m.escrow.id, { reason: 'r'.repeat(2000) });
      expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).to.equal(200);
      expect(ok.body.data.escrow.status).to.equal('cancelled');
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    for (const status of ['paid', 'disputed', 'cancelled'] as const) {
      it(`refuses a ${status} escrow with 409 INVALID_STATE; held money stays put`, async () => {
        const m = await escrowWithAdmin(status);
        const held = Number(await balanceOf(db, { escrowId: m.escrow.id }));
        const res = await staffCancel(m.adminKey, m.escrow.id, { reason: 'Dibatalkan staf' });
        expectError(res, 409, 'INVALID_STATE');
        expect(res.body.error.status).to.equal(status);
        expect(((await db('escrows').where({ id: m.escrow.id }).first()) as { status: string }).status).to.equal(status);
        expect(Number(await balanceOf(db, { escrowId: m.escrow.id }))).to.equal(held);
        expect(held).to.equal(status === 'cancelled' ? 0 : 150_000);
        expect(await countRows('staff_audit')).to.equal(0);
        expect(await checkLedger(db)).to.deep.equal([]);
      });
    }

    it('only staff: a party gets 403 FORBIDDEN; an unknown escrow 404 ESCROW_NOT_FOUND', async () => {
      const m = await escrowWithAdmin('pending_payment');
      expectError(await staffCancel(await keyOf(m.buyer.id), m.escrow.id, { reason: 'saya staf' }), 403, 'FORBIDDEN');
      expectError(await staffCancel(m.adminKey, randomUUID(), { reason: 'tidak ada' }), 404, 'ESCROW_NOT_FOUND');
      expect(((await db('escrows').where({ id: m.escrow.id }).first()) as { status: string }).status).to.equal('pending_payment');
      expect(await countRows('staff_audit')).to.equal(0);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });
});
