/**
 * The escrow state machine over HTTP (consumer spec section 3): every status x every party
 * move, the wrong party, the release money split and its fee rule, tracking on send,
 * idempotent replay, the event log of a full lifecycle, and a double payment confirmation.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { countRows, issueKey } from '../../helpers/auth-signin-util.js';
import { createEscrow } from '../../factories/escrows.js';
import { createUser } from '../../factories/users.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { AppError } from '../../../shared/errors.js';
import { markPaid } from '../../../shared/escrows/service.js';
import type { EscrowRow } from '../../../shared/escrows/repo.js';
import { ESCROW_STATUSES, type EscrowStatus } from '../../../shared/escrows/states.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';

type Client = ReturnType<typeof api>;
type Move = 'send' | 'confirm-received' | 'release' | 'cancel' | 'extend';
type Party = 'buyer' | 'seller';

const DAY_MS = 24 * 3600_000;
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

interface MoveCase {
  move: Move;
  by: Party;
  /** status -> new status for the moves section 3 allows; every other status answers 409. */
  allowed: Partial<Record<EscrowStatus, EscrowStatus>>;
  event: string;
}

const MOVES: MoveCase[] = [
  { move: 'send', by: 'seller', allowed: { paid: 'sent' }, event: 'escrow.sent' },
  { move: 'confirm-received', by: 'buyer', allowed: { sent: 'received' }, event: 'escrow.received' },
  { move: 'release', by: 'buyer', allowed: { received: 'released' }, event: 'escrow.released' },
  { move: 'cancel', by: 'buyer', allowed: { pending_payment: 'cancelled' }, event: 'escrow.cancelled' },
  { move: 'cancel', by: 'seller', allowed: { pending_payment: 'cancelled' }, event: 'escrow.cancelled' },
  // Extend moves the auto-release time, not the status.
  { move: 'extend', by: 'buyer', allowed: { sent: 'sent', received: 'received' }, event: 'escrow.extended' },
];

interface Snapshot {
  row: EscrowRow;
  events: number;
  entries: number;
  lines: number;
  outbox: number;
}

async function snapshot(id: string): Promise<Snapshot> {
  return {
    row: (await db('escrows').where({ id }).first()) as EscrowRow,
    events: await countRows('escrow_events', { escrow_id: id }),
    entries: await countRows('journal_entries'),
    lines: await countRows('journal_lines'),
    outbox: await countRows('outbox'),
  };
}

async function eventNames(id: string): Promise<string[]> {
  const rows = (await db('escrow_events').select('event').where({ escrow_id: id }).orderBy('id')) as { event: string }[];
  return rows.map((r) => r.event);
}

async function userBalance(id: string): Promise<number> {
  const row = (await db('users').select('balance').where({ id }).first()) as { balance: number };
  return Number(row.balance);
}

async function setSetting(key: string, value: unknown): Promise<void> {
  await db('settings').insert({ key, value: JSON.stringify(value), updated_at: clock.now() });
}

describe('escrow transitions', () => {
  let client: Client;
  before(() => {
    client = api();
  });

  describe('every status x every party move (section 3)', () => {
    for (const m of MOVES) {
      for (const status of ESCROW_STATUSES) {
        const to = m.allowed[status];
        const title = to
          ? `${m.by} ${m.move} on ${status} -> 200 ${to}`
          : `${m.by} ${m.move} on ${status} -> 409 INVALID_STATE, nothing changed`;
        it(title, async () => {
          const { escrow, buyer, seller } = await createEscrow({ status, amount: 150_000 });
          const key = await issueKey(m.by === 'buyer' ? buyer.id : seller.id);
          const before = await snapshot(escrow.id);
          expect(before.row.status).to.equal(status);
          const res = await client.post(`/api/escrows/${escrow.id}/${m.move}`).set(bearer(key)).send({});
          const after = await snapshot(escrow.id);
          if (!to) {
            expect(res.status, JSON.stringify(res.body)).to.equal(409);
            expect(res.body.success).to.equal(false);
            expect(res.body.error.code).to.equal('INVALID_STATE');
            expect(res.body.error.status).to.equal(status);
            expect(after).to.deep.equal(before);
            return;
          }
          expect(res.status, JSON.stringify(res.body)).to.equal(200);
          expect(res.body.data.id).to.equal(escrow.id);
          expect(res.body.data.status).to.equal(to);
          expect(after.row.status).to.equal(to);
          expect(after.events).to.equal(before.events + 1);
          expect((await eventNames(escrow.id)).at(-1)).to.equal(m.event);
          // Only release moves money (one journal entry); nothing else posts.
          expect(after.entries).to.equal(before.entries + (m.move === 'release' ? 1 : 0));
          if (m.move === 'cancel') {
            expect(after.row.cancel_reason).to.equal(`${m.by}_cancelled`);
            expect(res.body.data.cancel_reason).to.equal(`${m.by}_cancelled`);
          }
          if (m.move === 'extend') {
            expect(after.row.extension_count).to.equal(1);
            expect(after.row.auto_release_at!.getTime()).to.equal(before.row.auto_release_at!.getTime() + 7 * DAY_MS);
            expect(after.row.auto_release_at!.getTime()).to.equal(after.row.sent_at!.getTime() + 21 * DAY_MS);
          }
          if (m.move === 'send') {
            expect(after.row.auto_release_at!.getTime()).to.equal(after.row.sent_at!.getTime() + 14 * DAY_MS);
            expect(res.body.data).to.not.have.property('tracking');
          }
          expect(await checkLedger(db)).to.deep.equal([]);
        });
      }
    }
  });

  describe('the wrong party', () => {
    const cases: { move: Move; status: EscrowStatus; by: Party; code: string }[] = [
      { move: 'send', status: 'paid', by: 'buyer', code: 'NOT_SELLER' },
      { move: 'confirm-received', status: 'sent', by: 'seller', code: 'NOT_BUYER' },
      { move: 'release', status: 'received', by: 'seller', code: 'NOT_BUYER' },
      { move: 'extend', status: 'sent', by: 'seller', code: 'NOT_BUYER' },
      { move: 'extend', status: 'received', by: 'seller', code: 'NOT_BUYER' },
    ];
    for (const c of cases) {
      it(`${c.by} ${c.move} on ${c.status} -> 403 ${c.code}, nothing changed`, async () => {
        const { escrow, buyer, seller } = await createEscrow({ status: c.status });
        const key = await issueKey(c.by === 'buyer' ? buyer.id : seller.id);
        const before = await snapshot(escrow.id);
        const res = await client.post(`/api/escrows/${escrow.id}/${c.move}`).set(bearer(key)).send({});
        expect(res.status, JSON.stringify(res.body)).to.equal(403);
        expect(res.body.error.code).to.equal(c.code);
        expect(await snapshot(escrow.id)).to.deep.equal(before);
      });
    }
  });

  describe('release moves the money: seller gets amount - fee, the platform the fee', () => {
    async function releaseAndCheck(amount: number, fee: number): Promise<void> {
      const { escrow, buyer, seller } = await createEscrow({ status: 'received', amount });
      const key = await issueKey(buyer.id);
      expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(amount);
      const entriesBefore = await countRows('journal_entries');
      const res = await client.post(`/api/escrows/${escrow.id}/release`).set(bearer(key)).send({});
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.status).to.equal('released');
      expect(res.body.data.amount).to.equal(String(amount));
      expect(res.body.data.platform_fee).to.equal(fee);
      expect(res.body.data.seller_amount).to.equal(amount - fee);
      expect(res.body.data.released_at).to.be.a('string');
      expect(await countRows('journal_entries')).to.equal(entriesBefore + 1);
      expect(await countRows('journal_entries', { kind: 'escrow_release', ref_id: escrow.id })).to.equal(1);
      expect(await balanceOf(db, { userId: seller.id })).to.equal(amount - fee);
      expect(await userBalance(seller.id)).to.equal(amount - fee);
      expect(await balanceOf(db, { system: 'platformFees' })).to.equal(fee);
      expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(0);
      expect(await balanceOf(db, { userId: buyer.id })).to.equal(0);
      expect(await userBalance(buyer.id)).to.equal(0);
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-amount);
      const row = (await db('escrows').where({ id: escrow.id }).first()) as EscrowRow;
      expect(row.fee_amount).to.equal(fee);
      const ev = (await db('escrow_events').where({ escrow_id: escrow.id, event: 'escrow.released' }).first()) as { data: unknown; actor_role: string };
      expect(ev.actor_role).to.equal('buyer');
      expect(ev.data).to.deep.equal({ escrow_amount: amount, platform_fee: fee, seller_amount: amount - fee, by: 'release' });
      expect(await checkLedger(db)).to.deep.equal([]);
    }

    const fallback: [number, number][] = [
      [150_000, 2_000],
      [10_000, 2_000],
      [200_000, 2_000],
      [200_100, 2_001],
      [1_000_000, 10_000],
      [500_000_000, 5_000_000],
    ];
    for (const [amount, fee] of fallback) {
      it(`fallback rule (no setting): ${amount} -> fee ${fee}`, async () => {
        await releaseAndCheck(amount, fee);
      });
    }

    it('the escrow_fee setting {percent_bp: 250, min_idr: 5000} is followed (floor)', async () => {
      await setSetting('escrow_fee', { percent_bp: 250, min_idr: 5000 });
      await releaseAndCheck(150_000, 5_000);
    });

    it('the escrow_fee setting {percent_bp: 250, min_idr: 5000} is followed (percentage)', async () => {
      await setSetting('escrow_fee', { percent_bp: 250, min_idr: 5000 });
      await releaseAndCheck(1_000_000, 25_000);
    });

    it('the escrow_fee setting with max_idr caps the fee', async () => {
      await setSetting('escrow_fee', { percent_bp: 250, min_idr: 5000, max_idr: 20_000 });
      await releaseAndCheck(1_000_000, 20_000);
    });

    it('the fee is read at release, not at creation', async () => {
      const { escrow, buyer, seller } = await createEscrow({ status: 'received', amount: 1_000_000 });
      await setSetting('escrow_fee', { percent_bp: 300, min_idr: 0 });
      const res = await client.post(`/api/escrows/${escrow.id}/release`).set(bearer(await issueKey(buyer.id))).send({});
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.platform_fee).to.equal(30_000);
      expect(await balanceOf(db, { userId: seller.id })).to.equal(970_000);
      expect(await balanceOf(db, { system: 'platformFees' })).to.equal(30_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    const invalid: [string, unknown][] = [
      ['percent_bp above 10000', { percent_bp: 20_000, min_idr: 5000 }],
      ['negative min_idr', { percent_bp: 250, min_idr: -5 }],
      ['non-integer percent_bp', { percent_bp: 2.5, min_idr: 5000 }],
      ['max_idr below min_idr', { percent_bp: 250, min_idr: 5000, max_idr: 100 }],
      ['a string', 'dua setengah persen'],
      ['a number', 250],
    ];
    for (const [name, value] of invalid) {
      it(`an invalid escrow_fee setting (${name}) falls back to 1% floor 2,000`, async () => {
        await setSetting('escrow_fee', value);
        await releaseAndCheck(1_000_000, 10_000);
      });
    }

    it('an invalid setting falls back on the floor too (150,000 -> 2,000)', async () => {
      await setSetting('escrow_fee', { percent_bp: -100, min_idr: 5000 });
      await releaseAndCheck(150_000, 2_000);
    });
  });

  describe('send with tracking', () => {
    async function paidEscrow() {
      const made = await createEscrow({ status: 'paid' });
      return { ...made, key: await issueKey(made.seller.id) };
    }

    it('courier + tracking_number -> tracking {courier, courier_name, number, track_url}', async () => {
      const { escrow, key, buyer } = await paidEscrow();
      const res = await client.post(`/api/escrows/${escrow.id}/send`).set(bearer(key)).send({ courier: 'jne', tracking_number: 'JNE0012345' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.status).to.equal('sent');
      const tracking = {
        courier: 'jne',
        courier_name: 'JNE',
        number: 'JNE0012345',
        track_url: 'https://www.jne.co.id/tracking-package?awb=JNE0012345',
      };
      expect(res.body.data.tracking).to.deep.equal(tracking);
      const row = (await db('escrows').where({ id: escrow.id }).first()) as EscrowRow;
      expect([row.courier, row.tracking_number]).to.deep.equal(['jne', 'JNE0012345']);
      // The buyer reads the same tracking.
      const read = await client.get(`/api/escrows/${escrow.id}`).set(bearer(await issueKey(buyer.id)));
      expect(read.status).to.equal(200);
      expect(read.body.data.tracking).to.deep.equal(tracking);
    });

    it('another courier gets its own name and tracking page', async () => {
      const { escrow, key } = await paidEscrow();
      const res = await client.post(`/api/escrows/${escrow.id}/send`).set(bearer(key)).send({ courier: 'jnt', tracking_number: 'JT-00042' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.tracking).to.deep.equal({
        courier: 'jnt',
        courier_name: 'J&T Express',
        number: 'JT-00042',
        track_url: 'https://www.jet.co.id/track?awb=JT-00042',
      });
    });

    const incomplete: [string, Record<string, string>][] = [
      ['courier only', { courier: 'jne' }],
      ['tracking_number only', { tracking_number: 'JNE0012345' }],
      ['empty courier with a number', { courier: '', tracking_number: 'JNE0012345' }],
      ['a courier with an empty number', { courier: 'jne', tracking_number: '' }],
    ];
    for (const [name, body] of incomplete) {
      it(`${name} -> 400 TRACKING_INCOMPLETE, still paid`, async () => {
        const { escrow, key } = await paidEscrow();
        const before = await snapshot(escrow.id);
        const res = await client.post(`/api/escrows/${escrow.id}/send`).set(bearer(key)).send(body);
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.error.code).to.equal('TRACKING_INCOMPLETE');
        expect(await snapshot(escrow.id)).to.deep.equal(before);
      });
    }

    it('an unknown courier -> 400 INVALID_COURIER, still paid', async () => {
      const { escrow, key } = await paidEscrow();
      const before = await snapshot(escrow.id);
      const res = await client.post(`/api/escrows/${escrow.id}/send`).set(bearer(key)).send({ courier: 'fedex', tracking_number: 'FDX12345' });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_COURIER');
      expect(await snapshot(escrow.id)).to.deep.equal(before);
    });

    it('both left out ships without tracking', async () => {
      const { escrow, key } = await paidEscrow();
      const res = await client.post(`/api/escrows/${escrow.id}/send`).set(bearer(key)).send({});
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.status).to.equal('sent');
      expect(res.body.data).to.not.have.property('tracking');
      const row = (await db('escrows').where({ id: escrow.id }).first()) as EscrowRow;
      expect([row.courier, row.tracking_number]).to.deep.equal([null, null]);
    });
  });

  describe('idempotent release', () => {
    it('the same key replays the same answer with Idempotent-Replay: true and posts once', async () => {
      const { escrow, buyer, seller } = await createEscrow({ status: 'received', amount: 1_000_000 });
      const key = await issueKey(buyer.id);
      const idem = randomUUID();
      const first = await client.post(`/api/escrows/${escrow.id}/release`).set(bearer(key)).set('Idempotency-Key', idem).send({});
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.headers['idempotent-replay']).to.equal(undefined);
      expect(first.body.data.platform_fee).to.equal(10_000);
      clock.advance(60_000);
      const second = await client.post(`/api/escrows/${escrow.id}/release`).set(bearer(key)).set('Idempotency-Key', idem).send({});
      expect(second.status, JSON.stringify(second.body)).to.equal(200);
      expect(second.headers['idempotent-replay']).to.equal('true');
      expect(second.body).to.deep.equal(first.body);
      expect(await countRows('journal_entries', { kind: 'escrow_release', ref_id: escrow.id })).to.equal(1);
      expect(await countRows('escrow_events', { escrow_id: escrow.id, event: 'escrow.released' })).to.equal(1);
      expect(await balanceOf(db, { userId: seller.id })).to.equal(990_000);
      expect(await balanceOf(db, { system: 'platformFees' })).to.equal(10_000);
      expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(0);
      // A new key is a new request: the escrow is released already.
      const third = await client.post(`/api/escrows/${escrow.id}/release`).set(bearer(key)).set('Idempotency-Key', randomUUID()).send({});
      expect(third.status).to.equal(409);
      expect(third.body.error.code).to.equal('INVALID_STATE');
      expect(third.body.error.status).to.equal('released');
      expect(await countRows('journal_entries', { kind: 'escrow_release', ref_id: escrow.id })).to.equal(1);
      expect(await balanceOf(db, { userId: seller.id })).to.equal(990_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  describe('the event log', () => {
    it('a full lifecycle records the spec event names in order', async () => {
      const buyer = (await createUser()).user;
      const seller = (await createUser()).user;
      const bk = await issueKey(buyer.id);
      const sk = await issueKey(seller.id);
      const created = await client
        .post('/api/escrows')
        .set(bearer(bk))
        .send({ role: 'buyer', counterparty_username: seller.username, item_name: 'Gitar akustik', amount: 300_000 });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const id = created.body.data.id as string;
      await markPaid(undefined, id, { reference: 'pay-ref-1', provider: 'sandbox' });
      const steps: [string, string, Record<string, string>][] = [
        ['send', sk, { courier: 'sicepat', tracking_number: 'SCP123456' }],
        ['confirm-received', bk, {}],
        ['release', bk, {}],
      ];
      for (const [move, key, body] of steps) {
        clock.advance(1000);
        const res = await client.post(`/api/escrows/${id}/${move}`).set(bearer(key)).send(body);
        expect(res.status, `${move}: ${JSON.stringify(res.body)}`).to.equal(200);
      }
      const rows = (await db('escrow_events').select('event', 'actor_role', 'actor_id', 'data').where({ escrow_id: id }).orderBy('id')) as {
        event: string;
        actor_role: string;
        actor_id: string | null;
        data: Record<string, unknown>;
      }[];
      expect(rows.map((r) => r.event)).to.deep.equal(['escrow.created', 'payment.completed', 'escrow.sent', 'escrow.received', 'escrow.released']);
      expect(rows.map((r) => r.actor_role)).to.deep.equal(['buyer', 'system', 'seller', 'buyer', 'buyer']);
      expect(rows.map((r) => r.actor_id)).to.deep.equal([buyer.id, null, seller.id, buyer.id, buyer.id]);
      expect(rows[1]!.data).to.deep.equal({ reference: 'pay-ref-1', provider: 'sandbox', amount: 300_000, surcharge: 0 });
      expect(rows[2]!.data).to.include({ courier: 'sicepat', tracking_number: 'SCP123456' });
      expect(rows[4]!.data).to.deep.equal({ escrow_amount: 300_000, platform_fee: 3_000, seller_amount: 297_000, by: 'release' });
      expect(await balanceOf(db, { userId: seller.id })).to.equal(297_000);
      expect(await balanceOf(db, { system: 'platformFees' })).to.equal(3_000);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  describe('payment confirmation (markPaid)', () => {
    it('a second markPaid answers INVALID_STATE and the gateway clearing moves once', async () => {
      const { escrow } = await createEscrow({ amount: 250_000 });
      const paid = await markPaid(undefined, escrow.id, { reference: 'first' });
      expect(paid.status).to.equal('paid');
      let err: unknown;
      try {
        await markPaid(undefined, escrow.id, { reference: 'second' });
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(AppError);
      const appErr = err as AppError;
      expect([appErr.status, appErr.code]).to.deep.equal([409, 'INVALID_STATE']);
      expect(appErr.extras).to.deep.equal({ status: 'paid' });
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(-250_000);
      expect(await balanceOf(db, { escrowId: escrow.id })).to.equal(250_000);
      expect(await countRows('journal_entries', { kind: 'escrow_payment', ref_id: escrow.id })).to.equal(1);
      expect(await countRows('escrow_events', { escrow_id: escrow.id, event: 'payment.completed' })).to.equal(1);
      expect(await eventNames(escrow.id)).to.deep.equal(['escrow.created', 'payment.completed']);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('markPaid on a cancelled escrow answers INVALID_STATE and posts nothing', async () => {
      const { escrow } = await createEscrow({ status: 'cancelled' });
      let err: unknown;
      try {
        await markPaid(undefined, escrow.id, { reference: 'late' });
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).code).to.equal('INVALID_STATE');
      expect((err as AppError).extras).to.deep.equal({ status: 'cancelled' });
      expect(await countRows('journal_entries')).to.equal(0);
      expect(await balanceOf(db, { system: 'gatewayClearing' })).to.equal(0);
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });
});
