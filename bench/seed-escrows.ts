/**
 * `tsx bench/seed-escrows.ts <out.json> <readers> <escrowsPerReader> <writers>`: the callers
 * and escrows of bench/escrows.ts, in the bench database (DATABASE_URL, REDIS_URL and
 * QUEUE_PREFIX as bench/run.sh sets them).
 *
 * - `readers` users `bench_esc_r0001`…, each with a fresh personal key. Reader i is the
 *   buyer of `escrowsPerReader` escrows whose seller is reader i+1 (wrapping), so every
 *   reader is a party to 2 × escrowsPerReader escrows (its own as buyer, its
 *   predecessor's as seller). The escrows are made through the service, as the API makes
 *   them: `createDirect` (escrow row, `escrow.created` event, outbox rows for the notice
 *   and the expiry timer, one transaction), and every second one is then paid with
 *   `markPaid` (the compare-and-set, the ledger posting gateway clearing -> escrow, the
 *   `payment.completed` event, two notice rows), so rows and ledger are real.
 * - `writers` users `bench_esc_w0001`…, each with a fresh personal key: the callers of the
 *   `POST /api/escrows` scenario. Their escrows pile up run after run, so they are kept
 *   apart from the readers, whose lists must stay the same size between runs.
 *
 * Idempotent: users are found by e-mail and created only when missing (ledger accounts
 * and escrow events are append-only, so nothing is deleted); their keys are replaced;
 * a reader's escrows are created only up to `escrowsPerReader` (the ones of earlier runs
 * are reused, whatever their status). The Redis counters of the authenticated path and
 * of the public per-IP limit are deleted.
 *
 * Writes `EscrowSeed` to the output file (mode 0600; plaintext keys of a throwaway database).
 */
import { writeFile } from 'node:fs/promises';
import { config } from '../shared/config.js';
import { db } from '../shared/db.js';
import { redis } from '../shared/redis.js';
import { insertKey } from '../shared/auth/api-keys.js';
import { createDirect, markPaid } from '../shared/escrows/service.js';

export interface SeedUser {
  id: string;
  username: string;
  /** Plaintext personal key. */
  key: string;
}

export interface SeedEscrow {
  id: string;
  /** Index into `readers` of the buyer (the seller is the next reader, wrapping). */
  buyer: number;
  sellerId: string;
  status: string;
}

export interface EscrowSeed {
  readers: SeedUser[];
  writers: SeedUser[];
  /** Every reader's escrows as buyer, `escrowsPerReader` each, grouped by reader in order. */
  escrows: SeedEscrow[];
  perReader: number;
  /** Escrows and paid escrows created by this seed run (0 when earlier runs made them all). */
  created: number;
  paid: number;
  /** Rows in the outbox after seeding (nothing relays them: no worker runs in the bench). */
  outboxRows: number;
}

const EMAIL_DOMAIN = 'bench.invalid';
const ITEM_PREFIX = 'Bench escrow';
const AMOUNT = 150_000;
const PARALLEL = 6;

type IdEmail = { id: string; email: string };

async function upsertUsers(usernames: string[], label: string): Promise<string[]> {
  const now = new Date();
  const rows = usernames.map((username, i) => ({
    email: `${username}@${EMAIL_DOMAIN}`,
    username,
    full_name: `Bench ${label} ${i + 1}`,
    kyc_status: i % 3 === 0 ? 'verified' : 'unverified',
    email_verified_at: now,
    created_at: now,
    updated_at: now,
  }));
  const emails = rows.map((r) => r.email);
  const existing = await db('users').whereIn('email', emails).select<IdEmail[]>('id', 'email');
  const idByEmail = new Map(existing.map((r) => [r.email, r.id]));
  const missing = rows.filter((r) => !idByEmail.has(r.email));
  for (let i = 0; i < missing.length; i += 200) {
    const created = await db('users')
      .insert(missing.slice(i, i + 200))
      .returning<IdEmail[]>(['id', 'email']);
    for (const r of created) idByEmail.set(r.email, r.id);
  }
  // A previous run (or a manual test) may have suspended someone or made them staff.
  await db('users').whereIn('email', emails).update({ status: 'active', role: 'user' });
  return rows.map((r) => {
    const id = idByEmail.get(r.email);
    if (!id) throw new Error(`seed: user ${r.email} was not created`);
    return id;
  });
}

async function withKeys(ids: string[], usernames: string[]): Promise<SeedUser[]> {
  const out: SeedUser[] = [];
  await db.transaction(async (trx) => {
    await trx('api_keys').whereIn('user_id', ids).delete();
    for (const [i, id] of ids.entries()) {
      out.push({ id, username: usernames[i]!, key: (await insertKey(trx, id, 'bench', '127.0.0.1')).plaintext });
    }
  });
  return out;
}

async function clearCounters(): Promise<number> {
  // The service's own client (shared/redis.ts connects when imported, through the outbox's
  // queue module): closed in main's finally, or the process would not exit.
  let deleted = 0;
  for (const pattern of [`${config.queuePrefix}:rl:authenticated:*`, `${config.queuePrefix}:authfail:*`, `${config.queuePrefix}:rl:public:*`]) {
    let cursor = '0';
    do {
      const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = nextCursor;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  }
  return deleted;
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item);
    }
  });
  await Promise.all(runners);
}

function positiveInt(raw: string | undefined, name: string, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`${name} must be an integer in 1..${max}`);
  return n;
}

async function main(): Promise<void> {
  const [out, readersArg, perArg, writersArg] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/seed-escrows.ts <out.json> <readers> <escrowsPerReader> <writers>');
  const readerCount = positiveInt(readersArg, 'readers', 9999);
  const perReader = positiveInt(perArg, 'escrowsPerReader', 50);
  const writerCount = positiveInt(writersArg, 'writers', 9999);
  if (readerCount < 3) throw new Error('readers must be at least 3 (a stranger to an escrow is needed for the checks)');
  if (!/_bench$/.test(new URL(config.databaseUrl).pathname)) {
    throw new Error(`seed: refusing to write to ${new URL(config.databaseUrl).pathname.slice(1)}; the bench seeds only a *_bench database`);
  }
  const started = Date.now();
  const pad = (i: number) => String(i + 1).padStart(4, '0');
  const readerNames = Array.from({ length: readerCount }, (_, i) => `bench_esc_r${pad(i)}`);
  const writerNames = Array.from({ length: writerCount }, (_, i) => `bench_esc_w${pad(i)}`);
  const readerIds = await upsertUsers(readerNames, 'reader');
  const writerIds = await upsertUsers(writerNames, 'writer');
  const readers = await withKeys(readerIds, readerNames);
  const writers = await withKeys(writerIds, writerNames);

  // The seeded escrows of earlier runs, per buyer.
  const existing = await db('escrows')
    .whereIn('buyer_id', readerIds)
    .where('item_name', 'like', `${ITEM_PREFIX} %`)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select<{ id: string; buyer_id: string; seller_id: string; status: string }[]>('id', 'buyer_id', 'seller_id', 'status');
  const byBuyer = new Map<string, typeof existing>();
  for (const e of existing) {
    const list = byBuyer.get(e.buyer_id) ?? [];
    list.push(e);
    byBuyer.set(e.buyer_id, list);
  }

  let created = 0;
  let paid = 0;
  const escrows: SeedEscrow[][] = readers.map(() => []);
  await pool(
    readers.map((r, i) => ({ r, i })),
    PARALLEL,
    async ({ r, i }) => {
      const seller = readers[(i + 1) % readers.length]!;
      const mine = (byBuyer.get(r.id) ?? []).slice(0, perReader);
      for (const e of mine) escrows[i]!.push({ id: e.id, buyer: i, sellerId: e.seller_id, status: e.status });
      for (let k = mine.length; k < perReader; k++) {
        const actor = { userId: r.id, role: 'user' as const };
        let e = await createDirect(undefined, actor, {
          role: 'buyer',
          counterparty_username: seller.username,
          item_name: `${ITEM_PREFIX} ${i + 1}.${k + 1}`,
          description: k % 2 === 0 ? '' : `Seeded by bench/seed-escrows.ts for reader ${i + 1}`,
          amount: AMOUNT + 1000 * k,
          category: (['goods', 'service', 'digital'] as const)[k % 3],
        });
        created++;
        if (k % 2 === 1) {
          e = await markPaid(undefined, e.id, { reference: `bench-seed-${e.id}`, provider: 'bench' });
          paid++;
        }
        escrows[i]!.push({ id: e.id, buyer: i, sellerId: e.seller_id, status: e.status });
      }
    },
  );

  const [{ count: outboxRows } = { count: '0' }] = await db('outbox').count<{ count: string }[]>('* as count');
  const cleared = await clearCounters();
  const seed: EscrowSeed = {
    readers,
    writers,
    escrows: escrows.flat(),
    perReader,
    created,
    paid,
    outboxRows: Number(outboxRows),
  };
  await writeFile(out, JSON.stringify(seed), { mode: 0o600 });
  console.log(
    `seed-escrows: ${readerCount} readers (${perReader} escrows each as buyer; ${created} created now, ${paid} of them paid), ` +
      `${writerCount} writers, fresh keys for all, ${cleared} Redis counters cleared, ${seed.outboxRows} outbox rows ` +
      `(${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
}

try {
  await main();
} catch (err) {
  console.error(`seed-escrows failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
} finally {
  await db.destroy();
  redis.disconnect();
}
