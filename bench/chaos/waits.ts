/**
 * The stalled-job wait of a chaos run, sampled every 250 ms until the drain ends: every
 * withdrawal not yet taken, from its approval or from its last claim (a claim whose run was
 * then killed starts its wait again: `payout_attempts` grew), the oldest due callback not
 * yet processed (from its `next_attempt_at`), and for each killed payout job the time until
 * another worker claimed it (or it was done). Enterprise payouts (disbursements) the same
 * way: from their release, or from their last claim.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import type { FaultCounts } from './faults.js';

/**
 * The longest a payout waited to be taken (from its approval, or from the last time a worker
 * claimed it: a claim of a run that then died starts the wait again) and a due callback
 * waited to be processed, sampled every 250 ms.
 */
export interface Waits {
  payout: { s: number; id: string };
  /** The same for enterprise payouts (disbursements), from their release. */
  disbursement: { s: number; id: string };
  callback: { s: number; id: string };
  /** From the end of the workload (the last kill) until nothing was left to drain. */
  drainS: number;
}

export function sampleWaits(db: Knex, counts: FaultCounts): { waits: Waits; stop: () => Promise<void> } {
  const waits: Waits = { payout: { s: 0, id: '' }, disbursement: { s: 0, id: '' }, callback: { s: 0, id: '' }, drainS: 0 };
  let sampling = true;
  const progress = new Map<string, { attempts: number; since: number }>();
  const sampler = (async () => {
    while (sampling) {
      try {
        const at = Date.now();
        const open = await db.raw<{ rows: { id: string; attempts: number; approved: Date }[] }>(
          `SELECT id::text AS id, payout_attempts AS attempts, approved_at AS approved FROM withdrawals WHERE status IN ('approved', 'processing')`,
        );
        const openIds = new Map(open.rows.map((w) => [w.id, w.attempts]));
        for (const w of open.rows) {
          const seen = progress.get(w.id);
          if (!seen) progress.set(w.id, { attempts: w.attempts, since: w.approved.getTime() });
          else if (w.attempts > seen.attempts) Object.assign(seen, { attempts: w.attempts, since: at });
          const s = (at - progress.get(w.id)!.since) / 1000;
          if (s > waits.payout.s) Object.assign(waits.payout, { s, id: w.id });
        }
        // A killed payout job is taken once another claim is made (or the withdrawal is done).
        for (const x of counts.stalledPayouts) {
          if (x.takenAt === undefined && at > x.killedAt && (openIds.get(x.withdrawal) ?? Number.POSITIVE_INFINITY) > x.attempts) x.takenAt = at;
        }
        const disb = await db.raw<{ rows: { id: string; attempts: number; status: string; created: Date }[] }>(
          `SELECT id::text AS id, attempts, status, created_at AS created FROM disbursements WHERE status IN ('queued', 'processing') OR id = ANY(?::uuid[])`,
          [counts.stalledDisbursements.map((x) => x.disbursement)],
        );
        const disbById = new Map(disb.rows.map((d) => [d.id, d]));
        for (const d of disb.rows) {
          if (d.status !== 'queued' && d.status !== 'processing') continue;
          const key = `d:${d.id}`;
          const seen = progress.get(key);
          if (!seen) progress.set(key, { attempts: d.attempts, since: d.created.getTime() });
          else if (d.attempts > seen.attempts) Object.assign(seen, { attempts: d.attempts, since: at });
          const s = (at - progress.get(key)!.since) / 1000;
          if (s > waits.disbursement.s) Object.assign(waits.disbursement, { s, id: d.id });
        }
        for (const x of counts.stalledDisbursements) {
          const d = disbById.get(x.disbursement);
          if (x.takenAt === undefined && at > x.killedAt && d && (d.attempts > x.attempts || (d.status !== 'queued' && d.status !== 'processing'))) x.takenAt = at;
        }
        const cb = await db.raw<{ rows: { id: string; s: number }[] }>(
          `SELECT id::text AS id, extract(epoch FROM now() - next_attempt_at)::float8 AS s
             FROM payment_callbacks WHERE processed_at IS NULL AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT 1`,
        );
        for (const row of cb.rows) if (row.s > waits.callback.s) Object.assign(waits.callback, { s: row.s, id: row.id });
      } catch {
        /* a sample lost to the Postgres cut: the next one */
      }
      await sleep(250);
    }
  })();
  return {
    waits,
    stop: async () => {
      sampling = false;
      await sampler;
    },
  };
}
