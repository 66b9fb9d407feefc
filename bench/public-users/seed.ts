/**
 * The public listing's data, in the bench database: BENCH_PUBLIC_USERS (100,000) users in
 * one INSERT ... SELECT (the triggers build `public_profiles`), 90% verified, 2% staff,
 * suspended or closed; 30% of the profiles get a completed-escrow count (a direct counter
 * update: the bench measures the listing queries, not escrow creation; ratings stay empty).
 * Then VACUUM ANALYZE (production runs autovacuum; this server does not). Also the search
 * terms: 12 fixed ones people type, and 200 drawn from the listed profiles with a fixed seed.
 */
import { benchDb } from '../lib/db.js';

/** Seeds the users unless the database already holds as many; returns the seconds it took (0 when it did nothing). */
export async function seedUsers(users: number): Promise<number> {
  const db = await benchDb();
  const [row] = await db('users').count<{ n: string }[]>('* as n');
  const n = Number(row?.n ?? 0);
  if (n >= users) {
    console.log(`[public] ${n} users already seeded`);
    return 0;
  }
  console.log(`[public] seeding ${users} users`);
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
    [users],
  );
  await db.raw(`UPDATE public_profiles SET completed_count = (abs(hashtext(user_id::text)) % 40) WHERE abs(hashtext(user_id::text)) % 10 < 3`);
  const seconds = (Date.now() - started) / 1000;
  console.log(`[public] seeded in ${seconds.toFixed(1)} s`);
  return seconds;
}

/** Production runs autovacuum; the seed's fresh rows get their visibility map and statistics here. */
export async function vacuum(): Promise<void> {
  const db = await benchDb();
  await db.raw('VACUUM ANALYZE users');
  await db.raw('VACUUM ANALYZE public_profiles');
}

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

/**
 * The search terms: 12 fixed ones (first names, surnames, a miss) and 200 drawn from the
 * listed profiles — 2 to 8 characters cut at random from a username or a lowercased name,
 * one in ten turned into a miss (a trailing 'q', in no name and no md5 hex).
 */
export async function searchTerms(): Promise<string[]> {
  const db = await benchDb();
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
    return random() < 0.1 ? `${term}q` : term;
  });
  return ['budi', 'siti', 'santoso', 'wijaya', 'bench_a', 'bench_1', 'ra', 'put', 'kusuma 12', 'eko', 'zzz', 'joko pratama', ...drawn];
}
