/**
 * pgbench on the bench's Postgres server, the yardstick of issue 8: a scratch database
 * `<bench db>_pgbench`, `pgbench -i -s <scale>`, then `pgbench -b tpcb-like -c <clients>
 * -j 2 -T <seconds>`, with the CPU Postgres used during the run read from /proc.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { databaseName, sideDatabase } from '../lib/db.js';
import { cpuSnapshot, cpuUse, loadavg, type CpuUse } from '../lib/sample.js';
import { settings } from './load.js';

const execFileP = promisify(execFile);
export const PGBENCH_THREADS = Math.min(2, settings.connections);

export interface PgbenchResult {
  binary: string;
  version: string;
  database: string;
  initSeconds: number;
  seconds: number;
  tps: number;
  transactions: number;
  failed: number;
  latencyMs: number;
  loadStart: string;
  loadEnd: string;
  cpu: CpuUse | null;
}

/** pgbench on PATH, else the newest under /usr/lib/postgresql/*\/bin; null when there is none. */
export function findPgbench(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, 'pgbench'))) return path.join(dir, 'pgbench');
  }
  const base = '/usr/lib/postgresql';
  try {
    const versions = readdirSync(base)
      .filter((v) => existsSync(path.join(base, v, 'bin', 'pgbench')))
      .sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a));
    if (versions[0]) return path.join(base, versions[0], 'bin', 'pgbench');
  } catch {
    // no /usr/lib/postgresql
  }
  return null;
}

/** libpq's environment for a database URL. */
function libpqEnv(url: string): NodeJS.ProcessEnv {
  const u = new URL(url);
  const env: NodeJS.ProcessEnv = { ...process.env, PGHOST: u.hostname, PGPORT: u.port || '5432', PGDATABASE: databaseName(url) };
  if (u.username) env.PGUSER = decodeURIComponent(u.username);
  if (u.password) env.PGPASSWORD = decodeURIComponent(u.password);
  const sslmode = u.searchParams.get('sslmode');
  if (sslmode) env.PGSSLMODE = sslmode;
  return env;
}

/** Initialises the scratch database beside `runUrl` (the bench database) and runs pgbench for `seconds`. */
export async function runPgbench(binary: string, runUrl: string, seconds: number): Promise<PgbenchResult> {
  const url = await sideDatabase(runUrl, 'pgbench', { migrate: false });
  const env = libpqEnv(url);
  const { stdout: versionOut } = await execFileP(binary, ['--version'], { env });
  console.log(`bench: pgbench: initialising ${databaseName(url)} at scale ${settings.pgbenchScale} (${binary})`);
  const t0 = Date.now();
  await execFileP(binary, ['-i', '-q', '-s', String(settings.pgbenchScale)], { env, maxBuffer: 16 << 20, timeout: 600_000 });
  const initSeconds = (Date.now() - t0) / 1000;
  const args = ['-b', 'tpcb-like', '-c', String(settings.connections), '-j', String(PGBENCH_THREADS), '-T', String(seconds)];
  console.log(`bench: pgbench ${args.join(' ')}`);
  const loadStart = loadavg();
  // pgbench's backends live only as long as its run: CPU is read inside the run, from 1.5 s
  // after the start (connections made) to 1 s before the end.
  const running = execFileP(binary, args, { env, maxBuffer: 16 << 20, timeout: (seconds + 120) * 1000 });
  running.catch(() => undefined); // awaited below; this only keeps an early failure from being "unhandled" meanwhile
  let cpu: CpuUse | null = null;
  if (seconds >= 5) {
    await sleep(1500);
    const a = cpuSnapshot({});
    await sleep((seconds - 2.5) * 1000);
    cpu = cpuUse(a, cpuSnapshot({}));
  }
  const { stdout } = await running;
  const loadEnd = loadavg();
  const num = (re: RegExp) => Number(re.exec(stdout)?.[1] ?? Number.NaN);
  const tps = num(/^tps = ([0-9.]+)/m);
  if (!Number.isFinite(tps)) throw new Error(`pgbench printed no tps:\n${stdout}`);
  const failed = num(/^number of failed transactions: (\d+)/m);
  return {
    binary,
    version: versionOut.trim(),
    database: databaseName(url),
    initSeconds,
    seconds,
    tps,
    transactions: num(/^number of transactions actually processed: (\d+)/m),
    failed: Number.isFinite(failed) ? failed : 0,
    latencyMs: num(/^latency average = ([0-9.]+) ms/m),
    loadStart,
    loadEnd,
    cpu,
  };
}
