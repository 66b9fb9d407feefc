/**
 * `npm run bench:webhooks` (bench/run.sh: Postgres, Redis, the migrated bench database and a
 * fresh dist/ build): outbound webhook delivery throughput (issue 28, D8) from the compiled
 * worker to 10 loopback receivers, one of which fails half its requests; every event must
 * reach every receiver once, in feed order, signed.
 *
 * Each round: a fresh sandbox workspace with one endpoint (`*`) per receiver, made through
 * the service (setup.ts endpoints); then BENCH_WEBHOOK_EVENTS feed events committed in one
 * transaction, the last through `appendEvent`, whose outbox row starts the delivery as any
 * service write does (setup.ts events). The clock runs from that commit until every
 * receiver has accepted every event of its endpoint (or BENCH_WEBHOOK_TIMEOUT s). Then each
 * receiver's requests are checked (tally: none missing, none accepted twice, none out of
 * order, every signature valid) and compared with the delivery records in Postgres (one
 * record per request). The worker is `node dist/workers/index.js` with WORKER_QUEUES=webhooks,
 * started once; WEBHOOK_RETRY_SCALE and OUTBOX_POLL_MS are lowered so the failing
 * receiver's retries (5 s apart at the real schedule) fit in a round (bench/webhooks/README.md).
 */
import { closeBenchDb, all } from '../lib/db.js';
import { intFromEnv, LOG_LEVEL, requireStores, SERVICE_ENV } from '../lib/env.js';
import { fmtInt, fmtNum, mdTable, medianBy, plural } from '../lib/format.js';
import { assertAlive, HOST, isPinned, pinLoadGenerator, runJsonScript, runMain, startChild, stopChild, type Child } from '../lib/procs.js';
import { measuredLine, publish, warnIfDirty, type Headline } from '../lib/report.js';
import { loadavg, machine } from '../lib/sample.js';
import { complete, startReceiver, tally, type Receiver, type Tally } from './receivers.js';
import type { EndpointsOut, EventsOut } from './setup.js';

const settings = {
  receivers: 10,
  events: intFromEnv('BENCH_WEBHOOK_EVENTS', 1000, 10, 100_000),
  rounds: intFromEnv('BENCH_ROUNDS', 3, 1, 20),
  timeoutS: intFromEnv('BENCH_WEBHOOK_TIMEOUT', 600, 10, 3600),
  retryScale: '0.001',
  outboxPollMs: '50',
  concurrency: process.env.WORKER_CONCURRENCY ?? '5',
};

interface Round {
  seconds: number;
  healthy: { deliveries: number; perSecond: number; seconds: number };
  failing: { deliveries: number; perSecond: number; seconds: number; requests: number; failedAnswers: number };
  tallies: Tally[];
  /** Receivers whose delivery records in Postgres differ from the requests they saw. */
  recordMismatches: string[];
  finished: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bad = (t: Tally) => t.missing + t.duplicates + t.outOfOrder + t.unexpected + t.badSignatures;

async function round(n: number, env: NodeJS.ProcessEnv, receivers: Receiver[], worker: Child): Promise<Round> {
  const paths = receivers.map((_, i) => `/bench/r${n}-${Date.now().toString(36)}/${i}`);
  receivers.forEach((r, i) => r.round(paths[i]!, i === 0));
  const made = await runJsonScript<EndpointsOut>('bench/webhooks/setup.ts', ['endpoints', JSON.stringify(receivers.map((r, i) => r.urlFor(paths[i]!)))], env);
  const ev = await runJsonScript<EventsOut>('bench/webhooks/setup.ts', ['events', made.workspaceId, String(settings.events)], env);
  const deadline = Date.now() + settings.timeoutS * 1000;
  let finished = false;
  while (Date.now() < deadline) {
    assertAlive([worker]);
    if (receivers.every((r, i) => complete(r.hits, made.endpoints[i]!.cursor, ev.last))) {
      finished = true;
      break;
    }
    await sleep(20);
  }
  // A moment for anything that would come twice.
  await sleep(500);
  const tallies = receivers.map((r, i) => tally(r.hits, made.endpoints[i]!.secret, made.endpoints[i]!.cursor, ev.last));
  const records = await all<{ endpoint_id: string; n: number; ok: number }>(
    `SELECT endpoint_id, count(*)::int AS n, (count(*) FILTER (WHERE status = 'succeeded'))::int AS ok FROM webhook_deliveries WHERE workspace_id = ? GROUP BY endpoint_id`,
    [made.workspaceId],
  );
  const byId = new Map(records.map((r) => [r.endpoint_id, r]));
  const recordMismatches = made.endpoints.flatMap((e, i) => {
    const rec = byId.get(e.id);
    const t = tallies[i]!;
    return rec?.n === t.requests && rec.ok === t.accepted ? [] : [`receiver ${i}: ${t.requests} requests (${t.accepted} accepted), ${rec?.n ?? 0} records (${rec?.ok ?? 0} succeeded)`];
  });
  // The round's endpoints go, so nothing of theirs runs in the next round.
  await all(`DELETE FROM webhook_endpoints WHERE workspace_id = ? RETURNING id`, [made.workspaceId]);
  const span = (ts: Tally[]) => (Math.max(...ts.map((t) => t.lastAt ?? Date.now())) - ev.committedAt) / 1000;
  const healthyT = tallies.slice(1);
  const healthyN = healthyT.reduce((a, t) => a + t.accepted, 0);
  const f = tallies[0]!;
  const r: Round = {
    seconds: span(tallies),
    healthy: { deliveries: healthyN, seconds: span(healthyT), perSecond: healthyN / span(healthyT) },
    failing: { deliveries: f.accepted, seconds: span([f]), perSecond: f.accepted / span([f]), requests: f.requests, failedAnswers: f.failedAnswers },
    tallies,
    recordMismatches,
    finished,
  };
  console.log(
    `bench: round ${n}/${settings.rounds}: ${fmtInt(healthyN)} deliveries to 9 healthy receivers in ${fmtNum(r.healthy.seconds)} s (${fmtInt(r.healthy.perSecond)}/s); ` +
      `the failing one ${fmtInt(f.accepted)} events in ${fmtNum(r.failing.seconds)} s (${fmtInt(f.requests)} requests, ${fmtInt(f.failedAnswers)} answered 500); ` +
      `missing ${tallies.reduce((a, t) => a + t.missing, 0)}, twice ${tallies.reduce((a, t) => a + t.duplicates, 0)}, out of order ${tallies.reduce((a, t) => a + t.outOfOrder, 0)}, ` +
      `bad signatures ${tallies.reduce((a, t) => a + t.badSignatures, 0)}, record mismatches ${recordMismatches.length}${finished ? '' : ' (TIMED OUT)'}`,
  );
  for (const m of recordMismatches) console.log(`bench:   ${m}`);
  return r;
}

async function main(): Promise<void> {
  requireStores('npm run bench:webhooks');
  warnIfDirty('bench');
  const env: NodeJS.ProcessEnv = { ...process.env, HOST, ...SERVICE_ENV };
  console.log(`bench: webhook delivery to ${settings.receivers} receivers, ${fmtInt(settings.events)} events per round; load average ${loadavg()}`);
  pinLoadGenerator();
  const receivers = await Promise.all(Array.from({ length: settings.receivers }, () => startReceiver()));
  const worker = startChild('worker (node dist/workers/index.js)', ['dist/workers/index.js'], {
    ...env,
    WORKER_QUEUES: 'webhooks',
    WORKER_CONCURRENCY: settings.concurrency,
    WEBHOOK_RETRY_SCALE: settings.retryScale,
    OUTBOX_POLL_MS: settings.outboxPollMs,
    LOG_LEVEL,
  });
  await sleep(2000);
  assertAlive([worker]);
  const loadStart = loadavg();
  const at = new Date();
  const rounds: Round[] = [];
  try {
    for (let i = 1; i <= settings.rounds; i += 1) rounds.push(await round(i, env, receivers, worker));
  } finally {
    await stopChild(worker);
    await Promise.all(receivers.map((r) => r.close()));
  }
  const loadEnd = loadavg();
  const seconds = (Date.now() - at.getTime()) / 1000;
  const { markdown, headlines } = report(rounds, { at, seconds, loadStart, loadEnd });
  console.log(`\n${markdown}\n`);
  await publish({ page: 'webhooks', marker: 'results', markdown, headlines, at, tag: 'bench' });
  const broken = rounds.filter((r) => !r.finished || r.recordMismatches.length > 0 || r.tallies.some((t) => bad(t) > 0));
  if (broken.length > 0) throw new Error(`${plural(broken.length, 'round')} lost, repeated or misordered a delivery, or timed out (see above)`);
}

function report(rounds: Round[], info: { at: Date; seconds: number; loadStart: string; loadEnd: string }): { markdown: string; headlines: Headline[] } {
  const mid = medianBy(rounds, (r) => r.healthy.perSecond);
  const all = rounds.flatMap((r) => r.tallies);
  const sum = (k: keyof Tally) => all.reduce((a, t) => a + Number(t[k] ?? 0), 0);
  const clean = sum('missing') + sum('duplicates') + sum('outOfOrder') + sum('unexpected') + sum('badSignatures') === 0 && rounds.every((r) => r.finished && r.recordMismatches.length === 0);
  const verdict = clean ? 'none lost, none twice, none out of order' : 'LOST, REPEATED OR MISORDERED DELIVERIES';
  const rows = [
    [
      '9 healthy receivers together',
      `**${fmtInt(mid.healthy.perSecond)}**`,
      fmtInt(mid.healthy.deliveries),
      fmtNum(mid.healthy.seconds),
      rounds.map((r) => fmtInt(r.healthy.perSecond)).join(' / '),
    ],
    [
      'the receiver failing every other request (events accepted)',
      `**${fmtNum(mid.failing.perSecond)}**`,
      `${fmtInt(mid.failing.deliveries)} (${fmtInt(mid.failing.requests)} requests, ${fmtInt(mid.failing.failedAnswers)} answered 500)`,
      fmtNum(mid.failing.seconds),
      rounds.map((r) => fmtNum(r.failing.perSecond)).join(' / '),
    ],
  ];
  const headlines: Headline[] = [
    {
      id: 'webhooks/throughput',
      figure: `Webhook deliveries to 10 loopback receivers, one failing half its requests: deliveries/s to the 9 healthy ones`,
      goal: 'every event once, in order, to every receiver',
      measured: `${fmtInt(mid.healthy.perSecond)}/s; ${verdict}`,
      met: clean,
    },
  ];
  const markdown = [
    `${measuredLine(info.at).replace(/\.$/, '')} (${Math.round(info.seconds)} s). Load average (1, 5, 15 min) at the start: ${info.loadStart}; at the end: ${info.loadEnd}.`,
    '',
    `**${verdict}** over ${plural(rounds.length, 'round')}: ${fmtInt(sum('accepted'))} events accepted by the receivers, ` +
      `${fmtInt(sum('requests'))} requests, ${fmtInt(sum('failedAnswers'))} of them answered 500 (all to the failing receiver), ` +
      `${sum('missing')} missing, ${sum('duplicates')} accepted twice, ${sum('outOfOrder')} out of order, ${sum('badSignatures')} bad signatures, ` +
      `${rounds.reduce((a, r) => a + r.recordMismatches.length, 0)} receivers whose delivery records differ from the requests they saw.`,
    '',
    ...mdTable(['Receivers', 'Deliveries/s (median round)', 'Deliveries in that round', 'Seconds from commit to the last', 'Deliveries/s per round'], 'lrrrl', rows),
    '',
    `- Each round: a new sandbox workspace with one endpoint (\`*\`) per receiver made through the service, then ${fmtInt(settings.events)} feed events committed in one ` +
      `transaction (the last through \`appendEvent\`, whose outbox row starts the delivery); timed from that commit to each receiver's last accepted event. ` +
      `Every endpoint also receives the creation events of the endpoints made after it (${fmtInt(settings.events)} to ${fmtInt(settings.events + settings.receivers - 1)} events each). ` +
      `The median round is the one with the median healthy throughput.`,
    `- The failing receiver answers 500 to its 1st, 3rd, 5th... request, so each of its events fails once and is accepted on its retry; the endpoint's line waits ` +
      `for the retry (feed order), the others do not. At the real schedule that retry comes 5 s later (1 event per ~5 s); this run sets ` +
      `\`WEBHOOK_RETRY_SCALE=${settings.retryScale}\` (5 ms) and \`OUTBOX_POLL_MS=${settings.outboxPollMs}\` (the relay that turns the retry's outbox row into a job; default 500), ` +
      `so its rate here is the relay's turn-around, not the schedule's.`,
    `- Checked per receiver: every event of its endpoint accepted, none accepted twice (by webhook-id), in seq order, every request's Standard Webhooks signature ` +
      `verified with the \`standardwebhooks\` package; and in Postgres one delivery record per request (the succeeded ones equal to the accepted).`,
    `- The worker: \`node dist/workers/index.js\` with \`WORKER_QUEUES=webhooks\`, \`WORKER_CONCURRENCY=${settings.concurrency}\` (the default is 5), \`LOG_LEVEL=${LOG_LEVEL}\`; ` +
      `the receivers are node http servers in the bench process (keep-alive).`,
    `- ${machine(isPinned() ? 'the bench and its receivers pinned to core 0, the worker to core 1; Postgres and Redis unpinned' : 'no pinning')}.`,
  ];
  return { markdown: markdown.join('\n'), headlines };
}

await runMain('bench', main, closeBenchDb);
