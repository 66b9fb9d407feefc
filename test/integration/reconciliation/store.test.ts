/**
 * The reconciliation's kept figures (migration 20261210000100; decision 0020 "Reconciliation:
 * figures kept per milestone"): which writes mark a milestone (triggers, so no code path can
 * forget), that a read works out only the marked milestones and deletes only the marks it
 * read, that reads at once and a release meanwhile never show a false difference, and that
 * the nightly pass puts right what no trigger saw.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { post } from '../../../shared/ledger/index.js';
import { catchUp, reconcile, PASS_SIZES } from '../../../shared/reconciliation/service.js';
import { submit } from '../overview/support.js';
import { liveBooks, marksOf, reconciliationOf, type Books } from './support.js';

const marked = async (workspaceId: string): Promise<string[]> =>
  (await db('reconciliation_marks').where({ workspace_id: workspaceId }).orderBy('id').pluck<string[]>('milestone_id')).filter((v, i, a) => a.indexOf(v) === i);

describe('enterprise reconciliation: the kept figures', () => {
  const client = api();
  let b: Books;
  beforeEach(async () => {
    b = await liveBooks(client);
    await catchUp(b.w.workspace.id);
    expect(await marksOf(b.w.workspace.id)).to.equal(0);
  });
  afterEach(() => clock.reset());

  it('every milestone of the workspace is kept, one row each, with both sides; a balanced one is not flagged', async () => {
    const rows = await db('reconciliation_figures').where({ workspace_id: b.w.workspace.id }).orderBy('milestone_id').select('*');
    expect(rows.map((r: { milestone_id: string }) => r.milestone_id)).to.deep.equal([...b.mids].sort());
    for (const r of rows as Record<string, unknown>[]) {
      expect(r.differs).to.equal(false);
      expect(r.currency).to.equal('IDR');
    }
  });

  it('marks: a milestone update, a payout update, a journal entry on a milestone or payout, a deal sandbox flag change; a consumer posting marks nothing', async () => {
    const ws = b.w.workspace.id;
    await db('deal_milestones').where({ id: b.mids[3] }).update({ updated_at: clock.now() });
    expect(await marked(ws)).to.deep.equal([b.mids[3]]);
    await catchUp(ws);

    await db('disbursements').where({ id: b.payouts.inFlight }).update({ updated_at: clock.now() });
    expect(await marked(ws)).to.deep.equal([b.mids[1]]);
    await catchUp(ws);

    await post(db, {
      kind: 'test.stray',
      refType: 'disbursement',
      refId: b.payouts.failed,
      postingKey: `test-stray-payout:${b.payouts.failed}`,
      lines: [
        { account: { system: 'adjustments' }, amount: -1 },
        { account: { system: 'gatewayClearing' }, amount: 1 },
      ],
    });
    expect(await marked(ws)).to.deep.equal([b.mids[4]]);
    await catchUp(ws);
    await post(db, {
      kind: 'test.stray',
      refType: 'deal_milestone',
      refId: b.mids[5]!,
      postingKey: `test-stray:${b.mids[5]}`,
      lines: [
        { account: { milestoneId: b.mids[5]!, currency: 'IDR' }, amount: 3 },
        { account: { system: 'adjustments' }, amount: -3 },
      ],
    });
    expect(await marked(ws)).to.deep.equal([b.mids[5]]);
    await catchUp(ws);

    const before = await db('reconciliation_marks').count<{ n: string }>('* as n').first();
    await post(db, {
      kind: 'test.consumer',
      refType: 'escrow',
      refId: '8d5c2f0e-0000-4000-8000-000000000001',
      postingKey: 'test-consumer-posting',
      lines: [
        { account: { system: 'adjustments' }, amount: -5 },
        { account: { system: 'gatewayClearing' }, amount: 5 },
      ],
    });
    expect((await db('reconciliation_marks').count<{ n: string }>('* as n').first())?.n).to.equal(before?.n);

    await db('deals').where({ id: b.dealId }).update({ is_test: true });
    expect((await marked(ws)).sort()).to.deep.equal([...b.mids].sort());
    await db('deals').where({ id: b.dealId }).update({ is_test: false });
  });

  it('a read works out only the marked milestones and deletes only the marks it read', async () => {
    const ws = b.w.workspace.id;
    const kept = async () =>
      new Map((await db('reconciliation_figures').where({ workspace_id: ws }).select('milestone_id', 'computed_at')).map((r: { milestone_id: string; computed_at: Date }) => [r.milestone_id, r.computed_at.getTime()]));
    const first = await kept();
    clock.set(new Date(Date.now() + 60_000));
    await db('deal_milestones').where({ id: b.mids[0] }).update({ updated_at: clock.now() });
    expect(await catchUp(ws)).to.deep.equal({ marks: 1, milestones: 1 });
    const second = await kept();
    for (const id of b.mids) {
      if (id === b.mids[0]) expect(second.get(id)).to.be.greaterThan(first.get(id)!);
      else expect(second.get(id)).to.equal(first.get(id));
    }
    // A mark is deleted once dealt with.
    await db('reconciliation_marks').insert({ workspace_id: ws, milestone_id: b.mids[1] });
    expect(await catchUp(ws)).to.deep.equal({ marks: 1, milestones: 1 });
    expect(await marksOf(ws)).to.equal(0);
  });

  it('more marks than one page and more milestones than one statement: every one dealt with', async () => {
    const ws = b.w.workspace.id;
    const rows = Array.from({ length: PASS_SIZES.marks + 5 }, (_, i) => ({ workspace_id: ws, milestone_id: b.mids[i % b.mids.length]! }));
    for (let i = 0; i < rows.length; i += 2000) await db('reconciliation_marks').insert(rows.slice(i, i + 2000));
    expect(await catchUp(ws)).to.deep.equal({ marks: PASS_SIZES.marks + 5, milestones: b.mids.length });
    expect(await marksOf(ws)).to.equal(0);
  });

  it('three reads at once while the money moves: the same balanced answer, no false difference', async () => {
    const [reads] = await Promise.all([
      Promise.all([b.w.h.viewer, b.w.h.finance, b.w.h.owner].map((h) => reconciliationOf(client, h))),
      submit(client, b.w.h.operator, b.dealId, b.mids[3]!),
    ]);
    for (const r of reads) expect(r).to.deep.include({ balanced: true, differences: [] });
    expect(reads[1]!.currencies).to.deep.equal(reads[0]!.currencies);
    expect(reads[2]!.currencies).to.deep.equal(reads[0]!.currencies);
  });

  it('the nightly pass (full) puts right a change no trigger saw, and a difference planted that way is then listed', async () => {
    const ws = b.w.workspace.id;
    await db.transaction(async (trx) => {
      await trx.raw('SET LOCAL session_replication_role = replica');
      await trx('deal_milestones').where({ id: b.mids[3] }).update({ amount: db.raw('amount + 10'), funding_amount: db.raw('funding_amount + 10'), payout_amount: db.raw('payout_amount + 10') });
    });
    expect(await marksOf(ws)).to.equal(0);
    expect((await reconcile(ws)).differences).to.deep.equal([]);
    const full = await reconcile(ws, { full: true });
    expect(full.differences.map((d) => [d.milestone_id, d.figure, d.difference])).to.deep.equal([
      [b.mids[3], 'funded', -10],
      [b.mids[3], 'held', -10],
    ]);
    await db.transaction(async (trx) => {
      await trx.raw('SET LOCAL session_replication_role = replica');
      await trx('deal_milestones').where({ id: b.mids[3] }).update({ amount: db.raw('amount - 10'), funding_amount: db.raw('funding_amount - 10'), payout_amount: db.raw('payout_amount - 10') });
    });
    expect((await reconcile(ws, { full: true })).differences).to.deep.equal([]);
  });

  it('a deleted milestone leaves no kept figures behind (the foreign key cascades)', async () => {
    const ws = b.w.workspace.id;
    const count = async () => Number((await db('reconciliation_figures').where({ workspace_id: ws }).count<{ n: string }>('* as n').first())?.n);
    expect(await count()).to.equal(b.mids.length);
    await db('deal_milestones').where({ id: b.mids[3] }).delete();
    expect(await count()).to.equal(b.mids.length - 1);
  });
});
