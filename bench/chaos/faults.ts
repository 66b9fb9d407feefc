/**
 * The faults of a chaos run, while the workload runs: one worker copy SIGKILLed every 2 s
 * and restarted (the next kill waits until the new copy has connected); one API copy
 * SIGKILLed every 15 s and restarted; Redis restarted once (at 10 s); from 20 s, every busy
 * backend of the service's processes terminated at once, tried every 200 ms until one of
 * them is inside a transaction; and payout jobs whose worker is SIGKILLed while it runs
 * them (withdrawals, and enterprise disbursements during the enterprise flows). Each planned
 * fault must happen, or the run fails (verify.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { startChild, type Child } from '../lib/procs.js';
import { net, PROC_LOG } from './client.js';
import { DRIVER_APP, workerApp, type RedisServer } from './stores.js';

export interface Faults {
  apis: Child[];
  workers: Child[];
  apiEnv: (p: number) => NodeJS.ProcessEnv;
  /** A worker copy's environment; `app` names its Postgres connections. */
  workerEnv: (app: string) => NodeJS.ProcessEnv;
  ports: number[];
  redis: RedisServer;
  db: Knex;
  ready: (copy: number) => Promise<void>;
}

/** The faults of a run; each planned one must have happened, or the run fails. */
export interface FaultCounts {
  workerKills: number;
  apiKills: number;
  redisRestarts: number;
  /** Tries of the Postgres cut (every ~200 ms until a backend in a transaction was there to cut). */
  pgCutAttempts: number;
  terminatedBackends: number;
  /** Of those, backends inside a transaction of several statements (idle in it, or past its first statement). */
  terminatedMidTx: number;
  pgCutAt: number;
  /** Payout jobs whose worker copy was SIGKILLed while it ran them. */
  stalledPayouts: { withdrawal: string; killedAt: number; attempts: number; takenAt?: number }[];
  /** Enterprise payout jobs (payouts.disburse) whose worker copy was SIGKILLed while it ran them. */
  stalledDisbursements: { disbursement: string; killedAt: number; attempts: number; takenAt?: number }[];
}

export interface FaultRun {
  counts: FaultCounts;
  /** When each killed API copy was down. */
  cutWindows: { api: number; from: number; to: number }[];
  /** Called after each withdrawal approval: every fourth, until 3 have, has its payout job's worker killed. */
  onApproved: (withdrawalId: string) => void;
  /** Called after each enterprise release with one of its payouts: every fourth, until 3 have, has its payout job's worker killed. */
  onReleased: (disbursementId: string) => void;
  /** Waits for the payout kills under way, then stops the fault loops. */
  stop: () => Promise<void>;
}

export function startFaults(f: Faults): FaultRun {
  let running = true;
  const counts: FaultCounts = { workerKills: 0, apiKills: 0, redisRestarts: 0, pgCutAttempts: 0, terminatedBackends: 0, terminatedMidTx: 0, pgCutAt: 0, stalledPayouts: [], stalledDisbursements: [] };
  const cutWindows: { api: number; from: number; to: number }[] = [];

  // Worker copies are killed by the 2 s loop and by the stalled-payout fault: one kill at a
  // time per slot. Each start has its own application_name (slot and start number).
  const generation = [0, 0];
  const killedAt = new Map<string, number>();
  const slotQueue: Promise<unknown>[] = [Promise.resolve(), Promise.resolve()];
  /** SIGKILLs the copy in `slot` (only if it is still the start named `onlyApp`), restarts it, and resolves with the kill time. */
  const killWorker = (slot: number, onlyApp?: string): Promise<number> => {
    const run = slotQueue[slot]!.then(async () => {
      const app = workerApp(slot, generation[slot]!);
      if (onlyApp !== undefined && onlyApp !== app) return killedAt.get(onlyApp) ?? Date.now();
      const at = Date.now();
      killedAt.set(app, at);
      f.workers[slot]!.proc.kill('SIGKILL');
      await f.workers[slot]!.exited;
      generation[slot]! += 1;
      f.workers[slot] = startChild(`worker ${slot + 1}`, ['dist/workers/index.js'], f.workerEnv(workerApp(slot, generation[slot]!)), { pin: false, stdout: PROC_LOG });
      counts.workerKills += 1;
      return at;
    });
    slotQueue[slot] = run.catch(() => undefined);
    return run;
  };
  // Worker killer: every 2 s one copy, SIGKILL, restarted at once, and up before the next
  // kill (its outbox relay connects at once): on 2 busy cores a copy may take seconds to
  // boot, and killing copies that never started would test nothing.
  const workerLoop = (async () => {
    let k = 0;
    while (running) {
      await sleep(2000);
      if (!running) break;
      const slot = k % 2;
      k += 1;
      await killWorker(slot);
      const app = workerApp(slot, generation[slot]!);
      for (const until = Date.now() + 30_000; running && Date.now() < until; ) {
        const up = await f.db.raw<{ rows: unknown[] }>('SELECT 1 FROM pg_stat_activity WHERE application_name = ?', [app]).catch(() => ({ rows: [] }));
        if (up.rows.length > 0) break;
        await sleep(100);
      }
    }
  })();
  // API killer: every 15 s one copy, SIGKILL, restarted; requests to it are cut and retried.
  const apiLoop = (async () => {
    let k = 0;
    while (running) {
      await sleep(15_000);
      if (!running) break;
      const i = k % 2;
      k += 1;
      net.down.add(i);
      const from = Date.now();
      f.apis[i]!.proc.kill('SIGKILL');
      await f.apis[i]!.exited;
      f.apis[i] = startChild(`API ${i + 1}`, ['dist/api/server.js'], f.apiEnv(f.ports[i]!), { pin: false, stdout: PROC_LOG });
      await f.ready(i);
      net.down.delete(i);
      cutWindows.push({ api: i, from, to: Date.now() });
      counts.apiKills += 1;
    }
  })();
  // Redis once, at 10 s.
  const redisOnce = (async () => {
    await sleep(10_000);
    if (running) {
      await f.redis.restart();
      counts.redisRestarts += 1;
      console.log('chaos: Redis restarted');
    }
  })();
  // Postgres from 20 s: every busy backend of the service's processes is terminated at once,
  // tried every 200 ms until at least one of them is inside a transaction of several
  // statements (idle in it, or past its first statement), so a cut always lands mid-transaction.
  const pgCut = (async () => {
    await sleep(20_000);
    while (running && counts.terminatedMidTx === 0) {
      counts.pgCutAttempts += 1;
      try {
        const r = await f.db.raw<{ rows: { app: string; mid: boolean; ok: boolean }[] }>(
          `WITH busy AS (
             SELECT pid, application_name AS app, (state = 'idle in transaction' OR xact_start < query_start) AS mid
               FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                AND application_name LIKE 'chaos-%' AND application_name <> ?
                AND state IN ('active', 'idle in transaction') AND xact_start IS NOT NULL)
           SELECT app, mid, pg_terminate_backend(pid) AS ok FROM busy WHERE EXISTS (SELECT 1 FROM busy WHERE mid)`,
          [DRIVER_APP],
        );
        const cut = r.rows.filter((x) => x.ok);
        if (cut.length > 0) {
          counts.pgCutAt = Date.now();
          counts.terminatedBackends = cut.length;
          counts.terminatedMidTx = cut.filter((x) => x.mid).length;
          console.log(`chaos: terminated ${cut.length} busy Postgres backends (${counts.terminatedMidTx} inside a transaction) at try ${counts.pgCutAttempts}: ${cut.map((x) => x.app).join(', ')}`);
        }
      } catch (err) {
        console.error(`chaos: Postgres cut try failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (counts.terminatedMidTx === 0) await sleep(200);
    }
  })();

  /**
   * A payout job whose worker dies while it runs it: right after an approval the driver
   * locks the withdrawal's row, the worker that takes the payout job blocks on it in its
   * claim, the driver finds that backend among those its lock blocks, SIGKILLs the worker
   * copy the backend names, and lets go. BullMQ then holds the job as active under a dead
   * worker until another worker takes it over.
   */
  const stalls: Promise<void>[] = [];
  // The same for an enterprise payout (its claim reads the disbursement FOR UPDATE while queued).
  const STALL_ROWS = {
    withdrawal: { sql: 'SELECT status, payout_attempts AS attempts, pg_backend_pid() AS me FROM withdrawals WHERE id = ? FOR UPDATE', waiting: 'approved' },
    disbursement: { sql: 'SELECT status, attempts, pg_backend_pid() AS me FROM disbursements WHERE id = ? FOR UPDATE', waiting: 'queued' },
  } as const;
  const stallJob = async (kind: keyof typeof STALL_ROWS, id: string): Promise<void> => {
    const trx = await f.db.transaction();
    trx.executionPromise.catch(() => undefined);
    try {
      const r = (await trx.raw<{ rows: { status: string; attempts: number; me: number }[] }>(STALL_ROWS[kind].sql, [id])).rows[0];
      if (r?.status !== STALL_ROWS[kind].waiting) return; // the payout worker was quicker
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline) {
        const blocked = await f.db.raw<{ rows: { app: string }[] }>('SELECT application_name AS app FROM pg_stat_activity WHERE ?::int = ANY(pg_blocking_pids(pid))', [r.me]);
        const app = blocked.rows.map((x) => x.app).find((a) => a.startsWith('chaos-worker-'));
        if (app) {
          const slot = Number(/^chaos-worker-(\d+)-/.exec(app)![1]) - 1;
          const killed = await killWorker(slot, app);
          if (kind === 'withdrawal') counts.stalledPayouts.push({ withdrawal: id, killedAt: killed, attempts: r.attempts });
          else counts.stalledDisbursements.push({ disbursement: id, killedAt: killed, attempts: r.attempts });
          return;
        }
        await sleep(50);
      }
      console.error(`chaos: no worker took the payout of ${kind} ${id} within 15 s`);
    } finally {
      await trx.rollback().catch(() => undefined);
    }
  };
  // Every fourth approval, until 3 payouts have stalled (a try finds the payout done when the worker was quicker).
  let approvals = 0;
  const onApproved = (id: string) => {
    approvals += 1;
    if (approvals % 4 === 1 && counts.stalledPayouts.length < 3) stalls.push(stallJob('withdrawal', id));
  };
  // Releases come many at once: one try at a time (each holds a driver connection for up to 15 s).
  let releases = 0;
  let stallingRelease = false;
  const onReleased = (id: string) => {
    releases += 1;
    if (stallingRelease || releases % 4 !== 1 || counts.stalledDisbursements.length >= 3) return;
    stallingRelease = true;
    stalls.push(
      stallJob('disbursement', id).finally(() => {
        stallingRelease = false;
      }),
    );
  };

  return {
    counts,
    cutWindows,
    onApproved,
    onReleased,
    stop: async () => {
      await Promise.all(stalls);
      running = false;
      await Promise.all([workerLoop, apiLoop, redisOnce, pgCut]);
    },
  };
}
