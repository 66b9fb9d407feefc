/**
 * Self time per function from a V8 CPU profile (`node --cpu-prof` writes one
 * `.cpuprofile`, the JSON DevTools opens). Used by bench/auth-read/profile.ts and by the
 * payments bench's BENCH_PAY_CPU_PROF profiles; also standalone:
 *
 *   tsx bench/lib/cpu-profile.ts <file.cpuprofile> [top=20]
 *
 * Each sample is attributed to the node (function + file + line) on top of the stack at
 * that moment; its time is the gap to the next sample (DevTools does the same). Nodes
 * with the same function, file and line are summed. Percentages are of the busy time:
 * everything but `(idle)`; `(program)` is V8/native work outside JS functions and
 * `(garbage collector)` is GC.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmtInt, fmtPct } from './format.js';
import { isMain, ROOT } from './procs.js';

/** V8's own entries: not JavaScript, and not called by anyone in particular. */
const VM_ENTRIES = new Set(['(program)', '(garbage collector)', '(root)', '(idle)']);


interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber?: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** Microseconds since the previous sample (the first: since startTime). */
  timeDeltas: number[];
}

export interface FunctionCost {
  name: string;
  /** Path relative to the repository, `node:…` for Node internals, '' for V8 entries. */
  file: string;
  /** 1-based; 0 when unknown. */
  line: number;
  selfMs: number;
  /** Percent of the busy (non-idle) time. */
  percent: number;
}

export interface ProfileSummary {
  /** Sampled wall time in the window, ms. */
  totalMs: number;
  idleMs: number;
  busyMs: number;
  functions: FunctionCost[];
  /** Self time by where the code lives: our api/ or shared/, a package, Node, V8. */
  areas: { area: string; selfMs: number; percent: number }[];
  /**
   * The self time of native code and Node internals (socket writes, hashing, buffers),
   * charged to the nearest caller outside Node: which package or file of ours asked.
   */
  nodeTimeByCaller: FunctionCost[];
  samples: number;
}

/** A profile URL as a short path: repository-relative, `node:…`, or as is. */
export function shortFile(url: string): string {
  if (!url) return '';
  let file = url;
  if (file.startsWith('file://')) {
    try {
      file = fileURLToPath(file);
    } catch {
      /* keep the URL */
    }
  }
  if (file.startsWith(`${ROOT}${path.sep}`)) file = path.relative(ROOT, file);
  return file;
}

/** Where a function lives: `api/`, `shared/`, a package name, `node`, or a V8 entry. */
function areaOf(name: string, file: string): string {
  if (!file) return name.startsWith('(') ? name : '(native)';
  if (file.startsWith('node:')) return 'node (internals)';
  const nm = file.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? file);
  }
  const top = file.replace(/^dist\//, '').split('/')[0] ?? file;
  return `${top}/ (ours)`;
}

/**
 * Sums self time per function over the samples whose timestamp lies in
 * [startTime + fromMs, startTime + toMs) (the whole profile by default).
 */
export function summarize(profile: CpuProfile, opts: { fromMs?: number; toMs?: number } = {}): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const from = profile.startTime + (opts.fromMs ?? 0) * 1000;
  const to = opts.toMs === undefined ? Number.POSITIVE_INFINITY : profile.startTime + opts.toMs * 1000;
  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  let counted = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    const next = i + 1 < profile.samples.length ? (profile.timeDeltas[i + 1] ?? 0) : Math.max(0, profile.endTime - t);
    if (t < from || t >= to) continue;
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + next);
    counted++;
  }
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const isNodeOrNative = (f: CallFrame) => f.url === '' || f.url.startsWith('node:');
  const fns = new Map<string, { name: string; file: string; line: number; us: number }>();
  const charged = new Map<string, { name: string; file: string; line: number; us: number }>();
  const areas = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    totalUs += us;
    const name = frame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idleUs += us;
      continue;
    }
    const file = shortFile(frame.url);
    const line = frame.url ? frame.lineNumber + 1 : 0;
    const key = `${name}\u0000${file}\u0000${line}`;
    const entry = fns.get(key) ?? { name, file, line, us: 0 };
    entry.us += us;
    fns.set(key, entry);
    const area = areaOf(name, file);
    areas.set(area, (areas.get(area) ?? 0) + us);
    if (isNodeOrNative(frame) && !VM_ENTRIES.has(name)) {
      let up = parent.get(id);
      let caller: CallFrame | undefined;
      while (up !== undefined) {
        const f = byId.get(up)?.callFrame;
        if (f && !isNodeOrNative(f)) {
          caller = f;
          break;
        }
        up = parent.get(up);
      }
      const cname = caller ? caller.functionName || '(anonymous)' : '(only Node on the stack: HTTP parsing, socket reads, timers)';
      const cfile = caller ? shortFile(caller.url) : '';
      const cline = caller ? caller.lineNumber + 1 : 0;
      const ckey = `${cname}\u0000${cfile}\u0000${cline}`;
      const c = charged.get(ckey) ?? { name: cname, file: cfile, line: cline, us: 0 };
      c.us += us;
      charged.set(ckey, c);
    }
  }
  const busyUs = Math.max(1, totalUs - idleUs);
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    busyMs: (totalUs - idleUs) / 1000,
    samples: counted,
    functions: [...fns.values()]
      .sort((a, b) => b.us - a.us)
      .map((f) => ({ name: f.name, file: f.file, line: f.line, selfMs: f.us / 1000, percent: (f.us / busyUs) * 100 })),
    nodeTimeByCaller: [...charged.values()]
      .sort((a, b) => b.us - a.us)
      .map((f) => ({ name: f.name, file: f.file, line: f.line, selfMs: f.us / 1000, percent: (f.us / busyUs) * 100 })),
    areas: [...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([area, us]) => ({ area, selfMs: us / 1000, percent: (us / busyUs) * 100 })),
  };
}

const esc = (s: string) => s.replace(/\|/g, '\\|');

const whereOf = (f: FunctionCost) => (f.file ? `\`${esc(f.file)}${f.line ? `:${f.line}` : ''}\`` : f.name.startsWith('(') ? '' : '(native)');

/**
 * Markdown tables: the top `top` functions by self time, self time by area, and the
 * native and Node-internal time by the caller outside Node that caused it.
 */
export function formatSummary(s: ProfileSummary, top = 20, topAreas = 10): string {
  const rows = s.functions
    .slice(0, top)
    .map((f, i) => `| ${i + 1} | \`${esc(f.name)}\` | ${whereOf(f)} | ${fmtInt(f.selfMs)} | ${fmtPct(f.percent)} |`);
  const callerRows = s.nodeTimeByCaller
    .slice(0, topAreas)
    .map((f) => `| \`${esc(f.name)}\` | ${whereOf(f)} | ${fmtInt(f.selfMs)} | ${fmtPct(f.percent)} |`);
  const areaRows = s.areas.slice(0, topAreas).map((a) => `| ${esc(a.area)} | ${fmtInt(a.selfMs)} | ${fmtPct(a.percent)} |`);
  return [
    `| # | Function (self time) | Where | Self (ms) | % of busy |`,
    `|---:|---|---|---:|---:|`,
    ...rows,
    '',
    `| Where the self time went | Self (ms) | % of busy |`,
    `|---|---:|---:|`,
    ...areaRows,
    '',
    `| Native and Node-internal self time, by the nearest caller outside Node | Where | Self (ms) | % of busy |`,
    `|---|---|---:|---:|`,
    ...callerRows,
    '',
    `Busy ${fmtInt(s.busyMs)} ms of ${fmtInt(s.totalMs)} ms sampled (idle ${fmtInt(s.idleMs)} ms), ${fmtInt(s.samples)} samples.`,
  ].join('\n');
}

export async function readProfile(file: string): Promise<CpuProfile> {
  return JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
}

if (isMain(import.meta.url)) {
  const [file, topArg] = process.argv.slice(2);
  if (!file) {
    console.error('usage: tsx bench/lib/cpu-profile.ts <file.cpuprofile> [top=20]');
    process.exit(2);
  }
  const top = topArg ? Number(topArg) : 20;
  console.log(formatSummary(summarize(await readProfile(file)), Number.isInteger(top) && top > 0 ? top : 20));
}
