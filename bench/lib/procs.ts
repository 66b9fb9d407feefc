/**
 * The bench's child processes (servers under test, workers, seed scripts): start, wait
 * until ready, stop; free loopback ports; pinning the load generator and the servers to
 * different cores; scripts that hand back JSON through a temporary file.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/** The repository (bench/lib/ is two levels down). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const HOST = '127.0.0.1';

export interface Child {
  name: string;
  proc: ChildProcess;
  /** Last few KiB of the child's stderr (for error messages). */
  stderrTail: () => string;
  /** Set once the process has exited. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  exited: Promise<void>;
}

const children: Child[] = [];

let pinned = false;

/**
 * With two or more cores and `taskset`, pins this process (the load generator) to core 0;
 * the servers started afterwards go to core 1 (`startChild`), so neither steals the other's
 * core and rounds vary less. BENCH_PIN=0 turns it off. Returns whether it pinned.
 */
export function pinLoadGenerator(): boolean {
  if (pinned || process.env.BENCH_PIN === '0' || os.cpus().length < 2) return pinned;
  try {
    execFileSync('taskset', ['-cp', '0', String(process.pid)], { stdio: 'ignore' });
    pinned = true;
  } catch {
    pinned = false;
  }
  return pinned;
}

/** Whether this process is pinned to core 0 (and servers go to core 1). */
export const isPinned = (): boolean => pinned;

/**
 * Gives this process every core again (and unpinned children from now on): for the
 * benches whose subject is several processes (API, worker, Postgres), as pgbench's is.
 */
export function unpin(): void {
  if (!pinned) return;
  execFileSync('taskset', ['-cp', `0-${os.cpus().length - 1}`, String(process.pid)], { stdio: 'ignore' });
  pinned = false;
}

/**
 * Starts `node <args>` (on core 1 when this process is pinned, unless `pin` is false). stdout is
 * ignored (/dev/null): the API's access log is still formatted and written, so its cost
 * is part of the measurement, but nothing is kept. `stdout` may name a file descriptor
 * (a log file) or `inherit` (a seed script's summary line).
 */
export function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: { pin?: boolean; stdout?: 'ignore' | 'inherit' | number } = {},
): Child {
  const pin = pinned && opts.pin !== false;
  const [command, argv] = pin ? ['taskset', ['-c', '1', process.execPath, ...args]] : [process.execPath, args];
  const proc = spawn(command, argv, { cwd: ROOT, env, stdio: ['ignore', opts.stdout ?? 'ignore', 'pipe'] });
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

/** SIGTERM, then SIGKILL after `graceMs`. Resolves once the child has exited. */
export async function stopChild(child: Child, graceMs = 10_000): Promise<void> {
  if (child.exit) return;
  child.proc.kill('SIGTERM');
  const done = await Promise.race([child.exited.then(() => true), sleep(graceMs, undefined, { ref: false }).then(() => false)]);
  if (!done) {
    child.proc.kill('SIGKILL');
    await child.exited;
  }
}

export async function stopAll(): Promise<void> {
  await Promise.allSettled(children.map((c) => stopChild(c)));
}

/** Stops every child on SIGINT/SIGTERM of this process, then exits 130. */
export function stopChildrenOnSignals(tag: string): void {
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = true;
      console.error(`${tag}: ${signal}, stopping the servers`);
      void stopAll().finally(() => process.exit(130));
    });
  }
}

/** A free TCP port on the loopback address (bound, read, released). */
export async function freePort(): Promise<number> {
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

export function describeExit(child: Child): string {
  const how = child.exit?.signal ? `signal ${child.exit.signal}` : `code ${String(child.exit?.code)}`;
  const tail = child.stderrTail();
  return `${child.name} exited (${how})${tail ? `:\n${tail}` : ''}`;
}

/** Throws when any of `children` has exited. */
export function assertAlive(list: readonly Child[]): void {
  for (const c of list) if (c.exit) throw new Error(describeExit(c));
}

/** Polls `url` until it answers 200, the child exits, or `timeoutMs` passes. */
export async function waitFor(url: string, child: Child, timeoutMs: number): Promise<void> {
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

/** Runs `node <args>` to completion (unpinned); rejects with its stderr when it fails. */
export async function runToCompletion(name: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<void> {
  const child = startChild(name, args, env, { pin: false, stdout: 'inherit' });
  const finished = await Promise.race([child.exited.then(() => true), sleep(timeoutMs, undefined, { ref: false }).then(() => false)]);
  if (!finished) {
    await stopChild(child, 2000);
    throw new Error(`${name} did not finish within ${timeoutMs} ms\n${child.stderrTail()}`);
  }
  if (child.exit?.code !== 0) throw new Error(describeExit(child));
}

/**
 * Runs `tsx <script> <out.json> ...args` to completion and returns what it wrote to
 * out.json (a temporary file, mode 0600 by the script, removed here): how the seed
 * scripts hand their callers' keys to the bench without the bench importing the service.
 */
export async function runJsonScript<T>(script: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'escrow-bench-'));
  try {
    const file = path.join(dir, 'out.json');
    await runToCompletion(script, ['--import', 'tsx', script, file, ...args], env, timeoutMs);
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** True when `import.meta.url` of the caller is the script node was started with. */
export function isMain(metaUrl: string): boolean {
  return !!process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(metaUrl);
}

/**
 * Runs a bench's `main` as the process's whole work: children stopped on SIGINT/SIGTERM,
 * a failure printed as "<tag> failed: ..." with exit code 1, and every child (then
 * `cleanup`, e.g. the bench database) stopped however it ended.
 */
export async function runMain(tag: string, main: () => Promise<void>, cleanup?: () => Promise<void>): Promise<void> {
  stopChildrenOnSignals(tag);
  try {
    await main();
  } catch (err) {
    console.error(`${tag} failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  } finally {
    await stopAll();
    if (cleanup) await cleanup();
  }
}

/**
 * `BENCH_AGAINST=<dir>`: a checkout of other service code, built (`<dir>/dist`, with its own
 * `node_modules`), started in the floor server's place by the money-path benches (escrows,
 * release, pay, fund). Every round then runs this code and that code interleaved, exactly as
 * it runs the API and its floor (issue 43: old and new code within 5% on each bench); the
 * "floor" columns of the report are that code, and nothing is written (`publish`).
 */
export const AGAINST = process.env.BENCH_AGAINST;

/** The second side of the rounds: the floor server, or the other code under `BENCH_AGAINST`. */
export function startFloorSide(env: NodeJS.ProcessEnv, opts?: Parameters<typeof startChild>[3]): ReturnType<typeof startChild> {
  if (AGAINST) {
    const server = path.resolve(AGAINST, 'dist/api/server.js');
    return startChild(`other code (node ${server})`, [server], { ...env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' }, opts);
  }
  return startChild('floor server (bench/auth-read/floor-server.ts)', ['--import', 'tsx', 'bench/auth-read/floor-server.ts'], env, opts);
}
