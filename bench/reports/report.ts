/**
 * The reports bench's report: per route its median round by p95 (requests/s, p50, p95,
 * p99 of that round's answers), every round's p95, the goal and whether it was met; the
 * uncached overview answers made while filling the cache; the seeded workspace; the load.
 */
import { LOG_LEVEL, SERVICE_ENV_NOTE } from '../lib/env.js';
import { fmtInt, fmtNum, mdTable, medianBy, percentile, plural } from '../lib/format.js';
import { isPinned } from '../lib/procs.js';
import { measuredLine, type Headline } from '../lib/report.js';
import { machine } from '../lib/sample.js';
import { p, settings, uncached, type RouteDef, type Run } from './load.js';
import type { CatchUp } from './catchup.js';
import type { ReportSeed } from './seed.js';

export interface RunInfo {
  seed: ReportSeed;
  loadStart: string;
  loadEnd: string;
  at: Date;
  seconds: number;
  /** Why a route was not measured (key -> reason). */
  notMeasured: Map<string, string>;
  webhooks: string[];
  /** The reconciliation's catch-up after writes (catchup.ts), when the reconciliation was measured. */
  catchUp?: CatchUp;
}

export function report(defs: readonly RouteDef[], results: Map<string, Run[]>, info: RunInfo): { markdown: string; headlines: Headline[] } {
  const rows: string[][] = [];
  const headlines: Headline[] = [];
  const notes: string[] = [];
  for (const def of defs.filter((d) => d.kind !== 'list')) {
    const why = info.notMeasured.get(def.key);
    const goal = def.goalP95 === null ? '—' : `p95 < ${def.goalP95} ms`;
    const id = `reports/${def.key}`;
    if (why) {
      rows.push([def.label, goal, `not measured: ${why}`, '', '', '', '', '']);
      headlines.push({ id, figure: `${def.label} on ${fmtInt(info.seed.deals)} deals: p95`, goal, measured: `not measured: ${why}` });
      continue;
    }
    const runs = results.get(def.key) ?? [];
    if (runs.length === 0) continue;
    const mid = medianBy(runs, (r) => p(r, 0.95));
    const p95 = p(mid, 0.95);
    const met = def.goalP95 === null ? undefined : p95 < def.goalP95;
    rows.push([
      def.label,
      goal,
      `**${fmtNum(p95)}**${met === undefined ? '' : met ? ' met' : ' **not met**'}`,
      fmtNum(p(mid, 0.5)),
      fmtNum(p(mid, 0.99)),
      fmtInt(mid.result.requests.average),
      runs.map((r) => fmtNum(p(r, 0.95))).join(' / '),
      fmtInt(runs.reduce((a, r) => a + r.times.length, 0)),
    ]);
    headlines.push({ id, figure: `${def.label} on ${fmtInt(info.seed.deals)} deals, ${plural(def.connections ?? settings.connections, 'connection')}: p95`, goal, measured: `${fmtNum(p95)} ms`, met });
    if (def.kind === 'overview') {
      const misses = runs.map((r) => `${r.misses ?? '?'} of ${r.users ?? '?'}`).join(', ');
      notes.push(
        `- Cached overview: the owner alone, throughout (an uncached answer takes most of a second here, too long to fill many users' 15-second entries ` +
          `before a run): one request filled the cache just before each run; the overview's own limit (60 per minute per user, not configurable) was ` +
          `kept from answering 429 by deleting that user's counter of it (bench prefix) every 5 ms during the run, the limiter still counting every ` +
          `request. Cache entries recomputed during each run (misses): ${misses}.`,
      );
    }
  }
  if (defs.some((d) => d.kind === 'uncached')) {
    notes.push(
      `- Uncached overview (issue 44): the overview cache emptied before each run, then ${fmtInt(settings.summaryRequests)} answers over ` +
        `${plural(settings.connections, 'connection')}, each a different member's first (the cache is per workspace, user and role): every answer computed.`,
    );
  }
  if (defs.some((d) => d.key === 'reconciliation')) {
    const c = info.catchUp;
    notes.push(
      `- Reconciliation (issue 44): 5 answers per run, one at a time, cycling over the members (its limit, 5 per minute per user, counted and ` +
        `never reached: the bench's counters of it are deleted before each run). The seed posts the workspace's ledger (one entry per funded ` +
        `milestone, balanced with the deals: the answer must be balanced with the rows' funded total, verify.ts). Nothing writes during the rounds, so each answer ` +
        `adds up the figures kept per milestone and works none out again (decision 0020 "Figures kept per milestone").` +
        (c
          ? ` What writes since the last read add to it (bench/reports/catchup.ts: milestones marked as the triggers mark them, the read's catch-up ` +
            `timed in the bench process, median of 3): ${c.marked.map((m) => `${fmtInt(m.n)} marked ${fmtNum(m.ms)} ms`).join(', ')}; the nightly pass ` +
            `over all ${fmtInt(c.milestones)} milestones ${fmtNum(c.fullMs / 1000)} s.`
          : '') +
        ` Before the store (fa2e48a) every answer worked out every milestone: 6,586 ms, and four at once ran past the API's 10 s statement timeout.`,
    );
  }
  const un = [...uncached].sort((a, b) => a - b);
  if (un.length > 0) {
    notes.push(
      `- Uncached overview (the answers that filled the cache before each round's run, one at a time, ${fmtInt(un.length)} answers): ` +
        `p50 ${fmtNum(percentile(un, 0.5))} ms, p95 ${fmtNum(percentile(un, 0.95))} ms, p99 ${fmtNum(percentile(un, 0.99))} ms (no goal).`,
    );
  }
  const s = info.seed;
  const markdown = [
    `${measuredLine(info.at).replace(/\.$/, '')} (${Math.round(info.seconds)} s of load). ` +
      `Load average (1, 5, 15 min) when the load started: ${info.loadStart}; when it ended: ${info.loadEnd}.`,
    '',
    ...mdTable(['Route', 'Goal', 'p95 (ms)', 'p50 (ms)', 'p99 (ms)', 'Requests/s', 'p95 (ms) per round', 'Answers timed'], 'llrrrrlr', rows),
    '',
    `- Each row is that route's median round by p95 (its p50, p99 and requests/s are that round's); percentiles are nearest-rank over every ` +
      `2xx answer of the round, each timed by autocannon from the request's write to the end of its answer. ${plural(settings.rounds, 'round')} per route, ` +
      `each summary round ${fmtInt(settings.summaryRequests)} answers (after a warm-up of one answer per connection), each overview round ${settings.duration} s ` +
      `(after a ${settings.warmup} s warm-up), ${plural(settings.connections, 'connection')}, pipelining 1; ` +
      `the routes run back to back, forward in odd rounds and backward in even ones.`,
    ...notes,
    `- The workspace: live, ${fmtInt(s.deals)} deals created over the last ~400 days (1-3 milestones each, ${fmtInt(s.milestones)} in all, in a mix of ` +
      `statuses: draft, awaiting funding, funded, evidence submitted, approved, released, disputed, cancelled; older deals mostly completed), ` +
      `${fmtInt(s.events)} feed events (seq 1..${fmtInt(s.lastEventSeq)}), ${fmtInt(s.decisions)} approval decisions, ${fmtInt(s.disbursements)} payouts; ` +
      `seeded by SQL in bulk (bench/reports/seed.ts; ${s.seededNow ? `made in this run, ${fmtNum(s.seedSeconds)} s` : 'made by an earlier run'}).`,
    `- Summary callers: the owner and ${fmtInt(s.callers.length - 1)} viewers of that workspace, each with a dashboard session; each request goes to the next of them. ` +
      `The summary's limit (${settings.summaryLimit} per minute per user) cannot be raised by configuration, ` +
      `so the load is spread over these users and the bench's counters of it are deleted before every run; ` +
      `\`AUTH_RATE_LIMIT_PER_MINUTE=${settings.authLimit}\` (the shared per-user limit, still checked on every request). No answer in any round was a 429 ` +
      `(a round with more than 1% non-2xx stops the run).`,
    ...info.webhooks,
    `- The API is the compiled build, \`node dist/api/server.js\` (${SERVICE_ENV_NOTE}, \`LOG_LEVEL=${LOG_LEVEL}\`, stdout to /dev/null).`,
    `- ${machine(isPinned() ? 'load generator pinned to core 0, the API to core 1; Postgres and Redis unpinned' : 'no pinning')}. ` +
      `The machine is shared with other engineers' test runs: read the load average above before the figures.`,
  ];
  return { markdown: markdown.join('\n'), headlines };
}

/**
 * The deal list's block (issue 42): per route its median round by p95, every round's p95,
 * the goal; the page's rows and total as checked before the load; the load average.
 */
export function reportList(defs: readonly RouteDef[], results: Map<string, Run[]>, info: RunInfo & { checked: string[] }): { markdown: string; headlines: Headline[] } {
  const rows: string[][] = [];
  const headlines: Headline[] = [];
  for (const def of defs.filter((d) => d.kind === 'list')) {
    const runs = results.get(def.key) ?? [];
    if (runs.length === 0) continue;
    const goal = def.goalP95 === null ? '—' : `p95 < ${def.goalP95} ms`;
    const mid = medianBy(runs, (r) => p(r, 0.95));
    const p95 = p(mid, 0.95);
    const met = def.goalP95 === null ? undefined : p95 < def.goalP95;
    rows.push([
      def.label,
      goal,
      `**${fmtNum(p95)}**${met === undefined ? '' : met ? ' met' : ' **not met**'}`,
      fmtNum(p(mid, 0.5)),
      fmtNum(p(mid, 0.99)),
      fmtInt(mid.result.requests.average),
      runs.map((r) => fmtNum(p(r, 0.95))).join(' / '),
      fmtInt(runs.reduce((a, r) => a + r.times.length, 0)),
    ]);
    if (def.goalP95 !== null) {
      headlines.push({
        id: `reports/${def.key}`,
        figure: `${def.label} on ${fmtInt(info.seed.deals)} deals, one request at a time: p95 (load average ${info.loadStart.split(',')[0]} at the start)`,
        goal,
        measured: `${fmtNum(p95)} ms`,
        met,
      });
    }
  }
  const s = info.seed;
  const markdown = [
    `${measuredLine(info.at).replace(/\.$/, '')} (${Math.round(info.seconds)} s of load). ` +
      `Load average (1, 5, 15 min) when the load started: ${info.loadStart}; when it ended: ${info.loadEnd}.`,
    '',
    ...mdTable(['Route', 'Goal', 'p95 (ms)', 'p50 (ms)', 'p99 (ms)', 'Requests/s', 'p95 (ms) per round', 'Answers timed'], 'llrrrrlr', rows),
    '',
    `- Each row is that route's median round by p95 (its p50, p99 and requests/s are that round's); percentiles are nearest-rank over every ` +
      `2xx answer of the round, each timed by autocannon from the request's write to the end of its answer. ${plural(settings.rounds, 'round')} per route, ` +
      `each ${fmtInt(settings.listRequests)} answers one at a time (1 connection, pipelining 1) after a warm-up of ${settings.listWarmup}; ` +
      `each request by the next of the workspace's ${fmtInt(s.callers.length)} users (the list has no limit of its own; ` +
      `\`AUTH_RATE_LIMIT_PER_MINUTE=${settings.authLimit}\` raises the shared one); the routes back to back, forward in odd rounds and backward in even ones.`,
    ...info.checked.map((c) => `- Checked before the load: ${c}.`),
    `- The workspace: live, ${fmtInt(s.deals)} deals (1-3 milestones each, ${fmtInt(s.milestones)} in all), as for the summary above ` +
      `(bench/reports/seed.ts; ${s.seededNow ? `made in this run, ${fmtNum(s.seedSeconds)} s` : 'made by an earlier run'}).`,
    `- The API is the compiled build, \`node dist/api/server.js\` (${SERVICE_ENV_NOTE}, \`LOG_LEVEL=${LOG_LEVEL}\`, stdout to /dev/null).`,
    `- ${machine(isPinned() ? 'load generator pinned to core 0, the API to core 1; Postgres and Redis unpinned' : 'no pinning')}. ` +
      `The machine is shared with other engineers' test runs: read the load average above before the figures.`,
  ];
  return { markdown: markdown.join('\n'), headlines };
}
