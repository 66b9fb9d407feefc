/**
 * The payout worker's side of enterprise disbursements (decision 0019), the withdrawals'
 * shape (shared/withdrawals/payout.ts): claim with a lease, re-check the destination's
 * verification signature, send through the adapter with a stable reference, settle or fail;
 * and the sweeper that re-queues payouts whose worker died. Safe to run twice and to be
 * killed at any point:
 *  - killed before the claim commits: the payout stays queued; the job's retry (or the
 *    sweeper) runs it again;
 *  - killed after the claim, before or during the send: the lease runs out, the sweeper
 *    queues it again, and the next run sends with the same reference `disb_<id>`, which a
 *    provider pays once;
 *  - killed after the provider paid, before settling: the same, and the provider answers
 *    the same reference as paid.
 */
import { clock } from '../clock.js';
import { config } from '../config.js';
import { db } from '../db.js';
import { isUuid } from '../ids.js';
import { logger } from '../logger.js';
import { getQueue } from '../queues.js';
import { lockWorkspace } from '../enterprise/repo.js';
import { disbursementAdapter, type DisbursementAdapter, type DisbursementResult } from './adapter.js';
import { payoutGate } from './gate.js';
import { failIn, settleIn } from './outcomes.js';
import * as repo from './repo.js';
import type { DisbursementRow } from './repo.js';
import { DISBURSEMENT_TRANSITIONS, type DisbursementStatus } from './states.js';

/** How long a run owns a claimed payout (PAYOUT_LEASE_MS, as withdrawals); renewed while the provider call runs. */
export const DISBURSE_LEASE_MS = config.payoutLeaseMs;
/** A payout still queued this long after its release has lost its job (or waits for staff, with no provider): the sweeper queues it again. */
export const QUEUED_GRACE_MS = 5 * 60_000;

export type DisburseRun =
  | { outcome: 'settled'; disbursement_id: string; reference: string }
  | { outcome: 'failed'; disbursement_id: string; reason: string }
  | { outcome: 'skipped'; disbursement_id: string; status: DisbursementStatus | 'missing' }
  | { outcome: 'manual'; disbursement_id: string };

/** Another run holds the claim: the job is retried later. */
export class DisbursementBusyError extends Error {
  constructor(id: string) {
    super(`disbursement ${id} is being sent by another run; retry later`);
    this.name = 'DisbursementBusyError';
  }
}

type Claim = { kind: 'claimed'; d: DisbursementRow } | { kind: 'busy' } | { kind: 'skip'; status: DisbursementStatus | 'missing' };

/** Step 1, committed before any money moves: queued -> processing with a lease, or a dead run's expired claim taken over. */
async function claim(id: string, leaseMs: number): Promise<Claim> {
  return db.transaction(async (trx): Promise<Claim> => {
    const d = await repo.byId(trx, id, true);
    if (!d) return { kind: 'skip', status: 'missing' };
    const now = clock.now();
    const lease = { lease_until: new Date(now.getTime() + leaseMs), attempts: d.attempts + 1, updated_at: now };
    if (d.status === 'queued') {
      const moved = await repo.move(trx, id, DISBURSEMENT_TRANSITIONS.claim, lease);
      return moved ? { kind: 'claimed', d: moved } : { kind: 'skip', status: d.status };
    }
    if (d.status === 'processing') {
      if (d.lease_until && d.lease_until > now) return { kind: 'busy' };
      const moved = await repo.move(trx, id, DISBURSEMENT_TRANSITIONS.reclaim, lease, (q) => void q.where((l) => void l.whereNull('lease_until').orWhere('lease_until', '<=', now)));
      return moved ? { kind: 'claimed', d: moved } : { kind: 'busy' };
    }
    return { kind: 'skip', status: d.status };
  });
}

/** Step 3: the adapter call, the claim renewed while it runs; a thrown error ends the lease at once so a retry may claim again. */
async function sendClaimed(d: DisbursementRow, destination: { bank_name: string; account_holder: string; account_number: string }, adapter: DisbursementAdapter, leaseMs: number): Promise<DisbursementResult> {
  const renewal = setInterval(() => {
    repo
      .touchClaim(db, d.id, d.attempts, { lease_until: new Date(clock.nowMs() + leaseMs) })
      .catch((err: unknown) => logger.warn({ disbursement_id: d.id, err }, 'payout claim renewal failed; it runs out unless renewed'));
  }, Math.max(100, Math.floor(leaseMs / 3)));
  try {
    return await adapter.send({ reference: `disb_${d.id}`, disbursementId: d.id, amount: d.amount, currency: d.currency, destination });
  } catch (err) {
    await repo.touchClaim(db, d.id, d.attempts, { lease_until: clock.now(), failure_reason: String(err instanceof Error ? err.message : err).slice(0, 1000), updated_at: clock.now() });
    throw err;
  } finally {
    clearInterval(renewal);
  }
}

/** Step 4 (either outcome), with the workspace row locked first, as every deal write. */
async function finish(d: DisbursementRow, result: DisbursementResult): Promise<DisburseRun> {
  return db.transaction(async (trx): Promise<DisburseRun> => {
    await lockWorkspace(trx, d.workspace_id);
    const current = await repo.byId(trx, d.id, true);
    // Another run that took over an expired claim finished it first: nothing more to do.
    if (!current || current.status !== 'processing') {
      // A provider that paid a payout no longer processing (a run that took over settled it
      // first: the same reference, paid once) is normal; anything else needs a person.
      if (result.outcome === 'paid' && current?.status !== 'settled') {
        logger.error({ disbursement_id: d.id, status: current?.status ?? 'missing', provider_reference: result.providerReference }, 'the provider paid a payout that is not settled here: reconcile it by hand');
      }
      return { outcome: 'skipped', disbursement_id: d.id, status: current?.status ?? 'missing' };
    }
    if (result.outcome === 'paid') {
      await settleIn(trx, current, 'sent', result.providerReference);
      return { outcome: 'settled', disbursement_id: d.id, reference: result.providerReference };
    }
    await failIn(trx, current, 'refused', result.reason);
    logger.warn({ disbursement_id: d.id, reason: result.reason }, 'payout failed; its amount is back on the milestone for a re-release');
    return { outcome: 'failed', disbursement_id: d.id, reason: result.reason };
  });
}

/** A queued payout that may not be paid, failed before anyone sends it (its money back on the milestone). */
async function refuseQueued(d: DisbursementRow, reason: string): Promise<DisburseRun> {
  return db.transaction(async (trx): Promise<DisburseRun> => {
    await lockWorkspace(trx, d.workspace_id);
    const current = await repo.byId(trx, d.id, true);
    if (!current || current.status !== 'queued') return { outcome: 'skipped', disbursement_id: d.id, status: current?.status ?? 'missing' };
    await failIn(trx, current, 'refused', reason);
    logger.warn({ disbursement_id: d.id, reason }, 'payout refused before sending; its amount is back on the milestone');
    return { outcome: 'failed', disbursement_id: d.id, reason };
  });
}

/**
 * The payout job (queue payouts, job payouts.disburse): claim, pass the gate (gate.ts: the
 * payout row as its release signed it, the instruction as staff verified it; otherwise the
 * payout fails and nothing is paid), send, settle or fail. With no provider (manual) the
 * job only fails a queued payout that does not pass the gate, and leaves the rest to staff.
 */
export async function runDisbursement(id: string, leaseMs: number = DISBURSE_LEASE_MS, adapterFor: (isTest: boolean) => DisbursementAdapter = disbursementAdapter): Promise<DisburseRun> {
  if (!isUuid(id)) return { outcome: 'skipped', disbursement_id: id, status: 'missing' };
  const peek = await repo.byId(db, id);
  if (!peek) return { outcome: 'skipped', disbursement_id: id, status: 'missing' };
  const adapter = adapterFor(peek.is_test);
  if (!adapter.automatic) {
    // Nothing is sent here: staff pay by hand. A payout that may not be paid fails now, so it never reaches them.
    if (peek.status === 'queued') {
      const gate = await payoutGate(db, peek);
      if (!gate.ok) return refuseQueued(peek, `destination refused: ${gate.reason}`);
    }
    return { outcome: 'manual', disbursement_id: id };
  }
  const claimed = await claim(id, leaseMs);
  if (claimed.kind === 'busy') throw new DisbursementBusyError(id);
  if (claimed.kind === 'skip') return { outcome: 'skipped', disbursement_id: id, status: claimed.status };
  const gate = await payoutGate(db, claimed.d);
  if (!gate.ok) return finish(claimed.d, { outcome: 'failed', reason: `destination refused: ${gate.reason}` });
  return finish(claimed.d, await sendClaimed(claimed.d, gate.destination, adapter, leaseMs));
}

/**
 * The sweeper (job payouts.sweep-disbursements, every PAYOUT_SWEEP_MS): processing payouts
 * whose claim ran out (their worker died) and payouts queued for long are queued again with
 * a jobId of their id and claim number, so repeated sweeps add nothing until that job ran.
 * Nothing is held open while queueing (ARCHITECTURE rule 7).
 */
export async function sweepDisbursements(limit = 200): Promise<{ requeued: number }> {
  const now = clock.now();
  // Dead runs first, with their own limit: payouts left queued for staff never crowd them out.
  const dead = await repo.expiredClaims(db, now, limit);
  // Queued for long: sandbox ones always (their adapter sends), live ones only when a provider does.
  const live = disbursementAdapter(false).automatic;
  const lost = await repo.queuedSince(db, new Date(now.getTime() - QUEUED_GRACE_MS), live, limit);
  const stuck = [...dead, ...lost];
  const queue = getQueue('payouts');
  for (const d of stuck) await queue.add('payouts.disburse', { disbursement_id: d.id }, { jobId: `disburse-resend-${d.id}-${d.attempts}` });
  // Debug only: a payout whose re-queued job has not run yet is found again (the jobId makes the add a no-op).
  if (stuck.length > 0) logger.debug({ disbursement_ids: stuck.map((d) => d.id) }, 'payouts re-queued by the sweeper');
  return { requeued: stuck.length };
}
