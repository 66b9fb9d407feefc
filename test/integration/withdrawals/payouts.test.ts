/**
 * The payout worker (queue payouts, job payouts.send): claims an approved withdrawal,
 * calls the payout adapter, records the outcome. Safe to run twice, sequentially or at
 * once; a provider's refusal, a transient error and a crashed run each leave a state from
 * which the money moves exactly once.
 */
import type { Job } from 'bullmq';
import { expect } from 'chai';
import { runJobs } from '../../helpers/jobs.js';
import { api } from '../../helpers/app.js';
import { issueKey } from '../../helpers/auth-signin-util.js';
import { createWithdrawal, fundedUser, staffUser, systemBooks, userBalance } from '../../factories/withdrawals.js';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import type { JobData } from '../../../shared/queues.js';
import type { UserRow } from '../../../shared/users/repo.js';
import { manualPayoutAdapter, sandboxPayoutAdapter, setPayoutAdapter, type PayoutAdapter, type PayoutRequest, type PayoutResult } from '../../../shared/withdrawals/payout-adapter.js';
import type { WithdrawalRow } from '../../../shared/withdrawals/repo.js';
import { PAYOUT_LEASE_MS, PayoutBusyError, runPayout } from '../../../shared/withdrawals/service.js';
import { buildRegistry } from '../../../workers/registry.js';

const registry = buildRegistry();
const processJob = (withdrawalId: string) => registry.get('payouts.send')!({ data: { withdrawal_id: withdrawalId } } as unknown as Job<JobData>);

/** An adapter that records every call and answers what the test tells it to. */
class RecordingAdapter implements PayoutAdapter {
  readonly name = 'recording';
  readonly automatic = true;
  calls: PayoutRequest[] = [];
  answer: (req: PayoutRequest) => Promise<PayoutResult> = (req) => Promise.resolve({ outcome: 'paid', providerReference: `prov-${req.reference}` });
  send(req: PayoutRequest): Promise<PayoutResult> {
    this.calls.push(req);
    return this.answer(req);
  }
}

async function row(id: string): Promise<WithdrawalRow> {
  return (await db('withdrawals').where({ id }).first()) as WithdrawalRow;
}

async function payoutPostings(id: string): Promise<number> {
  const [r] = await db('journal_entries').where({ ref_type: 'withdrawal', ref_id: id, kind: 'withdrawal_payout' }).count<{ n: number }[]>('* as n');
  return Number(r!.n);
}

describe('withdrawals: the payout worker', () => {
  let user: UserRow;
  let admin: UserRow;
  let adapter: RecordingAdapter;

  beforeEach(async () => {
    clock.set(new Date('2026-12-01T03:00:00.000Z'));
    user = await fundedUser(1_000_000);
    admin = await staffUser();
    adapter = new RecordingAdapter();
    setPayoutAdapter(adapter);
  });

  afterEach(() => setPayoutAdapter(null));

  it('sends the net amount with a stable reference and the destination; run twice, it pays once', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 300_000, method: 'dana', destination: { phone: '081234567890' }, status: 'approved', staff: admin });
    const before = await systemBooks();
    const ran = await runJobs(['payouts']);
    expect(ran.map((j) => [j.error ?? null, j.result])).to.deep.equal([[null, { outcome: 'paid', withdrawal_id: withdrawal.id, reference: `prov-wd_${withdrawal.id}` }]]);
    expect(adapter.calls).to.deep.equal([
      { reference: `wd_${withdrawal.id}`, withdrawalId: withdrawal.id, amount: 295_000, currency: 'IDR', method: 'dana', destination: { phone: '+6281234567890' } },
    ]);
    // The same job again (a redelivery), and the processor called directly.
    expect(await processJob(withdrawal.id)).to.deep.equal({ outcome: 'skipped', withdrawal_id: withdrawal.id, status: 'paid' });
    expect(await runPayout(withdrawal.id, adapter)).to.deep.equal({ outcome: 'skipped', withdrawal_id: withdrawal.id, status: 'paid' });
    expect(adapter.calls).to.have.length(1);
    expect(await payoutPostings(withdrawal.id)).to.equal(1);
    const after = await systemBooks();
    expect([after.inFlight - before.inFlight, after.sent - before.sent, after.fees - before.fees]).to.deep.equal([-300_000, 295_000, 5000]);
    expect(await row(withdrawal.id)).to.include({ status: 'paid', payout_attempts: 1, payout_reference: `prov-wd_${withdrawal.id}` });
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('two runs at once: one claims and calls the provider, the other backs off', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 300_000, status: 'approved', staff: admin });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    adapter.answer = async (req) => {
      await gate;
      return { outcome: 'paid', providerReference: `prov-${req.reference}` };
    };
    const first = runPayout(withdrawal.id);
    // Wait until the first run has claimed it (processing) before starting the second.
    for (let i = 0; i < 200 && (await row(withdrawal.id)).status !== 'processing'; i += 1) await new Promise((r) => setImmediate(r));
    const second = await runPayout(withdrawal.id).then(
      () => 'resolved',
      (err: unknown) => err,
    );
    expect(second).to.be.instanceOf(PayoutBusyError);
    release();
    expect(await first).to.deep.include({ outcome: 'paid' });
    expect(adapter.calls).to.have.length(1);
    expect(await payoutPostings(withdrawal.id)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a refusal puts it back to approved with the reason and fails the job for good; staff can then reject it', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 300_000, status: 'approved', staff: admin });
    adapter.answer = () => Promise.resolve({ outcome: 'failed', reason: 'account closed' });
    const ran = await runJobs(['payouts']);
    expect(ran.map((j) => j.error)).to.deep.equal(['payout refused: account closed']);
    expect(await row(withdrawal.id)).to.include({ status: 'approved', payout_error: 'account closed', payout_lease_until: null, payout_attempts: 1 });
    expect(await payoutPostings(withdrawal.id)).to.equal(0);
    const client = api();
    const res = await client.post(`/v1/admin/withdrawals/${withdrawal.id}/reject`).set('Authorization', `Bearer ${await issueKey(admin.id)}`).send({ note: 'Provider: account closed' });
    expect(res.status).to.equal(200);
    expect(res.body.data.withdrawal).to.include({ status: 'rejected', payout_error: 'account closed' });
    expect(await userBalance(user.id)).to.equal(1_000_000);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('after a refusal a second run (an operator retrying the job) pays it', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 300_000, status: 'approved', staff: admin });
    adapter.answer = () => Promise.resolve({ outcome: 'failed', reason: 'bank offline for maintenance' });
    expect(await runPayout(withdrawal.id)).to.deep.equal({ outcome: 'failed', withdrawal_id: withdrawal.id, reason: 'bank offline for maintenance' });
    adapter.answer = (req) => Promise.resolve({ outcome: 'paid', providerReference: `prov-${req.reference}` });
    expect(await processJob(withdrawal.id)).to.deep.include({ outcome: 'paid' });
    expect(adapter.calls.map((c) => c.reference)).to.deep.equal([`wd_${withdrawal.id}`, `wd_${withdrawal.id}`]);
    expect(await row(withdrawal.id)).to.include({ status: 'paid', payout_attempts: 2 });
    expect(await payoutPostings(withdrawal.id)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a transient error ends the claim at once: the retry claims it again and pays once', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 300_000, status: 'approved', staff: admin });
    adapter.answer = () => Promise.reject(new Error('ETIMEDOUT'));
    const err = await runPayout(withdrawal.id).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as Error).message).to.equal('ETIMEDOUT');
    const held = await row(withdrawal.id);
    expect(held).to.include({ status: 'processing', payout_error: 'ETIMEDOUT', payout_attempts: 1 });
    expect(held.payout_lease_until!.getTime()).to.equal(clock.nowMs());
    // Staff cannot reject a withdrawal the provider may be paying.
    const client = api();
    const adminKey = await issueKey(admin.id);
    const refused = await client.post(`/v1/admin/withdrawals/${withdrawal.id}/reject`).set('Authorization', `Bearer ${adminKey}`).send({ note: 'stuck?' });
    expect(refused.status).to.equal(409);
    expect(refused.body.error).to.deep.include({ code: 'INVALID_STATE', status: 'processing' });
    adapter.answer = (req) => Promise.resolve({ outcome: 'paid', providerReference: `prov-${req.reference}` });
    expect(await runPayout(withdrawal.id)).to.deep.include({ outcome: 'paid' });
    expect(await row(withdrawal.id)).to.include({ status: 'paid', payout_attempts: 2 });
    expect(await payoutPostings(withdrawal.id)).to.equal(1);
    expect(await userBalance(user.id)).to.equal(700_000);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a crashed run: the claim holds until its lease runs out, then the next run takes over', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 300_000, status: 'processing', staff: admin });
    const busy = await runPayout(withdrawal.id).then(
      () => null,
      (e: unknown) => e,
    );
    expect(busy).to.be.instanceOf(PayoutBusyError);
    expect(adapter.calls).to.have.length(0);
    clock.advance(PAYOUT_LEASE_MS);
    expect(await runPayout(withdrawal.id)).to.deep.include({ outcome: 'paid' });
    expect(adapter.calls).to.have.length(1);
    expect(await row(withdrawal.id)).to.include({ status: 'paid', payout_attempts: 2 });
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('staff cannot mark paid while the provider is sending (409 processing); the worker pays and posts once', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 300_000, status: 'approved', staff: admin });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    adapter.answer = async (req) => {
      await gate;
      return { outcome: 'paid', providerReference: `prov-${req.reference}` };
    };
    const running = runPayout(withdrawal.id);
    for (let i = 0; i < 200 && (await row(withdrawal.id)).status !== 'processing'; i += 1) await new Promise((r) => setImmediate(r));
    const client = api();
    const res = await client.post(`/v1/admin/withdrawals/${withdrawal.id}/mark-paid`).set('Authorization', `Bearer ${await issueKey(admin.id)}`).send({ reference: 'seen at the bank' });
    expect(res.status, JSON.stringify(res.body)).to.equal(409);
    expect(res.body.error).to.deep.include({ code: 'INVALID_STATE', status: 'processing' });
    expect(res.body.error.message).to.match(/payout worker is sending it/);
    release();
    expect(await running).to.deep.equal({ outcome: 'paid', withdrawal_id: withdrawal.id, reference: `prov-wd_${withdrawal.id}` });
    expect(await row(withdrawal.id)).to.include({ status: 'paid', payout_reference: `prov-wd_${withdrawal.id}`, processed_by: null });
    expect(await payoutPostings(withdrawal.id)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a claim that ran out (a crashed run) may be marked paid by staff; the next run then does nothing', async () => {
    const { withdrawal } = await createWithdrawal({ user, amount: 300_000, status: 'processing', staff: admin });
    const client = api();
    const key = await issueKey(admin.id);
    const held = await client.post(`/v1/admin/withdrawals/${withdrawal.id}/mark-paid`).set('Authorization', `Bearer ${key}`).send({});
    expect(held.status).to.equal(409);
    expect(held.body.error).to.deep.include({ code: 'INVALID_STATE', status: 'processing' });
    clock.advance(PAYOUT_LEASE_MS);
    const res = await client.post(`/v1/admin/withdrawals/${withdrawal.id}/mark-paid`).set('Authorization', `Bearer ${key}`).send({ reference: 'confirmed with the provider' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.withdrawal).to.include({ status: 'paid' });
    expect(await runPayout(withdrawal.id)).to.deep.equal({ outcome: 'skipped', withdrawal_id: withdrawal.id, status: 'paid' });
    expect(adapter.calls).to.have.length(0);
    expect(await payoutPostings(withdrawal.id)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('does nothing for a pending, rejected or unknown withdrawal, or bad job data', async () => {
    const pending = await createWithdrawal({ user, amount: 100_000 });
    const rejected = await createWithdrawal({ user, amount: 100_000, status: 'rejected', staff: admin });
    expect(await runPayout(pending.withdrawal.id)).to.deep.equal({ outcome: 'skipped', withdrawal_id: pending.withdrawal.id, status: 'pending' });
    expect(await runPayout(rejected.withdrawal.id)).to.deep.equal({ outcome: 'skipped', withdrawal_id: rejected.withdrawal.id, status: 'rejected' });
    expect(await runPayout('00000000-0000-4000-8000-000000000000')).to.deep.include({ outcome: 'skipped', status: 'missing' });
    expect(await runPayout('nope')).to.deep.include({ outcome: 'skipped', status: 'missing' });
    const bad = await registry.get('payouts.send')!({ data: {} } as unknown as Job<JobData>).then(
      () => null,
      (e: unknown) => e,
    );
    expect((bad as Error).name).to.equal('UnrecoverableError');
    expect(adapter.calls).to.have.length(0);
  });

  it('the manual adapter leaves approved withdrawals for staff; the sandbox adapter pays by reference', async () => {
    setPayoutAdapter(manualPayoutAdapter);
    const { withdrawal } = await createWithdrawal({ user, amount: 100_000, status: 'approved', staff: admin });
    expect(await processJob(withdrawal.id)).to.deep.equal({ outcome: 'manual', withdrawal_id: withdrawal.id });
    expect((await row(withdrawal.id)).status).to.equal('approved');
    const req: PayoutRequest = { reference: 'wd_x', withdrawalId: 'x', amount: 1, currency: 'IDR', method: 'dana', destination: { phone: '+628123456789' } };
    expect(await sandboxPayoutAdapter.send(req)).to.deep.equal({ outcome: 'paid', providerReference: 'sandbox-wd_x' });
    expect(await sandboxPayoutAdapter.send(req)).to.deep.equal({ outcome: 'paid', providerReference: 'sandbox-wd_x' });
  });
});
