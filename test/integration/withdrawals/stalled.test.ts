/**
 * A payout whose worker dies mid-send (SIGKILL) is taken by another worker within a bound
 * (docs/reliability.md): BullMQ's stalled-job detection puts the job back within about
 * WORKER_LOCK_MS + WORKER_STALLED_CHECK_MS, and the dead run's claim on the withdrawal
 * runs out PAYOUT_LEASE_MS after its last renewal. A withdrawal left processing with no
 * job is re-queued by the stuck-payout sweeper. Real Redis, a real second process.
 *
 * The intervals are small here to keep the test fast; STALL_TEST_LOCK_MS,
 * STALL_TEST_CHECK_MS and STALL_TEST_LEASE_MS set others (e.g. the production defaults
 * 10000 / 5000 / 15000) to measure them with the same test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Worker } from 'bullmq';
import { expect } from 'chai';
import { createWithdrawal, fundedUser, staffUser } from '../../factories/withdrawals.js';
import { runJobs } from '../../helpers/jobs.js';
import { clock } from '../../../shared/clock.js';
import { config } from '../../../shared/config.js';
import { db } from '../../../shared/db.js';
import { checkLedger } from '../../../shared/ledger/index.js';
import { relayAll } from '../../../shared/outbox.js';
import { getQueue, type JobData } from '../../../shared/queues.js';
import { createQueueConnection } from '../../../shared/redis.js';
import { setPayoutAdapter, type PayoutAdapter, type PayoutRequest } from '../../../shared/withdrawals/payout-adapter.js';
import type { WithdrawalRow } from '../../../shared/withdrawals/repo.js';
import { PAYOUT_LEASE_MS, PAYOUT_SWEEP_MS, PayoutBusyError, runPayout, sweepStuckPayouts } from '../../../shared/withdrawals/service.js';
import { buildRegistry, MAINTENANCE_SCHEDULES, queueProcessor, workerResilience } from '../../../workers/registry.js';

const LOCK_MS = Number(process.env.STALL_TEST_LOCK_MS ?? 1000);
const CHECK_MS = Number(process.env.STALL_TEST_CHECK_MS ?? 500);
const LEASE_MS = Number(process.env.STALL_TEST_LEASE_MS ?? 1500);
/** BullMQ's first retry delay for a job that found the dead run's claim still live (shared/queues.ts). */
const FIRST_BACKOFF_MS = 2000;
/** The job is back within lock + check; the claim is free within the lease; one busy retry at most. */
const BOUND_MS = Math.max(LOCK_MS + CHECK_MS, LEASE_MS) + FIRST_BACKOFF_MS + 1000;

async function row(id: string): Promise<WithdrawalRow> {
  return (await db('withdrawals').where({ id }).first()) as WithdrawalRow;
}

async function payoutPostings(id: string): Promise<number> {
  const [r] = await db('journal_entries').where({ ref_type: 'withdrawal', ref_id: id, kind: 'withdrawal_payout' }).count<{ n: number }[]>('* as n');
  return Number(r!.n);
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function paying(calls: PayoutRequest[], delayMs = 0): PayoutAdapter {
  return {
    name: 'paying',
    automatic: true,
    send: async (req) => {
      calls.push(req);
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return { outcome: 'paid', providerReference: `prov-${req.reference}` };
    },
  };
}

describe('withdrawals: a payout whose worker died', function () {
  this.timeout(Math.max(60_000, 3 * BOUND_MS));
  let child: ChildProcess | undefined;
  let worker: Worker<JobData> | undefined;
  let connection: ReturnType<typeof createQueueConnection> | undefined;

  afterEach(async () => {
    setPayoutAdapter(null);
    if (child && child.exitCode === null) child.kill('SIGKILL');
    child = undefined;
    await worker?.close();
    worker = undefined;
    connection?.disconnect();
    connection = undefined;
  });

  it(`SIGKILLed while the provider call is in flight: another worker takes the job and pays it once, within the bound`, async () => {
    const admin = await staffUser();
    const user = await fundedUser(500_000);
    const { withdrawal } = await createWithdrawal({ user, amount: 300_000, status: 'approved', staff: admin });
    expect(await relayAll()).to.equal(1);

    // Worker A, its own process: claims the withdrawal and calls a provider that never answers.
    // node itself (not the tsx wrapper, which would leave its node child running when killed).
    child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/payout-worker-child.ts'], {
      env: { ...process.env, LOG_LEVEL: 'silent', WORKER_LOCK_MS: String(LOCK_MS), WORKER_STALLED_CHECK_MS: String(CHECK_MS), PAYOUT_LEASE_MS: String(LEASE_MS) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let said = '';
    child.stdout?.on('data', (c: Buffer) => (said += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (said += c.toString()));
    await until('worker A to call the provider', 30_000, () => Promise.resolve(said.includes(`sending ${withdrawal.id}`) ? true : undefined)).catch((e: Error) => {
      throw new Error(`${e.message}; worker A said: ${said}`);
    });
    expect(await row(withdrawal.id)).to.include({ status: 'processing', payout_attempts: 1 });

    // Worker A dies at the worst moment.
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();

    // Worker B, this process, with the same options and the real processor.
    const calls: PayoutRequest[] = [];
    setPayoutAdapter(paying(calls));
    connection = createQueueConnection();
    worker = new Worker<JobData>('payouts', queueProcessor(buildRegistry(), 'payouts'), {
      connection,
      prefix: config.queuePrefix,
      ...workerResilience({ lockMs: LOCK_MS, stalledCheckMs: CHECK_MS }),
    });
    const paid = await until('the withdrawal to be paid', 3 * BOUND_MS, async () => {
      const w = await row(withdrawal.id);
      return w.status === 'paid' ? w : undefined;
    });
    const tookMs = Date.now() - killedAt;
    console.error(`      stalled payout paid ${tookMs} ms after SIGKILL (lock ${LOCK_MS} ms, stalled check ${CHECK_MS} ms, lease ${LEASE_MS} ms; bound ${BOUND_MS} ms)`);
    expect(tookMs, `paid ${tookMs} ms after the kill`).to.be.below(BOUND_MS);
    expect(tookMs).to.be.below(30_000);
    expect(paid).to.include({ payout_attempts: 2, payout_reference: `prov-wd_${withdrawal.id}` });
    expect(calls.map((c) => c.reference)).to.deep.equal([`wd_${withdrawal.id}`]);
    expect(await payoutPostings(withdrawal.id)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
  });

  it('a live run renews its claim while the provider is slow: no other run takes it over', async () => {
    const admin = await staffUser();
    const user = await fundedUser(500_000);
    const { withdrawal } = await createWithdrawal({ user, amount: 300_000, status: 'approved', staff: admin });
    const calls: PayoutRequest[] = [];
    // A 300 ms claim, a provider call of 1.2 s: without renewal the claim would run out four times over.
    const slow = runPayout(withdrawal.id, paying(calls, 1200), 300);
    await until('the claim', 5000, async () => ((await row(withdrawal.id)).status === 'processing' ? true : undefined));
    for (let i = 0; i < 4; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const other = await runPayout(withdrawal.id, paying(calls), 300).then(
        () => 'ran',
        (e: unknown) => e,
      );
      expect(other, `try ${i}`).to.be.instanceOf(PayoutBusyError);
    }
    expect(await slow).to.deep.include({ outcome: 'paid' });
    expect(calls).to.have.length(1);
    expect(await payoutPostings(withdrawal.id)).to.equal(1);
  });

  it('the stuck-payout sweeper re-queues a processing withdrawal whose claim ran out (once per claim); the job pays it', async () => {
    clock.set(new Date('2026-12-01T03:00:00.000Z'));
    const admin = await staffUser();
    const user = await fundedUser(500_000);
    const { withdrawal } = await createWithdrawal({ user, amount: 300_000, status: 'processing', staff: admin });
    const calls: PayoutRequest[] = [];
    setPayoutAdapter(paying(calls));
    expect(await sweepStuckPayouts()).to.deep.equal({ requeued: 0 });
    clock.advance(PAYOUT_LEASE_MS);
    expect(await sweepStuckPayouts()).to.deep.equal({ requeued: 1 });
    // A second sweep before the job ran adds nothing (the same jobId).
    expect(await sweepStuckPayouts()).to.deep.equal({ requeued: 1 });
    expect(await getQueue('payouts').getWaitingCount()).to.equal(1);
    // The re-queued job pays it (the approval's own outbox job, relayed here too, then finds it paid).
    const ran = await runJobs(['payouts']);
    const resend = ran.find((j) => j.id === `payout-resend-${withdrawal.id}-1`);
    expect(resend?.result).to.deep.equal({ outcome: 'paid', withdrawal_id: withdrawal.id, reference: `prov-wd_${withdrawal.id}` });
    expect(ran.filter((j) => j !== resend).map((j) => j.result)).to.deep.equal([{ outcome: 'skipped', withdrawal_id: withdrawal.id, status: 'paid' }]);
    expect(calls.map((c) => c.reference)).to.deep.equal([`wd_${withdrawal.id}`]);
    expect(await sweepStuckPayouts()).to.deep.equal({ requeued: 0 });
    expect(await payoutPostings(withdrawal.id)).to.equal(1);
    expect(await checkLedger(db)).to.deep.equal([]);
    // It runs on the payouts queue often enough that a job-less stuck payout waits at most lease + sweep.
    expect(MAINTENANCE_SCHEDULES.find((s) => s.job === 'payouts.sweep-stuck')?.everyMs).to.equal(PAYOUT_SWEEP_MS);
    expect(PAYOUT_LEASE_MS + PAYOUT_SWEEP_MS).to.be.at.most(30_000);
  });
});
