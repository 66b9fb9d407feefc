/**
 * The summary's rollups (migration 20261207000100; decision 0020 "The summary's rollups"):
 * the feed's figures per UTC day and counterparty (`report_event_days`) and the approval
 * hours (`report_approvals`), kept by a trigger on every feed insert, against the same
 * figures computed here from the events themselves: 1,500 random events through
 * `appendEvent` (three counterparties, a deal-less event, amounts missing, times on both
 * sides of UTC midnights over 14 months), read over random ranges.
 */
import { expect } from 'chai';
import { seeded } from '../../helpers/seeded.js';
import { createWorkspace } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { appendEvent } from '../../../shared/enterprise/events.js';
import { rangeBounds } from '../../../shared/enterprise/exports.js';
import { eventFigures, medianApprovalHours, monthly, topCounterparties } from '../../../shared/reports/repo.js';

const EVENTS = ['milestone.funded', 'milestone.released', 'milestone.approved', 'milestone.rejected', 'milestone.revision_requested', 'milestone.disputed', 'milestone.dispute_resolved', 'deal.updated'] as const;
const DAY = 86_400_000;

interface Made {
  event: (typeof EVENTS)[number];
  at: Date;
  amount: number | null;
  cp: string | null;
  hours: number | null;
}

describe('enterprise reports: the rollups behind the summary match the feed', () => {
  it('1,500 random events over 14 months: sums, counts, months, counterparties and the median over random ranges', async () => {
    const random = seeded(20261207);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    clock.set(new Date('2025-10-01T00:00:00Z'));
    const { workspace, owner } = await createWorkspace();
    const cps = await db('counterparties')
      .insert(['PT Satu', 'PT Dua', 'PT Tiga'].map((name) => ({ workspace_id: workspace.id, name, country_code: 'ID', relationship: 'seller', created_at: clock.now(), updated_at: clock.now() })))
      .returning<{ id: string }[]>('id');
    const base = {
      workspace_id: workspace.id, currency: 'IDR', owner_id: owner.id, is_test: true, fee_rate_bp: 200, fee_min: 5_000, fee_volume_basis: 0,
      fee_allocation: 'buyer', fee_buyer_percent: 100, platform_fee: 0, buyer_fee: 0, seller_fee: 0, created_at: clock.now(), updated_at: clock.now(),
    };
    const deals = await db('deals')
      .insert(cps.map((c, i) => ({ ...base, reference: `RLP-${i}`, title: `Rollup ${i}`, counterparty_id: c.id })))
      .returning<{ id: string; counterparty_id: string }[]>(['id', 'counterparty_id']);
    // One milestone per event that needs one (approvals read its evidence time).
    const made: Made[] = [];
    const start = Date.parse('2025-10-01T00:00:00Z');
    for (let i = 0; i < 1_500; i += 1) {
      const event = pick(EVENTS);
      // Times cluster around midnights so the day boundaries are tested.
      const day = Math.floor(random() * 420);
      const at = new Date(start + day * DAY + (random() < 0.3 ? DAY - 1 - Math.floor(random() * 2_000) : Math.floor(random() * DAY)));
      const deal = random() < 0.05 ? null : pick(deals);
      const amount = event === 'milestone.funded' || event === 'milestone.released' ? (random() < 0.05 ? null : 1_000 + Math.floor(random() * 10_000_000)) : null;
      let milestone: string | null = null;
      let hours: number | null = null;
      if (event === 'milestone.approved' && deal) {
        const evidenceAt = random() < 0.1 ? null : new Date(at.getTime() - Math.floor(random() * 200 * 3_600_000) + (random() < 0.05 ? 3_600_000 : 0));
        const [m] = await db('deal_milestones')
          .insert({ deal_id: deal.id, workspace_id: workspace.id, sequence_no: i + 1, title: `M ${i}`, amount: 10_000, status: 'approved', refunded_amount: 0, buyer_fee: 0, seller_fee: 0, funding_amount: 10_000, payout_amount: 10_000, evidence_submitted_at: evidenceAt, created_at: clock.now(), updated_at: clock.now() })
          .returning<{ id: string }[]>('id');
        milestone = m!.id;
        if (evidenceAt) hours = Math.max(0, (at.getTime() - evidenceAt.getTime()) / 3_600_000);
      }
      clock.set(at);
      await db.transaction((trx) =>
        appendEvent(trx, workspace.id, { event, entityType: 'milestone', entityId: milestone, dealId: deal?.id ?? null, amount, summary: event, actor: null, sandbox: true }),
      );
      made.push({ event, at, amount, cp: deal?.counterparty_id ?? null, hours });
    }

    const day = (d: Date) => d.toISOString().slice(0, 10);
    for (let r = 0; r < 25; r += 1) {
      const a = start + Math.floor(random() * 430) * DAY;
      const from = day(new Date(a));
      const to = day(new Date(a + Math.floor(random() * 366) * DAY));
      const b = rangeBounds({ from, to });
      const inRange = made.filter((m) => m.at >= b.from && m.at < b.to);
      const sum = (ev: string) => inRange.filter((m) => m.event === ev).reduce((n, m) => n + (m.amount ?? 0), 0);
      const count = (...evs: string[]) => inRange.filter((m) => evs.includes(m.event)).length;
      expect(await eventFigures(db, workspace.id, b, 'IDR'), `${from}..${to}`).to.deep.equal({
        funded: sum('milestone.funded'),
        fundedCount: count('milestone.funded'),
        released: sum('milestone.released'),
        approved: count('milestone.approved'),
        revisions: count('milestone.rejected', 'milestone.revision_requested'),
        disputesOpened: count('milestone.disputed'),
        disputesResolved: count('milestone.dispute_resolved'),
      });

      const hours = inRange.flatMap((m) => (m.hours === null ? [] : [m.hours])).sort((x, y) => x - y);
      const mid = (hours.length - 1) / 2;
      const median = hours.length === 0 ? null : (hours[Math.floor(mid)]! + hours[Math.ceil(mid)]!) / 2;
      const got = await medianApprovalHours(db, workspace.id, b);
      if (median === null) expect(got).to.equal(null);
      else expect(got).to.be.closeTo(median, 1e-6);

      const released = new Map<string, number>();
      for (const m of inRange) if (m.event === 'milestone.released' && m.cp) released.set(m.cp, (released.get(m.cp) ?? 0) + (m.amount ?? 0));
      const top = await topCounterparties(db, workspace.id, b, 'IDR', new Map(), 10);
      expect(new Map(top.map((t) => [t.id, t.released]))).to.deep.equal(new Map(cps.flatMap((c) => (released.has(c.id) ? [[c.id, released.get(c.id)!]] : []))));

      const months = await monthly(db, workspace.id, b, 'IDR');
      for (const m of months) {
        const of = inRange.filter((x) => day(x.at).slice(0, 7) === m.month);
        expect(m, `${from}..${to} ${m.month}`).to.deep.include({
          funded: of.filter((x) => x.event === 'milestone.funded').reduce((n, x) => n + (x.amount ?? 0), 0),
          released: of.filter((x) => x.event === 'milestone.released').reduce((n, x) => n + (x.amount ?? 0), 0),
          disputed: of.filter((x) => x.event === 'milestone.disputed').length,
        });
      }
      expect(months.reduce((n, m) => n + m.funded, 0)).to.equal(sum('milestone.funded'));
    }
  });
});
