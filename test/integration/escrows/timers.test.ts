/**
 * Escrow timers (consumer spec section 3, decision D6): payment expiry, auto-release per
 * category (from sent and from received), extensions and their limits, the sweeper for
 * lost delayed jobs, re-run jobs, and the sandbox fast-forward. Time only moves through
 * the clock; a timer fires when its outbox row is due and `runJobs()` runs it.
 */
import { expect } from 'chai';
import type { Job } from 'bullmq';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { runJobs, type RanJob } from '../../helpers/jobs.js';
import { createEscrow } from '../../factories/escrows.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { redis } from '../../../shared/redis.js';
import * as escrows from '../../../shared/escrows/service.js';
import type { EscrowRow } from '../../../shared/escrows/repo.js';
import type { Category } from '../../../shared/escrows/states.js';
import { balanceOf, checkLedger } from '../../../shared/ledger/index.js';
import { getQueue, type JobData } from '../../../shared/queues.js';
import { buildRegistry } from '../../../workers/registry.js';

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DAY = 24 * HOUR;
const T0 = new Date('2026-12-01T03:00:00.000Z');

async function escrowRow(id: string): Promise<EscrowRow> {
  const e = (await db('escrows').where({ id }).first()) as EscrowRow | undefined;
  if (!e) throw new Error(`escrow ${id} is missing`);
  return e;
}

async function userBalance(userId: string): Promise<number> {
  const row = (await db('users').select('balance').where({ id: userId }).first()) as { balance: number };
  return row.balance;
}

interface Money {
  buyer: number;
  seller: number;
  platform: number;
  held: number;
  releases: number;
}

async function money(e: Pick<EscrowRow, 'id' | 'buyer_id' | 'seller_id'>): Promise<Money> {
  const releases = (await db('journal_entries').where({ kind: 'escrow_release', ref_type: 'escrow', ref_id: e.id }).count<{ n: number }[]>('* as n'))[0]!.n;
  return {
    buyer: await userBalance(e.buyer_id),
    seller: await userBalance(e.seller_id),
    platform: await balanceOf(db, { system: 'platformFees' }),
    held: await balanceOf(db, { escrowId: e.id }),
    releases: Number(releases),
  };
}

function ranNamed(ran: RanJob[], name: string, escrowId?: string): RanJob[] {
  return ran.filter((j) => j.name === name && (escrowId === undefined || j.data.escrow_id === escrowId));
}

async function notificationsOf(escrowId: string): Promise<{ user_id: string; type: string }[]> {
  return (await db('notifications')
    .select('user_id', 'type')
    .whereRaw(`metadata->>'escrow_id' = ?`, [escrowId])
    .orderBy(['type', 'user_id'])) as { user_id: string; type: string }[];
}

async function eventsOf(escrowId: string): Promise<{ event: string; actor_role: string; data: Record<string, unknown> }[]> {
  return (await db('escrow_events').select('event', 'actor_role', 'data').where({ escrow_id: escrowId }).orderBy('id')) as {
    event: string;
    actor_role: string;
    data: Record<string, unknown>;
  }[];
}

/** A job object good enough for a processor called directly (the processors read name and data). */
function fakeJob(name: string, data: JobData): Job<JobData> {
  return { id: undefined, name, data } as unknown as Job<JobData>;
}

const registry = buildRegistry();

function processor(name: string) {
  const p = registry.get(name);
  if (!p) throw new Error(`no processor for ${name}`);
  return p;
}

const WINDOWS: { category: Category; hours: number }[] = [
  { category: 'goods', hours: 14 * 24 },
  { category: 'service', hours: 3 * 24 },
  { category: 'digital', hours: 24 },
];

describe('escrow timers', () => {
  beforeEach(() => {
    clock.set(T0);
  });

  describe('payment expiry', () => {
    it('an unpaid escrow expires 24 hours after creation, not a second earlier, and both parties are told', async () => {
      const { escrow, buyer, seller } = await createEscrow();
      expect(escrow.expires_at.toISOString()).to.equal(new Date(T0.getTime() + DAY).toISOString());

      clock.advance(DAY - SECOND);
      let ran = await runJobs();
      expect(ranNamed(ran, 'escrows.expire')).to.deep.equal([]);
      expect((await escrowRow(escrow.id)).status).to.equal('pending_payment');
      // The sweeper agrees: nothing is due yet.
      expect(await escrows.sweepTimers()).to.deep.equal({ released: 0, expired: 0 });
      expect((await escrowRow(escrow.id)).status).to.equal('pending_payment');

      clock.advance(2 * SECOND);
      ran = await runJobs();
      const expiry = ranNamed(ran, 'escrows.expire', escrow.id);
      expect(expiry).to.have.length(1);
      expect(expiry[0]!.error).to.equal(undefined);
      expect(expiry[0]!.result).to.deep.equal({ expired: true });

      const e = await escrowRow(escrow.id);
      expect(e.status).to.equal('cancelled');
      expect(e.cancel_reason).to.equal('expired');
      expect(e.cancelled_at!.toISOString()).to.equal(clock.now().toISOString());
      const events = await eventsOf(escrow.id);
      expect(events.map((ev) => ev.event)).to.deep.equal(['escrow.created', 'escrow.cancelled']);
      expect(events[1]!.actor_role).to.equal('system');
      expect(events[1]!.data).to.deep.equal({ reason: 'expired' });

      // The notices were queued by the timer job: the next relay delivers them.
      await runJobs();
      const notes = (await notificationsOf(escrow.id)).filter((n) => n.type === 'escrow_expired');
      expect(notes.map((n) => n.user_id).sort()).to.deep.equal([buyer.id, seller.id].sort());

      const preview = await api().get(`/api/escrows/${escrow.id}/preview`);
      expect(preview.status).to.equal(410);
      expect(preview.body.error.code).to.equal('EXPIRED');
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it("a paid escrow's expiry job does nothing", async () => {
      const { escrow } = await createEscrow({ status: 'paid', amount: 1_000_000 });
      const before = await money(escrow);
      expect(before.held).to.equal(1_000_000);
      clock.advance(DAY + SECOND);
      const ran = await runJobs();
      const expiry = ranNamed(ran, 'escrows.expire', escrow.id);
      expect(expiry).to.have.length(1);
      expect(expiry[0]!.result).to.deep.equal({ expired: false });
      await runJobs();
      const e = await escrowRow(escrow.id);
      expect(e.status).to.equal('paid');
      expect(e.cancel_reason).to.equal(null);
      expect((await eventsOf(escrow.id)).map((ev) => ev.event)).to.deep.equal(['escrow.created', 'payment.completed']);
      expect((await notificationsOf(escrow.id)).filter((n) => n.type === 'escrow_expired')).to.deep.equal([]);
      expect(await money(escrow)).to.deep.equal(before);
      // Running the job again by hand changes nothing either.
      expect(await processor('escrows.expire')(fakeJob('escrows.expire', { escrow_id: escrow.id }))).to.deep.equal({ expired: false });
      expect((await escrowRow(escrow.id)).status).to.equal('paid');
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a cancelled escrow stays cancelled by its party when the expiry job runs later', async () => {
      const { escrow } = await createEscrow({ status: 'cancelled' });
      clock.advance(DAY + SECOND);
      const ran = await runJobs();
      expect(ranNamed(ran, 'escrows.expire', escrow.id)[0]!.result).to.deep.equal({ expired: false });
      const e = await escrowRow(escrow.id);
      expect(e.status).to.equal('cancelled');
      expect(e.cancel_reason).to.equal('buyer_cancelled');
    });
  });

  describe('auto-release', () => {
    for (const { category, hours } of WINDOWS) {
      it(`releases a sent ${category} escrow ${hours} hours after it was sent, not before`, async () => {
        const { escrow, buyer, seller } = await createEscrow({ status: 'paid', category, amount: 1_000_000 });
        clock.advance(5 * 60 * SECOND); // sent a little after payment
        const sentAt = clock.nowMs();
        const sent = await escrows.send(undefined, { userId: seller.id, role: 'user' }, escrow.id, {});
        expect(sent.auto_release_at!.toISOString()).to.equal(new Date(sentAt + hours * HOUR).toISOString());

        clock.advance(hours * HOUR - SECOND);
        let ran = await runJobs();
        expect(ranNamed(ran, 'escrows.auto-release')).to.deep.equal([]);
        expect((await escrowRow(escrow.id)).status).to.equal('sent');
        expect(await money(escrow)).to.deep.equal({ buyer: 0, seller: 0, platform: 0, held: 1_000_000, releases: 0 });

        clock.advance(2 * SECOND);
        ran = await runJobs();
        const jobs = ranNamed(ran, 'escrows.auto-release', escrow.id);
        expect(jobs).to.have.length(1);
        expect(jobs[0]!.error).to.equal(undefined);
        expect(jobs[0]!.result).to.deep.equal({ released: true });

        const e = await escrowRow(escrow.id);
        expect(e.status).to.equal('released');
        expect(e.released_at!.toISOString()).to.equal(clock.now().toISOString());
        expect(e.fee_amount).to.equal(10_000);
        expect(await money(escrow)).to.deep.equal({ buyer: 0, seller: 990_000, platform: 10_000, held: 0, releases: 1 });
        const events = await eventsOf(escrow.id);
        const released = events.filter((ev) => ev.event === 'escrow.released');
        expect(released).to.have.length(1);
        expect(released[0]!.actor_role).to.equal('system');
        expect(released[0]!.data).to.deep.equal({ escrow_amount: 1_000_000, platform_fee: 10_000, seller_amount: 990_000, by: 'autoRelease' });

        await runJobs();
        const notes = await notificationsOf(escrow.id);
        expect(notes.filter((n) => n.type === 'escrow_completed_buyer').map((n) => n.user_id)).to.deep.equal([buyer.id]);
        expect(notes.filter((n) => n.type === 'escrow_completed_seller').map((n) => n.user_id)).to.deep.equal([seller.id]);
        expect(await checkLedger(db)).to.deep.equal([]);
      });
    }

    it('also releases from received: a buyer who confirmed but never released does not strand the money', async () => {
      const { escrow } = await createEscrow({ status: 'received', category: 'goods', amount: 150_000 });
      clock.advance(14 * DAY - SECOND);
      await runJobs();
      expect((await escrowRow(escrow.id)).status).to.equal('received');

      clock.advance(2 * SECOND);
      const ran = await runJobs();
      expect(ranNamed(ran, 'escrows.auto-release', escrow.id)[0]!.result).to.deep.equal({ released: true });
      const e = await escrowRow(escrow.id);
      expect(e.status).to.equal('released');
      expect(e.fee_amount).to.equal(2000);
      expect(await money(escrow)).to.deep.equal({ buyer: 0, seller: 148_000, platform: 2000, held: 0, releases: 1 });
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('does nothing to a disputed escrow when the timer comes due', async () => {
      const { escrow, buyer } = await createEscrow({ status: 'sent', amount: 150_000 });
      const client = api();
      const bk = await issueKey(buyer.id);
      const d = await client.post(`/v1/escrows/${escrow.id}/dispute`).set('Authorization', `Bearer ${bk}`).send({ reason_category: 'other', description: 'never arrived' });
      expect(d.status, JSON.stringify(d.body)).to.equal(201);
      clock.advance(14 * DAY + SECOND);
      const ran = await runJobs();
      expect(ranNamed(ran, 'escrows.auto-release', escrow.id)[0]!.result).to.deep.equal({ released: false });
      expect(await escrows.sweepTimers()).to.deep.equal({ released: 0, expired: 0 });
      expect((await escrowRow(escrow.id)).status).to.equal('disputed');
      expect(await money(escrow)).to.deep.equal({ buyer: 0, seller: 0, platform: 0, held: 150_000, releases: 0 });
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  describe('extend', () => {
    const STEPS: { category: Category; expected: number[] }[] = [
      // Hours after sent of each successive auto_release_at: the default, then each extension.
      { category: 'goods', expected: [14 * 24, 21 * 24, 28 * 24, 30 * 24] },
      { category: 'service', expected: [3 * 24, 6 * 24, 9 * 24, 12 * 24, 14 * 24] },
      { category: 'digital', expected: [24, 48, 72, 96, 120, 144, 168] },
    ];
    for (const { category, expected } of STEPS) {
      it(`${category}: ${expected.map((h) => `${h / 24}d`).join(' -> ')}, then 409 EXTEND_LIMIT_REACHED`, async () => {
        const { escrow, buyer } = await createEscrow({ status: 'sent', category });
        const sentAt = escrow.sent_at!.getTime();
        expect(escrow.auto_release_at!.getTime() - sentAt).to.equal(expected[0]! * HOUR);
        const client = api();
        const bk = await issueKey(buyer.id);
        for (let i = 1; i < expected.length; i += 1) {
          clock.advance(HOUR);
          const res = await client.post(`/api/escrows/${escrow.id}/extend`).set('Authorization', `Bearer ${bk}`).send({});
          expect(res.status, JSON.stringify(res.body)).to.equal(200);
          expect(res.body.data.status).to.equal('sent');
          expect(res.body.data.extension_count).to.equal(i);
          expect(res.body.data.auto_release_at).to.equal(new Date(sentAt + expected[i]! * HOUR).toISOString());
        }
        const limit = await client.post(`/api/escrows/${escrow.id}/extend`).set('Authorization', `Bearer ${bk}`).send({});
        expect(limit.status, JSON.stringify(limit.body)).to.equal(409);
        expect(limit.body.error.code).to.equal('EXTEND_LIMIT_REACHED');
        expect(limit.body.error.extension_count).to.equal(expected.length - 1);
        const e = await escrowRow(escrow.id);
        expect(e.extension_count).to.equal(expected.length - 1);
        expect(e.auto_release_at!.getTime() - sentAt).to.equal(expected.at(-1)! * HOUR);
        const extended = (await eventsOf(escrow.id)).filter((ev) => ev.event === 'escrow.extended');
        expect(extended.map((ev) => ev.data.extension_count)).to.deep.equal(expected.slice(1).map((_, i) => i + 1));
      });
    }

    it('only the buyer extends, and only a sent or received escrow', async () => {
      const { escrow, buyer, seller } = await createEscrow({ status: 'paid' });
      const client = api();
      const bk = await issueKey(buyer.id);
      const sk = await issueKey(seller.id);
      const early = await client.post(`/api/escrows/${escrow.id}/extend`).set('Authorization', `Bearer ${bk}`).send({});
      expect(early.status).to.equal(409);
      expect(early.body.error.code).to.equal('INVALID_STATE');
      expect(early.body.error.status).to.equal('paid');
      await escrows.send(undefined, { userId: seller.id, role: 'user' }, escrow.id, {});
      const bySeller = await client.post(`/api/escrows/${escrow.id}/extend`).set('Authorization', `Bearer ${sk}`).send({});
      expect(bySeller.status).to.equal(403);
      expect(bySeller.body.error.code).to.equal('NOT_BUYER');
      await escrows.confirmReceived(undefined, { userId: buyer.id, role: 'user' }, escrow.id);
      const fromReceived = await client.post(`/api/escrows/${escrow.id}/extend`).set('Authorization', `Bearer ${bk}`).send({});
      expect(fromReceived.status, JSON.stringify(fromReceived.body)).to.equal(200);
      expect(fromReceived.body.data.status).to.equal('received');
      expect(fromReceived.body.data.extension_count).to.equal(1);
    });

    it('after an extend the old job fires at the old time and does nothing; the new one releases at the new time', async () => {
      const { escrow, buyer } = await createEscrow({ status: 'sent', category: 'goods', amount: 1_000_000 });
      const sentAt = escrow.sent_at!.getTime();
      const client = api();
      const bk = await issueKey(buyer.id);
      clock.advance(2 * DAY);
      const res = await client.post(`/api/escrows/${escrow.id}/extend`).set('Authorization', `Bearer ${bk}`).send({});
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.auto_release_at).to.equal(new Date(sentAt + 21 * DAY).toISOString());

      clock.set(sentAt + 14 * DAY + SECOND);
      let ran = await runJobs();
      const old = ranNamed(ran, 'escrows.auto-release', escrow.id);
      expect(old).to.have.length(1);
      expect(old[0]!.result).to.deep.equal({ released: false });
      expect((await escrowRow(escrow.id)).status).to.equal('sent');
      expect(await escrows.sweepTimers()).to.deep.equal({ released: 0, expired: 0 });
      expect(await money(escrow)).to.deep.equal({ buyer: 0, seller: 0, platform: 0, held: 1_000_000, releases: 0 });

      clock.set(sentAt + 21 * DAY - SECOND);
      ran = await runJobs();
      expect(ranNamed(ran, 'escrows.auto-release')).to.deep.equal([]);
      expect((await escrowRow(escrow.id)).status).to.equal('sent');

      clock.advance(2 * SECOND);
      ran = await runJobs();
      const fresh = ranNamed(ran, 'escrows.auto-release', escrow.id);
      expect(fresh).to.have.length(1);
      expect(fresh[0]!.result).to.deep.equal({ released: true });
      expect((await escrowRow(escrow.id)).status).to.equal('released');
      expect(await money(escrow)).to.deep.equal({ buyer: 0, seller: 990_000, platform: 10_000, held: 0, releases: 1 });
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('409 EXTEND_DISABLED when the escrow_timers setting gives the category a step of 0; other categories still extend', async () => {
      await db('settings').insert({ key: 'escrow_timers', value: JSON.stringify({ goods: { extend_step_hours: 0 } }), updated_at: clock.now() });
      const goods = await createEscrow({ status: 'sent', category: 'goods' });
      // Only the step is overridden: the window stays the default 14 days.
      expect(goods.escrow.auto_release_at!.getTime() - goods.escrow.sent_at!.getTime()).to.equal(14 * DAY);
      const service = await createEscrow({ status: 'sent', category: 'service', buyer: goods.buyer });
      const client = api();
      const bk = await issueKey(goods.buyer.id);
      const res = await client.post(`/api/escrows/${goods.escrow.id}/extend`).set('Authorization', `Bearer ${bk}`).send({});
      expect(res.status, JSON.stringify(res.body)).to.equal(409);
      expect(res.body.error.code).to.equal('EXTEND_DISABLED');
      const e = await escrowRow(goods.escrow.id);
      expect(e.extension_count).to.equal(0);
      expect(e.auto_release_at!.toISOString()).to.equal(goods.escrow.auto_release_at!.toISOString());
      const ok = await client.post(`/api/escrows/${service.escrow.id}/extend`).set('Authorization', `Bearer ${bk}`).send({});
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      expect(ok.body.data.extension_count).to.equal(1);
    });
  });

  describe('the sweeper (lost delayed jobs)', () => {
    it('expires and releases escrows whose timer jobs were lost: sweepTimers() and the registry processor', async () => {
      const pending = await createEscrow({ amount: 200_000 });
      const sent = await createEscrow({ status: 'sent', amount: 1_000_000 });
      // Lose the delayed jobs: the outbox rows of both timers are gone before they were relayed.
      const lost = await db('outbox').whereIn('job', ['escrows.expire', 'escrows.auto-release']).delete();
      expect(lost).to.equal(3); // two expiry timers (one per escrow) and one auto-release

      clock.advance(DAY + SECOND);
      let ran = await runJobs();
      expect(ranNamed(ran, 'escrows.expire')).to.deep.equal([]);
      expect((await escrowRow(pending.escrow.id)).status).to.equal('pending_payment');
      expect(await escrows.sweepTimers()).to.deep.equal({ released: 0, expired: 1 });
      const expired = await escrowRow(pending.escrow.id);
      expect(expired.status).to.equal('cancelled');
      expect(expired.cancel_reason).to.equal('expired');
      expect((await escrowRow(sent.escrow.id)).status).to.equal('sent');

      clock.set(sent.escrow.auto_release_at!.getTime() + SECOND);
      ran = await runJobs();
      expect(ranNamed(ran, 'escrows.auto-release')).to.deep.equal([]);
      expect((await escrowRow(sent.escrow.id)).status).to.equal('sent');
      const sweep = processor('escrows.sweep-timers');
      expect(await sweep(fakeJob('escrows.sweep-timers', {}))).to.deep.equal({ released: 1, expired: 0 });
      expect((await escrowRow(sent.escrow.id)).status).to.equal('released');
      expect(await money(sent.escrow)).to.deep.equal({ buyer: 0, seller: 990_000, platform: 10_000, held: 0, releases: 1 });
      // A second sweep finds nothing due.
      expect(await sweep(fakeJob('escrows.sweep-timers', {}))).to.deep.equal({ released: 0, expired: 0 });
      expect(await money(sent.escrow)).to.deep.equal({ buyer: 0, seller: 990_000, platform: 10_000, held: 0, releases: 1 });

      // The sweeper's own moves notify like the timer jobs do.
      await runJobs();
      expect((await notificationsOf(pending.escrow.id)).filter((n) => n.type === 'escrow_expired')).to.have.length(2);
      expect((await notificationsOf(sent.escrow.id)).filter((n) => n.type.startsWith('escrow_completed_'))).to.have.length(2);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a timer row marked completed never runs; the sweep-timers job queued on the timers queue fires it', async () => {
      const sent = await createEscrow({ status: 'sent', category: 'digital', amount: 150_000 });
      await db('outbox').where({ job: 'escrows.auto-release' }).update({ completed_at: clock.now(), relayed_at: clock.now() });
      clock.advance(DAY + SECOND);
      let ran = await runJobs();
      expect(ranNamed(ran, 'escrows.auto-release')).to.deep.equal([]);
      expect((await escrowRow(sent.escrow.id)).status).to.equal('sent');

      await getQueue('timers').add('escrows.sweep-timers', {});
      ran = await runJobs(['timers']);
      const sweeps = ranNamed(ran, 'escrows.sweep-timers');
      expect(sweeps).to.have.length(1);
      expect(sweeps[0]!.error).to.equal(undefined);
      expect(sweeps[0]!.result).to.deep.equal({ released: 1, expired: 0 });
      expect((await escrowRow(sent.escrow.id)).status).to.equal('released');
      expect(await money(sent.escrow)).to.deep.equal({ buyer: 0, seller: 148_000, platform: 2000, held: 0, releases: 1 });
      expect(await checkLedger(db)).to.deep.equal([]);
    });
  });

  describe('re-run timer jobs', () => {
    it('an auto-release job run twice (by hand, and re-sent after Redis lost it) posts once', async () => {
      const { escrow } = await createEscrow({ status: 'sent', amount: 1_000_000 });
      clock.advance(14 * DAY + SECOND);
      const ran = await runJobs();
      expect(ranNamed(ran, 'escrows.auto-release', escrow.id)[0]!.result).to.deep.equal({ released: true });
      const after = await money(escrow);
      expect(after).to.deep.equal({ buyer: 0, seller: 990_000, platform: 10_000, held: 0, releases: 1 });

      expect(await processor('escrows.auto-release')(fakeJob('escrows.auto-release', { escrow_id: escrow.id }))).to.deep.equal({ released: false });
      expect(await escrows.runAutoRelease(escrow.id)).to.deep.equal({ released: false });

      // Redis forgets every job and the outbox row is sent again: the job runs a second time.
      await redis.flushdb();
      const rows = await db('outbox').where({ job: 'escrows.auto-release' }).update({ relayed_at: null, completed_at: null });
      expect(rows).to.equal(1);
      const again = ranNamed(await runJobs(), 'escrows.auto-release', escrow.id);
      expect(again).to.have.length(1);
      expect(again[0]!.result).to.deep.equal({ released: false });

      expect(await money(escrow)).to.deep.equal(after);
      expect((await eventsOf(escrow.id)).filter((ev) => ev.event === 'escrow.released')).to.have.length(1);
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('a timer job delivered before its due time (clock skew, an early re-send) does nothing', async () => {
      const pending = await createEscrow();
      const sent = await createEscrow({ status: 'sent', category: 'digital', amount: 150_000 });
      clock.advance(DAY - SECOND);
      expect(await processor('escrows.expire')(fakeJob('escrows.expire', { escrow_id: pending.escrow.id }))).to.deep.equal({ expired: false });
      expect(await processor('escrows.auto-release')(fakeJob('escrows.auto-release', { escrow_id: sent.escrow.id }))).to.deep.equal({ released: false });
      expect((await escrowRow(pending.escrow.id)).status).to.equal('pending_payment');
      expect((await escrowRow(sent.escrow.id)).status).to.equal('sent');
      expect(await money(sent.escrow)).to.deep.equal({ buyer: 0, seller: 0, platform: 0, held: 150_000, releases: 0 });
      // An unknown escrow id is a no-op too.
      const unknown = '5a0c1f7e-2f4b-4b8e-9d1e-0c6a3b7f2e11';
      expect(await escrows.runExpiry(unknown)).to.deep.equal({ expired: false });
      expect(await escrows.runAutoRelease(unknown)).to.deep.equal({ released: false });
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('two auto-release runs at the same moment release once', async () => {
      const { escrow } = await createEscrow({ status: 'received', amount: 1_000_000 });
      clock.advance(14 * DAY + SECOND);
      const results = await Promise.all([escrows.runAutoRelease(escrow.id), escrows.runAutoRelease(escrow.id), escrows.runAutoRelease(escrow.id)]);
      expect(results.filter((r) => r.released)).to.have.length(1);
      expect(await money(escrow)).to.deep.equal({ buyer: 0, seller: 990_000, platform: 10_000, held: 0, releases: 1 });
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('an expiry job run twice cancels once and notifies once per party', async () => {
      const { escrow } = await createEscrow();
      clock.advance(DAY + SECOND);
      await runJobs();
      expect(await escrows.runExpiry(escrow.id)).to.deep.equal({ expired: false });
      expect(await processor('escrows.expire')(fakeJob('escrows.expire', { escrow_id: escrow.id }))).to.deep.equal({ expired: false });
      await runJobs();
      expect((await eventsOf(escrow.id)).filter((ev) => ev.event === 'escrow.cancelled')).to.have.length(1);
      expect((await notificationsOf(escrow.id)).filter((n) => n.type === 'escrow_expired')).to.have.length(2);
    });
  });

  describe('sandbox fast-forward', () => {
    it('auto_release on a sent escrow: 202, still sent until the job runs, then released', async () => {
      const { escrow, buyer } = await createEscrow({ status: 'sent', amount: 1_000_000 });
      const client = api();
      const bk = await issueKey(buyer.id);
      clock.advance(HOUR);
      const res = await client.post(`/api/sandbox/escrows/${escrow.id}/fast-forward`).set('Authorization', `Bearer ${bk}`).send({ timer: 'auto_release' });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expect(res.body.data).to.deep.equal({ escrow_id: escrow.id, timer: 'auto_release', due_at: clock.now().toISOString() });
      const still = await client.get(`/api/escrows/${escrow.id}`).set('Authorization', `Bearer ${bk}`);
      expect(still.body.data.status).to.equal('sent');
      expect(still.body.data.auto_release_at).to.equal(clock.now().toISOString());
      expect(await money(escrow)).to.deep.equal({ buyer: 0, seller: 0, platform: 0, held: 1_000_000, releases: 0 });

      const ran = await runJobs();
      expect(ranNamed(ran, 'escrows.auto-release', escrow.id).map((j) => j.result)).to.deep.equal([{ released: true }]);
      expect((await escrowRow(escrow.id)).status).to.equal('released');
      expect(await money(escrow)).to.deep.equal({ buyer: 0, seller: 990_000, platform: 10_000, held: 0, releases: 1 });
      // The original 14-day job fires later and does nothing.
      clock.advance(15 * DAY);
      expect(ranNamed(await runJobs(), 'escrows.auto-release', escrow.id).map((j) => j.result)).to.deep.equal([{ released: false }]);
      expect(await money(escrow)).to.deep.equal({ buyer: 0, seller: 990_000, platform: 10_000, held: 0, releases: 1 });
      expect(await checkLedger(db)).to.deep.equal([]);
    });

    it('expiry on a pending escrow: 202, cancelled as expired once the job runs', async () => {
      const { escrow, seller } = await createEscrow();
      const client = api();
      const sk = await issueKey(seller.id);
      clock.advance(HOUR);
      const res = await client.post(`/api/sandbox/escrows/${escrow.id}/fast-forward`).set('Authorization', `Bearer ${sk}`).send({ timer: 'expiry' });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expect(res.body.data).to.deep.equal({ escrow_id: escrow.id, timer: 'expiry', due_at: clock.now().toISOString() });
      expect((await escrowRow(escrow.id)).status).to.equal('pending_payment');
      await runJobs();
      const e = await escrowRow(escrow.id);
      expect(e.status).to.equal('cancelled');
      expect(e.cancel_reason).to.equal('expired');
    });

    it('wrong state answers 409 INVALID_STATE; a bad timer 400 INVALID_BODY; a stranger 403', async () => {
      const pending = await createEscrow();
      const sent = await createEscrow({ status: 'sent', buyer: pending.buyer });
      const client = api();
      const bk = await issueKey(pending.buyer.id);
      const ff = (id: string, body: object, key = bk) => client.post(`/api/sandbox/escrows/${id}/fast-forward`).set('Authorization', `Bearer ${key}`).send(body);

      const r1 = await ff(pending.escrow.id, { timer: 'auto_release' });
      expect(r1.status).to.equal(409);
      expect(r1.body.error.code).to.equal('INVALID_STATE');
      expect(r1.body.error.status).to.equal('pending_payment');
      const r2 = await ff(sent.escrow.id, { timer: 'expiry' });
      expect(r2.status).to.equal(409);
      expect(r2.body.error.code).to.equal('INVALID_STATE');
      expect(r2.body.error.status).to.equal('sent');
      for (const body of [{ timer: 'refund' }, {}, { timer: 'expiry', extra: 1 }]) {
        const r = await ff(pending.escrow.id, body);
        expect(r.status, JSON.stringify(body)).to.equal(400);
        expect(r.body.error.code).to.equal('INVALID_BODY');
      }
      const stranger = await createEscrow();
      const r3 = await ff(pending.escrow.id, { timer: 'expiry' }, await issueKey(stranger.seller.id));
      expect(r3.status).to.equal(403);
      expect(r3.body.error.code).to.equal('FORBIDDEN');
      // Nothing moved and nothing was queued by the refused calls.
      expect((await escrowRow(pending.escrow.id)).expires_at.toISOString()).to.equal(pending.escrow.expires_at.toISOString());
      expect((await escrowRow(sent.escrow.id)).auto_release_at!.toISOString()).to.equal(sent.escrow.auto_release_at!.toISOString());
      await runJobs();
      expect((await escrowRow(pending.escrow.id)).status).to.equal('pending_payment');
      expect((await escrowRow(sent.escrow.id)).status).to.equal('sent');
    });

    it('is not mounted outside sandbox mode: 404', async () => {
      const { escrow, buyer } = await createEscrow({ status: 'sent' });
      const bk = await issueKey(buyer.id);
      const res = await api({ sandboxMode: false }).post(`/api/sandbox/escrows/${escrow.id}/fast-forward`).set('Authorization', `Bearer ${bk}`).send({ timer: 'auto_release' });
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('NOT_FOUND');
      expect((await escrowRow(escrow.id)).auto_release_at!.toISOString()).to.equal(escrow.auto_release_at!.toISOString());
      await runJobs();
      expect((await escrowRow(escrow.id)).status).to.equal('sent');
    });
  });
});
