/**
 * `npm run bench:uploads` (bench/run.sh: Postgres, Redis, the migrated bench database and a
 * fresh dist/ build): issue 7's upload benchmark against the real processes.
 *
 * 1. seed.ts: the callers (8 users) and the corpus (a pixel bomb, a 10 MB PDF, 2 MB JPEGs).
 * 2. Starts the compiled API and worker (every queue, the default WORKER_CONCURRENCY) with
 *    their own queue prefix (`escrow-bench-uploads`, the benches' Redis db) and a temporary
 *    UPLOAD_DIR. Nothing is pinned.
 * 3. load.ts: memory of both processes (VmHWM, VmRSS) after a warm-up upload, the bomb and
 *    the PDF, one at a time; then the JPEGs, BENCH_UPLOAD_CONNECTIONS at a time (the answer
 *    waits for the worker's cleaning): files/s, MB/s, latency per upload.
 * 4. verify.ts: the goal (bomb refused from its header, both peaks under 300 MB) and that
 *    the PDF and every JPEG were stored (exit code 1 otherwise).
 * 5. report.ts: bench/uploads/README.md and the table of bench/README.md.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { seedCallers } from '../auth-read/seed.js';
import { requireStores, SERVICE_ENV } from '../lib/env.js';
import { freePort, HOST, startChild, stopAll, stopChildrenOnSignals, waitFor } from '../lib/procs.js';
import { publish, warnIfDirty } from '../lib/report.js';
import { loadavg } from '../lib/sample.js';
import { memoryOfBoth, memoryPhase, settings, throughput } from './load.js';
import { report } from './report.js';
import { buildCorpus } from './seed.js';
import { verify } from './verify.js';

const QUEUE_PREFIX = 'escrow-bench-uploads';

async function main(): Promise<void> {
  requireStores('npm run bench:uploads');
  warnIfDirty('bench');
  process.env.QUEUE_PREFIX = QUEUE_PREFIX;
  const uploadDir = await mkdtemp(path.join(os.tmpdir(), 'escrow-bench-uploads-'));
  const env: NodeJS.ProcessEnv = { ...process.env, HOST, ...SERVICE_ENV, LOG_LEVEL: 'warn', UPLOAD_DIR: uploadDir, QUEUE_PREFIX };
  try {
    const seed = await seedCallers(env, settings.users);
    const corpus = await buildCorpus(settings.jpegs);
    const port = await freePort();
    const base = `http://${HOST}:${port}`;
    const api = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], { ...env, PUBLIC_BASE_URL: base, PORT: String(port) }, { pin: false });
    const worker = startChild('worker (node dist/workers/index.js)', ['dist/workers/index.js'], { ...env, PUBLIC_BASE_URL: base }, { pin: false });
    await waitFor(`${base}/readyz`, api, 30_000);
    const at = new Date();
    const before = loadavg();
    const mem = await memoryPhase(base, seed.keys, corpus, api, worker);
    const t = await throughput(base, seed.keys, corpus);
    const m3 = await memoryOfBoth(api, worker);
    for (const c of [api, worker]) if (c.exit) throw new Error(`${c.name} exited early: ${c.stderrTail()}`);
    const verdict = verify(mem, t);
    const { markdown, headlines } = report(at, `${before} / ${loadavg()}`, corpus, mem, m3, t, verdict, env.WORKER_CONCURRENCY ?? '5 (default)');
    console.log(`\n${markdown}\n`);
    await publish({ page: 'uploads', marker: 'results', markdown, headlines, at, tag: 'bench' });
    if (verdict.problems.length > 0) process.exitCode = 1;
  } finally {
    await stopAll();
    await rm(uploadDir, { recursive: true, force: true });
  }
}

stopChildrenOnSignals('bench:uploads');
try {
  await main();
} catch (err) {
  console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
