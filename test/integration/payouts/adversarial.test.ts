/**
 * Adversarial review of the enterprise money-out paths (issue 27; decision 0019): it must be
 * impossible to pay the wrong account, pay twice, or pay more than is held. Each test tries
 * one attack with real Postgres, real concurrent HTTP requests, direct database edits an
 * attacker or a bug could make, and the clock moved, and asserts the SAFE outcome: the
 * ledger check clean, every posting once, what is paid or on its way never more than what
 * the milestone releases, and money only to a verified, unaltered destination of the deal's
 * counterparty.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { runJobs } from '../../helpers/jobs.js';
import { dealWorld, feedRows, milestoneRows, type Client } from '../../factories/deals.js';
import { approve, balance, disbursementsOf, fundedDeal, instructionVia, makeLive, releasePath, releasedMilestone, type ReleaseWorld } from '../../factories/releases.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { setDisbursementAdapter, type DisbursementAdapter, type DisbursementRequest } from '../../../shared/payouts/adapter.js';
import { DisbursementBusyError, runDisbursement, sweepDisbursements } from '../../../shared/payouts/worker.js';
import { getQueue } from '../../../shared/queues.js';

const DEALS = '/v1/enterprise/deals';
const rulingPath = (mid: string) => `/v1/admin/enterprise/milestones/${mid}/resolve-dispute`;
const staffMove = (id: string, move: 'settle' | 'fail') => `/v1/admin/enterprise/disbursements/${id}/${move}`;
const pinNow = (): Date => {
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);
  clock.set(now);
  return now;
};

const MANUAL: DisbursementAdapter = { name: 'manual', automatic: false, send: () => Promise.reject(new Error('the manual adapter sends nothing')) };

/**
 * A provider that pays each reference once (a repeated reference answers the same transfer),
 * records every call, and holds each call (or the first `heldCalls`) until `release()` when
 * `held` is on (a run caught mid-send).
 */
function provider(options: { held?: boolean; heldCalls?: number; answer?: (r: DisbursementRequest) => 'paid' | 'refuse' } = {}) {
  const calls: DisbursementRequest[] = [];
  const paid = new Map<string, { transfer: string; amount: number; account: string }>();
  let open: (() => void) | null = null;
  let gate = new Promise<void>((resolve) => (open = resolve));
  let entered: (() => void) | null = null;
  let inside = new Promise<void>((resolve) => (entered = resolve));
  const adapter: DisbursementAdapter = {
    name: 'adversarial',
    automatic: true,
    send: async (r) => {
      calls.push(r);
      entered?.();
      if (options.held && calls.length <= (options.heldCalls ?? Infinity)) await gate;
      if ((options.answer?.(r) ?? 'paid') === 'refuse') return { outcome: 'failed', reason: 'account closed' };
      if (!paid.has(r.reference)) paid.set(r.reference, { transfer: `trf-${paid.size + 1}`, amount: r.amount, account: r.destination.account_number });
      return { outcome: 'paid', providerReference: paid.get(r.reference)!.transfer };
    },
  };
  return {
    adapter,
    calls,
    paid,
    /** Resolves once a call is inside the provider. */
    sending: () => inside,
    release: () => {
      open?.();
      gate = new Promise<void>((resolve) => (open = resolve));
      inside = new Promise<void>((resolve) => (entered = resolve));
    },
    /** What the provider moved in total. */
    total: () => [...paid.values()].reduce((a, p) => a + p.amount, 0),
  };
}

interface MilestoneMoney {
  status: string;
  payout_amount: number;
  refunded_amount: number;
  returned_amount: number;
}

async function money(mid: string): Promise<MilestoneMoney> {
  const m = await db('deal_milestones').where({ id: mid }).first<Record<string, string>>('status', 'payout_amount', 'refunded_amount', 'returned_amount');
  return { status: m.status!, payout_amount: Number(m.payout_amount), refunded_amount: Number(m.refunded_amount), returned_amount: Number(m.returned_amount) };
}

/**
 * Never more than is held: for a released milestone, what is on its way or paid plus what
 * failed payouts brought back is exactly what its release owes (payout amount less what a
 * ruling refunded); for any other milestone nothing is on its way or paid.
 */
async function expectConserved(mid: string): Promise<void> {
  const m = await money(mid);
  const rows = await disbursementsOf(mid);
  const out = rows.filter((d) => d.status !== 'failed').reduce((a, d) => a + Number(d.amount), 0);
  if (m.status === 'released') expect(out + m.returned_amount, `milestone ${mid}`).to.equal(m.payout_amount - m.refunded_amount);
  else expect(out, `milestone ${mid} (${m.status})`).to.equal(0);
}

async function expectClean(...mids: string[]): Promise<void> {
  for (const mid of mids) await expectConserved(mid);
  expect(await checkLedger(db)).to.deep.equal([]);
  const dup = await db('journal_entries').whereNotNull('posting_key').groupBy('posting_key').havingRaw('COUNT(*) > 1').select('posting_key');
  expect(dup).to.deep.equal([]);
}

const payoutOf = async (mid: string): Promise<number> => (await money(mid)).payout_amount;

const statusOf = async (id: string): Promise<string> => ((await db('disbursements').where({ id }).first<{ status: string }>('status')).status);

/** A live deal's first milestone approved, with a verified instruction, not released yet. */
async function approvedLive(client: Client, amounts = [1_000_000], extra: Record<string, unknown> = {}) {
  const r = await fundedDeal(client, 'live', amounts, extra);
  const mid = r.mids[0]!;
  await approve(mid);
  const a = await instructionVia(client, r, 'Utama');
  return { ...r, mid, a, payout: await payoutOf(mid) };
}

const release = (client: Client, r: ReleaseWorld, mid: string, splits: { payout_instruction_id: string; amount: number }[], key?: string) => {
  const req = client.post(releasePath(r.deal.deal.id, mid)).set(r.w.h.finance);
  if (key) void req.set('Idempotency-Key', key);
  return req.send({ splits });
};

const dispute = (client: Client, r: ReleaseWorld, mid: string) =>
  client.post(`${DEALS}/${r.deal.deal.id}/milestones/${mid}/dispute`).set(r.w.h.operator).send({ reason: 'Barang tidak sesuai pesanan' });

describe('enterprise payouts: adversarial review (issue 27, decision 0019)', () => {
  const client = api();
  afterEach(() => {
    setDisbursementAdapter(null);
    clock.reset();
  });

  describe('the worker', () => {
    it('two runs of one payout at once: one sends, the other is told to retry; five at once send once; posted once', async () => {
      const p = provider({ held: true });
      setDisbursementAdapter(p.adapter);
      const r = await releasedMilestone(client, 'live', ['Utama', 'Cadangan']);
      const [a, b] = r.disbursements;
      const first = runDisbursement(a!.id);
      await p.sending();
      // The first run holds the claim while it talks to the provider.
      let busy: unknown;
      await runDisbursement(a!.id).catch((e: unknown) => (busy = e));
      expect(busy).to.be.instanceOf(DisbursementBusyError);
      p.release();
      expect((await first).outcome).to.equal('settled');
      expect(p.calls.map((c) => c.reference)).to.deep.equal([`disb_${a!.id}`]);
      // Five runs of the other payout at once, nothing held: one sends.
      const q = provider();
      setDisbursementAdapter(q.adapter);
      const runs = await Promise.all([1, 2, 3, 4, 5].map(() => runDisbursement(b!.id).catch((e: unknown) => e)));
      expect(runs.filter((x) => (x as { outcome?: string }).outcome === 'settled')).to.have.length(1);
      expect(runs.every((x) => x instanceof DisbursementBusyError || ['settled', 'skipped'].includes((x as { outcome: string }).outcome))).to.equal(true);
      expect(q.calls).to.have.length(1);
      expect(await db('journal_entries').whereIn('posting_key', [`ent-settle:${a!.id}`, `ent-settle:${b!.id}`]).select('id')).to.have.length(2);
      await expectClean(r.mid);
    });

    it('the sweeper re-queues a run whose claim ran out while it was still sending; both runs use one reference: paid once, settled once', async () => {
      const p = provider({ held: true, heldCalls: 1 });
      setDisbursementAdapter(p.adapter);
      const now = pinNow();
      const r = await releasedMilestone(client, 'live');
      const d = r.disbursements[0]!;
      const stalled = runDisbursement(d.id, 60_000);
      await p.sending();
      // The run stalls past its claim: the sweeper finds it and queues it again; the next run takes the claim over and sends.
      clock.set(new Date(now.getTime() + 61_000));
      expect((await sweepDisbursements()).requeued).to.equal(1);
      const ran = await runJobs(['payouts']);
      expect(ran.filter((j) => j.name === 'payouts.disburse').map((j) => (j.result as { outcome?: string } | undefined)?.outcome)).to.include('settled');
      // The stalled run answers last and finds it settled.
      p.release();
      expect(await stalled).to.deep.equal({ outcome: 'skipped', disbursement_id: d.id, status: 'settled' });
      expect(await statusOf(d.id)).to.equal('settled');
      expect(new Set(p.calls.map((c) => c.reference))).to.deep.equal(new Set([`disb_${d.id}`]));
      expect(p.paid.size).to.equal(1);
      expect(p.total()).to.equal(r.payout);
      expect(await db('journal_entries').where({ posting_key: `ent-settle:${d.id}` }).select('id')).to.have.length(1);
      await expectClean(r.mid);
    });

    it('staff cannot settle or fail a payout while a live worker is sending it; the worker then settles it once', async () => {
      const p = provider({ held: true });
      setDisbursementAdapter(p.adapter);
      const r = await releasedMilestone(client, 'live');
      const d = r.disbursements[0]!;
      const run = runDisbursement(d.id);
      await p.sending();
      const [fail, settle] = await Promise.all([
        client.post(staffMove(d.id, 'fail')).set(r.staff).send({ reason: 'Bank menolak' }),
        client.post(staffMove(d.id, 'settle')).set(r.staff).send({}),
      ]);
      expect([fail.status, settle.status]).to.deep.equal([409, 409]);
      expect([fail.body.error.code, settle.body.error.code]).to.deep.equal(['CONCURRENT_MODIFICATION', 'CONCURRENT_MODIFICATION']);
      p.release();
      expect((await run).outcome).to.equal('settled');
      expect((await money(r.mid)).returned_amount).to.equal(0);
      await expectClean(r.mid);
    });

    it('a sandbox payout never reaches the configured adapter, also after its workspace went live', async () => {
      const p = provider();
      setDisbursementAdapter(p.adapter);
      const r = await releasedMilestone(client, 'sandbox', ['Utama', 'Cadangan']);
      await makeLive(r.w);
      const entries = await db('journal_entries').count<{ count: string }[]>('* as count');
      await runJobs(['payouts']);
      expect(p.calls).to.deep.equal([]);
      expect((await disbursementsOf(r.mid)).map((d) => [d.status, d.provider_reference])).to.deep.equal(r.disbursements.map((d) => ['settled', `sandbox-disb_${d.id}`]));
      expect(await db('journal_entries').count<{ count: string }[]>('* as count')).to.deep.equal(entries);
      // A live deal of the now-live workspace goes to the configured adapter.
      const live = await fundedDeal(client, 'live', [1_000_000], {}, r.w);
      const mid = live.mids[0]!;
      await approve(mid);
      const payout = await payoutOf(mid);
      const id = r.instructionIds[0]!;
      // Verified while the workspace was a sandbox: never for live money (issue 42) until staff verify it again.
      expect((await release(client, live, mid, [{ payout_instruction_id: id, amount: payout }])).status).to.equal(409);
      await db('payout_instructions').where({ id }).update({ status: 'pending_verification', verification_signature: null, verified_at: null, verified_by: null });
      const shown = await client.post(`/v1/admin/enterprise/payout-instructions/${id}/reveal`).set(live.staff).send({});
      expect((await client.post(`/v1/admin/enterprise/payout-instructions/${id}/verify`).set(live.staff).send({ destination_version: shown.body.data.destination_version })).status).to.equal(200);
      expect((await release(client, live, mid, [{ payout_instruction_id: id, amount: payout }])).status).to.equal(200);
      await runJobs(['payouts']);
      expect(p.calls.map((c) => c.amount)).to.deep.equal([payout]);
      expect((await disbursementsOf(mid)).map((d) => d.is_test)).to.deep.equal([false]);
      await expectClean(r.mid, mid);
    });

    it('with the manual adapter the job moves nothing, and the sweeper queues no job for payouts left to staff', async () => {
      setDisbursementAdapter(MANUAL);
      const now = pinNow();
      const r = await releasedMilestone(client, 'live');
      const d = r.disbursements[0]!;
      const ran = await runJobs(['payouts']);
      expect(ran.map((j) => j.result)).to.deep.equal([{ outcome: 'manual', disbursement_id: d.id }]);
      clock.set(new Date(now.getTime() + 6 * 60_000));
      for (let i = 0; i < 4; i++) await sweepDisbursements();
      const waiting = await getQueue('payouts').getJobs(['waiting', 'delayed', 'prioritized']);
      // With no provider for live payouts, the sweeper leaves queued ones to staff: no job at all.
      expect(waiting.filter((j) => (j.data as { disbursement_id?: string }).disbursement_id === d.id)).to.have.length(0);
      await runJobs(['payouts']);
      expect(await statusOf(d.id)).to.equal('queued');
      expect((await disbursementsOf(r.mid))[0]!.attempts).to.equal(0);
      const settled = await client.post(staffMove(d.id, 'settle')).set(r.staff).send({ note: 'BCA 0001' });
      expect(settled.status).to.equal(200);
      expect(await sweepDisbursements()).to.deep.equal({ requeued: 0 });
      await expectClean(r.mid);
    });
  });

  describe('destinations', () => {
    it("an instruction's counterparty moved in the database to another workspace's counterparty: refused at release, and a queued payout to it fails unpaid", async () => {
      const p = provider();
      setDisbursementAdapter(p.adapter);
      const stranger = await dealWorld(client, 'Orang Asing');
      // Before the release: refused.
      const r = await approvedLive(client);
      await db('payout_instructions').where({ id: r.a }).update({ counterparty_id: stranger.cpId });
      const refused = await release(client, r, r.mid, [{ payout_instruction_id: r.a, amount: r.payout }]);
      expect(refused.status).to.be.oneOf([400, 409]);
      expect(await disbursementsOf(r.mid)).to.deep.equal([]);
      // After the release: the worker refuses it and pays nothing.
      const q = await releasedMilestone(client, 'live');
      const d = q.disbursements[0]!;
      await db('payout_instructions').where({ id: d.payout_instruction_id }).update({ counterparty_id: stranger.cpId });
      const run = await runDisbursement(d.id);
      expect(run).to.deep.include({ outcome: 'failed' });
      expect((run as { reason: string }).reason).to.match(/signature_mismatch/);
      expect(p.calls).to.deep.equal([]);
      expect((await money(q.mid)).returned_amount).to.equal(q.payout);
      await expectClean(r.mid, q.mid);
    });

    it("another workspace's verified instruction moved into this workspace (workspace and counterparty rewritten) is refused: its signature names its own workspace", async () => {
      const r = await approvedLive(client);
      const other = await fundedDeal(client, 'live');
      const theirs = await instructionVia(client, other, 'Milik mereka');
      // Named as it is: not an instruction of this workspace.
      const foreign = await release(client, r, r.mid, [{ payout_instruction_id: theirs, amount: r.payout }]);
      expect(foreign.status).to.equal(400);
      expect((foreign.body as { error: { details: { fieldErrors: Record<string, string[]> } } }).error.details.fieldErrors.splits!.join(' ')).to.match(/not an instruction of this workspace/);
      // Rewritten in the database to look like ours.
      await db('payout_instructions').where({ id: theirs }).update({ workspace_id: r.w.workspace.id, counterparty_id: r.w.cpId });
      const moved = await release(client, r, r.mid, [{ payout_instruction_id: theirs, amount: r.payout }]);
      expect(moved.status).to.equal(409);
      expect(moved.body.error.code).to.equal('INVALID_STATE');
      expect(moved.body.error.message).to.match(/changed after its verification/);
      expect(await disbursementsOf(r.mid)).to.deep.equal([]);
      await expectClean(r.mid);
    });

    it('a verified instruction named with its id in capitals, or twice in two spellings, is refused and nothing moves', async () => {
      const r = await approvedLive(client);
      const upper = await release(client, r, r.mid, [{ payout_instruction_id: r.a.toUpperCase(), amount: r.payout }]);
      expect(upper.status).to.equal(400);
      const twice = await release(client, r, r.mid, [
        { payout_instruction_id: r.a, amount: r.payout - 1 },
        { payout_instruction_id: r.a.toUpperCase(), amount: 1 },
      ]);
      expect(twice.status).to.equal(400);
      expect(await disbursementsOf(r.mid)).to.deep.equal([]);
      expect((await money(r.mid)).status).to.equal('approved');
      await expectClean(r.mid);
    });

    it('a release against a DELETE of its instruction: never a queued payout to a deleted instruction', async () => {
      const outcomes = new Set<string>();
      for (let round = 0; round < 4; round++) {
        const r = await approvedLive(client);
        const del = () => client.delete(`/v1/enterprise/payout-instructions/${r.a}`).set(r.w.h.finance);
        const rel = () => release(client, r, r.mid, [{ payout_instruction_id: r.a, amount: r.payout }]);
        const [released, deleted] = round % 2 === 0 ? await Promise.all([rel(), del()]) : (await Promise.all([del(), rel()])).reverse();
        const rows = await disbursementsOf(r.mid);
        const row = await db('payout_instructions').where({ id: r.a }).first<{ deleted_at: Date | null }>('deleted_at');
        if (released!.status === 200) {
          outcomes.add('release-first');
          expect(deleted!.status).to.equal(409);
          expect(row.deleted_at).to.equal(null);
          expect(rows).to.have.length(1);
        } else {
          outcomes.add('delete-first');
          expect(deleted!.status).to.equal(200);
          expect(released!.status).to.equal(400);
          expect(rows).to.deep.equal([]);
        }
        await expectClean(r.mid);
      }
      expect(outcomes.size).to.be.greaterThan(0);
    });
  });

  describe('amounts', () => {
    it('split amounts at the edges (overflow, beyond safe integers, negatives, fractions, strings, booleans, nested) are refused and nothing moves', async () => {
      const r = await approvedLive(client);
      const b = await instructionVia(client, r, 'Cadangan');
      const big = Number.MAX_SAFE_INTEGER;
      const bodies: unknown[] = [
        { splits: [{ payout_instruction_id: r.a, amount: big }, { payout_instruction_id: b, amount: big }] },
        { splits: [{ payout_instruction_id: r.a, amount: big + 2 }] },
        { splits: [{ payout_instruction_id: r.a, amount: 1e21 }] },
        { splits: [{ payout_instruction_id: r.a, amount: r.payout + big }, { payout_instruction_id: b, amount: -big }] },
        { splits: [{ payout_instruction_id: r.a, amount: r.payout + 1 }, { payout_instruction_id: b, amount: -1 }] },
        { splits: [{ payout_instruction_id: r.a, amount: r.payout }, { payout_instruction_id: b, amount: -0 }] },
        { splits: [{ payout_instruction_id: r.a, amount: r.payout - 0.5 }, { payout_instruction_id: b, amount: 0.5 }] },
        { splits: [{ payout_instruction_id: r.a, amount: 'lots' }] },
        { splits: [{ payout_instruction_id: r.a, amount: `${r.payout}abc` }] },
        { splits: [{ payout_instruction_id: r.a, amount: `0x${r.payout.toString(16)}` }] },
        { splits: [{ payout_instruction_id: r.a, amount: true }] },
        { splits: [{ payout_instruction_id: r.a, amount: null }] },
        { splits: [{ payout_instruction_id: r.a, amount: [r.payout] }] },
        { splits: [{ payout_instruction_id: r.a, amount: { value: r.payout } }] },
        { splits: [{ payout_instruction_id: r.a, amount: r.payout, extra: 1 }] },
        { splits: [{ payout_instruction_id: [r.a], amount: r.payout }] },
        { splits: { 0: { payout_instruction_id: r.a, amount: r.payout }, length: 1 } },
        { splits: [{ payout_instruction_id: r.a, amount: r.payout }], milestone_id: randomUUID() },
      ];
      for (const body of bodies) {
        const res = await client.post(releasePath(r.deal.deal.id, r.mid)).set(r.w.h.finance).send(body as object);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.code, JSON.stringify(body)).to.equal('INVALID_BODY');
      }
      // A prototype key in raw JSON.
      const raw = await client
        .post(releasePath(r.deal.deal.id, r.mid))
        .set(r.w.h.finance)
        .set('Content-Type', 'application/json')
        .send(`{"splits":[{"payout_instruction_id":"${r.a}","amount":1,"__proto__":{"amount":${r.payout}}}]}`);
      expect(raw.status).to.equal(400);
      // Duplicate keys in raw JSON: the last one counts, and it must still add up.
      const dupKeys = await client
        .post(releasePath(r.deal.deal.id, r.mid))
        .set(r.w.h.finance)
        .set('Content-Type', 'application/json')
        .send(`{"splits":[{"payout_instruction_id":"${r.a}","amount":${r.payout},"amount":${r.payout * 2}}]}`);
      expect(dupKeys.status).to.equal(400);
      expect(await disbursementsOf(r.mid)).to.deep.equal([]);
      expect((await money(r.mid)).status).to.equal('approved');
      // The amount as a numeric string is read as that number: exactly the payout amount goes out.
      const asText = await client.post(releasePath(r.deal.deal.id, r.mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: r.a, amount: String(r.payout) }] });
      expect(asText.status, JSON.stringify(asText.body)).to.equal(200);
      expect((await disbursementsOf(r.mid)).map((d) => Number(d.amount))).to.deep.equal([r.payout]);
      await expectClean(r.mid);
    });

    it('a split ruling at the edges: release_amount equal to the seller fee or to what is held, fractions, negatives and strings are refused; seller fee + 1 pays exactly 1', async () => {
      const r = await fundedDeal(client, 'live', [1_000_000], { fee_allocation: 'split', fee_buyer_percent: 50 });
      const mid = r.mids[0]!;
      expect((await dispute(client, r, mid)).status).to.equal(200);
      const m = (await milestoneRows(r.deal.deal.id))[0]!;
      const [amount, sellerFee] = [Number(m.amount), Number(m.seller_fee)];
      expect(sellerFee).to.be.greaterThan(0);
      for (const release_amount of [sellerFee, amount, amount + 1, sellerFee - 1, 0, -1, 1.5, 'x', Number.MAX_SAFE_INTEGER, 50_000_000_001, null]) {
        const res = await client.post(rulingPath(mid)).set(r.staff).send({ outcome: 'split', release_amount });
        expect(res.status, String(release_amount)).to.equal(400);
      }
      expect((await money(mid)).status).to.equal('disputed');
      const ok = await client.post(rulingPath(mid)).set(r.staff).send({ outcome: 'split', release_amount: sellerFee + 1 });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      const a = await instructionVia(client, r, 'Utama');
      expect((await release(client, r, mid, [{ payout_instruction_id: a, amount: 2 }])).status).to.equal(400);
      const rel = await release(client, r, mid, [{ payout_instruction_id: a, amount: 1 }]);
      expect(rel.status, JSON.stringify(rel.body)).to.equal(200);
      expect((await disbursementsOf(mid)).map((d) => Number(d.amount))).to.deep.equal([1]);
      await expectClean(mid);
    });
  });

  describe('releases against other moves', () => {
    it('a release against a dispute: exactly one wins; a disputed milestone has no payout, a released one cannot be disputed', async () => {
      const outcomes = new Set<string>();
      for (let round = 0; round < 4; round++) {
        const r = await approvedLive(client);
        const rel = () => release(client, r, r.mid, [{ payout_instruction_id: r.a, amount: r.payout }]);
        const dis = () => dispute(client, r, r.mid);
        const [released, disputed] = round % 2 === 0 ? await Promise.all([rel(), dis()]) : (await Promise.all([dis(), rel()])).reverse();
        expect([released!.status, disputed!.status].sort()).to.deep.equal([200, 409]);
        const m = await money(r.mid);
        if (released!.status === 200) {
          outcomes.add('release');
          expect(m.status).to.equal('released');
          expect(await disbursementsOf(r.mid)).to.have.length(1);
        } else {
          outcomes.add('dispute');
          expect(m.status).to.equal('disputed');
          expect(await disbursementsOf(r.mid)).to.deep.equal([]);
          // And a refund ruling then takes everything back: nothing is paid.
          expect((await client.post(rulingPath(r.mid)).set(r.staff).send({ outcome: 'refund' })).status).to.equal(200);
        }
        await expectClean(r.mid);
      }
      expect(outcomes.size).to.be.greaterThan(0);
    });

    it('a release against a ruling on the disputed milestone: the release only goes through after a release ruling, once', async () => {
      for (const outcome of ['release', 'refund'] as const) {
        const r = await approvedLive(client);
        expect((await dispute(client, r, r.mid)).status).to.equal(200);
        const [ruled, released] = await Promise.all([
          client.post(rulingPath(r.mid)).set(r.staff).send({ outcome }),
          release(client, r, r.mid, [{ payout_instruction_id: r.a, amount: r.payout }]),
        ]);
        expect(ruled.status).to.equal(200);
        const rows = await disbursementsOf(r.mid);
        if (released.status === 200) {
          expect(outcome).to.equal('release');
          expect(rows).to.have.length(1);
        } else {
          expect(released.status).to.equal(409);
          expect(rows).to.deep.equal([]);
        }
        await expectClean(r.mid);
      }
    });

    it('a split ruling, a release, then a second dispute: the released milestone cannot be disputed or ruled again; the counterparty gets release_amount - seller fee once', async () => {
      const p = provider();
      setDisbursementAdapter(p.adapter);
      const r = await fundedDeal(client, 'live', [1_000_000], { fee_allocation: 'split', fee_buyer_percent: 50 });
      const mid = r.mids[0]!;
      expect((await dispute(client, r, mid)).status).to.equal(200);
      const refunds = await balance('enterprise:refunds_sent');
      expect((await client.post(rulingPath(mid)).set(r.staff).send({ outcome: 'split', release_amount: 700_000 })).status).to.equal(200);
      const sellerFee = Number((await milestoneRows(r.deal.deal.id))[0]!.seller_fee);
      const a = await instructionVia(client, r, 'Utama');
      // The full payout amount is more than is held now.
      expect((await release(client, r, mid, [{ payout_instruction_id: a, amount: await payoutOf(mid) }])).status).to.equal(400);
      expect((await release(client, r, mid, [{ payout_instruction_id: a, amount: 700_000 - sellerFee }])).status).to.equal(200);
      const again = await dispute(client, r, mid);
      expect(again.status).to.equal(409);
      for (const outcome of ['refund', 'release']) expect((await client.post(rulingPath(mid)).set(r.staff).send({ outcome })).status).to.equal(409);
      await runJobs(['payouts']);
      expect(p.total()).to.equal(700_000 - sellerFee);
      expect((await balance('enterprise:refunds_sent')) - refunds).to.equal(300_000);
      await expectClean(mid);
    });

    it('split, dispute again, split smaller, then release: only the last release_amount less the seller fee goes out; each refund posted once', async () => {
      const r = await fundedDeal(client, 'live', [1_000_000], { fee_allocation: 'split', fee_buyer_percent: 50 });
      const mid = r.mids[0]!;
      const refunds = await balance('enterprise:refunds_sent');
      expect((await dispute(client, r, mid)).status).to.equal(200);
      expect((await client.post(rulingPath(mid)).set(r.staff).send({ outcome: 'split', release_amount: 800_000 })).status).to.equal(200);
      expect((await dispute(client, r, mid)).status).to.equal(200);
      expect((await client.post(rulingPath(mid)).set(r.staff).send({ outcome: 'split', release_amount: 800_000 })).status).to.equal(400);
      expect((await client.post(rulingPath(mid)).set(r.staff).send({ outcome: 'split', release_amount: 500_000 })).status).to.equal(200);
      const sellerFee = Number((await milestoneRows(r.deal.deal.id))[0]!.seller_fee);
      const a = await instructionVia(client, r, 'Utama');
      expect((await release(client, r, mid, [{ payout_instruction_id: a, amount: 800_000 - sellerFee }])).status).to.equal(400);
      expect((await release(client, r, mid, [{ payout_instruction_id: a, amount: 500_000 - sellerFee }])).status).to.equal(200);
      expect((await balance('enterprise:refunds_sent')) - refunds).to.equal(500_000);
      expect(await db('journal_entries').where('posting_key', 'like', `ent-refund:${mid}:%`).select('posting_key')).to.have.length(2);
      await expectClean(mid);
    });
  });

  describe('failed payouts and releasing again', () => {
    async function twoPayouts() {
      setDisbursementAdapter(MANUAL);
      const r = await releasedMilestone(client, 'live', ['Utama', 'Cadangan']);
      const [a, b] = r.disbursements;
      const fresh = await instructionVia(client, r, 'Rekening baru');
      return { r, a: a!, b: b!, fresh };
    }

    it('a release of the returned money against another payout failing: the release sends what it read or is refused; never more than the payout amount', async () => {
      const outcomes = new Set<string>();
      for (let round = 0; round < 4; round++) {
        const { r, a, b, fresh } = await twoPayouts();
        expect((await client.post(staffMove(a.id, 'fail')).set(r.staff).send({ reason: 'Rekening ditutup' })).status).to.equal(200);
        const returned = Number(a.amount);
        const rel = () => release(client, r, r.mid, [{ payout_instruction_id: fresh, amount: returned }]);
        const fail = () => client.post(staffMove(b.id, 'fail')).set(r.staff).send({ reason: 'Bank menolak' });
        const [released, failed] = round % 2 === 0 ? await Promise.all([rel(), fail()]) : (await Promise.all([fail(), rel()])).reverse();
        expect(failed!.status).to.equal(200);
        const m = await money(r.mid);
        if (released!.status === 200) {
          outcomes.add('release-first');
          expect(m.returned_amount).to.equal(Number(b.amount));
        } else {
          outcomes.add('fail-first');
          expect(released!.status).to.equal(400);
          expect(m.returned_amount).to.equal(r.payout);
        }
        await expectConserved(r.mid);
        // Whatever came back goes out once more, exactly.
        const rest = await release(client, r, r.mid, [{ payout_instruction_id: fresh, amount: m.returned_amount }]);
        expect(rest.status, JSON.stringify(rest.body)).to.equal(200);
        expect((await money(r.mid)).returned_amount).to.equal(0);
        await expectClean(r.mid);
      }
      expect(outcomes.size).to.be.greaterThan(0);
    });

    it('three releases of the returned money at once: one sends it, the others are refused', async () => {
      const { r, a, fresh } = await twoPayouts();
      expect((await client.post(staffMove(a.id, 'fail')).set(r.staff).send({ reason: 'Rekening ditutup' })).status).to.equal(200);
      const answers = await Promise.all([1, 2, 3].map(() => release(client, r, r.mid, [{ payout_instruction_id: fresh, amount: Number(a.amount) }])));
      expect(answers.map((x) => x.status).sort()).to.deep.equal([200, 409, 409]);
      expect((await disbursementsOf(r.mid)).filter((d) => d.release_no === 2)).to.have.length(1);
      await expectClean(r.mid);
    });

    it('a release of the returned money against staff settling the other payout: both go through, each once', async () => {
      const { r, a, b, fresh } = await twoPayouts();
      expect((await client.post(staffMove(a.id, 'fail')).set(r.staff).send({ reason: 'Rekening ditutup' })).status).to.equal(200);
      const [released, settled] = await Promise.all([
        release(client, r, r.mid, [{ payout_instruction_id: fresh, amount: Number(a.amount) }]),
        client.post(staffMove(b.id, 'settle')).set(r.staff).send({}),
      ]);
      expect([released.status, settled.status]).to.deep.equal([200, 200]);
      await expectClean(r.mid);
    });

    it('Idempotency-Key: replaying a release after its payout failed answers the stored release and sends nothing again; the same key with another body is 422', async () => {
      setDisbursementAdapter(MANUAL);
      const r = await approvedLive(client);
      const key = randomUUID();
      const body = [{ payout_instruction_id: r.a, amount: r.payout }];
      const first = await release(client, r, r.mid, body, key);
      expect(first.status).to.equal(200);
      const d = (await disbursementsOf(r.mid))[0]!;
      expect((await client.post(staffMove(d.id, 'fail')).set(r.staff).send({ reason: 'Rekening ditutup' })).status).to.equal(200);
      const replay = await release(client, r, r.mid, body, key);
      expect(replay.status).to.equal(200);
      expect(replay.headers['idempotent-replay']).to.equal('true');
      expect(replay.body).to.deep.equal(first.body);
      expect(await disbursementsOf(r.mid)).to.have.length(1);
      expect((await money(r.mid)).returned_amount).to.equal(r.payout);
      const other = await release(client, r, r.mid, [{ payout_instruction_id: r.a, amount: r.payout - 1 }], key);
      expect(other.status).to.equal(422);
      // The same key twice at once: one runs, the other is refused or replays; one release.
      const k2 = randomUUID();
      const fresh = await instructionVia(client, r, 'Rekening baru');
      const both = await Promise.all([1, 2].map(() => release(client, r, r.mid, [{ payout_instruction_id: fresh, amount: r.payout }], k2)));
      expect(both.some((x) => x.status === 200)).to.equal(true);
      expect(both.every((x) => x.status === 200 || x.status === 409)).to.equal(true);
      expect((await disbursementsOf(r.mid)).filter((x) => x.release_no === 2)).to.have.length(1);
      await expectClean(r.mid);
    });
  });

  describe('approvals and evidence', () => {
    async function submitted() {
      const r = await fundedDeal(client, 'live');
      const mid = r.mids[0]!;
      const doc = await client
        .post('/v1/enterprise/documents')
        .set(r.w.h.operator)
        .send({ title: 'Surat jalan', document_type: 'shipping', file_url: 'https://files.example.com/surat-jalan.pdf', milestone_id: mid });
      expect(doc.status, JSON.stringify(doc.body)).to.equal(201);
      const ev = await client
        .post(`${DEALS}/${r.deal.deal.id}/milestones/${mid}/submit-evidence`)
        .set(r.w.h.operator)
        .send({ summary: 'Barang diterima', document_ids: [doc.body.data.id as string] });
      expect(ev.status, JSON.stringify(ev.body)).to.equal(200);
      return { ...r, mid, docId: doc.body.data.id as string };
    }
    const approveVia = (r: ReleaseWorld, mid: string) => client.post(`/v1/enterprise/approvals/${mid}/decide`).set(r.w.h.finance).send({ decision: 'approve' });

    it('an approval against a dispute: the milestone ends disputed either way, and cannot be released', async () => {
      for (let round = 0; round < 4; round++) {
        const r = await submitted();
        const [approved, disputed] = round % 2 === 0 ? await Promise.all([approveVia(r, r.mid), dispute(client, r, r.mid)]) : (await Promise.all([dispute(client, r, r.mid), approveVia(r, r.mid)])).reverse();
        expect(disputed!.status).to.equal(200);
        expect(approved!.status).to.be.oneOf([200, 409]);
        expect((await money(r.mid)).status).to.equal('disputed');
        const a = await instructionVia(client, r, 'Utama');
        expect((await release(client, r, r.mid, [{ payout_instruction_id: a, amount: await payoutOf(r.mid) }])).status).to.equal(409);
        await expectClean(r.mid);
      }
    });

    it('deleting the evidence against its approval: either the delete is first (and the approval sees no document) or it is refused 409 LOCKED', async () => {
      for (let round = 0; round < 4; round++) {
        const r = await submitted();
        const del = () => client.delete(`/v1/enterprise/documents/${r.docId}`).set(r.w.h.operator);
        const [approved, deleted] = round % 2 === 0 ? await Promise.all([approveVia(r, r.mid), del()]) : (await Promise.all([del(), approveVia(r, r.mid)])).reverse();
        expect(approved!.status).to.equal(200);
        const feed = await feedRows(r.w.workspace.id, r.deal.deal.id);
        const approvedAt = feed.findIndex((e) => e.event === 'milestone.approved');
        const deletedAt = feed.findIndex((e) => e.event === 'document.deleted');
        if (deleted!.status === 200) {
          expect(deletedAt).to.be.greaterThan(-1);
          expect(deletedAt).to.be.lessThan(approvedAt);
          expect((approved!.body.data as { evidence: unknown[] }).evidence).to.deep.equal([]);
        } else {
          expect(deleted!.status).to.equal(409);
          expect(deleted!.body.error.code).to.equal('LOCKED');
          expect(deletedAt).to.equal(-1);
          expect(await db('deal_documents').where({ id: r.docId }).first('id')).to.not.equal(undefined);
        }
        await expectClean(r.mid);
      }
    });
  });

  describe('reads', () => {
    it("GET /payouts filtered by another workspace's deal or milestone answers nothing of theirs", async () => {
      const theirs = await releasedMilestone(client, 'sandbox');
      const me = await dealWorld(client, 'Saya');
      for (const q of [`deal_id=${theirs.deal.deal.id}`, `milestone_id=${theirs.mid}`, 'status=queued']) {
        const res = await client.get(`/v1/enterprise/payouts?${q}`).set(me.h.viewer);
        expect(res.status).to.equal(200);
        expect(res.body.data, q).to.deep.equal([]);
      }
      // And its payouts cannot be moved through the workspace routes at all (staff only).
      const res = await client.post(staffMove(theirs.disbursements[0]!.id, 'settle')).set(me.h.owner).send({});
      expect(res.status).to.equal(403);
      expect(await statusOf(theirs.disbursements[0]!.id)).to.equal('queued');
    });
  });
});
