/**
 * The payments bench's report: the figures against pgbench's TPS (issue 8: ingestion and
 * reconciliation each ≥ 25% of it, nothing lost or doubled), then the detail lines
 * (details.ts) and what the database's backends were doing.
 */
import { LOG_LEVEL } from '../lib/env.js';
import { fmtInt, fmtNum, fmtPct, mdTable, statusList } from '../lib/format.js';
import type { DbStats, WaitProfile } from '../lib/pg-sample.js';
import { measuredLine, type Headline } from '../lib/report.js';
import { machine } from '../lib/sample.js';
import { backlogLine, checkedLine, cpuCostLine, cpuPhaseLines, processesLine, relayLine, seedLine, statsLine, waitTable, type BacklogRun, type Phase } from './details.js';
import { COPIES, INBOUND, settings, TARGET_SHARE, type LoadResult } from './load.js';
import type { RelayCost, Timing } from './measure.js';
import { PGBENCH_THREADS, type PgbenchResult } from './pgbench.js';
import type { PaymentSeed } from './seed.js';
import type { Verification } from './verify.js';

export interface RunInfo {
  at: Date;
  backlog: BacklogRun | null;
  seed: PaymentSeed;
  warmupSeconds: number;
  load: LoadResult;
  paidAtIngestEnd: number;
  timing: Timing;
  drainedMs: number;
  verification: Verification;
  pgbench: PgbenchResult | null;
  /** Why there is no pgbench figure (not found, or failed). */
  pgbenchNote: string | null;
  loadavgs: { before: string; loadStart: string; loadEnd: string };
  phases: Phase[];
  stats: DbStats | null;
  relay: { before: RelayCost | null; after: RelayCost | null };
  database: string;
  waits: WaitProfile;
  workerConcurrency: string;
}

const checksCell = (v: Verification, all: string) => (v.problems.length === 0 ? all : `**${v.problems.length} check(s) failed**: ${v.problems.join('; ')}`);

export function report(info: RunInfo): { markdown: string; headlines: Headline[]; ingestRate: number; reconRate: number; share: number | null } {
  const n = info.seed.orders.length;
  const requests = COPIES * n;
  const ingestSeconds = (info.load.endedAt - info.load.startedAt) / 1000;
  const ingestRate = requests / ingestSeconds;
  const windowSeconds = (info.timing.lastPaid.getTime() - info.timing.firstReceived.getTime()) / 1000;
  const reconRate = n / windowSeconds;
  const pg = info.pgbench;
  const shareOf = (rate: number) => (pg ? rate / pg.tps : null);
  const share = shareOf(reconRate);
  const v = info.verification;
  const r = info.load.result;
  const b = info.backlog;
  const target = `target ≥ ${fmtPct(TARGET_SHARE * 100)}`;
  const verdictOf = (x: number | null) => (x === null ? 'no pgbench figure to compare with' : `${target}: **${x >= TARGET_SHARE ? 'met' : 'not met'}**`);
  const pctOf = (x: number | null) => (x === null ? 'n/a' : fmtPct(x * 100));

  const headlines: Headline[] = [];
  const headline = (id: string, figure: string, x: number | null) => {
    if (x !== null) headlines.push({ id, figure, goal: `≥ ${fmtPct(TARGET_SHARE * 100)}`, measured: fmtPct(x * 100), met: x >= TARGET_SHARE });
  };
  headline('payments/reconciliation', 'Payment callbacks reconciled end to end ÷ pgbench TPS', share);
  headline('payments/ingestion', 'Payment callbacks taken in (HTTP) ÷ pgbench TPS', shareOf(ingestRate));
  if (b) headline('payments/backlog', 'A backlog of callbacks reconciled by the worker alone ÷ pgbench TPS', shareOf(b.rate));
  const lost = v.lost + (b?.verification.lost ?? 0);
  const doubled = v.doubled + (b?.verification.doubled ?? 0);
  headlines.push({ id: 'payments/lost-doubled', figure: 'Payment callbacks lost / doubled', goal: '0 / 0', measured: `${lost} / ${doubled}`, met: lost === 0 && doubled === 0 });

  const rows = [
    pg
      ? [`pgbench \`tpcb-like\`, ${settings.connections} clients, \`-j ${PGBENCH_THREADS}\`, ${pg.seconds} s, scale ${settings.pgbenchScale}`, `${fmtInt(pg.tps)} transactions/s`, `latency average ${fmtNum(pg.latencyMs)} ms, ${fmtInt(pg.transactions)} transactions, ${fmtInt(pg.failed)} failed`]
      : ['pgbench', 'not run', info.pgbenchNote ?? 'unknown'],
    [`Callback ingestion, \`POST ${INBOUND}\` (HTTP)`, `${fmtInt(ingestRate)} requests/s`, `${fmtInt(requests)} signed callbacks (${fmtInt(n)} orders × ${COPIES}) in ${fmtNum(ingestSeconds)} s, ${settings.connections} connections; p50 ${fmtNum(r.latency.p50)} ms, p99 ${fmtNum(r.latency.p99)} ms`],
    ['End-to-end reconciliation (API + outbox relay + worker)', `${fmtInt(reconRate)} payments/s`, `${fmtInt(n)} payments paid in ${fmtNum(windowSeconds)} s, first callback received → last payment paid`],
    ['Reconciliations ÷ pgbench TPS', `**${pctOf(share)}**`, verdictOf(share)],
    ['Ingestion ÷ pgbench TPS', `**${pctOf(shareOf(ingestRate))}**`, pg ? verdictOf(shareOf(ingestRate)) : ''],
    ...(b
      ? [
          ['Backlog reconciliation (worker alone, API idle)', `${fmtInt(b.rate)} payments/s`, `${fmtInt(b.n)} stored callbacks (${fmtInt(b.unpaidBefore)} unpaid when the worker started), first to last payment paid in ${fmtNum(b.seconds)} s`],
          ['Backlog reconciliation ÷ pgbench TPS', `**${pctOf(shareOf(b.rate))}**`, pg ? verdictOf(shareOf(b.rate)) : ''],
          ['Backlog: lost / doubled', `**${b.verification.lost} / ${b.verification.doubled}**`, checksCell(b.verification, 'every check passed')],
        ]
      : []),
    ['Callbacks lost / doubled', `**${v.lost} / ${v.doubled}**`, checksCell(v, 'every check below passed')],
  ];
  const t = info.timing;
  const lines = [
    `${measuredLine(info.at)} Load average (1, 5, 15 min) before seeding: ${info.loadavgs.before}; when the callbacks started: ${info.loadavgs.loadStart}; ` +
      `when they ended: ${info.loadavgs.loadEnd}` +
      (pg ? `; when pgbench started: ${pg.loadStart}; when it ended: ${pg.loadEnd}.` : '.'),
    '',
    ...mdTable(['Figure', 'Value', ''], 'lrl', rows),
    '',
    `- Callback → paid latency per payment (first delivery's \`received_at\` → \`paid_at\`): p50 ${fmtNum(t.latency.p50)} ms, ` +
      `p90 ${fmtNum(t.latency.p90)} ms, p99 ${fmtNum(t.latency.p99)} ms, max ${fmtNum(t.latency.max)} ms. ` +
      `When the last callback was answered, ${fmtInt(info.paidAtIngestEnd)} of ${fmtInt(n)} payments were paid; the last one was paid ` +
      `${fmtNum((t.lastPaid.getTime() - info.load.endedAt) / 1000)} s after that. The notices (two per payment, in \`notifications.create-batch\` jobs) ` +
      `were all written ${fmtNum(info.drainedMs / 1000)} s after the last payment.`,
    `- HTTP: ${fmtInt(info.load.tally.ok)} answers 200 of ${fmtInt(requests)} sent (${r.errors} errors, ${r.timeouts} timeouts` +
      `${info.load.tally.bad.size ? `; others ${statusList(info.load.tally.bad)}` : ''}); ` +
      `${fmtInt(info.load.tally.fresh)} said \`duplicate: false\` and ${fmtInt(info.load.tally.duplicate)} \`duplicate: true\`. ` +
      `The two copies of an order are the same bytes; orders go in blocks of ${settings.connections}, each block's first copies then its second copies.`,
    checkedLine(v, n),
    ...cpuPhaseLines(info.phases),
    ...(b ? [backlogLine(b)] : []),
    cpuCostLine(info.phases[info.phases.length - 1]?.cpu ?? null, n, pg),
    statsLine(info.stats, n),
    relayLine(info.relay),
    `- Lost = links not paid + deliveries answered 200 but not counted in \`payment_callbacks\`; doubled = extra journal entries, ` +
      `events, callback rows or notices for one payment, money credited to a buyer instead, or more than one \`duplicate: false\` per order.`,
    seedLine(info.seed, info.seed.warmup.length + n + (b?.n ?? 0), info.database, info.warmupSeconds),
    processesLine(info.workerConcurrency, LOG_LEVEL, pg, info.pgbenchNote),
    `- ${machine('nothing pinned: the API, the worker, Postgres, Redis, autocannon and pgbench all share the cores')}.`,
    '',
    ...waitTable(info.waits),
  ];
  return { markdown: lines.join('\n'), headlines, ingestRate, reconRate, share };
}
