/**
 * `npm run bench:public` (through `bench/run.sh bench/public-users.ts`: Postgres, Redis and the
 * migrated bench database): the public user listing of issue 9 on 100,000 users, through
 * the HTTP API with the answer cache off (every request runs its queries).
 *
 * Seeds BENCH_PUBLIC_USERS (100,000) users in one INSERT ... SELECT (the triggers build
 * `public_profiles`), 90% verified, 2% staff, suspended or closed, then gives 30% of the
 * profiles a completed-escrow count (a direct counter update: the bench measures the
 * listing queries, not escrow creation; ratings are left empty). Starts the API in this
 * process on loopback (createApp, HTTP through node:http) and sends BENCH_PUBLIC_REQUESTS
 * (400) sequential requests per scenario, measuring each request's latency:
 *
 * - sort-top / sort-new: `?sort=top|new&page=<1..200>&limit=24` (verified filter on every other);
 * - search: `?search=<term>&sort=<top|new>` over a fixed list of terms people type (first
 *   names, surnames, a miss) and 200 terms drawn from the listed profiles: 2 to 8 characters
 *   cut at random from a username or a lowercased name (a fixed seed, so runs compare), one in
 *   ten of them turned into a miss. Also reported apart: the terms of 1 or 2 characters (no trigram
 *   to use), and the slowest search requests.
 *
 * - search, 8 at a time: the search terms from 8 clients at once (2 cores: the queue shows).
 *
 * Reports requests/s and p50/p95/max per scenario (goal: p95 under 50 ms) and writes them to bench/README.md
 * between the `public-results` markers (through a temporary file and a rename).
 */
import { rename, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gitRevision, intFromEnv, ROOT } from './procs.js';

process.env.PUBLIC_RATE_LIMIT_PER_MINUTE = '1000000000';
process.env.PUBLIC_CACHE = '0';

const USERS = intFromEnv('BENCH_PUBLIC_USERS', 100_000, 1000, 1_000_000);
const REQUESTS = intFromEnv('BENCH_PUBLIC_REQUESTS', 400, 20, 100_000);
const README = path.join(ROOT, 'bench', 'README.md');
const START = '<!-- public-results:start -->';
const END = '<!-- public-results:end -->';

const { db } = await import('../shared/db.js');
const { redis } = await import('../shared/redis.js');
const { createApp } = await import('../api/app.js');
const { publicSettings } = await import('../shared/public/service.js');
publicSettings.cache = false;

async function seed(): Promise<void> {
  const [row] = await db('users').count<{ n: string }[]>('* as n');
  const n = Number(row?.n ?? 0);
  if (n >= USERS) {
    console.log(`[public] ${n} users already seeded`);
    return;
  }
  console.log(`[public] seeding ${USERS} users`);
  const started = Date.now();
  await db.raw(
    `INSERT INTO users (email, username, full_name, password_hash, role, status, email_verified_at, created_at, updated_at)
     SELECT 'bench' || i || '@example.com', 'bench_' || substr(md5(i::text), 1, 8) || '_' || i,
            (ARRAY['Budi','Siti','Agus','Dewi','Rina','Joko','Wati','Eko','Putri','Andi'])[1 + i % 10] || ' ' ||
            (ARRAY['Santoso','Wijaya','Pratama','Lestari','Hidayat','Saputra','Kusuma','Nugroho'])[1 + (i / 10) % 8] || ' ' || i,
            NULL,
            CASE WHEN i % 100 = 0 THEN 'admin' ELSE 'user' END,
            CASE WHEN i % 100 = 1 THEN 'suspended' WHEN i % 100 = 2 THEN 'closed' ELSE 'active' END,
            CASE WHEN i % 10 = 0 THEN NULL ELSE now() END,
            now() - (i || ' minutes')::interval, now()
     FROM generate_series(1, ?) AS i
     ON CONFLICT DO NOTHING`,
    [USERS],
  );
  await db.raw(`UPDATE public_profiles SET completed_count = (abs(hashtext(user_id::text)) % 40) WHERE abs(hashtext(user_id::text)) % 10 < 3`);
  console.log(`[public] seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

await seed();
// Production runs autovacuum; the seed's fresh rows get their visibility map and statistics here.
await db.raw('VACUUM ANALYZE users');
await db.raw('VACUUM ANALYZE public_profiles');
const handle = createApp().callback();
const server = createServer((req, res) => void handle(req, res));
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** mulberry32: a small seeded generator, so every run draws the same terms. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(20261123);
const sample = await db('public_profiles')
  .where({ listed: true })
  .whereRaw('abs(hashtext(user_id::text)) % 97 = 0')
  .orderBy('user_id')
  .limit(200)
  .select<{ username: string; full_name: string }[]>('username', 'full_name');
const drawn = sample.map((p) => {
  const source = random() < 0.5 ? p.username : p.full_name.toLowerCase();
  const length = 2 + Math.floor(random() * 7);
  const from = Math.floor(random() * Math.max(1, source.length - length + 1));
  const term = source.slice(from, from + length).trim() || source.slice(0, 2);
  return random() < 0.1 ? `${term}q` : term; // 'q' is in no name and in no md5 hex
});
const words = ['budi', 'siti', 'santoso', 'wijaya', 'bench_a', 'bench_1', 'ra', 'put', 'kusuma 12', 'eko', 'zzz', 'joko pratama', ...drawn];
const searchUrl = (term: string, i: number) => `/v1/public/users?search=${encodeURIComponent(term)}&sort=${(i * 7) % 3 === 0 ? 'new' : 'top'}`;
const shortWords = words.filter((w) => w.length <= 2);
const scenarios: { name: string; url: (i: number) => string; concurrency: number }[] = [
  { name: 'sort-top', url: (i) => `/v1/public/users?sort=top&page=${1 + ((i * 37) % 200)}&limit=24${i % 2 ? '&verified=1' : ''}`, concurrency: 1 },
  { name: 'sort-new', url: (i) => `/v1/public/users?sort=new&page=${1 + ((i * 53) % 200)}&limit=24${i % 2 ? '&verified=true' : ''}`, concurrency: 1 },
  { name: 'search', url: (i) => searchUrl(words[i % words.length]!, i), concurrency: 1 },
  { name: 'search, terms of 1-2 chars', url: (i) => searchUrl(shortWords[i % shortWords.length]!, i), concurrency: 1 },
  { name: 'search, 8 at a time', url: (i) => searchUrl(words[i % words.length]!, i), concurrency: 8 },
];

const rows: string[] = [];
const load = os.loadavg().map((l) => l.toFixed(2)).join(' / ');
for (const { name, url, concurrency } of scenarios) {
  for (let i = 0; i < 20; i += 1) await (await fetch(base + url(i))).arrayBuffer(); // warm-up
  const times: number[] = [];
  const slowest: { ms: number; url: string }[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  // `concurrency` clients, each sending its next request when its last one is answered.
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < REQUESTS; i = next++) {
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
  const rate = REQUESTS / ((performance.now() - started) / 1000);
  times.sort((a, b) => a - b);
  slowest.sort((a, b) => b.ms - a.ms);
  console.log(`[public] ${name}: slowest ${slowest.slice(0, 5).map((s) => `${s.ms.toFixed(1)} ms ${s.url}`).join(', ')}`);
  const line = `| ${name} | ${REQUESTS} | ${rate.toFixed(0)} | ${pct(times, 50).toFixed(1)} | ${pct(times, 95).toFixed(1)} | ${times[times.length - 1]!.toFixed(1)} | ${failures} |`;
  console.log(line);
  rows.push(line);
}

const section = [
  `Run ${new Date().toISOString()} at ${gitRevision()}: ${USERS.toLocaleString('en')} users (vacuumed and analysed), answer cache off, ${words.length} search terms (${shortWords.length} of 1 or 2 characters), one request at a time unless the scenario says otherwise, on loopback (tsx, in-process API); load average before/while: ${load}.`,
  '',
  '| scenario | requests | requests/s | p50 ms | p95 ms | max ms | non-200 |',
  '|---|---|---|---|---|---|---|',
  ...rows,
].join('\n');
let text = await readFile(README, 'utf8');
const from = text.indexOf(START);
const to = text.indexOf(END);
text = from >= 0 && to > from ? text.slice(0, from) + `${START}\n${section}\n${END}` + text.slice(to + END.length) : `${text.replace(/\s*$/, '\n\n')}## Public users (issue 9)\n\n${START}\n${section}\n${END}\n`;
const tmp = `${README}.tmp-public`;
await writeFile(tmp, text);
await rename(tmp, README);

server.closeAllConnections();
server.close();
await db.destroy();
redis.disconnect();
// createApp's stream hub and queues keep their own Redis connections open: end here.
process.exit(0);
