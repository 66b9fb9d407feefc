/**
 * `npm run bench:scale` (bench/run.sh: Postgres, Redis, its own migrated database, a fresh
 * dist/ build): money writes across many workspaces (issue 44). The fund bench's flow — a
 * sandbox milestone funded, then an approved milestone of the same deal released into 2
 * splits, both keyed — spread over BENCH_SCALE_WORKSPACES (200) workspaces, run on the
 * compiled API alone in closed loops at each of BENCH_SCALE_LEVELS (4, 16, 32) flows in
 * flight. During each level the bench database's client backends are sampled every 50 ms
 * from pg_stat_activity (bench/lib/pg-sample.ts): the share of busy backends waiting on a
 * lock (wait_event_type Lock) estimates the share of transaction time spent waiting on
 * locks, and the lock waits whose statement posts to the ledger (`ledger_post_many`,
 * `ledger_accounts`) are counted apart: every enterprise posting touches the platform's
 * shared accounts, so if those rows serialised the postings, the waits would be there and
 * flows/s would stop growing with the concurrency.
 *
 * Goal (issue 44): lock waits on ledger accounts under 5% of transaction time at 32 flows in
 * flight, and flows/s not falling as the concurrency grows. Every completed flow and the
 * ledger are checked after the load (bench/fund/verify.ts). The figures are printed and,
 * from a clean tree, written to bench/scale/README.md and bench/README.md.
 */
import { closeBenchDb } from '../lib/db.js';
import { intFromEnv, requireStores, LOG_LEVEL, SERVICE_ENV } from '../lib/env.js';
import { closedLoop, type FlowResult } from '../lib/flows.js';
import { fmtInt, fmtPct } from '../lib/format.js';
import { sampleBackends, type WaitProfile } from '../lib/pg-sample.js';
import { assertAlive, freePort, HOST, pinLoadGenerator, runMain, startChild, stopChild, waitFor } from '../lib/procs.js';
import { publish, warnIfDirty, type Headline } from '../lib/report.js';
import { loadavg } from '../lib/sample.js';
import { fundFlow } from '../fund/load.js';
import { seedFund, type FundItem } from '../fund/seed.js';
import { checkAfter } from '../fund/verify.js';

function intList(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (!raw) return fallback;
  const out = raw.split(',').map((s) => Number(s.trim()));
  if (out.some((n) => !Number.isInteger(n) || n < 1 || n > 1000)) throw new Error(`${name}: a list of integers 1..1000, e.g. 4,16,32`);
  return out;
}

const settings = {
  workspaces: intFromEnv('BENCH_SCALE_WORKSPACES', 200, 2, 999),
  levels: intList('BENCH_SCALE_LEVELS', [4, 16, 32]),
  /** Closed-loop runs per level (the levels interleaved: 4, 16, 32, 4, 16, 32, ...). */
  rounds: intFromEnv('BENCH_ROUNDS', 2, 1, 9),
  duration: intFromEnv('BENCH_DURATION', 10, 2, 120),
  warmup: intFromEnv('BENCH_WARMUP', 2, 0, 30),
  /** Flows/s the API may reach at most: how many deals the seed makes. */
  maxRate: intFromEnv('BENCH_SCALE_MAX_RATE', 200, 10, 5000),
  /** API processes, each taking an equal share of the flows in flight (more copies push Postgres harder). */
  apis: intFromEnv('BENCH_SCALE_APIS', 1, 1, 8),
};

const GOAL_LEDGER_WAIT_PCT = 5;

interface LevelRun {
  level: number;
  result: FlowResult;
  profile: WaitProfile;
}

/** Flows of the API processes' loops run side by side, as one result (the worst p99 of them). */
function combine(results: readonly FlowResult[]): FlowResult {
  if (results.length === 1) return results[0]!;
  const worst = results.reduce((a, b) => (b.flowLatency.p99 > a.flowLatency.p99 ? b : a));
  const seconds = Math.max(...results.map((r) => r.seconds));
  const completed = results.reduce((n, r) => n + r.completed, 0);
  return {
    ...worst,
    started: results.reduce((n, r) => n + r.started, 0),
    completed,
    failed: results.reduce((n, r) => n + r.failed, 0),
    rate: results.reduce((n, r) => n + r.rate, 0),
    seconds,
    unused: Math.min(...results.map((r) => r.unused)),
    firstFailure: results.find((r) => r.firstFailure)?.firstFailure ?? null,
  };
}

/** Mean backends waiting on a heavyweight lock, and of those the ones whose statement posts to the ledger. */
function lockWaits(p: WaitProfile): { lock: number; ledger: number } {
  let lock = 0;
  let ledger = 0;
  for (const r of p.rows) {
    if (!r.wait.startsWith('Lock:')) continue;
    lock += r.mean;
    if (/ledger/i.test(r.query)) ledger += r.mean;
  }
  return { lock, ledger };
}

async function main(): Promise<void> {
  requireStores('npm run bench:scale');
  warnIfDirty('bench');
  pinLoadGenerator();
  const s = settings;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST,
    ...SERVICE_ENV,
    AUTH_RATE_LIMIT_PER_MINUTE: '1000000',
    ENTERPRISE_MONEY_LIMIT_PER_MINUTE: '1000000',
  };
  const needed = s.workspaces * 2 + Math.ceil(s.maxRate * (s.warmup + s.rounds * s.duration) * s.levels.length * 1.1);
  console.log(`bench: scale: fund and release over ${s.workspaces} workspaces at ${s.levels.join(', ')} flows in flight; ${fmtInt(needed)} deals needed; load average ${loadavg()}`);
  const seed = await seedFund(env, s.workspaces, needed);

  // One API process pinned to core 1 (the load generator on core 0), or several unpinned.
  const apis: { base: string; child: ReturnType<typeof startChild> }[] = [];
  for (let i = 0; i < s.apis; i++) {
    const port = await freePort();
    const base = `http://${HOST}:${port}`;
    const child = startChild(`API ${i + 1} (node dist/api/server.js)`, ['dist/api/server.js'], { ...env, PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL }, { pin: s.apis === 1 });
    await waitFor(`${base}/readyz`, child, 30_000);
    apis.push({ base, child });
  }
  console.log(`bench: ${s.apis === 1 ? 'API' : `${s.apis} API processes`} on ${apis.map((a) => a.base).join(', ')}`);

  const done: FundItem[] = [];
  let items: readonly FundItem[] = seed.items;
  const run = async (level: number, seconds: number, label: string): Promise<LevelRun> => {
    const sampler = sampleBackends(50);
    // Each API process gets level / apis flows in flight and a chunk of the deals of its own.
    const chunk = Math.floor(items.length / apis.length);
    const chunks = apis.map((_, k) => items.slice(k * chunk, (k + 1) * chunk));
    const results = await Promise.all(
      apis.map((a, k) => closedLoop({ base: a.base, items: chunks[k]!, flow: fundFlow(seed, done), concurrency: Math.max(1, Math.round(level / apis.length)), duration: seconds })),
    );
    const profile = await sampler.stop();
    items = chunks.flatMap((c, k) => c.slice(results[k]!.started));
    const result = combine(results);
    assertAlive(apis.map((a) => a.child));
    const { lock, ledger } = lockWaits(profile);
    console.log(
      `bench: ${label}: ${fmtInt(result.rate)} flows/s (${fmtInt(result.completed)} in ${result.seconds.toFixed(1)} s, ${result.failed} failed), ` +
        `busy backends ${profile.busyMean.toFixed(2)}, waiting on locks ${profile.busyMean > 0 ? fmtPct((lock / profile.busyMean) * 100) : '-'} (ledger ${profile.busyMean > 0 ? fmtPct((ledger / profile.busyMean) * 100) : '-'})`,
    );
    if (result.started > 0 && result.failed / result.started > 0.01) throw new Error(`${label}: ${result.failed} of ${result.started} flows failed; first: ${result.firstFailure}`);
    if (result.unused === 0 && result.seconds < seconds * 0.95) throw new Error(`${label}: the seeded deals ran out; raise BENCH_SCALE_MAX_RATE (${s.maxRate})`);
    return { level, result, profile };
  };

  const loadStart = loadavg();
  const at = new Date();
  if (s.warmup > 0) await run(Math.max(...s.levels), s.warmup, 'warm-up');
  const runs: LevelRun[] = [];
  for (let r = 1; r <= s.rounds; r++) for (const level of s.levels) runs.push(await run(level, s.duration, `round ${r}, ${level} in flight`));
  const loadEnd = loadavg();
  for (const a of apis) await stopChild(a.child);
  const checked = await checkAfter(done, seed.workspaces.map((w) => w.id));

  // Per level: the median round by flows/s, and the lock shares over all its samples.
  const rows = s.levels.map((level) => {
    const mine = runs.filter((x) => x.level === level);
    const rates = mine.map((x) => x.result.rate).sort((a, b) => a - b);
    const busy = mine.reduce((n, x) => n + x.profile.busyMean * x.profile.samples, 0);
    const waits = mine.reduce((acc, x) => {
      const w = lockWaits(x.profile);
      return { lock: acc.lock + w.lock * x.profile.samples, ledger: acc.ledger + w.ledger * x.profile.samples };
    }, { lock: 0, ledger: 0 });
    const samples = mine.reduce((n, x) => n + x.profile.samples, 0);
    const top = new Map<string, number>();
    for (const x of mine) for (const r of x.profile.rows) if (r.wait.startsWith('Lock:')) top.set(`${r.wait} ${r.query}`, (top.get(`${r.wait} ${r.query}`) ?? 0) + r.mean * x.profile.samples);
    const topWait = [...top].sort((a, b) => b[1] - a[1])[0];
    return {
      level,
      rate: rates[Math.floor((rates.length - 1) / 2)]!,
      rates,
      busy: busy / Math.max(1, samples),
      lockPct: busy > 0 ? (waits.lock / busy) * 100 : 0,
      ledgerPct: busy > 0 ? (waits.ledger / busy) * 100 : 0,
      p99: Math.max(...mine.map((x) => x.result.flowLatency.p99)),
      topWait: topWait ? `${topWait[0]} (${((topWait[1] / Math.max(1, busy)) * 100).toFixed(1)}%)` : 'none sampled',
    };
  });
  const top = rows[rows.length - 1]!;
  const ledgerMet = top.ledgerPct < GOAL_LEDGER_WAIT_PCT;
  const notFalling = rows.every((r, i) => i === 0 || r.rate >= rows[i - 1]!.rate * 0.95);
  const md: string[] = [];
  md.push(`Measured ${at.toISOString().replace(/\.\d+Z$/, 'Z')}. Load average (1, 5, 15 min) at the start: ${loadStart}; at the end: ${loadEnd}.`, '');
  md.push('| Flows in flight | Flows/s (median round) | Per round | Busy backends (mean) | Waiting on locks | … on ledger statements | Flow p99 (worst round) | Most-waited lock |');
  md.push('|---:|---:|---|---:|---:|---:|---:|---|');
  for (const r of rows) {
    md.push(`| ${r.level} | ${fmtInt(r.rate)} | ${r.rates.map((x) => fmtInt(x)).join(' / ')} | ${r.busy.toFixed(2)} | ${fmtPct(r.lockPct)} | ${fmtPct(r.ledgerPct)} | ${r.p99.toFixed(1)} ms | ${r.topWait.replace(/\|/g, '\\|')} |`);
  }
  md.push('');
  md.push(
    `- Goal (issue 44): lock waits on ledger statements under ${GOAL_LEDGER_WAIT_PCT}% of the busy backends' time at ${top.level} in flight: **${fmtPct(top.ledgerPct)}, ${ledgerMet ? 'met' : 'not met'}**; flows/s not falling as the concurrency grows (each level at least 95% of the one before): **${notFalling ? 'met' : 'not met'}** (${rows.map((r) => fmtInt(r.rate)).join(' → ')} flows/s).`,
    `- A flow: the fund bench's (bench/fund/): a workspace key funds a sandbox milestone (\`POST …/fund\`), then releases an approved milestone of the same deal into 2 splits (\`POST …/release\`), each with a fresh Idempotency-Key; ${fmtInt(s.workspaces)} workspaces, deals taken round-robin over them, so consecutive flows lock different workspaces and every posting meets the platform's shared ledger accounts. ${s.rounds} rounds × ${s.duration} s per level, the levels interleaved, after a ${s.warmup} s warm-up; ${s.apis === 1 ? 'the API alone (`node dist/api/server.js`, pinned to one core)' : `${s.apis} API processes (\`node dist/api/server.js\`, unpinned), each with an equal share of the flows in flight and of the deals`}, ${'`DATABASE_POOL_MAX`'} ${process.env.DATABASE_POOL_MAX ?? '10'} per pool.`,
    `- Lock share: pg_stat_activity sampled every 50 ms during each run (the bench database's client backends that were not idle); a backend whose wait_event_type is Lock is waiting on a heavyweight lock (a row's transaction, a tuple, a relation). "On ledger statements": those whose statement is a ledger posting (\`ledger_post_many\`) or reads ledger accounts. Busy backends are bounded by the API's pools: past them, flows queue in the API, not in Postgres.`,
    `- After the load: ${fmtInt(checked.flows)} completed flows checked (each milestone funded once, released once into its splits with one event), the ledger balanced (\`checkLedger\`).`,
  );
  const markdown = md.join('\n');
  console.log(`\n${markdown}\n`);
  const headlines: Headline[] = [
    {
      id: s.apis === 1 ? 'scale/ledger-lock-waits' : `scale/ledger-lock-waits-${s.apis}-apis`,
      figure: `Fund + release over ${s.workspaces} workspaces${s.apis === 1 ? '' : ` on ${s.apis} API processes`} at ${top.level} flows in flight: share of busy backends waiting on locks of ledger statements (flows/s at ${rows.map((r) => r.level).join(' / ')} in flight: ${rows.map((r) => fmtInt(r.rate)).join(' / ')})`,
      goal: `< ${GOAL_LEDGER_WAIT_PCT}%, flows/s not falling`,
      measured: `${fmtPct(top.ledgerPct)}; ${notFalling ? 'not falling' : 'falling'}`,
      met: ledgerMet && notFalling,
    },
  ];
  await publish({ page: 'scale', marker: s.apis === 1 ? 'results' : `results-${s.apis}-apis`, markdown, headlines, at, tag: 'bench' });
}

await runMain('bench', main, closeBenchDb);
