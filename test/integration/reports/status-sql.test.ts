/**
 * The deal status and totals computed in SQL for reports (shared/deals/status-sql.ts,
 * shared/reports/repo.ts) against the code the deal answers use (dealStatus in
 * shared/deals/states.ts, serializeDeal in shared/deals/serialize.ts): every mix of zero to
 * three milestone statuses, each with and without cancelled_at and terms_review, and 300
 * random deals of 4 to 20 milestones (a seeded generator), inserted in bulk; and the status
 * the triggers keep in `deal_statuses` after those inserts and after 600 random changes.
 */
import { expect } from 'chai';
import { seeded } from '../../helpers/seeded.js';
import { createWorkspace } from '../../factories/enterprise.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { dealStatusSql, HELD_SQL } from '../../../shared/deals/status-sql.js';
import { dealStatus, HELD, DEAL_STATUSES, MILESTONE_STATUSES, type DealStatus, type MilestoneStatus } from '../../../shared/deals/states.js';
import { serializeDeal } from '../../../shared/deals/serialize.js';
import type { DealWithNames, MilestoneRow } from '../../../shared/deals/repo.js';
import { rangeBounds } from '../../../shared/enterprise/exports.js';
import { dealCounts } from '../../../shared/reports/repo.js';
import { DEALS_SOURCE } from '../../../shared/reports/sources.js';

/** Every multiset of `size` statuses (order does not matter to the rule). */
function mixes(size: number, from = 0): MilestoneStatus[][] {
  if (size === 0) return [[]];
  const out: MilestoneStatus[][] = [];
  for (let i = from; i < MILESTONE_STATUSES.length; i += 1) for (const rest of mixes(size - 1, i)) out.push([MILESTONE_STATUSES[i]!, ...rest]);
  return out;
}

interface Planned {
  cancelled: boolean;
  termsReview: boolean;
  milestones: { status: MilestoneStatus; amount: number; refunded: number }[];
}

/**
 * The per-deal figures the triggers keep in `deal_statuses` (migration 20261210000300, read by
 * the overview) against the same figures counted here from the rows.
 */
async function expectFigures(deals: DealWithNames[], byDeal: Map<string, MilestoneRow[]>, when: string): Promise<void> {
  const kept = await db('deal_statuses').whereIn('deal_id', deals.map((d) => d.id)).select('*');
  const byId = new Map(kept.map((k: Record<string, unknown>) => [k.deal_id as string, k]));
  const open = new Set(['awaiting_funding', 'funded', 'evidence_submitted', 'revision_requested', 'approved']);
  const wrong: unknown[] = [];
  for (const d of deals) {
    const ms = byDeal.get(d.id) ?? [];
    const count = (f: (m: MilestoneRow) => boolean) => ms.filter(f).length;
    const released = (m: MilestoneRow) => m.status === 'released';
    const want = {
      currency: d.currency.trim(),
      activated: d.activated_at !== null,
      milestones: ms.length,
      live_total: ms.filter((m) => m.status !== 'cancelled').reduce((sum, m) => sum + Number(m.amount), 0),
      m_released: count(released),
      m_open: count((m) => open.has(m.status)),
      m_disputed: count((m) => m.status === 'disputed'),
      m_cancelled: count((m) => m.status === 'cancelled'),
      m_straight: count((m) => released(m) && m.approval_round <= 1 && m.disputed_at === null && m.ruling === null),
      m_funded: count((m) => m.funded_at !== null),
      m_funded_disputed: count((m) => m.funded_at !== null && m.disputed_at !== null),
      m_due_released: count((m) => m.due_at !== null && released(m)),
      m_on_time: count((m) => m.due_at !== null && released(m) && m.released_at !== null && m.released_at.getTime() <= m.due_at.getTime()),
    };
    const k = byId.get(d.id)!;
    const got = Object.fromEntries(Object.keys(want).map((c) => [c, c === 'live_total' ? Number(k[c]) : k[c]]));
    if (JSON.stringify(got) !== JSON.stringify(want)) wrong.push({ deal: d.reference, got, want });
  }
  expect(wrong, when).to.deep.equal([]);
}

describe('enterprise reports: deal status and totals in SQL match the deal answers', () => {
  it('HELD_SQL names exactly the statuses of HELD (the SQL is written out, never built from values)', () => {
    expect(HELD_SQL).to.equal(`(${HELD.map((w) => `'${w}'`).join(', ')})`);
  });

  it('every mix of up to three milestones and 300 random deals', async () => {
    clock.set(new Date('2026-11-27T10:00:00Z'));
    const { workspace, owner } = await createWorkspace();
    const [cp] = await db('counterparties')
      .insert({ workspace_id: workspace.id, name: 'PT Acak', country_code: 'ID', relationship: 'seller', created_at: clock.now(), updated_at: clock.now() })
      .returning<{ id: string }[]>('id');

    const random = seeded(20261206);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const amountOf = () => 10_000 + Math.floor(random() * 5_000) * 1_000;
    const plans: Planned[] = [];
    for (const size of [0, 1, 2, 3]) {
      for (const statuses of mixes(size)) {
        for (const cancelled of [false, true]) {
          for (const termsReview of [false, true]) plans.push({ cancelled, termsReview, milestones: statuses.map((status) => ({ status, amount: amountOf(), refunded: 0 })) });
        }
      }
    }
    expect(plans).to.have.length(220 * 4);
    for (let i = 0; i < 300; i += 1) {
      const n = 4 + Math.floor(random() * 17);
      // Lean towards a few statuses so the later rules (completed, in_progress, funded) are reached often.
      const pool: readonly MilestoneStatus[] = random() < 0.5 ? MILESTONE_STATUSES : pick([['released', 'cancelled'], ['released', 'funded', 'cancelled'], ['awaiting_funding', 'draft', 'cancelled'], ['approved', 'evidence_submitted', 'released']] as MilestoneStatus[][]);
      plans.push({
        cancelled: random() < 0.1,
        termsReview: random() < 0.3,
        milestones: Array.from({ length: n }, () => {
          const status = pick(pool);
          const amount = amountOf();
          return { status, amount, refunded: status === 'released' && random() < 0.3 ? Math.floor(amount / 3) : 0 };
        }),
      });
    }

    const base = clock.now().getTime();
    const deals = plans.map((p, i) => ({
      workspace_id: workspace.id,
      reference: `RND-${String(i).padStart(5, '0')}`,
      title: `Acak ${i}`,
      currency: 'IDR',
      counterparty_id: cp!.id,
      owner_id: owner.id,
      is_test: true,
      terms_review: p.termsReview,
      cancelled_at: p.cancelled ? new Date(base) : null,
      fee_rate_bp: 200,
      fee_min: 5_000,
      fee_volume_basis: 0,
      fee_allocation: 'buyer',
      fee_buyer_percent: 100,
      platform_fee: 0,
      buyer_fee: 0,
      seller_fee: 0,
      created_at: new Date(base - (plans.length - i) * 1000),
      updated_at: new Date(base),
    }));
    const ids: string[] = [];
    for (let i = 0; i < deals.length; i += 500) ids.push(...(await db('deals').insert(deals.slice(i, i + 500)).returning<{ id: string }[]>('id')).map((r) => r.id));
    const milestones = plans.flatMap((p, i) =>
      p.milestones.map((m, k) => ({
        deal_id: ids[i]!,
        workspace_id: workspace.id,
        sequence_no: k + 1,
        title: `Tahap ${k + 1}`,
        amount: m.amount,
        status: m.status,
        refunded_amount: m.refunded,
        buyer_fee: 0,
        seller_fee: 0,
        funding_amount: m.amount,
        payout_amount: m.amount,
        created_at: new Date(base),
        updated_at: new Date(base),
      })),
    );
    for (let i = 0; i < milestones.length; i += 1_000) await db('deal_milestones').insert(milestones.slice(i, i + 1_000));

    // What the deal answers say, from the rows.
    const dealRows = (await db('deals').where({ workspace_id: workspace.id }).orderBy('created_at')) as DealWithNames[];
    const msRows = (await db('deal_milestones').where({ workspace_id: workspace.id }).orderBy(['deal_id', 'sequence_no'])) as MilestoneRow[];
    const byDeal = new Map<string, MilestoneRow[]>();
    for (const m of msRows) byDeal.set(m.deal_id, [...(byDeal.get(m.deal_id) ?? []), m]);
    const expected = new Map(
      dealRows.map((d) => {
        const ms = byDeal.get(d.id) ?? [];
        const status = dealStatus(d, ms);
        const answer = serializeDeal({ ...d, owner_name: '', counterparty_name: '', counterparty_country_code: 'ID', counterparty_kyb_status: 'verified', counterparty_relationship: 'seller' }, ms, status, 'ID');
        return [d.reference, { status, total: answer.total_amount, funded: answer.funded_amount, released: answer.released_amount }];
      }),
    );
    // Every status is reached, so every branch of the rule is compared.
    expect(new Set([...expected.values()].map((e) => e.status))).to.have.keys(...DEAL_STATUSES);

    // The expression itself.
    const { rows } = await db.raw<{ rows: { reference: string; status: DealStatus }[] }>(
      `SELECT d.reference, ${dealStatusSql('d', 'm')} AS status FROM deals d LEFT JOIN deal_milestones m ON m.deal_id = d.id WHERE d.workspace_id = ? GROUP BY d.id`,
      [workspace.id],
    );
    expect(rows).to.have.length(plans.length);
    const mismatches = rows.filter((r) => r.status !== expected.get(r.reference)!.status);
    expect(mismatches.map((r) => ({ ...r, plan: plans[Number(r.reference.slice(4))], want: expected.get(r.reference)!.status }))).to.deep.equal([]);

    // The status the triggers keep in deal_statuses (migration 20261207000100), after the bulk inserts.
    const stored = async () => {
      const { rows: kept } = await db.raw<{ rows: { reference: string; status: DealStatus }[] }>(
        'SELECT d.reference, s.status FROM deals d JOIN deal_statuses s ON s.deal_id = d.id WHERE d.workspace_id = ?',
        [workspace.id],
      );
      return kept;
    };
    const kept = await stored();
    expect(kept).to.have.length(plans.length);
    expect(kept.filter((r) => r.status !== expected.get(r.reference)!.status)).to.deep.equal([]);
    await expectFigures(dealRows, byDeal, 'after the bulk inserts');

    // The summary's counts by status.
    const bounds = rangeBounds({ from: '2026-11-01', to: '2026-11-27' });
    const { byStatus: counts, byCounterparty } = await dealCounts(db, workspace.id, bounds);
    expect(byCounterparty).to.deep.equal(new Map([[cp!.id, plans.length]]));
    for (const s of DEAL_STATUSES) expect(counts.get(s) ?? 0, s).to.equal([...expected.values()].filter((e) => e.status === s).length);

    // The deals export's rows (read in pages of 1,000, oldest first): status and totals as the deal answers show them.
    const exported: { reference: string; status: unknown; total: unknown; funded: unknown; released: unknown }[] = [];
    for await (const r of DEALS_SOURCE.rows(db, workspace.id, bounds)) exported.push({ reference: String(r.reference), status: r.status, total: r.total_amount, funded: r.funded_amount, released: r.released_amount });
    expect(exported.map((r) => r.reference)).to.deep.equal(dealRows.map((d) => d.reference));
    for (const r of exported) expect({ status: r.status, total: r.total, funded: r.funded, released: r.released }, r.reference).to.deep.equal(expected.get(r.reference));

    // Random changes through every path the triggers watch: milestone status moves (one or
    // many per statement), milestones added and deleted, deals cancelled and un-cancelled,
    // terms review switched; after each round the stored status is dealStatus of the rows.
    const deals2 = await db('deals').where({ workspace_id: workspace.id }).select<{ id: string }[]>('id');
    for (let round = 0; round < 4; round += 1) {
      for (let k = 0; k < 150; k += 1) {
        const dealId = pick(deals2).id;
        const ms = await db('deal_milestones').where({ deal_id: dealId }).select<{ id: string; sequence_no: number }[]>('id', 'sequence_no');
        const r = random();
        if (r < 0.45 && ms.length > 0) await db('deal_milestones').where({ id: pick(ms).id }).update({ status: pick(MILESTONE_STATUSES) });
        else if (r < 0.55) await db('deal_milestones').where({ deal_id: dealId }).update({ status: pick(MILESTONE_STATUSES) });
        else if (r < 0.7) {
          const seq = Math.max(0, ...ms.map((m) => m.sequence_no)) + 1;
          await db('deal_milestones').insert({ deal_id: dealId, workspace_id: workspace.id, sequence_no: seq, title: `Tahap ${seq}`, amount: 10_000, status: pick(MILESTONE_STATUSES), refunded_amount: 0, buyer_fee: 0, seller_fee: 0, funding_amount: 10_000, payout_amount: 10_000, created_at: clock.now(), updated_at: clock.now() });
        } else if (r < 0.8 && ms.length > 0) await db('deal_milestones').where({ id: pick(ms).id }).del();
        else if (r < 0.85) await db('deals').where({ id: dealId }).update({ cancelled_at: random() < 0.5 ? clock.now() : null });
        else if (r < 0.9) await db('deals').where({ id: dealId }).update({ terms_review: random() < 0.5 });
        else if (r < 0.93) await db('deals').where({ id: dealId }).update(random() < 0.5 ? { currency: pick(['IDR', 'USD']) } : { activated_at: random() < 0.5 ? clock.now() : null });
        else if (ms.length > 0) {
          // The other milestone columns the per-deal figures read (migration 20261210000300).
          const at = () => (random() < 0.4 ? null : new Date(base + Math.floor(random() * 20) * 3_600_000));
          const amount = 10_000 + Math.floor(random() * 100) * 1_000;
          await db('deal_milestones')
            .where({ id: pick(ms).id })
            .update(
              pick([
                { amount, funding_amount: amount, payout_amount: amount, refunded_amount: 0 },
                { funded_at: at() },
                { disputed_at: at() },
                { due_at: at() },
                { released_at: at() },
                { approval_round: pick([0, 1, 2]) },
                { ruling: pick([null, 'release', 'refund', 'split']) },
              ]),
            );
        }
      }
      const now = (await db('deals').where({ workspace_id: workspace.id })) as DealWithNames[];
      const msNow = (await db('deal_milestones').where({ workspace_id: workspace.id })) as MilestoneRow[];
      const grouped = new Map<string, MilestoneRow[]>();
      for (const m of msNow) grouped.set(m.deal_id, [...(grouped.get(m.deal_id) ?? []), m]);
      const want = new Map(now.map((d) => [d.reference, dealStatus(d, grouped.get(d.id) ?? [])]));
      const after = await stored();
      expect(after.filter((x) => x.status !== want.get(x.reference)), `round ${round}`).to.deep.equal([]);
      await expectFigures(now, grouped, `round ${round}`);
    }
  });
});
