/**
 * The public listing's scenarios and how they are sent: sequential requests (or several
 * clients at once), each request's latency measured.
 */
import { intFromEnv } from '../lib/env.js';
import { fmtNum } from '../lib/format.js';

export const settings = {
  users: intFromEnv('BENCH_PUBLIC_USERS', 100_000, 1000, 1_000_000),
  requests: intFromEnv('BENCH_PUBLIC_REQUESTS', 400, 20, 100_000),
};

export interface Scenario {
  name: string;
  url: (i: number) => string;
  concurrency: number;
  /** Judged against the goal (p95 < 50 ms, one request at a time). */
  goal: boolean;
}

export const searchUrl = (term: string, i: number): string => `/v1/public/users?search=${encodeURIComponent(term)}&sort=${(i * 7) % 3 === 0 ? 'new' : 'top'}`;

export function scenarios(words: readonly string[]): Scenario[] {
  const shortWords = words.filter((w) => w.length <= 2);
  return [
    { name: 'sort-top', url: (i) => `/v1/public/users?sort=top&page=${1 + ((i * 37) % 200)}&limit=24${i % 2 ? '&verified=1' : ''}`, concurrency: 1, goal: true },
    { name: 'sort-new', url: (i) => `/v1/public/users?sort=new&page=${1 + ((i * 53) % 200)}&limit=24${i % 2 ? '&verified=true' : ''}`, concurrency: 1, goal: true },
    { name: 'search', url: (i) => searchUrl(words[i % words.length]!, i), concurrency: 1, goal: true },
    { name: 'search, terms of 1-2 chars', url: (i) => searchUrl(shortWords[i % shortWords.length]!, i), concurrency: 1, goal: false },
    { name: 'search, 8 at a time', url: (i) => searchUrl(words[i % words.length]!, i), concurrency: 8, goal: false },
  ];
}

export interface ScenarioResult {
  scenario: Scenario;
  /** Latencies in ms, ascending. */
  times: number[];
  rate: number;
  failures: number;
}

/** 20 warm-up requests, then settings.requests, `concurrency` clients each sending its next request when its last one is answered. */
export async function runScenario(base: string, scenario: Scenario): Promise<ScenarioResult> {
  const { url, concurrency } = scenario;
  for (let i = 0; i < 20; i += 1) await (await fetch(base + url(i))).arrayBuffer();
  const times: number[] = [];
  const slowest: { ms: number; url: string }[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < settings.requests; i = next++) {
        const t0 = performance.now();
        const res = await fetch(base + url(i));
        await res.arrayBuffer();
        const ms = performance.now() - t0;
        times.push(ms);
        slowest.push({ ms, url: url(i) });
        if (res.status !== 200) failures += 1;
      }
    }),
  );
  const rate = settings.requests / ((performance.now() - started) / 1000);
  slowest.sort((a, b) => b.ms - a.ms);
  console.log(`[public] ${scenario.name}: slowest ${slowest.slice(0, 5).map((s) => `${fmtNum(s.ms)} ms ${s.url}`).join(', ')}`);
  return { scenario, times: times.sort((a, b) => a - b), rate, failures };
}
