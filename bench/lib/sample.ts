/**
 * What the machine was doing: load average, the machine itself, CPU per process group
 * (from /proc/stat and /proc/<pid>/stat) and a process's resident memory
 * (/proc/<pid>/status). Linux only; each reader returns null where /proc is missing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { fmtLoad, fmtPct, plural } from './format.js';

/** The 1, 5 and 15 minute load averages, `1.39, 1.55, 2.00`. */
export const loadavg = (): string => fmtLoad(os.loadavg());

/** `Node v20.20.2, AMD EPYC, 2 logical cores (<pinning>), linux 6.18.44` */
export function machine(pinning: string): string {
  const cpus = os.cpus();
  return (
    `Node ${process.version}, ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${plural(cpus.length, 'logical core')} (${pinning}), ` +
    `${os.platform()} ${os.release()}`
  );
}

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on every Linux we run on). */
const TICKS_PER_S = 100;

export interface CpuSnapshot {
  at: number;
  /** Ticks of the whole machine: busy (everything but idle and iowait) and total. */
  busy: number;
  total: number;
  /** Ticks (utime + stime) per group of processes. */
  groups: Record<string, number>;
  /** Per process (pid and start time): its group and its ticks so far (cpuUse takes each process's own difference). */
  procs: Map<string, { group: string; ticks: number }>;
}

function procTicks(pid: number | string): { comm: string; ticks: number; start: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the comm; 22 (starttime) is 19.
    return { comm, ticks: Number(fields[11]) + Number(fields[12]), start: fields[19] ?? '' };
  } catch {
    return null;
  }
}

/**
 * CPU ticks so far of the machine and of groups of processes: the named `pids`, every
 * `postgres` process, `redis-server` and `pgbench`, with each process's own ticks.
 * `cpuUse` adds up each process's difference: a process that exited between two snapshots
 * (a Postgres backend whose pooled connection was closed) counts nothing for the span (what
 * it used in it is lost: a group's figure is a lower bound when processes come and go),
 * one that started counts all its ticks. Until 2026-11-26 the groups' sums were subtracted,
 * so a backend that exited took its whole past off the span (the pay bench once read 0.00
 * for Postgres).
 */
export function cpuSnapshot(pids: Record<string, number | undefined>): CpuSnapshot | null {
  let v: number[];
  try {
    v = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return null;
  }
  const total = v.reduce((a, b) => a + b, 0);
  const busy = total - (v[3] ?? 0) - (v[4] ?? 0);
  const groups: Record<string, number> = { postgres: 0, redis: 0 };
  const procs = new Map<string, { group: string; ticks: number }>();
  const own = new Map<number, string>();
  for (const [name, pid] of Object.entries(pids)) if (pid !== undefined) own.set(pid, name);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const t = procTicks(pid);
    if (!t) continue;
    const group = own.get(pid) ?? (t.comm === 'postgres' ? 'postgres' : t.comm.startsWith('redis-server') ? 'redis' : t.comm === 'pgbench' ? 'pgbench' : null);
    if (!group) continue;
    groups[group] = (groups[group] ?? 0) + t.ticks;
    procs.set(`${pid}:${t.start}`, { group, ticks: t.ticks });
  }
  return { at: Date.now(), busy, total, groups, procs };
}

export interface CpuUse {
  seconds: number;
  /** Share of the machine's cores busy (all processes), in %. */
  machineBusy: number;
  /** Per group, % of one core. */
  groups: Record<string, number>;
}

/** CPU used between two snapshots; null when either is missing. */
export function cpuUse(a: CpuSnapshot | null, b: CpuSnapshot | null): CpuUse | null {
  if (!a || !b || b.at <= a.at) return null;
  const seconds = (b.at - a.at) / 1000;
  const ticks: Record<string, number> = {};
  for (const k of Object.keys(b.groups)) ticks[k] = 0;
  // Keyed by pid and start time: a pid reused by a new process is a new key, all its ticks new.
  for (const [proc, p] of b.procs) ticks[p.group] = (ticks[p.group] ?? 0) + p.ticks - (a.procs.get(proc)?.ticks ?? 0);
  const groups: Record<string, number> = {};
  for (const [k, v] of Object.entries(ticks)) groups[k] = (Math.max(0, v) / TICKS_PER_S / seconds) * 100;
  return { seconds, machineBusy: ((b.busy - a.busy) / Math.max(1, b.total - a.total)) * 100, groups };
}

/** `API 55.7%, worker 14.3%, …, everything else 5.8%; the 2 cores 86.7% busy` for the named groups. */
export function cpuText(cpu: CpuUse, labels: readonly (readonly [group: string, label: string])[]): string {
  const cores = os.cpus().length;
  const known = labels.reduce((a, [k]) => a + (cpu.groups[k] ?? 0), 0);
  const others = Math.max(0, (cpu.machineBusy / 100) * cores * 100 - known);
  return `${labels.map(([k, label]) => `${label} ${fmtPct(cpu.groups[k] ?? 0)}`).join(', ')}, everything else ${fmtPct(others)}; the ${cores} cores ${fmtPct(cpu.machineBusy)} busy`;
}

/** Core-milliseconds of `groups` per unit of work over a measured span. */
export function cpuMsPer(cpu: CpuUse, groups: readonly string[], units: number): number {
  const pct = groups.reduce((a, k) => a + (cpu.groups[k] ?? 0), 0);
  return ((pct / 100) * cpu.seconds * 1000) / units;
}

/** Peak (VmHWM, since the process started) and current (VmRSS) resident memory of a process, in MB. */
export async function memoryOf(pid: number): Promise<{ peak: number; now: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024 };
}
