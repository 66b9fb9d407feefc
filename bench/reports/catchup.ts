/**
 * What a reconciliation read costs when writes have marked milestones since the last one
 * (issue 44; decision 0020 "Figures kept per milestone"): the route's rounds measure reads
 * with nothing marked (nothing writes during the bench), so this script marks `n` random
 * milestones of the bench workspace (a row in `reconciliation_marks` each, as the triggers
 * write them) and times `catchUp` (the read's first step, in this process, on the bench
 * database) for n = 100, 1,000 and 10,000, three times each, and the nightly pass over every
 * milestone once. `measureCatchUp()` runs it as a script (`tsx bench/reports/catchup.ts
 * <out.json> <workspace id>`) and reads back the medians.
 */
import { writeFile } from 'node:fs/promises';
import { benchDb, closeBenchDb, refuseUnlessBenchDatabase } from '../lib/db.js';
import { isMain, runJsonScript } from '../lib/procs.js';

export interface CatchUp {
  /** Marked milestones → median milliseconds of catchUp. */
  marked: { n: number; ms: number }[];
  /** The nightly pass (every milestone worked out again), milliseconds. */
  fullMs: number;
  milestones: number;
}

export const MARKED = [100, 1_000, 10_000] as const;
const REPEATS = 3;

export function measureCatchUp(env: NodeJS.ProcessEnv, workspaceId: string): Promise<CatchUp> {
  return runJsonScript<CatchUp>('bench/reports/catchup.ts', [workspaceId], env, 900_000);
}

async function main(): Promise<void> {
  const [out, workspaceId] = process.argv.slice(2);
  if (!out || !workspaceId) throw new Error('usage: tsx bench/reports/catchup.ts <out.json> <workspace id>');
  refuseUnlessBenchDatabase(/_bench$/, 'catch-up');
  const db = await benchDb();
  const { catchUp } = await import('../../shared/reconciliation/service.js');
  const { db: serviceDb } = await import('../../shared/db.js');
  try {
    await catchUp(workspaceId);
    const marked: CatchUp['marked'] = [];
    for (const n of MARKED) {
      const times: number[] = [];
      for (let i = 0; i < REPEATS; i += 1) {
        await db.raw(
          `INSERT INTO reconciliation_marks (workspace_id, milestone_id)
           SELECT workspace_id, id FROM deal_milestones WHERE workspace_id = ? ORDER BY random() LIMIT ?`,
          [workspaceId, n],
        );
        const started = performance.now();
        const done = await catchUp(workspaceId);
        times.push(performance.now() - started);
        if (done.milestones !== n) throw new Error(`catchUp worked out ${done.milestones} milestones, ${n} were marked`);
      }
      times.sort((a, b) => a - b);
      marked.push({ n, ms: times[Math.floor(times.length / 2)]! });
      console.log(`bench: reconciliation catch-up of ${n} marked milestones: ${times.map((t) => t.toFixed(0)).join(' / ')} ms`);
    }
    const started = performance.now();
    const full = await catchUp(workspaceId, { full: true });
    const fullMs = performance.now() - started;
    console.log(`bench: reconciliation nightly pass over ${full.milestones} milestones: ${fullMs.toFixed(0)} ms`);
    await writeFile(out, JSON.stringify({ marked, fullMs, milestones: full.milestones } satisfies CatchUp), { mode: 0o600 });
  } finally {
    await serviceDb.destroy();
  }
}

if (isMain(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    console.error(`catch-up failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  } finally {
    await closeBenchDb();
  }
}
