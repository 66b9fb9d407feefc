/**
 * Attacks on the money-out paths that paid twice, paid the wrong account or starved the
 * sweeper before the fixes of decision 0019 (the payout signature and gate, no staff fail
 * of a payout sent to a provider, the sweeper's two queues, evidence kept while disputed).
 * Each asserts the safe outcome, and the ledger check after it.
 */
import { expect } from 'chai';
import { api } from '../../helpers/app.js';
import { runJobs } from '../../helpers/jobs.js';
import { disbursementsOf, fundedDeal, instructionVia, releasePath, releasedMilestone } from '../../factories/releases.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { setDisbursementAdapter, type DisbursementAdapter, type DisbursementRequest } from '../../../shared/payouts/adapter.js';
import { runDisbursement, sweepDisbursements } from '../../../shared/payouts/worker.js';
import { getQueue } from '../../../shared/queues.js';

function provider(mode: { hold?: boolean; throwFirst?: boolean } = {}) {
  const calls: DisbursementRequest[] = [];
  const paid = new Map<string, { amount: number; account: string }>();
  let open: () => void = () => {};
  const gate = new Promise<void>((r) => (open = r));
  let entered: () => void = () => {};
  const inside = new Promise<void>((r) => (entered = r));
  const adapter: DisbursementAdapter = {
    name: 'bug', automatic: true,
    send: async (r) => {
      calls.push(r);
      entered();
      if (mode.hold && calls.length === 1) await gate;
      if (!paid.has(r.reference)) paid.set(r.reference, { amount: r.amount, account: r.destination.account_number });
      // The provider paid, but the answer never arrived (a timeout after the transfer).
      if (mode.throwFirst && calls.length === 1) throw new Error('provider timeout');
      return { outcome: 'paid', providerReference: `trf-${r.reference}` };
    },
  };
  const total = () => [...paid.values()].reduce((a, p) => a + p.amount, 0);
  return { adapter, calls, paid, open: () => open(), inside: () => inside, total };
}
const MANUAL: DisbursementAdapter = { name: 'manual', automatic: false, send: () => Promise.reject(new Error('no')) };

describe('adversarial: money-out attacks that once succeeded (decision 0019)', () => {
  const client = api();
  afterEach(() => {
    setDisbursementAdapter(null);
    clock.reset();
  });

  it('B1 a run stalled past its claim while the provider pays: staff cannot fail it, so no re-release pays twice', async () => {
    const p = provider({ hold: true });
    setDisbursementAdapter(p.adapter);
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    clock.set(now);
    const r = await releasedMilestone(client, 'live');
    const d = r.disbursements[0]!;
    const run = runDisbursement(d.id, 60_000);
    await p.inside();
    clock.set(new Date(now.getTime() + 61_000));
    const failed = await client.post(`/v1/admin/enterprise/disbursements/${d.id}/fail`).set(r.staff).send({ reason: 'Tidak ada kabar dari bank' });
    p.open();
    const out = await run;
    expect(failed.status).to.equal(409);
    expect((failed.body as { error: { code: string } }).error.code).to.equal('INVALID_STATE');
    expect(out.outcome).to.equal('settled');
    const fresh = await instructionVia(client, r, 'Rekening baru');
    const again = await client.post(releasePath(r.deal.deal.id, r.mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: fresh, amount: r.payout }] });
    expect(again.status).to.equal(409);
    await runJobs(['payouts']);
    expect(p.total()).to.equal(r.payout);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('B6 a provider timeout after it paid: staff cannot fail it; the retry asks the provider with the same reference and settles once', async () => {
    const p = provider({ throwFirst: true });
    setDisbursementAdapter(p.adapter);
    const r = await releasedMilestone(client, 'live');
    const d = r.disbursements[0]!;
    const err = await runDisbursement(d.id).catch((e: unknown) => e);
    expect(String(err)).to.include('provider timeout');
    expect((await disbursementsOf(r.mid)).map((x) => [x.status, x.attempts])).to.deep.equal([['processing', 1]]);
    const failed = await client.post(`/v1/admin/enterprise/disbursements/${d.id}/fail`).set(r.staff).send({ reason: 'Timeout' });
    expect(failed.status).to.equal(409);
    // The job's retry asks the provider about disb_<id> again: it was paid, so it settles.
    const retry = await runDisbursement(d.id);
    expect(retry.outcome).to.equal('settled');
    const fresh = await instructionVia(client, r, 'Rekening baru');
    const again = await client.post(releasePath(r.deal.deal.id, r.mid)).set(r.w.h.finance).send({ splits: [{ payout_instruction_id: fresh, amount: r.payout }] });
    expect(again.status).to.equal(409);
    await runJobs(['payouts']);
    expect(p.total()).to.equal(r.payout);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it("B2 a disbursement redirected in the database to another workspace's verified instruction is never paid there", async () => {
    const p = provider();
    setDisbursementAdapter(p.adapter);
    const r = await releasedMilestone(client, 'live');
    const d = r.disbursements[0]!;
    const other = await fundedDeal(client, 'live');
    const theirs = await instructionVia(client, other, 'Rekening penyerang', { accountNumber: '6666666666' });
    await db('disbursements').where({ id: d.id }).update({ payout_instruction_id: theirs });
    const run = await runDisbursement(d.id);
    expect(run).to.deep.include({ outcome: 'failed', reason: 'destination refused: payout_signature_mismatch' });
    expect(p.calls).to.deep.equal([]);
    // The redirected row is failed as it stands: its money back on the milestone it came from.
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('B2b a disbursement redirected in the database to another counterparty\'s verified instruction of the same workspace is never paid there', async () => {
    const p = provider();
    setDisbursementAdapter(p.adapter);
    const r = await releasedMilestone(client, 'live');
    const d = r.disbursements[0]!;
    const cp2 = (await client.post('/v1/enterprise/counterparties').set(r.w.h.owner).send({ name: 'PT Lain' })).body.data.id as string;
    const theirs = await instructionVia(client, r, 'Pihak lain', { cpId: cp2, accountNumber: '7777777777' });
    await db('disbursements').where({ id: d.id }).update({ payout_instruction_id: theirs });
    const run = await runDisbursement(d.id);
    expect(run).to.deep.include({ outcome: 'failed', reason: 'destination refused: payout_signature_mismatch' });
    expect(p.calls).to.deep.equal([]);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('B3 manual adapter (the production path): a payout whose instruction was altered after the release fails at the job and staff cannot settle it', async () => {
    setDisbursementAdapter(MANUAL);
    const r = await releasedMilestone(client, 'live');
    const d = r.disbursements[0]!;
    await db('payout_instructions').where({ id: d.payout_instruction_id }).update({ bank_name: 'Bank Penyerang', account_number_last4: '6666' });
    // Before the job ran: staff settling by hand is refused (the gate), the payout stays open.
    const early = await client.post(`/v1/admin/enterprise/disbursements/${d.id}/settle`).set(r.staff).send({});
    expect(early.status).to.equal(409);
    expect((early.body as { error: { message: string } }).error.message).to.include('signature_mismatch');
    const ran = await runJobs(['payouts']);
    expect(ran.map((j) => (j.result as { outcome: string }).outcome)).to.deep.equal(['failed']);
    expect((await disbursementsOf(r.mid)).map((x) => x.status)).to.deep.equal(['failed']);
    const settled = await client.post(`/v1/admin/enterprise/disbursements/${d.id}/settle`).set(r.staff).send({});
    expect(settled.status).to.equal(409);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('B4 the sweeper: manual payouts waiting for staff never starve a dead run of a sandbox payout', async () => {
    setDisbursementAdapter(MANUAL);
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    clock.set(now);
    const manual = await releasedMilestone(client, 'live', ['A', 'B']);
    clock.set(new Date(now.getTime() + 1000));
    const sandbox = await releasedMilestone(client, 'sandbox');
    const s = sandbox.disbursements[0]!;
    // The sandbox payout's run died holding the claim.
    await db('disbursements').where({ id: s.id }).update({ status: 'processing', attempts: 1, lease_until: new Date(now.getTime() + 5000) });
    clock.set(new Date(now.getTime() + 10 * 60_000));
    expect(await sweepDisbursements(2)).to.deep.equal({ requeued: 1 });
    const jobs = await getQueue('payouts').getJobs(['waiting']);
    const ids = jobs.map((j) => (j.data as { disbursement_id: string }).disbursement_id);
    expect(ids).to.include(s.id);
    expect(manual.disbursements.filter((d) => ids.includes(d.id))).to.deep.equal([]);
  });

  it('B5 the evidence of an approved milestone stays locked once it is disputed', async () => {
    const r = await fundedDeal(client, 'live');
    const mid = r.mids[0]!;
    const doc = await client.post('/v1/enterprise/documents').set(r.w.h.operator).send({ title: 'Surat jalan', document_type: 'shipping', file_url: 'https://files.example.com/sj.pdf', milestone_id: mid });
    expect((await client.post(`/v1/enterprise/deals/${r.deal.deal.id}/milestones/${mid}/submit-evidence`).set(r.w.h.operator).send({ summary: 'ok', document_ids: [doc.body.data.id] })).status).to.equal(200);
    expect((await client.post(`/v1/enterprise/approvals/${mid}/decide`).set(r.w.h.finance).send({ decision: 'approve' })).status).to.equal(200);
    const lockedWhileApproved = await client.delete(`/v1/enterprise/documents/${doc.body.data.id}`).set(r.w.h.operator);
    expect((await client.post(`/v1/enterprise/deals/${r.deal.deal.id}/milestones/${mid}/dispute`).set(r.w.h.operator).send({ reason: 'x' })).status).to.equal(200);
    const del = await client.delete(`/v1/enterprise/documents/${doc.body.data.id}`).set(r.w.h.operator);
    expect(lockedWhileApproved.status).to.equal(409);
    expect(del.status).to.equal(409);
    expect((del.body as { error: { code: string } }).error.code).to.equal('LOCKED');
    expect(await db('deal_documents').where({ id: doc.body.data.id as string }).first('id')).to.not.equal(undefined);
  });

  it('four-eyes: evidence can be deleted before anyone approved, and is kept once the first approval is given', async () => {
    const w = (await fundedDeal(client, 'sandbox', [1_000_000])).w;
    await db('workspaces').where({ id: w.workspace.id }).update({ four_eyes_threshold: 500_000 });
    const r = await fundedDeal(client, 'sandbox', [1_000_000], {}, w);
    const mid = r.mids[0]!;
    const add = async (title: string) =>
      (await client.post('/v1/enterprise/documents').set(r.w.h.operator).send({ title, document_type: 'inspection', file_url: 'https://files.example.com/x.pdf', milestone_id: mid })).body.data.id as string;
    const [a, b] = [await add('Laporan A'), await add('Laporan B')];
    expect((await client.post(`/v1/enterprise/deals/${r.deal.deal.id}/milestones/${mid}/submit-evidence`).set(r.w.h.operator).send({ summary: 'ok', document_ids: [a, b] })).status).to.equal(200);
    expect((await client.delete(`/v1/enterprise/documents/${a}`).set(r.w.h.operator)).status).to.equal(200);
    const first = await client.post(`/v1/enterprise/approvals/${mid}/decide`).set(r.w.h.finance).send({ decision: 'approve' });
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect((await db('deal_milestones').where({ id: mid }).first<{ status: string } | undefined>('status'))!.status).to.equal('evidence_submitted');
    const kept = await client.delete(`/v1/enterprise/documents/${b}`).set(r.w.h.operator);
    expect(kept.status).to.equal(409);
    expect((kept.body as { error: { code: string } }).error.code).to.equal('LOCKED');
  });
});
