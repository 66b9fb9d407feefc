/**
 * `npm run bench:release` (bench/run.sh: Postgres, Redis, the migrated bench database and a
 * fresh dist/ build): issue 29's "confirm received + release (ledger posting, fee)" against
 * its floor (bench/auth-read/floor-release.ts in the floor server), in the same run.
 *
 * 1. seed.ts: buyers with keys, and `sent` escrows made through the service (created, paid
 *    with its ledger posting, sent), enough for every run of both sides.
 * 2. Starts the compiled API and the floor server with the same environment.
 * 3. verify.ts `checkFloor`: one flow each way, same answers and same rows, replays.
 * 4. load.ts: a warm-up per side, then the rounds (API and floor alternating, closed loop),
 *    then one evenly paced run per side.
 * 5. verify.ts `checkAfter`: every released escrow released exactly once with the right fee,
 *    and `checkLedger`.
 * 6. report.ts: printed, and written to bench/release/README.md and bench/README.md unless
 *    BENCH_README=0 or the tree is dirty. Exit 1 when a check fails or more than 1% of a
 *    run's flows failed (MAX_BAD_SHARE).
 */
import { closeBenchDb } from '../lib/db.js';
import { LOG_LEVEL, requireStores, SERVICE_ENV } from '../lib/env.js';
import { fmtInt, fmtPct, median } from '../lib/format.js';
import { freePort, HOST, runMain, startChild, startFloorSide, waitFor } from '../lib/procs.js';
import { publish, warnIfDirty } from '../lib/report.js';
import { loadavg } from '../lib/sample.js';
import { ItemQueue } from '../lib/flows.js';
import { DEFAULT_RATE, escrowsNeeded, run, settings, type RunResult, type Target } from './load.js';
import { report } from './report.js';
import { seedRelease } from './seed.js';
import { checkAfter, checkFloor, checkLean, twinItems } from './verify.js';

async function main(): Promise<void> {
  requireStores('npm run bench:release');
  warnIfDirty('bench');
  const prefix = process.env.QUEUE_PREFIX ?? 'escrow-bench';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST,
    ...SERVICE_ENV,
    NOTIFICATION_EMAILS: process.env.NOTIFICATION_EMAILS ?? '0',
    AUTH_RATE_LIMIT_PER_MINUTE: String(settings.authLimit),
    FLOOR_PREFIX: `${prefix}:floor`,
  };
  const escrows = escrowsNeeded();
  console.log(`bench: release flow: ${settings.rounds} rounds × ${settings.duration} s per side, ${settings.concurrency} flows in flight, ${fmtInt(escrows)} sent escrows; load average ${loadavg()}`);
  const seed = await seedRelease(env, settings.buyers, escrows);

  const [port, floorPort] = [await freePort(), await freePort()];
  const base = `http://${HOST}:${port}`;
  const apiChild = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], { ...env, PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL }, { pin: false });
  // The floor answers escrow_url from the API's PUBLIC_BASE_URL, so both answer the same JSON.
  const floorChild = startFloorSide({ ...env, PORT: String(floorPort), PUBLIC_BASE_URL: base }, { pin: false });
  const api: Target = { side: 'api', base, child: apiChild };
  const floor: Target = { side: 'floor', base: `http://${HOST}:${floorPort}`, child: floorChild };
  const children = [apiChild, floorChild];
  await Promise.all([waitFor(`${base}/readyz`, apiChild, 30_000), waitFor(`${floor.base}/readyz`, floorChild, 30_000)]);
  console.log(`bench: API on ${base}, floor on ${floor.base}`);

  const pair = await twinItems(seed.items);
  const reached: string[] = [];
  const done: string[] = [...(await checkFloor(api, floor, seed, pair))];
  reached.push(...done);
  // A floor at least as lean as its route, or no ratio (issue 43).
  const { lean, used } = await checkLean({ ...env, PUBLIC_BASE_URL: base, LOG_LEVEL }, seed, seed.items.filter((it) => it !== pair[0] && it !== pair[1]));
  reached.push(...used.map((i) => i.escrowId));
  done.push(...used.map((i) => i.escrowId));
  const items = new ItemQueue(seed.items.filter((it) => it !== pair[0] && it !== pair[1] && !used.includes(it)));
  const keep = (r: RunResult) => {
    reached.push(...r.reached);
    done.push(...r.done);
    return r;
  };

  if (settings.warmup > 0) for (const t of [api, floor]) keep(await run(t, items, seed, children, `warm-up ${t.side}`, { seconds: settings.warmup }));
  const loadStart = loadavg();
  const at = new Date();
  const rounds: { api: RunResult; floor: RunResult }[] = [];
  for (let i = 0; i < settings.rounds; i++) {
    const got: Partial<Record<'api' | 'floor', RunResult>> = {};
    for (const t of i % 2 === 0 ? [api, floor] : [floor, api]) got[t.side] = keep(await run(t, items, seed, children, `round ${i + 1} ${t.side}`, { seconds: settings.duration }));
    rounds.push({ api: got.api!, floor: got.floor! });
    console.log(`bench: round ${i + 1}: API ÷ floor ${fmtPct((got.api!.flows.rate / got.floor!.flows.rate) * 100)}`);
  }
  const slower = Math.min(median(rounds.map((r) => r.api.flows.rate)), median(rounds.map((r) => r.floor.flows.rate)));
  let rate = settings.rate ?? DEFAULT_RATE;
  let rateNote = settings.rate !== null ? 'BENCH_RELEASE_RATE' : "the issue's rate";
  if (settings.rate === null && slower < DEFAULT_RATE) {
    rate = Math.max(5, Math.floor((0.8 * slower) / 5) * 5);
    rateNote = `80% of the slower side's median closed-loop rate (${fmtInt(slower)} flows/s), which is below ${DEFAULT_RATE} flows/s: ${DEFAULT_RATE} flows/s is not sustained here`;
  }
  // Two paced runs per side in the order API, floor, floor, API, so neither side always runs
  // first after the closed loop (its checkpoints and vacuum); each side keeps its worse run.
  const paced: Partial<Record<'api' | 'floor', RunResult>> = {};
  for (const t of [api, floor, floor, api]) {
    const r = keep(await run(t, items, seed, children, `paced ${t.side} at ${rate} flows/s`, { seconds: settings.pacedDuration, rate }));
    const earlier = paced[t.side];
    if (!earlier || r.flows.flowLatency.p99 > earlier.flows.flowLatency.p99) paced[t.side] = r;
    const p99 = (s: string) => r.flows.steps[s]?.latency.p99.toFixed(1) ?? '-';
    console.log(`bench: paced ${t.side}: confirm-received p99 ${p99('confirm-received')} ms, release p99 ${p99('release')} ms, flow p99 ${r.flows.flowLatency.p99.toFixed(1)} ms`);
  }
  const seconds = (Date.now() - at.getTime()) / 1000;
  const loadEnd = loadavg();

  const after = await checkAfter(reached, done);
  const seedNote =
    `Seeded ${fmtInt(seed.items.length)} \`sent\` escrows (${fmtInt(seed.created)} made by this run through the service: \`createDirect\` as the buyer, \`markPaid\` with its ledger posting, ` +
    `\`send\` as the seller, without tracking; the rest left \`sent\` by earlier runs) of ${fmtInt(seed.buyers.length)} buyers with fresh keys, each buying from the next, consecutive flows of different buyers; ` +
    `amounts 150,000 to 1,100,000, so the fee (the \`escrow_fee\` setting, or 1% with a Rp2.000 floor) is sometimes its floor; seeding took ${seed.seconds.toFixed(1)} s. ` +
    `${fmtInt(new Set(reached).size)} escrows were reached by this run, ${fmtInt(done.length)} released.`;
  const { markdown, headlines, ratio } = report({ at, seconds, rounds, paced: { api: paced.api!.flows, floor: paced.floor!.flows, rate, rateNote }, after, loadStart, loadEnd, seedNote, lean });
  console.log(`\n${markdown}\n`);
  if (after.problems.length > 0) {
    process.exitCode = 1;
    console.error(`bench: checks after the load failed: ${after.problems.join('; ')}`);
    return;
  }
  await publish({ page: 'release', marker: 'results', markdown, headlines, at, tag: 'bench' });
  console.log(`bench: release flow API ÷ floor ${fmtPct(ratio)} (goal ≥ 60%); ledger check held`);
}

await runMain('bench', main, closeBenchDb);
