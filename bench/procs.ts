/**
 * Child processes of the bench (servers under test, the seed script): start, wait until
 * ready, stop; free loopback ports; pinning the load generator and the servers to
 * different cores. Shared by bench/run.ts and bench/profile.ts.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { BenchSeed } from './seed.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const HOST = '127.0.0.1';

export function intFromEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer in ${min}..${max}`);
  return n;
}

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

/**
 * With two or more cores and `taskset`, the load generator (this process) runs on core 0
 * and the servers under test on core 1, so neither steals the other's core and rounds
 * vary less. BENCH_PIN=0 turns it off.
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
export const PINNED = pinningAvailable();

/**
 * Starts `node <args>` (pinned to core 1 when PINNED unless `pin` is false). stdout is
 * ignored (/dev/null): the API's access log is still formatted and written, so its cost
 * is part of the measurement, but nothing is kept. With `stdout: 'pipe'` it is collected
 * instead (the seed script's summary line).
 */
export function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: { pin?: boolean; stdout?: 'ignore' | 'inherit' | number } = {},
): Child {
  const pin = PINNED && opts.pin !== false;
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

/** Runs bench/seed.ts (`users` users with a key each, one session) and returns what it wrote. */
export async function seedCallers(env: NodeJS.ProcessEnv, users: number): Promise<BenchSeed> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'escrow-bench-'));
  try {
    const file = path.join(dir, 'seed.json');
    await runToCompletion('seed (bench/seed.ts)', ['--import', 'tsx', 'bench/seed.ts', file, String(users)], env);
    const seed = JSON.parse(await readFile(file, 'utf8')) as BenchSeed;
    if (seed.keys.length !== users) throw new Error(`seed wrote ${seed.keys.length} keys, expected ${users}`);
    return seed;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function gitRevision(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${sha} (with uncommitted changes)` : sha;
  } catch {
    return 'unknown';
  }
}

/** Replaces the text between `start` and `end` markers of a file (appending them when missing). */
export async function replaceBetweenMarkers(file: string, start: string, end: string, section: string, heading: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    text = '# Load benchmark\n';
  }
  const block = `${start}\n${section}\n${end}`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  const next =
    from >= 0 && to > from
      ? text.slice(0, from) + block + text.slice(to + end.length)
      : `${text.replace(/\s*$/, '\n\n')}${heading}\n\n${block}\n`;
  await writeFile(file, next);
}
