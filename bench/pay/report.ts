/**
 * The pay-flow bench's report: per side the median round of paid payments/s (by the
 * database), the median of the per-round ratios API ÷ floor (issue 29's goal ≥ 60%), the
 * paced rounds' p99 of the pay and the callback requests and of callback → paid (median round), and the
 * checks after the load.
 */
import { SERVICE_ENV_NOTE } from '../lib/env.js';
import { fmtInt, fmtNum, fmtPct, mdTable, median, plural } from '../lib/format.js';
import { fmtSpread, judgeRounds, NOISY_SPREAD, spreadText, verdictText } from '../lib/verdict.js';
import { P99_GOAL, pacedVerdict, type LatencySummary } from '../lib/paced.js';
import { measuredLine, type Headline } from '../lib/report.js';
import { machine } from '../lib/sample.js';
import { CPU_GROUPS, settings, type CpuGroup, type RunResult } from './load.js';
import type { AfterCheck } from './verify.js';

export const GOAL = 60;

export interface PacedSide {
  run: RunResult;
  /** Callback received → paid, ms (the database's received_at and paid_at). */
  paid: { p50: number; p99: number; max: number };
}

export interface ReportInput {
  at: Date;
  seconds: number;
  rounds: { api: RunResult; floor: RunResult }[];
  /** The paced rounds: one evenly paced run per side each. */
  paced: { rounds: { api: PacedSide; floor: PacedSide }[]; rate: number; rateNote: string };
  after: AfterCheck;
  loadStart: string;
  loadEnd: string;
  seedNote: string;
  logLevel: string;
}

const p99 = (l: LatencySummary | undefined) => (l ? l.p99 : Number.NaN);

const CPU_LABELS: Record<CpuGroup, string> = { api: 'API', worker: 'worker', floor: 'floor server', postgres: 'Postgres', redis: 'Redis', bench: 'load generator' };

/** Per side, the median over the closed-loop rounds of each group's core-ms per payment, and of their sum. */
function cpuRows(rounds: ReportInput['rounds']): string[][] {
  return (['api', 'floor'] as const).map((side) => {
    const runs = rounds.map((x) => x[side].cpuPerFlow).filter((c): c is Record<CpuGroup, number> => c !== null);
    const cell = (f: (c: Record<CpuGroup, number>) => number) => (runs.length === 0 ? '–' : median(runs.map(f)).toFixed(2));
    return [side === 'api' ? 'API' : 'floor', ...CPU_GROUPS.map((g) => cell((c) => c[g])), cell((c) => CPU_GROUPS.reduce((a, g) => a + c[g], 0))];
  });
}

export function report(r: ReportInput): { markdown: string; headlines: Headline[]; ratio: number } {
  const v = judgeRounds(
    r.rounds.map((x) => (x.api.paidRate / x.floor.paidRate) * 100),
    (m) => m >= GOAL,
  );
  const { ratios, median: ratio } = v;
  const apiRate = median(r.rounds.map((x) => x.api.paidRate));
  const floorRate = median(r.rounds.map((x) => x.floor.paidRate));
  const flowsRate = (side: 'api' | 'floor') => median(r.rounds.map((x) => x[side].flows.rate));
  const step = (side: PacedSide, name: string) => p99(side.run.flows.steps[name]?.latency);
  const pacedRounds = r.paced.rounds;
  const payV = pacedVerdict(pacedRounds, (s: PacedSide) => step(s, 'pay'));
  const cbV = pacedVerdict(pacedRounds, (s: PacedSide) => step(s, 'callback'));
  const payMet = payV.met;
  const cbMet = cbV.met;
  const failed = (x: RunResult) => x.flows.failed;
  const rows = [
    ['API (`node dist/api/server.js` + worker)', fmtInt(apiRate), fmtInt(flowsRate('api')), `**${fmtPct(ratio)}** (${spreadText(v)})`, `≥ ${GOAL}%: ${verdictText(v)}`, r.rounds.map((x) => fmtInt(x.api.paidRate)).join(' / ')],
    ['… its floor (Koa + pg + ioredis)', fmtInt(floorRate), fmtInt(flowsRate('floor')), '100%', '', r.rounds.map((x) => fmtInt(x.floor.paidRate)).join(' / ')],
  ];
  const pacedRow = (side: 'api' | 'floor') => {
    const m = (f: (s: PacedSide) => number) => fmtNum(median(pacedRounds.map((x) => f(x[side]))));
    return [
      side === 'api' ? 'API' : 'floor',
      `${fmtInt(pacedRounds.reduce((a, x) => a + x[side].run.flows.completed, 0))} of ${fmtInt(pacedRounds.reduce((a, x) => a + x[side].run.flows.started, 0))}`,
      m((s) => s.run.flows.steps.pay?.latency.p50 ?? Number.NaN),
      m((s) => step(s, 'pay')),
      pacedRounds.map((x) => fmtNum(step(x[side], 'pay'))).join(' / '),
      m((s) => s.run.flows.steps.callback?.latency.p50 ?? Number.NaN),
      m((s) => step(s, 'callback')),
      m((s) => s.paid.p50),
      m((s) => s.paid.p99),
    ];
  };
  const ratioText = (v: { ratios: number[] }) => v.ratios.map((x) => `${x.toFixed(2)}×`).join(', ');
  const markdown = [
    `${measuredLine(r.at).replace(/\.$/, '')} (${Math.round(r.seconds)} s of load). Load average (1, 5, 15 min) when the load started: ${r.loadStart}; when it ended: ${r.loadEnd}.`,
    '',
    ...mdTable(['Side', 'Payments paid/s (database)', 'Flows/s (HTTP)', 'API ÷ floor', 'Goal (issue 29)', 'Paid/s per round'], 'lrrrll', rows),
    '',
    'CPU per payment in the closed-loop rounds, core-milliseconds (median of the rounds; from a run\'s start until its payments are paid and the outbox drained, so the worker\'s reconciliation and notices count):',
    '',
    ...mdTable(['Side', ...CPU_GROUPS.map((g) => CPU_LABELS[g]), 'total'], 'lrrrrrrr', cpuRows(r.rounds)),
    '',
    `At an evenly paced ${fmtInt(r.paced.rate)} payments/s (${r.paced.rateNote}), ${plural(pacedRounds.length, 'round')} of ${settings.pacedDuration} s per side, latencies in ms (each the median of the rounds):`,
    '',
    ...mdTable(
      ['Side', 'Flows completed', 'pay p50', 'pay p99', 'pay p99 per round', 'callback p50', 'callback p99', 'callback → paid p50', 'callback → paid p99'],
      'lrrrlrrrr',
      [pacedRow('api'), pacedRow('floor')],
    ),
    '',
    `- A payment counts when the database says it is paid: per round, that round's payments whose \`paid_at\` falls in the round's window ` +
      `(first flow started → last flow ended) ÷ the window; the API reconciles in the worker after the callback's answer, the floor before it. ` +
      `Each ratio is the median of the per-round ratios (sorted: ${ratios.map(fmtPct).join(', ')}; spread ${fmtSpread(v.spread)}, more than ${NOISY_SPREAD}× reads noisy: bench/lib/verdict.ts). ${plural(settings.rounds, 'round')} × ${settings.duration} s per side, ` +
      `${settings.concurrency} flows in flight (closed loop, bench/lib/flows.ts), after a ${settings.warmup} s warm-up per side; the API first in odd rounds, the floor first in even ones; ` +
      `after every run the bench waits until its payments are paid and the outbox is drained.`,
    `- Paced: a flow started every 1/${fmtInt(r.paced.rate)} s (open loop, at most ${settings.concurrency} in flight); a request's latency counts from when it could first ` +
      `have been sent. The rounds alternate who goes first (the API in odd ones). p99 goal (issue 29): under ${P99_GOAL.ms} ms or at most ${P99_GOAL.factor}× the floor's in the same round, ` +
      `judged on the median round (API ÷ floor per round, sorted: pay ${ratioText(payV)}, spread ${fmtSpread(payV.spread)}; callback ${ratioText(cbV)}, spread ${fmtSpread(cbV.spread)}): pay ${verdictText(payV)}, callback ${verdictText(cbV)}. ` +
      `Callback → paid is the callback row's \`received_at\` to the payment's \`paid_at\`.`,
    `- Failed flows: API ${r.rounds.map((x) => failed(x.api)).join('/')}, floor ${r.rounds.map((x) => failed(x.floor)).join('/')} per round; paced API ${pacedRounds.map((x) => failed(x.api.run)).join('/')}, floor ${pacedRounds.map((x) => failed(x.floor.run)).join('/')} per round. Checkpoints that began during a paced run: API ${pacedRounds.map((x) => x.api.run.checkpoints).join('/')}, floor ${pacedRounds.map((x) => x.floor.run.checkpoints).join('/')} per round.`,
    `- After the load, for the ${fmtInt(r.after.payments)} payments of completed flows: lost ${r.after.lost}, doubled ${r.after.doubled}; ` +
      `${r.after.problems.length === 0 ? 'every check passed (one paid link, one `escrow_payment` entry, one `payment.completed` event and the escrow account holding the amount per escrow, every callback processed `paid`, no credit to a buyer); `checkLedger`: no violation' : `problems: ${r.after.problems.join('; ')}`}.`,
    `- ${r.seedNote}`,
    `- The API (\`node dist/api/server.js\`) and the worker (\`node dist/workers/index.js\`, every queue, the outbox relay) run throughout, ${SERVICE_ENV_NOTE}, ` +
      `\`SANDBOX_MODE=1\`, \`LOG_LEVEL=${r.logLevel}\`, \`NOTIFICATION_EMAILS=0\`, \`AUTH_RATE_LIMIT_PER_MINUTE=${settings.authLimit}\` (checked on every request, never reached); ` +
      `the floor server (\`node --import tsx bench/auth-read/floor-server.ts\`) beside them with the same environment; the worker also relays and runs the floor's notice jobs. ` +
      `${machine('nothing pinned: the API, the worker, the floor server, Postgres, Redis and the load generator share the cores')}.`,
  ];
  const headlines: Headline[] = [
    {
      id: 'pay/flow-floor',
      figure: 'Pay + sandbox callback + reconcile (payments paid/s, by the database) ÷ its floor (Koa + pg + ioredis, the same rows by hand)',
      goal: `≥ ${GOAL}%`,
      measured: `${fmtPct(ratio)} (${spreadText(v)})`,
      met: v.met,
      noisy: v.noisy,
    },
    {
      id: 'pay/paced-p99',
      figure: `Pay flow at ${fmtInt(r.paced.rate)} payments/s (evenly paced, median of ${plural(pacedRounds.length, 'round')}): p99 of pay / callback, API and floor`,
      goal: `< ${P99_GOAL.ms} ms or ≤ ${P99_GOAL.factor}× floor`,
      measured: `${fmtNum(payV.api)} / ${fmtNum(cbV.api)} ms (floor ${fmtNum(payV.floor)} / ${fmtNum(cbV.floor)} ms); median round ${payV.ratio.toFixed(2)}× / ${cbV.ratio.toFixed(2)}×`,
      met: payMet && cbMet,
      noisy: (payV.noisy || cbV.noisy) && payV.verdict !== 'not met' && cbV.verdict !== 'not met',
    },
  ];
  return { markdown: markdown.join('\n'), headlines, ratio };
}
