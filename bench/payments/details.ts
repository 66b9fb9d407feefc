/**
 * The payments report's detail lines under its table: what was checked, CPU by phase and
 * per unit of work, database work per payment, the relay's query, and what the backends
 * were doing.
 */
import { SERVICE_ENV_NOTE } from '../lib/env.js';
import path from 'node:path';
import { fmtInt, fmtNum, fmtPct, mdTable, statusList } from '../lib/format.js';
import type { DbStats, WaitProfile } from '../lib/pg-sample.js';
import { cpuMsPer, cpuText, type CpuUse } from '../lib/sample.js';
import { COPIES, POLL_MS, QUEUE_PREFIX, settings } from './load.js';
import type { RelayCost } from './measure.js';
import type { PgbenchResult } from './pgbench.js';
import type { PaymentSeed } from './seed.js';
import type { Verification } from './verify.js';

/** The process groups of the CPU figures, as sample.ts names them. */
const GROUPS = [
  ['api', 'API'],
  ['worker', 'worker'],
  ['postgres', 'Postgres'],
  ['redis', 'Redis'],
  ['bench', 'autocannon'],
] as const;
export const cpuLine = (cpu: CpuUse): string => cpuText(cpu, GROUPS);

/** One phase of the measured window: its reconciliation rate and who used the CPU. */
export interface Phase {
  label: string;
  paid: number;
  cpu: CpuUse | null;
}

const ledgerText = (v: Verification) => (v.ledgerViolations.length === 0 ? 'no violation' : v.ledgerViolations.slice(0, 3).join('; '));
const noticeText = (v: Verification, escrows: boolean) =>
  Object.entries(v.notices)
    .map(([t, c]) => `${t} ${fmtInt(c.rows)}${escrows ? ` for ${fmtInt(c.escrows)} escrows` : ''}`)
    .join(', ');

export function checkedLine(v: Verification, n: number): string {
  return (
    `- Checked after the run, for the ${fmtInt(n)} measured orders: payments ${fmtInt(v.payments.paid)} paid, ${v.payments.pending} pending, ` +
    `${v.payments.flagged} flagged; escrows ${fmtInt(v.escrowsPaid)} paid; \`escrow_payment\` journal entries ${fmtInt(v.journal.entries)} for ` +
    `${fmtInt(v.journal.escrows)} escrows (at most ${v.journal.maxPerEscrow} per escrow), ${v.journal.credits} \`payment_credit\`; ` +
    `\`payment.completed\` events ${fmtInt(v.events.total)}; escrow accounts not holding the escrow amount: ${v.heldMismatch}; ` +
    `\`payment_callbacks\` ${fmtInt(v.callbacks.rows)} rows for ${fmtInt(v.callbacks.orders)} orders counting ${fmtInt(v.callbacks.deliveries)} deliveries ` +
    `(rows by deliveries: ${statusList(v.callbacks.byDeliveries)}), outcomes ` +
    `${Object.entries(v.callbacks.outcomes).map(([o, c]) => `${o} ${fmtInt(c)}`).join(', ')}; unprocessed callbacks in the whole database: ` +
    `${v.unprocessedAnywhere}; callbacks that needed a second attempt: ${fmtInt(v.jobs.retried)}; notice jobs in the outbox ${fmtInt(v.jobs.rows)} ` +
    `(${fmtInt(v.jobs.batches)} \`notifications.create-batch\`), ${v.jobs.open} open, ${v.jobs.dead} dead; notices ${noticeText(v, true)}; ` +
    `\`checkLedger\`: ${ledgerText(v)}.`
  );
}

export function cpuPhaseLines(phases: Phase[]): string[] {
  if (phases.some((p) => !p.cpu)) return ['- CPU: not measured (no /proc).'];
  return [
    `- By phase (CPU from /proc, in % of one core; Postgres is every backend of the server, other databases' too):`,
    ...phases.map((p) => `  - ${p.label} (${fmtNum(p.cpu!.seconds)} s): ${fmtInt(p.paid)} payments paid, ${fmtInt(p.paid / p.cpu!.seconds)}/s; ${cpuLine(p.cpu!)}.`),
  ];
}

export interface BacklogRun {
  n: number;
  unpaidBefore: number;
  storeSeconds: number;
  /** First to last payment paid. */
  seconds: number;
  rate: number;
  cpu: CpuUse | null;
  verification: Verification;
}

export function backlogLine(b: BacklogRun): string {
  const v = b.verification;
  return (
    `- Backlog run: ${fmtInt(b.n)} orders' callbacks (× ${COPIES}) stored by the API in ${fmtNum(b.storeSeconds)} s with the worker stopped, then a new worker started; ` +
    (b.cpu ? `CPU from its start until every backlog link was paid: ${cpuLine(b.cpu)}. ` : '') +
    `Checked like the measured run: payments ${fmtInt(v.payments.paid)} paid, ${v.payments.flagged} flagged; ` +
    `\`escrow_payment\` entries ${fmtInt(v.journal.entries)} for ${fmtInt(v.journal.escrows)} escrows; notices ${noticeText(v, false)}; \`checkLedger\`: ${ledgerText(v)}.`
  );
}

export function cpuCostLine(whole: CpuUse | null, payments: number, pg: PgbenchResult | null): string {
  if (!whole) return '- CPU per unit of work: not measured (no /proc).';
  const service = cpuMsPer(whole, ['api', 'worker', 'postgres', 'redis'], payments);
  const pgOnly = cpuMsPer(whole, ['postgres'], payments);
  let text =
    `- CPU per payment over the whole window (the service's processes: API, worker, Postgres, Redis; not autocannon): ` +
    `${fmtNum(service)} core-ms, of which Postgres ${fmtNum(pgOnly)} core-ms.`;
  if (pg?.cpu) {
    // Rate-based: Postgres's cores over pgbench's transactions per second.
    const perTx = (((pg.cpu.groups.postgres ?? 0) / 100) * 1000) / pg.tps;
    text +=
      ` pgbench's run (read from 1.5 s after its start to 1 s before its end): the cores ${fmtPct(pg.cpu.machineBusy)} busy, Postgres ${fmtPct(pg.cpu.groups.postgres ?? 0)} and the pgbench client ` +
      `${fmtPct(pg.cpu.groups.pgbench ?? 0)} of one core: ${fmtNum(perTx)} core-ms of Postgres per transaction. ` +
      `One payment costs the machine as much CPU as about ${fmtInt(service / perTx)} pgbench transactions ` +
      `(its Postgres work alone, ${fmtInt(pgOnly / perTx)}); at equal CPU, 25% of pgbench's rate allows 4.`;
  }
  return text;
}

export function relayLine(r: { before: RelayCost | null; after: RelayCost | null }): string {
  const one = (c: RelayCost | null) => (c ? `${fmtNum(c.ms)} ms (${c.summary})` : 'not measured');
  return (
    `- The outbox relay's query (\`relayOnce\`: due, unrelayed rows in \`(available_at, id)\` order, \`LIMIT 200 FOR UPDATE SKIP LOCKED\`; EXPLAIN ANALYZE with nothing due) ` +
    `before the measured callbacks: ${one(r.before)}; after the run: ${one(r.after)}.`
  );
}

export function statsLine(st: DbStats | null, n: number): string {
  if (!st) return '- Database counters: not read.';
  const per = (x: number) => fmtNum(x / n);
  return (
    `- Database work per payment, from the first callback until the outbox was drained (\`pg_stat_database\` of the bench database; ` +
    `each payment is ${COPIES} deliveries, its share of a reconciliation batch and its two notices; the bench's own polling, one query every ${POLL_MS} ms, included): ` +
    `${per(st.commits)} commits, ${per(st.inserted)} rows inserted, ${per(st.updated)} updated, ${per(st.fetched)} fetched; ${fmtInt(st.rollbacks)} rollbacks in all. ` +
    (Number.isFinite(st.walSyncs) ? `WAL (server-wide, \`pg_stat_wal\`): ${per(st.walRecords)} records and ${per(st.walSyncs)} syncs per payment.` : '')
  );
}

/** The Redis database the run used (bench/run.sh sets REDIS_URL). */
function redisDb(): string {
  return /\/(\d+)$/.exec(process.env.REDIS_URL ?? '')?.[1] ?? '0';
}

export function seedLine(seed: PaymentSeed, escrows: number, database: string, warmupSeconds: number): string {
  return (
    `- Seeded ${fmtInt(escrows)} escrows with a pending sandbox link in ${fmtNum(seed.seconds)} s ` +
    `(\`createDirect\` + \`pay()\`, ${seed.users} users, sandbox gateway row ${seed.gateway}) in the bench's own database \`${database}\` ` +
    `(Redis db ${redisDb()}, queue prefix \`${QUEUE_PREFIX}\`), after purging the outbox rows of earlier runs (${fmtInt(seed.purged.completed)} completed rows, ` +
    `as the sweeper would after its 7-day retention, and ${fmtInt(seed.purged.timers)} expiry timers of paid escrows), then \`VACUUM (ANALYZE)\` of ` +
    `the tables the pipeline writes (${fmtNum(seed.vacuumSeconds)} s; autovacuum is off on this server). Warm-up: ${fmtInt(seed.warmup.length)} orders' ` +
    `callbacks the same way, and the seed's escrow notices, drained in ${fmtNum(warmupSeconds)} s before the measured run.`
  );
}

export function processesLine(workerConcurrency: string, logLevel: string, pg: PgbenchResult | null, pgbenchNote: string | null): string {
  return (
    `- API: \`node dist/api/server.js\`; worker: \`node dist/workers/index.js\` (every queue, the outbox relay, the schedules; ` +
    `WORKER_CONCURRENCY ${workerConcurrency} per queue, OUTBOX_POLL_MS default); both ${SERVICE_ENV_NOTE}, \`SANDBOX_MODE=1\`, ` +
    `\`LOG_LEVEL=${logLevel}\`, stdout to /dev/null, the database pool default (10 each), notice e-mails ${process.env.NOTIFICATION_EMAILS === '0' ? 'off (`NOTIFICATION_EMAILS=0`: no SMTP server here)' : 'on'}. ` +
    (pg
      ? `pgbench: \`${path.basename(pg.binary)}\` (${pg.version}), scratch database \`${pg.database}\` initialised with \`-i -s ${settings.pgbenchScale}\` ` +
        `in ${fmtNum(pg.initSeconds)} s, run after the API and the worker stopped, for the reconciliation window in whole seconds, at least 30 s` +
        `${settings.pgbenchDuration ? ' (overridden by BENCH_PGBENCH_DURATION)' : ''}.`
      : `pgbench: ${pgbenchNote ?? 'not run'}.`)
  );
}

export function waitTable(w: WaitProfile, top = 10): string[] {
  if (w.samples === 0) return ['No sample of `pg_stat_activity` was taken.'];
  const esc = (q: string) => q.replace(/\|/g, '\\|').replace(/`/g, "'");
  return [
    `What the bench database's client backends were doing from the first callback until every payment was paid ` +
      `(\`pg_stat_activity\` sampled every 100 ms, ${fmtInt(w.samples)} samples; on average ${fmtNum(w.busyMean)} backends were not idle; ` +
      `the ${top} most frequent states):`,
    '',
    ...mdTable(
      ['Backends (mean)', 'State', 'Wait event', 'Statement (the last one, when idle in transaction)'],
      'rlll',
      w.rows.slice(0, top).map((r) => [fmtNum(r.mean), r.state, r.wait, `\`${esc(r.query)}\``]),
    ),
  ];
}
