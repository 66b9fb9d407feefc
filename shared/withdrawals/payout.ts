/**
 * The payout worker's side of withdrawals (decision 0008): the payout job, which claims an
 * approved withdrawal, sends it through the payout adapter and settles the outcome, and the
 * sweeper that re-queues payouts whose worker died.
 */
import { clock } from '../clock.js';
import { config } from '../config.js';
import { db } from '../db.js';
import { isUuid } from '../ids.js';
import { logger } from '../logger.js';
import { getQueue } from '../queues.js';
import { payoutAdapter, type PayoutAdapter, type PayoutResult } from './payout-adapter.js';
import * as repo from './repo.js';
import type { WithdrawalRow } from './repo.js';
import { settlePaid } from './staff.js';
import { TRANSITIONS, type WithdrawalStatus } from './states.js';
import { allows } from './transition.js';

/**
 * How long a payout worker owns a claimed withdrawal before another run may take it over
 * (PAYOUT_LEASE_MS, 15 s by default). The run renews it every third of that while the
 * provider call is in flight, so only a dead run's claim runs out.
 */
export const PAYOUT_LEASE_MS = config.payoutLeaseMs;

/** How often the stuck-payout sweeper looks for processing withdrawals whose claim ran out. */
export const PAYOUT_SWEEP_MS = 10_000;

export type PayoutRun =
  | { outcome: 'paid'; withdrawal_id: string; reference: string }
  | { outcome: 'failed'; withdrawal_id: string; reason: string }
  | { outcome: 'skipped'; withdrawal_id: string; status: WithdrawalStatus | 'missing' }
  | { outcome: 'manual'; withdrawal_id: string };

/** Another run holds the claim: the job is retried later (a thrown, retryable error). */
export class PayoutBusyError extends Error {
  constructor(id: string) {
    super(`withdrawal ${id} is being paid out by another run; retry later`);
    this.name = 'PayoutBusyError';
  }
}

type Claim = { kind: 'claimed'; w: WithdrawalRow } | { kind: 'busy' } | { kind: 'skip'; status: WithdrawalStatus | 'missing' };

/**
 * Step 1, committed before any money moves: approved -> processing with a lease (the
 * claimPayout compare-and-set), or a processing withdrawal whose lease ran out (a crashed
 * run) claimed again; anything else is left alone.
 */
async function claim(id: string, leaseMs: number): Promise<Claim> {
  return db.transaction(async (trx): Promise<Claim> => {
    const w = await repo.findForUpdate(trx, id);
    if (!w) return { kind: 'skip', status: 'missing' };
    const now = clock.now();
    const lease = { payout_lease_until: new Date(now.getTime() + leaseMs), payout_attempts: w.payout_attempts + 1, updated_at: now };
    if (w.status === 'approved') {
      const moved = await repo.move(trx, id, TRANSITIONS.claimPayout.from, { ...lease, status: TRANSITIONS.claimPayout.to });
      return moved ? { kind: 'claimed', w: moved } : { kind: 'skip', status: w.status };
    }
    if (w.status === 'processing') {
      if (w.payout_lease_until && w.payout_lease_until > now) return { kind: 'busy' };
      const moved = await repo.move(trx, id, ['processing'], lease, (q) => void q.where('payout_lease_until', '<=', now));
      return moved ? { kind: 'claimed', w: moved } : { kind: 'busy' };
    }
    return { kind: 'skip', status: w.status };
  });
}

/** Step 2: the adapter call, with the claim renewed while it runs; a thrown error ends the lease at once. */
async function sendClaimed(w: WithdrawalRow, adapter: PayoutAdapter, leaseMs: number): Promise<PayoutResult> {
  const id = w.id;
  // While the provider call runs, the claim is renewed (this run's claim only: the attempt
  // number it took), so a live run is never taken over and a dead one's claim ends soon.
  const renewal = setInterval(() => {
    repo
      .move(db, id, ['processing'], { payout_lease_until: new Date(clock.nowMs() + leaseMs) }, (q) => void q.where('payout_attempts', w.payout_attempts))
      .catch((err: unknown) => logger.warn({ withdrawal_id: id, err }, 'payout claim renewal failed; it runs out unless renewed'));
  }, Math.max(100, Math.floor(leaseMs / 3)));
  try {
    return await adapter.send({
      reference: `wd_${w.id}`,
      withdrawalId: w.id,
      amount: w.net_amount,
      currency: 'IDR',
      method: w.method,
      destination: w.destination_details,
    });
  } catch (err) {
    // Transient: end the lease now so the retry may claim it again at once.
    await repo.move(db, id, ['processing'], { payout_lease_until: clock.now(), payout_error: String(err instanceof Error ? err.message : err).slice(0, 1000), updated_at: clock.now() });
    throw err;
  } finally {
    clearInterval(renewal);
  }
}

/** Refused for good: processing -> approved with the reason, for staff to reject or pay by hand. */
async function payoutRefused(id: string, adapter: PayoutAdapter, rawReason: string): Promise<PayoutRun> {
  const reason = rawReason.slice(0, 1000);
  const back = await db.transaction(async (trx) => {
    const now = clock.now();
    return repo.move(trx, id, TRANSITIONS.payoutFailed.from, { status: TRANSITIONS.payoutFailed.to, payout_lease_until: null, payout_error: reason, updated_at: now });
  });
  if (!back) {
    const now = await repo.findById(db, id);
    return { outcome: 'skipped', withdrawal_id: id, status: now?.status ?? 'missing' };
  }
  logger.warn({ withdrawal_id: id, adapter: adapter.name, reason }, 'payout refused by the provider; the withdrawal is back to approved');
  return { outcome: 'failed', withdrawal_id: id, reason };
}

/**
 * The payout job (queue payouts, job payouts.send). Safe to run twice:
 *  1. claim: approved -> processing with a lease (a compare-and-set, committed before any
 *     money moves, so staff can no longer reject it or mark it paid; if staff marked it paid
 *     first, the claim finds paid and the run does nothing); a processing withdrawal whose lease
 *     ran out (a crashed run) is claimed again; anything else is left alone;
 *  2. the adapter sends the net amount with the stable reference `wd_<id>` (a provider
 *     pays a reference once);
 *  3. success: settlePaid (processing -> paid; already paid: nothing to do). Staff cannot
 *     mark it paid while the claim holds, so the worker and staff never both pay it.
 *     Refused for good: back to approved with the reason. A thrown error ends the lease at
 *     once and propagates, so the job's retry claims it again.
 */
export async function runPayout(withdrawalId: string, adapter: PayoutAdapter = payoutAdapter(), leaseMs: number = PAYOUT_LEASE_MS): Promise<PayoutRun> {
  const id = withdrawalId;
  if (!isUuid(id)) return { outcome: 'skipped', withdrawal_id: id, status: 'missing' };
  if (!adapter.automatic) return { outcome: 'manual', withdrawal_id: id };
  const claimed = await claim(id, leaseMs);
  if (claimed.kind === 'busy') throw new PayoutBusyError(id);
  if (claimed.kind === 'skip') return { outcome: 'skipped', withdrawal_id: id, status: claimed.status };
  const result = await sendClaimed(claimed.w, adapter, leaseMs);
  if (result.outcome === 'failed') return payoutRefused(id, adapter, result.reason);
  const reference = result.providerReference;
  return db.transaction(async (trx) => {
    const current = await repo.findForUpdate(trx, id);
    if (!current || !allows('payoutSent', current.status)) {
      // Another run that took over an expired claim paid it first (the same reference, so
      // the provider paid once): the posting was made once, by that run.
      return { outcome: 'skipped', withdrawal_id: id, status: current?.status ?? 'missing' } as const;
    }
    await settlePaid(trx, current, { actorId: null, reference, note: null });
    return { outcome: 'paid', withdrawal_id: id, reference } as const;
  });
}

/**
 * The stuck-payout sweeper (job payouts.sweep-stuck, every PAYOUT_SWEEP_MS): a withdrawal
 * left `processing` with a claim that ran out has no run sending it (its worker died, and
 * its job may be gone or have spent its attempts). It is queued again with a jobId of its
 * id and claim number, so sweeps before that job runs add nothing, and a new claim that
 * also dies is queued afresh. Safe: the job claims it with a compare-and-set, and the
 * adapter is called with the same reference `wd_<id>`, which a provider pays once. Nothing
 * is held open while queueing (ARCHITECTURE rule 7).
 */
export async function sweepStuckPayouts(limit = 200): Promise<{ requeued: number }> {
  const stuck = await repo.stuckProcessing(db, clock.now(), limit);
  const queue = getQueue('payouts');
  for (const w of stuck) {
    await queue.add('payouts.send', { withdrawal_id: w.id }, { jobId: `payout-resend-${w.id}-${w.payout_attempts}` });
  }
  if (stuck.length > 0) logger.warn({ withdrawal_ids: stuck.map((w) => w.id) }, 'stuck payouts re-queued (processing, claim ran out)');
  return { requeued: stuck.length };
}
