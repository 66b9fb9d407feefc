/**
 * `npm run bench` (through bench/run.sh, which provides Postgres, Redis, the bench
 * database and a fresh dist/ build): starts the real API (`node dist/api/server.js`) and
 * a bare Koa app (bench/bare-koa.ts) as child processes on loopback ports, warms both
 * up, then load-tests GET /healthz on each with autocannon in alternating rounds and
 * writes the median round of each, and their ratio, to bench/README.md.
 *
 * Tunables (environment): BENCH_ROUNDS (7), BENCH_DURATION seconds per round (5),
 * BENCH_WARMUP seconds (3), BENCH_CONNECTIONS (50). Pipelining is always 1.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { runAutocannon, type AutocannonResult } from './autocannon.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const README = path.join(ROOT, 'bench', 'README.md');
const HOST = '127.0.0.1';
const ROUTE = '/healthz';
const EXPECTED_BODY = JSON.stringify({ success: true, data: { status: 'ok' } });
const GOAL_PERCENT = 60;
const MARK_START = '<!-- results:start -->';
const MARK_END = '<!-- results:end -->';

function intFromEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer in ${min}..${max}`);
  return n;
}

const ROUNDS = intFromEnv('BENCH_ROUNDS', 7, 1, 15);
const DURATION = intFromEnv('BENCH_DURATION', 5, 1, 60);
const WARMUP = intFromEnv('BENCH_WARMUP', 3, 0, 30);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 50, 1, 1000);
const PIPELINING = 1;

type TargetName = 'bare' | 'full';

interface Target {
  name: TargetName;
  label: string;
  url: string;
  child: Child;
}

interface Child {
  name: string;
  proc: ChildProcess;
  /** Last few KiB of the child's stderr (for error messages). */
  stderrTail: () => string;
  /** Set once the process has exited. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  exited: Promise<void>;
}

const children: Child[] = [];

/**
 * With two or more cores and `taskset`, the load generator (this process) runs on core 0
 * and the server under test on core 1, so neither steals the other's core and rounds vary
 * less. BENCH_PIN=0 turns it off.
 */
function pinningAvailable(): boolean {
  if (process.env.BENCH_PIN === '0' || os.cpus().length < 2) return false;
  try {
    execFileSync('taskset', ['-cp', '0', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const PINNED = pinningAvailable();

function startChild(name: string, args: string[], env: NodeJS.ProcessEnv): Child {
  // stdout is ignored (/dev/null): the API's access log is still formatted and written,
  // so its cost is part of the measurement, but nothing is kept.
  const [command, argv] = PINNED ? ['taskset', ['-c', '1', process.execPath, ...args]] : [process.execPath, args];
  const proc = spawn(command, argv, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let tail = '';
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-4096);
  });
  const child: Child = {
    name,
    proc,
    stderrTail: () => tail.trim(),
    exit: null,
    exited: new Promise<void>((resolve) => {
      proc.once('exit', (code, signal) => {
        child.exit = { code, signal };
        resolve();
      });
      proc.once('error', (err) => {
        tail += `\nspawn error: ${err.message}`;
        child.exit = { code: null, signal: null };
        resolve();
      });
    }),
  };
  children.push(child);
  return child;
}

async function stopChild(child: Child): Promise<void> {
  if (child.exit) return;
  child.proc.kill('SIGTERM');
  const done = await Promise.race([child.exited.then(() => true), sleep(10_000).then(() => false)]);
  if (!done) {
    child.proc.kill('SIGKILL');
    await child.exited;
  }
}

async function stopAll(): Promise<void> {
  await Promise.allSettled(children.map((c) => stopChild(c)));
}

/** A free TCP port on the loopback address (bound, read, released). */
async function freePort(): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, HOST, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

function describeExit(child: Child): string {
  const how = child.exit?.signal ? `signal ${child.exit.signal}` : `code ${String(child.exit?.code)}`;
  const tail = child.stderrTail();
  return `${child.name} exited (${how})${tail ? `:\n${tail}` : ''}`;
}

/** Polls `url` until it answers 200, the child exits, or `timeoutMs` passes. */
async function waitFor(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child.exit) throw new Error(describeExit(child));
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      const text = await res.text();
      if (res.status === 200) return;
      last = `HTTP ${res.status}: ${text.slice(0, 300)}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(200);
  }
  throw new Error(`${child.name} not ready at ${url} after ${timeoutMs} ms (${last})\n${child.stderrTail()}`);
}

/** Both apps must answer the benchmarked route identically before it is measured. */
async function checkBody(target: Target): Promise<void> {
  const res = await fetch(target.url, { signal: AbortSignal.timeout(2000) });
  const text = await res.text();
  if (res.status !== 200 || text !== EXPECTED_BODY) {
    throw new Error(`${target.label}: GET ${ROUTE} answered ${res.status} ${text.slice(0, 300)}, expected 200 ${EXPECTED_BODY}`);
  }
}

async function load(target: Target, seconds: number): Promise<AutocannonResult> {
  if (target.child.exit) throw new Error(describeExit(target.child));
  const result = await runAutocannon({
    url: target.url,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration: seconds,
    timeout: 10,
  });
  if (target.child.exit) throw new Error(describeExit(target.child));
  return result;
}

function median(results: AutocannonResult[]): AutocannonResult {
  const sorted = [...results].sort((a, b) => a.requests.average - b.requests.average);
  const mid = sorted[Math.floor((sorted.length - 1) / 2)];
  if (!mid) throw new Error('no results');
  return mid;
}

function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function fmtMs(n: number): string {
  return n.toFixed(n < 10 ? 2 : 1);
}

function gitRevision(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${sha} (with uncommitted changes)` : sha;
  } catch {
    return 'unknown';
  }
}

interface Report {
  markdown: string;
  ratio: number;
}

function report(results: Record<TargetName, AutocannonResult[]>, labels: Record<TargetName, string>): Report {
  const bare = median(results.bare);
  const full = median(results.full);
  // The headline is the median of the per-round ratios: each round loads both apps back
  // to back, so a slow spell on a shared machine hits a pair rather than one side.
  const paired = results.full
    .map((f, i) => (f.requests.average / (results.bare[i]?.requests.average ?? Number.NaN)) * 100)
    .filter((r) => Number.isFinite(r))
    .sort((a, b) => a - b);
  const ratio = paired[Math.floor((paired.length - 1) / 2)] ?? Number.NaN;
  const ratioOfMedians = (full.requests.average / bare.requests.average) * 100;
  const met = ratio >= GOAL_PERCENT;
  const cpus = os.cpus();
  const cpuModel = cpus[0]?.model.trim() ?? 'unknown';
  const row = (name: TargetName, r: AutocannonResult): string =>
    `| ${labels[name]} | ${fmtInt(r.requests.average)} | ${fmtMs(r.latency.average)} | ${fmtMs(r.latency.p50)} | ` +
    `${fmtMs(r.latency.p97_5)} | ${fmtMs(r.latency.p99)} | ${fmtMs(r.latency.max)} | ` +
    `${results[name].map((x) => fmtInt(x.requests.average)).join(' / ')} |`;
  const problems = (['bare', 'full'] as const)
    .flatMap((name) =>
      results[name].map((r, i) =>
        r.errors + r.timeouts + r.non2xx > 0
          ? `- ${labels[name]}, round ${i + 1}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx responses`
          : '',
      ),
    )
    .filter(Boolean);
  const lines = [
    `Measured ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')} on commit ${gitRevision()}.`,
    '',
    `| | Requests/s (mean) | Latency mean (ms) | p50 (ms) | p97.5 (ms) | p99 (ms) | max (ms) | Requests/s per round |`,
    `|---|---:|---:|---:|---:|---:|---:|---|`,
    row('bare', bare),
    row('full', full),
    '',
    `**Full stack / bare Koa: ${ratio.toFixed(1)}% of requests/s** (median of the per-round ratios) — goal ≥ ${GOAL_PERCENT}%: **${met ? 'met' : 'NOT met'}**.`,
    '',
    `- Per-round ratios: ${paired.map((r) => `${r.toFixed(1)}%`).join(', ')} (sorted); ratio of the two median rounds: ${ratioOfMedians.toFixed(1)}%.`,
    `- Route: \`GET ${ROUTE}\`, ${CONNECTIONS} connections, pipelining ${PIPELINING}, ` +
      `${ROUNDS} round${ROUNDS === 1 ? '' : 's'} × ${DURATION} s per app (alternating, after a ${WARMUP} s warm-up each); ` +
      `each row is that app's median round by requests/s.`,
    `- Node ${process.version}, ${cpuModel}, ${cpus.length} logical core${cpus.length === 1 ? '' : 's'} ` +
      `(${PINNED ? 'load generator pinned to core 0, server under test to core 1' : 'load generator and server share them'}), ${os.platform()} ${os.release()}.`,
    `- Responses in the median rounds: bare ${fmtInt(bare.requests.total)}, full ${fmtInt(full.requests.total)}; ` +
      `bytes/response: bare ${fmtInt(bare.throughput.total / Math.max(1, bare.requests.total))}, ` +
      `full ${fmtInt(full.throughput.total / Math.max(1, full.requests.total))}.`,
    ...(problems.length ? ['', '**Errors during the run:**', '', ...problems] : []),
  ];
  return { markdown: lines.join('\n'), ratio };
}

async function writeReadme(section: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(README, 'utf8');
  } catch {
    text = '# Load benchmark\n\n## Latest results\n\n';
  }
  const block = `${MARK_START}\n${section}\n${MARK_END}`;
  const start = text.indexOf(MARK_START);
  const end = text.indexOf(MARK_END);
  const next =
    start >= 0 && end > start
      ? text.slice(0, start) + block + text.slice(end + MARK_END.length)
      : `${text.replace(/\s*$/, '\n\n')}${block}\n`;
  await writeFile(README, next);
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
    throw new Error('DATABASE_URL and REDIS_URL must be set; run `npm run bench` (bench/run.sh) instead');
  }
  const [barePort, fullPort] = [await freePort(), await freePort()];
  const base = { ...process.env, HOST, NODE_ENV: 'development' };

  const full = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], {
    ...base,
    PORT: String(fullPort),
    PUBLIC_BASE_URL: `http://${HOST}:${fullPort}`,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  });
  const bare = startChild('bare Koa (bench/bare-koa.ts)', ['--import', 'tsx', 'bench/bare-koa.ts'], {
    ...base,
    PORT: String(barePort),
  });
  const targets: Record<TargetName, Target> = {
    bare: { name: 'bare', label: 'Bare Koa', url: `http://${HOST}:${barePort}${ROUTE}`, child: bare },
    full: { name: 'full', label: 'Full stack', url: `http://${HOST}:${fullPort}${ROUTE}`, child: full },
  };
  const labels = { bare: targets.bare.label, full: targets.full.label };

  await Promise.all([
    waitFor(`http://${HOST}:${fullPort}/readyz`, full, 30_000),
    waitFor(targets.bare.url, bare, 30_000),
  ]);
  await checkBody(targets.bare);
  await checkBody(targets.full);
  console.log(`bench: full stack on ${HOST}:${fullPort}, bare Koa on ${HOST}:${barePort}`);

  if (WARMUP > 0) {
    for (const name of ['bare', 'full'] as const) {
      console.log(`bench: warming up ${labels[name]} (${WARMUP} s)`);
      await load(targets[name], WARMUP);
    }
  }

  const results: Record<TargetName, AutocannonResult[]> = { bare: [], full: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternate which app goes first so drift (thermal, other load) hits both alike.
    const order: TargetName[] = round % 2 === 1 ? ['bare', 'full'] : ['full', 'bare'];
    for (const name of order) {
      const r = await load(targets[name], DURATION);
      results[name].push(r);
      console.log(
        `bench: round ${round}/${ROUNDS} ${labels[name]}: ${fmtInt(r.requests.average)} req/s, ` +
          `p50 ${fmtMs(r.latency.p50)} ms, p99 ${fmtMs(r.latency.p99)} ms` +
          (r.errors + r.non2xx > 0 ? `, ${r.errors} errors, ${r.non2xx} non-2xx` : ''),
      );
    }
  }

  const { markdown, ratio } = report(results, labels);
  await writeReadme(markdown);
  console.log(`\n${markdown}\n`);
  console.log(`bench: results written to ${path.relative(ROOT, README)} (ratio ${ratio.toFixed(1)}%)`);
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`bench: ${signal}, stopping the servers`);
    void stopAll().finally(() => process.exit(130));
  });
}

try {
  await main();
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await stopAll();
}
