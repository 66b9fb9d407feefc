/**
 * The overview's alerts (enterprise spec 4.9; decision 0020 "Overview and reconciliation"):
 * each kind raised by its setting or condition and gone when the setting or the condition
 * changes, at its edge (the SLA, the due date and the stuck-payout age are strict; the
 * four-eyes threshold includes the amount itself), with severity, title, detail, deal_id and
 * milestone_id; most severe first.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { activateVia, counterpartyVia, createDealVia, dealWorld, fundVia, staffHeaders, type DealWorld } from '../../factories/deals.js';
import { makeLive } from '../../factories/releases.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { ALERT_LIMITS } from '../../../shared/overview/alerts.js';
import { DAY, HOUR, decideVia, disputeVia, failVia, later, overviewOf, pinAt, releaseVia, settleVia, submit, type OverviewBody } from './support.js';

type Alert = OverviewBody['alerts'][number];

describe('enterprise overview: alerts', () => {
  const client = api();
  afterEach(() => clock.reset());

  /** The alerts as a fresh read sees them (15 seconds on, so no cached answer is served). */
  async function alerts(w: DealWorld, kind?: string): Promise<Alert[]> {
    clock.advance(15_000);
    const all = (await overviewOf(client, w.h.finance)).alerts;
    return kind ? all.filter((a) => a.kind === kind) : all;
  }

  async function settings(w: DealWorld, body: Record<string, unknown>): Promise<void> {
    const res = await client.patch('/v1/enterprise/settings').set(w.h.owner).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  }

  /** An activated deal with the given milestones; funded unless `fund` is false. */
  async function deal(w: DealWorld, milestones: Record<string, unknown>[], o: { fund?: boolean; activate?: boolean; cpId?: string } = {}) {
    const made = await createDealVia(client, w.h.operator, { title: 'Pengadaan', counterparty_id: o.cpId ?? w.cpId, milestones });
    if (o.activate === false) return { id: made.deal.id, mids: made.milestones.map((m) => m.id) };
    const d = await activateVia(client, w.h.operator, made.deal.id);
    const mids = d.milestones.map((m) => m.id);
    if (o.fund !== false) for (const mid of mids) await fundVia(client, w.h.finance, d.deal.id, mid);
    return { id: d.deal.id, mids };
  }

  async function approved(w: DealWorld, dealId: string, mid: string) {
    await submit(client, w.h.operator, dealId, mid);
    await decideVia(client, w.h.finance, mid);
  }

  it('dispute_sla: a milestone disputed longer than dispute_sla_hours (strictly); a longer SLA or a ruling clears it', async () => {
    pinAt('2026-12-10T08:00:00.000Z');
    const w = await dealWorld(client);
    await settings(w, { dispute_sla_hours: 24 });
    const d = await deal(w, [{ title: 'Tahap 1', amount: 500_000 }]);
    await disputeVia(client, w.h.operator, d.id, d.mids[0]!);
    await later(w, 24 * HOUR - 15_000);
    expect(await alerts(w, 'dispute_sla')).to.deep.equal([]); // exactly 24 hours: not longer
    clock.advance(60_000);
    const [a] = await alerts(w, 'dispute_sla');
    expect(a).to.deep.equal({
      kind: 'dispute_sla',
      severity: 'critical',
      title: 'Dispute past its SLA',
      detail: `milestone 1 of deal ${(await db('deals').where({ id: d.id }).first<{ reference: string }>('reference')).reference} (Rp500.000) has been disputed for 24 hours; the workspace's dispute SLA is 24 hours.`,
      deal_id: d.id,
      milestone_id: d.mids[0],
    });
    await settings(w, { dispute_sla_hours: 48 });
    expect(await alerts(w, 'dispute_sla')).to.deep.equal([]);
    await settings(w, { dispute_sla_hours: 1 });
    expect(await alerts(w, 'dispute_sla')).to.have.length(1);
    const staff = await staffHeaders();
    const ruled = await client.post(`/v1/admin/enterprise/milestones/${d.mids[0]}/resolve-dispute`).set(staff).send({ outcome: 'refund' });
    expect(ruled.status).to.equal(200);
    expect(await alerts(w, 'dispute_sla')).to.deep.equal([]);
  });

  it('overdue_milestone: due date passed (strictly) and not released, drafts included, cancelled deals not; released clears it', async () => {
    pinAt('2026-12-10T08:00:00.000Z');
    const w = await dealWorld(client);
    const due = { title: 'Tahap 1', amount: 400_000, due_offset_days: 1 };
    const live = await deal(w, [due, { title: 'Tanpa tenggat', amount: 100_000 }]);
    clock.advance(1000);
    const draft = await deal(w, [due], { activate: false });
    const cancelled = await deal(w, [due], { fund: false });
    expect((await client.post(`/v1/enterprise/deals/${cancelled.id}/cancel`).set(w.h.operator).send({})).status).to.equal(200);
    // due_at is creation + 1 day; the read in alerts() is 15 s later.
    clock.set(new Date(Date.parse('2026-12-11T08:00:00.000Z') - 15_000));
    await later(w, 0);
    expect(await alerts(w, 'overdue_milestone')).to.deep.equal([]);
    clock.advance(60_000);
    const found = await alerts(w, 'overdue_milestone');
    expect(found.map((a) => [a.milestone_id, a.deal_id, a.severity])).to.deep.equal([
      [live.mids[0], live.id, 'warning'],
      [draft.mids[0], draft.id, 'warning'],
    ]);
    expect(found[0]!.detail).to.match(/^milestone 1 of deal \S+ \(Rp400\.000\) was due 2026-12-11 and is not released \(0 hours late\)\.$/);
    await approved(w, live.id, live.mids[0]!);
    expect(await alerts(w, 'overdue_milestone')).to.have.length(2); // approved is not released
    await releaseVia(client, w, await staffHeaders(), live.id, live.mids[0]!);
    expect((await alerts(w, 'overdue_milestone')).map((a) => a.milestone_id)).to.deep.equal([draft.mids[0]]);
  });

  it('high_value_pending: a milestone at or above four_eyes_threshold waiting for approval; raising the threshold clears it', async () => {
    pinAt('2026-12-10T08:00:00.000Z');
    const w = await dealWorld(client);
    const d = await deal(w, [
      { title: 'Pas', amount: 1_500_000 },
      { title: 'Di bawah', amount: 1_499_999 },
      { title: 'Belum ada bukti', amount: 2_000_000 },
    ]);
    await submit(client, w.h.operator, d.id, d.mids[0]!);
    clock.advance(1000);
    await submit(client, w.h.operator, d.id, d.mids[1]!);
    expect(await alerts(w, 'high_value_pending')).to.deep.equal([]); // default threshold 100,000,000
    await settings(w, { four_eyes_threshold: 1_500_000 });
    const [a, ...rest] = await alerts(w, 'high_value_pending');
    expect(rest).to.deep.equal([]);
    expect(a).to.deep.include({ kind: 'high_value_pending', severity: 'warning', title: 'High-value milestone waiting for approval', deal_id: d.id, milestone_id: d.mids[0] });
    expect(a!.detail).to.contain('at or above the four-eyes threshold of Rp1.500.000');
    await settings(w, { four_eyes_threshold: 1_500_001 });
    expect(await alerts(w, 'high_value_pending')).to.deep.equal([]);
    await settings(w, { four_eyes_threshold: 0 });
    expect((await alerts(w, 'high_value_pending')).map((x) => x.milestone_id)).to.deep.equal([d.mids[0], d.mids[1]]);
    await decideVia(client, w.h.finance, d.mids[0]!);
    expect((await alerts(w, 'high_value_pending')).map((x) => x.milestone_id)).to.deep.equal([d.mids[1]]);
  });

  describe('payout_velocity', () => {
    it('payouts failed: the money back in escrow is critical until it is released again', async () => {
      pinAt('2026-12-10T08:00:00.000Z');
      const w = await dealWorld(client);
      const staff = await staffHeaders();
      const d = await deal(w, [{ title: 'Tahap 1', amount: 600_000 }]);
      await approved(w, d.id, d.mids[0]!);
      const [p] = await releaseVia(client, w, staff, d.id, d.mids[0]!);
      await failVia(client, staff, p!.id);
      const [a] = await alerts(w, 'payout_velocity');
      expect(a).to.deep.include({ severity: 'critical', title: 'Payouts failed', deal_id: d.id, milestone_id: d.mids[0] });
      expect(a!.detail).to.contain('1 payout of milestone 1').and.contain('Rp600.000 is back in escrow');
      const again = (await releaseVia(client, w, staff, d.id, d.mids[0]!)).at(-1)!;
      expect(again.release_no).to.equal(2);
      await settleVia(client, staff, again.id);
      expect(await alerts(w, 'payout_velocity')).to.deep.equal([]);
    });

    it(`payouts queued too long: more than ${ALERT_LIMITS.stuckPayoutMinutes} minutes (strictly) without settling; settling clears it`, async () => {
      pinAt('2026-12-10T08:00:00.000Z');
      const w = await dealWorld(client);
      const staff = await staffHeaders();
      const d = await deal(w, [{ title: 'Tahap 1', amount: 600_000 }]);
      await approved(w, d.id, d.mids[0]!);
      const [p] = await releaseVia(client, w, staff, d.id, d.mids[0]!);
      await later(w, ALERT_LIMITS.stuckPayoutMinutes * 60_000 - 15_000);
      expect(await alerts(w, 'payout_velocity')).to.deep.equal([]);
      clock.advance(60_000);
      const [a] = await alerts(w, 'payout_velocity');
      expect(a).to.deep.include({ severity: 'warning', title: 'Payouts queued too long', deal_id: d.id, milestone_id: d.mids[0] });
      expect(a!.detail).to.match(/^1 payout of milestone 1 of deal \S+ \(Rp600\.000\) has not settled after 2 hours\.$/);
      await settleVia(client, await staffHeaders(), p!.id);
      expect(await alerts(w, 'payout_velocity')).to.deep.equal([]);
    });

    it(`unusual volume: payouts of the last 24 hours above ${ALERT_LIMITS.volumeFactor} times the daily mean of the 7 days before (none without history)`, async () => {
      pinAt('2026-12-10T08:00:00.000Z');
      const w = await dealWorld(client);
      const staff = await staffHeaders();
      const d = await deal(w, [
        { title: 'Lama', amount: 700_000 },
        { title: 'Baru', amount: 300_000 },
      ]);
      for (const mid of d.mids) await approved(w, d.id, mid);
      const [old] = await releaseVia(client, w, staff, d.id, d.mids[0]!);
      const [recent] = await releaseVia(client, w, staff, d.id, d.mids[1]!);
      await settleVia(client, staff, old!.id);
      expect(await alerts(w, 'payout_velocity')).to.deep.equal([]); // no history before the last 24 hours
      // The first payout three days old: 700,000 over 7 days is 100,000 a day; 300,000 today is not above 3 times that.
      await db('disbursements').where({ id: old!.id }).update({ created_at: new Date(clock.nowMs() - 3 * DAY) });
      expect(await alerts(w, 'payout_velocity')).to.deep.equal([]);
      await db('disbursements').where({ id: recent!.id }).update({ amount: 300_001 });
      const [a] = await alerts(w, 'payout_velocity');
      expect(a).to.deep.equal({
        kind: 'payout_velocity',
        severity: 'warning',
        title: 'Unusual payout volume',
        detail: 'Payouts of Rp300.001 were created in the last 24 hours, more than 3 times the daily mean of the 7 days before (Rp100.000).',
        deal_id: null,
        milestone_id: null,
      });
      // Eight days on, the history is gone again (the payout's amount put back as it was signed, and settled).
      await later(w, 6 * DAY);
      await db('disbursements').where({ id: recent!.id }).update({ amount: 300_000 });
      await settleVia(client, await staffHeaders(), recent!.id);
      expect(await alerts(w, 'payout_velocity')).to.deep.equal([]);
    });
  });

  it('watchlist_hit: a counterparty whose name contains a watchlist entry (any case); critical with an open deal, else a warning', async () => {
    pinAt('2026-12-10T08:00:00.000Z');
    const w = await dealWorld(client);
    await counterpartyVia(client, w.h.owner, { name: 'CV Sumber Makmur' });
    await counterpartyVia(client, w.h.owner, { name: 'PT Lain Sekali' });
    const d = await deal(w, [{ title: 'Tahap 1', amount: 500_000 }], { fund: false });
    expect(await alerts(w, 'watchlist_hit')).to.deep.equal([]);
    await settings(w, { watchlist: ['JAYA', 'makmur', 'tidak ada'] });
    const found = await alerts(w, 'watchlist_hit');
    expect(found.map((a) => [a.severity, a.deal_id, a.milestone_id])).to.deep.equal([
      ['critical', d.id, null],
      ['warning', null, null],
    ]);
    expect(found[0]!.detail).to.match(/^Counterparty "PT Pemasok Jaya" matches watchlist entry "JAYA" and has 1 open deal \(newest \S+\)\.$/);
    expect(found[1]!.detail).to.equal('Counterparty "CV Sumber Makmur" matches watchlist entry "makmur" (no open deals).');
    // Most severe first, across kinds: the critical hit before the KYB warnings.
    expect((await alerts(w))[0]!.kind).to.equal('watchlist_hit');
    await settings(w, { watchlist: [] });
    expect(await alerts(w, 'watchlist_hit')).to.deep.equal([]);
  });

  it('kyb_gap: the workspace not verified, and each counterparty with open deals not verified (info in a sandbox, warning once live)', async () => {
    pinAt('2026-12-10T08:00:00.000Z');
    const w = await dealWorld(client);
    await counterpartyVia(client, w.h.owner, { name: 'CV Tanpa Transaksi' });
    const d = await deal(w, [{ title: 'Tahap 1', amount: 500_000 }], { fund: false });
    const sandbox = await alerts(w, 'kyb_gap');
    expect(sandbox.map((a) => [a.severity, a.title, a.deal_id])).to.deep.equal([
      ['warning', 'Business verification incomplete', null],
      ['info', 'Counterparty not verified', d.id],
    ]);
    expect(sandbox[0]!.detail).to.contain("KYB status is not_started");
    expect(sandbox[1]!.detail).to.match(/^Counterparty "PT Pemasok Jaya" \(KYB not_started\) has 1 open deal \(newest \S+\)\.$/);
    await makeLive(w);
    expect(await alerts(w, 'kyb_gap')).to.deep.equal([]);
    // Live: a new counterparty not verified with a deal waiting in terms review is a warning; one without deals raises nothing.
    const fresh = await counterpartyVia(client, w.h.owner, { name: 'PT Baru Masuk' });
    const waiting = await deal(w, [{ title: 'Tahap 1', amount: 500_000 }], { fund: false, cpId: fresh });
    const live = await alerts(w, 'kyb_gap');
    expect(live.map((a) => [a.severity, a.deal_id])).to.deep.equal([['warning', waiting.id]]);
    expect(live[0]!.detail).to.contain('live deals wait in terms review until it is verified');
  });
});
