/**
 * `npm run bench:uploads` (bench/run.sh: Postgres, Redis, the migrated bench database and a
 * fresh dist/ build): issue 7's upload benchmark against the real processes.
 *
 * 1. Starts the compiled API (`node dist/api/server.js`) and the compiled worker
 *    (`node dist/workers/index.js`, every queue, the default WORKER_CONCURRENCY) with their
 *    own queue prefix and a temporary UPLOAD_DIR.
 * 2. Memory: uploads a 20,000 x 20,000 px PNG decompression bomb (400 megapixels, a few
 *    hundred KB) and then a 10 MB PDF (4 pages of photo-like JPEG images), one at a time,
 *    and reads the peak resident memory (VmHWM of /proc/<pid>/status) of the API and of
 *    the worker before and after each. Goal: the bomb refused from its header
 *    (IMAGE_TOO_LARGE), both peaks under 300 MB.
 * 3. Throughput: BENCH_UPLOAD_JPEGS (default 24) ordinary 2 MB JPEGs (photo-sized, with
 *    EXIF), BENCH_UPLOAD_CONNECTIONS (default 2) at a time, spread over several users (the
 *    limit is 40 uploads per 10 minutes per user): files per second, MB per second, and
 *    the latency of each upload (the answer waits for the worker's cleaning).
 * Writes the figures to bench/README.md between `<!-- uploads-results:start -->` and
 * `<!-- uploads-results:end -->`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { PDFDocument } from 'pdf-lib';
import {
  HOST,
  ROOT,
  freePort,
  gitRevision,
  intFromEnv,
  replaceBetweenMarkers,
  seedCallers,
  startChild,
  stopAll,
  stopChildrenOnSignals,
  waitFor,
  type Child,
} from './procs.js';
import { pixelBomb } from '../test/helpers/hostile-files.js';

const JPEGS = intFromEnv('BENCH_UPLOAD_JPEGS', 24, 1, 400);
const CONNECTIONS = intFromEnv('BENCH_UPLOAD_CONNECTIONS', 2, 1, 16);
const USERS = 8;
const QUEUE_PREFIX = 'escrow-bench-uploads';
const MB = 1024 * 1024;

/** Peak and current resident memory of a process, in MB (Linux /proc). */
async function memoryOf(pid: number): Promise<{ peak: number; now: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024 };
}

/** Photo-like noise: compresses like a real photo (JPEG q90 of noise is ~2 bytes/pixel). */
async function noiseJpeg(width: number, height: number, quality: number, seed: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let x = seed;
  for (let i = 0; i < raw.length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    raw[i] = (x >> 16) & 0xff;
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality })
    .withExif({ IFD0: { Make: 'Bench', Model: 'Camera' }, IFD3: { GPSLatitudeRef: 'S', GPSLatitude: '6/1 10/1 30/1' } })
    .toBuffer();
}

/** A PDF of about `target` bytes (under 10 MiB): pages each holding one photo-like JPEG. */
async function bigPdf(target: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  let size = 0;
  let page = 0;
  for (;;) {
    const jpeg = await noiseJpeg(1200, 900, 90, 1000 + page);
    if (size + jpeg.length > target) break;
    const img = await doc.embedJpg(jpeg);
    doc.addPage([600, 450]).drawImage(img, { x: 0, y: 0, width: 600, height: 450 });
    size += jpeg.length;
    page++;
  }
  return Buffer.from(await doc.save());
}

interface Answer {
  status: number;
  code: string | null;
  ms: number;
  size?: number;
}

async function upload(base: string, key: string, type: string, bytes: Buffer, filename: string, mime: string): Promise<Answer> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: mime }), filename);
  const t0 = performance.now();
  const res = await fetch(`${base}/v1/upload/${type}`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: form });
  const body = (await res.json()) as { size?: number; error?: { code?: string } };
  return { status: res.status, code: body.error?.code ?? null, ms: performance.now() - t0, size: body.size };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const f1 = (n: number) => n.toFixed(1);

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) throw new Error('run `npm run bench:uploads` (bench/run.sh)');
  stopChildrenOnSignals('bench:uploads');
  process.env.QUEUE_PREFIX = QUEUE_PREFIX;
  const uploadDir = await mkdtemp(path.join(os.tmpdir(), 'escrow-bench-uploads-'));
  const env: NodeJS.ProcessEnv = { ...process.env, HOST, NODE_ENV: 'development', LOG_LEVEL: 'warn', UPLOAD_DIR: uploadDir, QUEUE_PREFIX };
  const seed = await seedCallers(env, USERS);

  console.log('bench: uploads: building the corpus');
  const bomb = await pixelBomb(20_000, 20_000);
  const pdf = await bigPdf(10 * MB - 64 * 1024);
  const jpegs: Buffer[] = [];
  for (let i = 0; i < Math.min(JPEGS, 4); i++) jpegs.push(await noiseJpeg(1600 + i * 8, 1600, 92, 77 + i));
  const jpegMB = jpegs.reduce((s, b) => s + b.length, 0) / jpegs.length / MB;
  console.log(`bench: bomb ${f1(bomb.length / 1024)} KB, PDF ${f1(pdf.length / MB)} MB, JPEG ${f1(jpegMB)} MB`);

  const port = await freePort();
  const base = `http://${HOST}:${port}`;
  const shared = { ...env, PUBLIC_BASE_URL: base };
  const api = startChild('API (node dist/api/server.js)', ['dist/api/server.js'], { ...shared, PORT: String(port) }, { pin: false });
  const worker = startChild('worker (node dist/workers/index.js)', ['dist/workers/index.js'], shared, { pin: false });
  const children: Child[] = [api, worker];
  try {
    await waitFor(`${base}/readyz`, api, 30_000);
    // Warm-up: one small upload loads sharp and pdf-lib in the worker.
    const warm = await upload(base, seed.keys[0]!, 'escrow', await sharp({ create: { width: 64, height: 64, channels: 3, background: 'grey' } }).jpeg().toBuffer(), 'w.jpg', 'image/jpeg');
    if (warm.status !== 200) throw new Error(`warm-up upload answered ${warm.status} ${warm.code}`);
    const mem = async () => ({ api: await memoryOf(api.proc.pid!), worker: await memoryOf(worker.proc.pid!) });
    const m0 = await mem();

    const bombAnswer = await upload(base, seed.keys[1]!, 'escrow', bomb, 'bomb.png', 'image/png');
    const m1 = await mem();
    const pdfAnswer = await upload(base, seed.keys[2]!, 'escrow', pdf, 'big.pdf', 'application/pdf');
    const m2 = await mem();
    console.log(`bench: bomb -> ${bombAnswer.status} ${bombAnswer.code} in ${f1(bombAnswer.ms)} ms; PDF -> ${pdfAnswer.status} ${pdfAnswer.code ?? ''} in ${f1(pdfAnswer.ms)} ms`);

    // Throughput.
    const latencies: number[] = [];
    const failures = new Map<string, number>();
    let next = 0;
    let bytesIn = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        for (;;) {
          const i = next++;
          if (i >= JPEGS) return;
          const bytes = jpegs[i % jpegs.length]!;
          const a = await upload(base, seed.keys[3 + (i % (USERS - 3))]!, 'escrow', bytes, `foto-${i}.jpg`, 'image/jpeg');
          if (a.status === 200) {
            latencies.push(a.ms);
            bytesIn += bytes.length;
          } else failures.set(`${a.status} ${a.code}`, (failures.get(`${a.status} ${a.code}`) ?? 0) + 1);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const m3 = await mem();
    latencies.sort((a, b) => a - b);
    const ok = latencies.length;

    const memRow = (label: string, m: { api: { peak: number; now: number }; worker: { peak: number; now: number } }) =>
      `| ${label} | ${f1(m.api.peak)} | ${f1(m.api.now)} | ${f1(m.worker.peak)} | ${f1(m.worker.now)} |`;
    const goalMet = bombAnswer.code === 'IMAGE_TOO_LARGE' && Math.max(m2.api.peak, m2.worker.peak) < 300;
    const lines = [
      `Run ${new Date().toISOString()} at ${gitRevision()}; ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}); worker concurrency ${env.WORKER_CONCURRENCY ?? '5 (default)'}; local storage.`,
      '',
      `**Memory** (peak = VmHWM since the process started; current = VmRSS). Bomb: ${f1(bomb.length / 1024)} KB PNG of 20,000 x 20,000 px -> ${bombAnswer.status} ${bombAnswer.code} in ${f1(bombAnswer.ms)} ms. PDF: ${f1(pdf.length / MB)} MB, ${pdfAnswer.status === 200 ? `stored ${f1((pdfAnswer.size ?? 0) / MB)} MB` : `${pdfAnswer.status} ${pdfAnswer.code}`} in ${f1(pdfAnswer.ms)} ms.`,
      '',
      '| after | API peak MB | API now MB | worker peak MB | worker now MB |',
      '|---|---:|---:|---:|---:|',
      memRow('start + one small upload', m0),
      memRow('the bomb', m1),
      memRow('the 10 MB PDF', m2),
      memRow(`${JPEGS} JPEGs of ${f1(jpegMB)} MB`, m3),
      '',
      `Goal (bomb refused from its header, both peaks under 300 MB through the bomb and the PDF): **${goalMet ? 'met' : 'not met'}**.`,
      '',
      `**Throughput**: ${ok} of ${JPEGS} JPEGs (${f1(jpegMB)} MB, 1600 x 1600 px, with EXIF/GPS) cleaned and stored in ${f1(seconds)} s with ${CONNECTIONS} at a time: ` +
        `**${f1(ok / seconds)} files/s, ${f1(bytesIn / MB / seconds)} MB/s**; latency per upload p50 ${f1(pct(latencies, 50))} ms, p95 ${f1(pct(latencies, 95))} ms, max ${f1(latencies[ok - 1] ?? NaN)} ms` +
        (failures.size > 0 ? `; failures: ${[...failures].map(([k, n]) => `${k} x${n}`).join(', ')}` : '') +
        '.',
    ];
    console.log(lines.join('\n'));
    await replaceBetweenMarkers(
      path.join(ROOT, 'bench', 'README.md'),
      '<!-- uploads-results:start -->',
      '<!-- uploads-results:end -->',
      lines.join('\n'),
      '## Uploads (issue 7)\n\n`npm run bench:uploads` (bench/uploads.ts): peak memory of the API and the worker while a pixel bomb and a 10 MB PDF are uploaded, and cleaning throughput for 2 MB JPEGs.',
    );
  } finally {
    for (const c of children) if (c.exit) console.error(`bench: ${c.name} exited early: ${c.stderrTail()}`);
    await stopAll();
    await rm(uploadDir, { recursive: true, force: true });
  }
}

main().catch(async (err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  await stopAll();
  process.exit(1);
});
