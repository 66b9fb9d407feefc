/**
 * The chaos run's own stores and how its processes are named: a `redis-server` child on a
 * free loopback port with an append-only file (so a restart keeps its data, as a managed
 * Redis with persistence would), and the `application_name` each process gives its
 * Postgres connections (so pg_stat_activity names the process behind each backend).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { HOST } from '../lib/procs.js';

/** The driver's own Postgres connections (never cut). */
export const DRIVER_APP = 'chaos-driver';
/** A worker copy's Postgres connections: slot and start number, so a backend names its process. */
export const workerApp = (slot: number, generation: number): string => `chaos-worker-${slot + 1}-${generation}`;

/**
 * DATABASE_URL with an `application_name` (node-postgres lets the URL's parameter win over
 * the service's own), so pg_stat_activity names the process behind each backend: the cut
 * spares the driver's own connections, and a payout job blocked on a row lock is traced to
 * the worker copy that runs it.
 */
export function withAppName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.toString();
}

export class RedisServer {
  proc: ChildProcess | null = null;
  constructor(
    readonly port: number,
    readonly dir: string,
  ) {}
  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', HOST, '--dir', this.dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''];
    this.proc = spawn('redis-server', args, { stdio: 'ignore' });
    for (let i = 0; i < 100; i += 1) {
      try {
        execFileSync('redis-cli', ['-p', String(this.port), 'ping'], { stdio: 'pipe' });
        return;
      } catch {
        await sleep(50);
      }
    }
    throw new Error('redis-server did not start');
  }
  /** SIGTERM: Redis finishes its append-only file and exits; start() brings the same data back. */
  async restart(): Promise<void> {
    const proc = this.proc;
    if (proc) {
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    }
    await this.start();
  }
  stop(): void {
    this.proc?.kill('SIGTERM');
  }
}
