/**
 * How the upload bench loads the API and the worker: one multipart upload at a time for the
 * bomb and the PDF, reading both processes' memory after each; then the JPEGs, a few at a
 * time over several users (the limit is 40 uploads per 10 minutes per user).
 */
import { intFromEnv } from '../lib/env.js';
import { memoryOf } from '../lib/sample.js';
import type { Child } from '../lib/procs.js';
import type { Corpus } from './seed.js';

export const settings = {
  jpegs: intFromEnv('BENCH_UPLOAD_JPEGS', 24, 1, 400),
  connections: intFromEnv('BENCH_UPLOAD_CONNECTIONS', 2, 1, 16),
  users: 8,
};

export interface Answer {
  status: number;
  code: string | null;
  ms: number;
  size?: number;
}

export async function upload(base: string, key: string, bytes: Buffer, filename: string, mime: string): Promise<Answer> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: mime }), filename);
  const t0 = performance.now();
  const res = await fetch(`${base}/v1/upload/escrow`, { method: 'POST', headers: { Authorization: `Bearer ${key}` }, body: form });
  const body = (await res.json()) as { size?: number; error?: { code?: string } };
  return { status: res.status, code: body.error?.code ?? null, ms: performance.now() - t0, size: body.size };
}

export type Memory = { api: { peak: number; now: number }; worker: { peak: number; now: number } };
export const memoryOfBoth = async (api: Child, worker: Child): Promise<Memory> => ({ api: await memoryOf(api.proc.pid!), worker: await memoryOf(worker.proc.pid!) });

export interface MemoryPhase {
  m0: Memory;
  m1: Memory;
  m2: Memory;
  bomb: Answer;
  pdf: Answer;
}

/** Memory after the warm-up, after the bomb, after the PDF. */
export async function memoryPhase(base: string, keys: readonly string[], corpus: Corpus, api: Child, worker: Child): Promise<MemoryPhase> {
  const warm = await upload(base, keys[0]!, corpus.small, 'w.jpg', 'image/jpeg');
  if (warm.status !== 200) throw new Error(`warm-up upload answered ${warm.status} ${warm.code}`);
  const m0 = await memoryOfBoth(api, worker);
  const bomb = await upload(base, keys[1]!, corpus.bomb, 'bomb.png', 'image/png');
  const m1 = await memoryOfBoth(api, worker);
  const pdf = await upload(base, keys[2]!, corpus.pdf, 'big.pdf', 'application/pdf');
  const m2 = await memoryOfBoth(api, worker);
  console.log(`bench: bomb -> ${bomb.status} ${bomb.code} in ${bomb.ms.toFixed(1)} ms; PDF -> ${pdf.status} ${pdf.code ?? ''} in ${pdf.ms.toFixed(1)} ms`);
  return { m0, m1, m2, bomb, pdf };
}

export interface Throughput {
  /** Latencies of the uploads answered 200, ascending. */
  latencies: number[];
  failures: Map<string, number>;
  bytesIn: number;
  seconds: number;
}

/** settings.jpegs JPEG uploads, settings.connections at a time, spread over users 4..8. */
export async function throughput(base: string, keys: readonly string[], corpus: Corpus): Promise<Throughput> {
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  let next = 0;
  let bytesIn = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: settings.connections }, async () => {
      for (let i = next++; i < settings.jpegs; i = next++) {
        const bytes = corpus.jpegs[i % corpus.jpegs.length]!;
        const a = await upload(base, keys[3 + (i % (settings.users - 3))]!, bytes, `foto-${i}.jpg`, 'image/jpeg');
        if (a.status === 200) {
          latencies.push(a.ms);
          bytesIn += bytes.length;
        } else failures.set(`${a.status} ${a.code}`, (failures.get(`${a.status} ${a.code}`) ?? 0) + 1);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return { latencies: latencies.sort((a, b) => a - b), failures, bytesIn, seconds };
}
