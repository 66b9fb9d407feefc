/**
 * GET /v1/enterprise/reconciliation (enterprise spec 4.9, shape not shown; decision 0020
 * "Overview and reconciliation"): the ledger's figures of a live workspace (funded, held,
 * buyer fees held, in flight, paid out, fees, refunds) beside those its deals and payouts
 * imply, checked by hand against a workspace whose money reached every place and against the
 * global ledger accounts; a sandbox workspace all zeros; each planted difference found and
 * listed with its milestone (a milestone amount changed, a stray posting, a journal line
 * changed in place, a payout's status changed, a posting on a sandbox milestone); another
 * workspace's differences never shown.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { dealWorld } from '../../factories/deals.js';
import { balance } from '../../factories/releases.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger, post } from '../../../shared/ledger/index.js';
import { reconcile } from '../../../shared/reconciliation/service.js';
import { headersOf, workspaceKey } from '../../factories/enterprise.js';
import type { MemberRow } from '../../../shared/enterprise/repo.js';
import { liveBooks, marksOf, moneyOf, RECONCILIATION, reconciliationOf, sandboxDeal, type Books, type Figures, type MilestoneMoney } from './support.js';

/** The figures worked out by hand from the fixture's milestones (see liveBooks). */
function expected(ms: MilestoneMoney[]): Figures {
  const [m1, m2, m3, m4, m5, m6] = ms as [MilestoneMoney, MilestoneMoney, MilestoneMoney, MilestoneMoney, MilestoneMoney, MilestoneMoney];
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  return {
    funded: sum(ms.map((m) => m.funding_amount)),
    // m4 held in full; m5's failed payout back in escrow; m6 holds what the split left for the counterparty.
    held: m4.amount + m5.payout_amount + 400_000,
    buyer_fees_held: m4.buyer_fee + m6.buyer_fee,
    in_flight: m2.payout_amount,
    paid_out: m1.payout_amount,
    // The whole platform fee share of each released milestone.
    fees: sum([m1, m2, m5].map((m) => m.buyer_fee + m.seller_fee)),
    // m3 refunded with its buyer fee; m6's split refunded 200,000.
    refunds: m3.amount + m3.buyer_fee + (m6.amount - 400_000),
  };
}

describe('enterprise reconciliation', () => {
  const client = api();
  afterEach(() => clock.reset());

  it('a live workspace: ledger and deals agree on every figure, as worked out by hand and as the global accounts hold them', async () => {
    const b = await liveBooks(client);
    const ms = await moneyOf(b.dealId);
    expect(ms[4]!.returned_amount).to.equal(ms[4]!.payout_amount);
    expect(ms[5]!.refunded_amount).to.equal(200_000);
    const want = expected(ms);
    // Money is conserved: what was funded is in one of the places.
    expect(want.funded).to.equal(want.held + want.buyer_fees_held + want.in_flight + want.paid_out + want.fees + want.refunds);
    expect(want.buyer_fees_held).to.be.greaterThan(0);

    const r = await reconciliationOf(client, b.w.h.viewer);
    expect(Object.keys(r).sort()).to.deep.equal(['balanced', 'currencies', 'differences', 'generated_at']);
    expect(r.balanced).to.equal(true);
    expect(r.differences).to.deep.equal([]);
    expect(r.currencies).to.deep.equal([{ currency: 'IDR', ledger: want, derived: want }]);
    // The only money in this database is this workspace's: the shared accounts hold exactly its figures.
    let held = 0;
    for (const m of ms) held += await balance(`milestone:${m.id}`);
    expect({
      funded: -(await balance('enterprise:funding_received')),
      held,
      buyer_fees_held: await balance('enterprise:buyer_fees_held'),
      in_flight: await balance('enterprise:payouts_in_flight'),
      paid_out: await balance('enterprise:payouts_sent'),
      fees: await balance('platform:enterprise_fees'),
      refunds: await balance('enterprise:refunds_sent'),
    }).to.deep.equal(want);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('5 reads per minute per user, a workspace key of the member counted with its sessions: the 6th answers 429 RATE_LIMITED with Retry-After; another member is not affected', async () => {
    clock.set(new Date('2026-12-09T05:00:00Z'));
    const w = await dealWorld(client);
    await sandboxDeal(client, w);
    const viewer = await db('workspace_members').where({ workspace_id: w.workspace.id, user_id: w.users.viewer.id }).first<MemberRow>('*');
    const key = await workspaceKey(w.workspace.id, { member: viewer, user: w.users.viewer }, ['read']);
    expect((await client.get(RECONCILIATION).set(headersOf({ kind: 'workspace_key', key: key.key }))).status).to.equal(200);
    for (let i = 2; i <= 5; i++) expect((await client.get(RECONCILIATION).set(w.h.viewer)).status, `request ${i}`).to.equal(200);
    const over = await client.get(RECONCILIATION).set(w.h.viewer);
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(over.headers['retry-after'])).to.be.within(1, 60);
    expect((await client.get(RECONCILIATION).set(headersOf({ kind: 'workspace_key', key: key.key }))).status).to.equal(429);
    expect((await reconciliationOf(client, w.h.finance)).balanced).to.equal(true);
  });

  it('a sandbox workspace: its deals move no money, every figure is 0 on both sides', async () => {
    const w = await dealWorld(client);
    await sandboxDeal(client, w);
    const zero = { funded: 0, held: 0, buyer_fees_held: 0, in_flight: 0, paid_out: 0, fees: 0, refunds: 0 };
    const r = await reconciliationOf(client, w.h.viewer);
    expect(r).to.deep.include({ balanced: true, differences: [], currencies: [{ currency: 'IDR', ledger: zero, derived: zero }] });
    // A workspace without deals has nothing to list.
    const empty = await dealWorld(client, 'Kosong');
    expect((await reconciliationOf(client, empty.h.viewer)).currencies).to.deep.equal([]);
  });

  describe('planted differences, each listed with its milestone', () => {
    let b: Books;
    let ms: MilestoneMoney[];
    let want: Figures;
    beforeEach(async () => {
      b = await liveBooks(client);
      ms = await moneyOf(b.dealId);
      want = expected(ms);
      // Read once first: the figures are kept and the marks of the fixture's writes dealt with,
      // so each difference below is found from the marks of its own write alone.
      expect(await reconciliationOf(client, b.w.h.viewer)).to.deep.include({ balanced: true, differences: [] });
      expect(await marksOf(b.w.workspace.id)).to.equal(0);
    });

    const diff = (mIndex: number, figure: keyof Figures, ledger: number, derived: number) => ({
      figure,
      currency: 'IDR',
      deal_id: b.dealId,
      deal_reference: b.reference,
      milestone_id: b.mids[mIndex]!,
      sequence_no: mIndex + 1,
      is_test: false,
      ledger,
      derived,
      difference: ledger - derived,
    });

    it('a milestone amount changed in the table: funded and held differ', async () => {
      const m4 = ms[3]!;
      await db('deal_milestones')
        .where({ id: m4.id })
        .update({ amount: m4.amount + 1000, funding_amount: m4.funding_amount + 1000, payout_amount: m4.payout_amount + 1000 });
      const r = await reconciliationOf(client, b.w.h.viewer);
      expect(r.balanced).to.equal(false);
      expect(r.differences).to.deep.equal([diff(3, 'funded', m4.funding_amount, m4.funding_amount + 1000), diff(3, 'held', m4.amount, m4.amount + 1000)]);
      expect(r.currencies[0]!.ledger).to.deep.equal(want);
      expect(r.currencies[0]!.derived).to.deep.equal({ ...want, funded: want.funded + 1000, held: want.held + 1000 });
    });

    it('a stray posting on a milestone account: held differs by its amount', async () => {
      await post(db, {
        kind: 'test.stray',
        refType: 'deal_milestone',
        refId: b.mids[3]!,
        postingKey: `test-stray:${b.mids[3]}`,
        memo: 'planted',
        lines: [
          { account: { milestoneId: b.mids[3]!, currency: 'IDR' }, amount: 5000 },
          { account: { system: 'adjustments' }, amount: -5000 },
        ],
      });
      const r = await reconciliationOf(client, b.w.h.viewer);
      expect(r.differences).to.deep.equal([diff(3, 'held', ms[3]!.amount + 5000, ms[3]!.amount)]);
    });

    it('a journal line changed in place with every trigger off (no mark): the read does not see it, the nightly pass that works out every milestone does', async () => {
      await db.transaction(async (trx) => {
        await trx.raw('SET LOCAL session_replication_role = replica');
        await trx.raw(
          `UPDATE journal_lines l SET amount = l.amount + 7
             FROM journal_entries e, ledger_accounts a
            WHERE e.id = l.entry_id AND a.id = l.account_id AND e.posting_key = ? AND a.code = 'enterprise:payouts_sent'`,
          [`ent-settle:${b.payouts.paid}`],
        );
      });
      expect(await marksOf(b.w.workspace.id)).to.equal(0);
      expect(await reconciliationOf(client, b.w.h.viewer)).to.deep.include({ balanced: true });
      await reconcile(b.w.workspace.id, { full: true });
      const r = await reconciliationOf(client, b.w.h.viewer);
      expect(r.differences).to.deep.equal([diff(0, 'paid_out', ms[0]!.payout_amount + 7, ms[0]!.payout_amount)]);
    });

    it('a payout marked settled in the table without its posting: in flight and paid out differ', async () => {
      await db('disbursements').where({ id: b.payouts.inFlight }).update({ status: 'settled', settled_at: clock.now() });
      const p = ms[1]!.payout_amount;
      const r = await reconciliationOf(client, b.w.h.viewer);
      expect(r.differences).to.deep.equal([diff(1, 'in_flight', p, 0), diff(1, 'paid_out', 0, p)]);
    });

    it("a posting on a sandbox milestone is a difference; another workspace's differences never show", async () => {
      const other = await dealWorld(client, 'Lain');
      const sandbox = await sandboxDeal(client, other);
      await post(db, {
        kind: 'test.stray',
        refType: 'deal_milestone',
        refId: sandbox.mids[0]!,
        postingKey: `test-stray:${sandbox.mids[0]}`,
        lines: [
          { account: { milestoneId: sandbox.mids[0]!, currency: 'IDR' }, amount: 900 },
          { account: { system: 'adjustments' }, amount: -900 },
        ],
      });
      const theirs = await reconciliationOf(client, other.h.viewer);
      expect(theirs.differences).to.have.length(1);
      expect(theirs.differences[0]).to.deep.include({ figure: 'held', milestone_id: sandbox.mids[0], is_test: true, ledger: 900, derived: 0, difference: 900 });
      const mine = await reconciliationOf(client, b.w.h.viewer);
      expect(mine).to.deep.include({ balanced: true, differences: [] });
      expect(mine.currencies).to.deep.equal([{ currency: 'IDR', ledger: want, derived: want }]);
    });
  });
});
