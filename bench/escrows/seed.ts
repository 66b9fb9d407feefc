/**
 * The callers and escrows of the escrow-routes bench, in the bench database.
 * `seedEscrows()` runs this file as a script (`tsx bench/escrows/seed.ts <out.json>
 * <readers> <escrowsPerReader> <writers>`, with DATABASE_URL, REDIS_URL and QUEUE_PREFIX as
 * bench/run.sh sets them) and reads back what it wrote:
 *
 * - `readers` users `bench_esc_r0001`…, each with a fresh personal key. Reader i is the
 *   buyer of `escrowsPerReader` escrows whose seller is reader i+1 (wrapping), so every
 *   reader is a party to 2 × escrowsPerReader escrows. The escrows are made through the
 *   service, as the API makes them: `createDirect` (escrow row, `escrow.created` event,
 *   outbox rows for the notice and the expiry timer, one transaction), and every second one
 *   is then paid with `markPaid` (the compare-and-set, the ledger posting gateway clearing ->
 *   escrow, the `payment.completed` event, two notice rows), so rows and ledger are real.
 * - `writers` users `bench_esc_w0001`…, each with a fresh personal key: the callers of the
 *   `POST /api/escrows` scenarios. Their escrows pile up run after run, so they are kept
 *   apart from the readers, whose lists must stay the same size between runs.
 *
 * Idempotent: users are found by e-mail and created only when missing (ledger accounts and
 * escrow events are append-only, so nothing is deleted); their keys are replaced; a
 * reader's escrows are created only up to `escrowsPerReader` (those of earlier runs are
 * reused, whatever their status). The Redis counters of the authenticated path and of the
 * public per-IP limit are deleted. Keys go to a temporary file (mode 0600).
 */
import { writeFile } from 'node:fs/promises';
import { BENCH_EMAIL_DOMAIN, benchDb, closeBenchDb, deleteRedisKeys, inPool, refuseUnlessBenchDatabase, upsertUsers } from '../lib/db.js';
import { isMain, runJsonScript } from '../lib/procs.js';

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

export async function seedEscrows(env: NodeJS.ProcessEnv, readers: number, perReader: number, writers: number): Promise<EscrowSeed> {
  const seed = await runJsonScript<EscrowSeed>('bench/escrows/seed.ts', [String(readers), String(perReader), String(writers)], env, 180_000);
  if (seed.readers.length !== readers || seed.writers.length !== writers || seed.escrows.length !== readers * perReader) {
    throw new Error('seed wrote fewer users or escrows than asked');
  }
  if (seed.escrows.every((e) => e.status !== 'paid')) throw new Error('no paid escrow to preview');
  return seed;
}

// ---- The script ------------------------------------------------------------------------

const ITEM_PREFIX = 'Bench escrow';
const AMOUNT = 150_000;
const PARALLEL = 6;

async function users(usernames: string[], label: string): Promise<string[]> {
  const now = new Date();
  const rows = usernames.map((username, i) => ({
    email: `${username}@${BENCH_EMAIL_DOMAIN}`,
    username,
    full_name: `Bench ${label} ${i + 1}`,
    kyc_status: i % 3 === 0 ? 'verified' : 'unverified',
    email_verified_at: now,
    created_at: now,
    updated_at: now,
  }));
  // A previous run (or a manual test) may have suspended someone or made them staff.
  return await upsertUsers(rows, { status: 'active', role: 'user' });
}

async function withKeys(ids: string[], usernames: string[]): Promise<SeedUser[]> {
  const { insertKey } = await import('../../shared/auth/api-keys.js');
  const out: SeedUser[] = [];
  await (await benchDb()).transaction(async (trx) => {
    await trx('api_keys').whereIn('user_id', ids).delete();
    for (const [i, id] of ids.entries()) out.push({ id, username: usernames[i]!, key: (await insertKey(trx, id, 'bench', '127.0.0.1')).plaintext });
  });
  return out;
}

function positiveInt(raw: string | undefined, name: string, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`${name} must be an integer in 1..${max}`);
  return n;
}

async function main(): Promise<void> {
  const [out, readersArg, perArg, writersArg] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/escrows/seed.ts <out.json> <readers> <escrowsPerReader> <writers>');
  const readerCount = positiveInt(readersArg, 'readers', 9999);
  const perReader = positiveInt(perArg, 'escrowsPerReader', 50);
  const writerCount = positiveInt(writersArg, 'writers', 9999);
  if (readerCount < 3) throw new Error('readers must be at least 3 (a stranger to an escrow is needed for the checks)');
  refuseUnlessBenchDatabase(/_bench$/, 'seed');
  const { config } = await import('../../shared/config.js');
  const { createDirect, markPaid } = await import('../../shared/escrows/service.js');
  const db = await benchDb();
  const started = Date.now();
  const pad = (i: number) => String(i + 1).padStart(4, '0');
  const readerNames = Array.from({ length: readerCount }, (_, i) => `bench_esc_r${pad(i)}`);
  const writerNames = Array.from({ length: writerCount }, (_, i) => `bench_esc_w${pad(i)}`);
  const readerIds = await users(readerNames, 'reader');
  const writerIds = await users(writerNames, 'writer');
  const readers = await withKeys(readerIds, readerNames);
  const writers = await withKeys(writerIds, writerNames);

  // The seeded escrows of earlier runs, per buyer.
  const existing = await db('escrows')
    .whereIn('buyer_id', readerIds)
    .where('item_name', 'like', `${ITEM_PREFIX} %`)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select<{ id: string; buyer_id: string; seller_id: string; status: string }[]>('id', 'buyer_id', 'seller_id', 'status');
  const byBuyer = new Map<string, typeof existing>();
  for (const e of existing) byBuyer.set(e.buyer_id, [...(byBuyer.get(e.buyer_id) ?? []), e]);

  let created = 0;
  let paid = 0;
  const escrows = await inPool(readers, PARALLEL, async (r, i) => {
    const seller = readers[(i + 1) % readers.length]!;
    const mine: SeedEscrow[] = (byBuyer.get(r.id) ?? []).slice(0, perReader).map((e) => ({ id: e.id, buyer: i, sellerId: e.seller_id, status: e.status }));
    for (let k = mine.length; k < perReader; k++) {
      const actor = { userId: r.id, role: 'user' as const };
      let e = await createDirect(undefined, actor, {
        role: 'buyer',
        counterparty_username: seller.username,
        item_name: `${ITEM_PREFIX} ${i + 1}.${k + 1}`,
        description: k % 2 === 0 ? '' : `Seeded by bench/escrows/seed.ts for reader ${i + 1}`,
        amount: AMOUNT + 1000 * k,
        category: (['goods', 'service', 'digital'] as const)[k % 3],
      });
      created++;
      if (k % 2 === 1) {
        e = await markPaid(undefined, e.id, { reference: `bench-seed-${e.id}`, provider: 'bench' });
        paid++;
      }
      mine.push({ id: e.id, buyer: i, sellerId: e.seller_id, status: e.status });
    }
    return mine;
  });

  const [{ count: outboxRows } = { count: '0' }] = await db('outbox').count<{ count: string }[]>('* as count');
  const p = config.queuePrefix;
  const cleared = await deleteRedisKeys([`${p}:rl:authenticated:*`, `${p}:authfail:*`, `${p}:rl:public:*`]);
  const seed: EscrowSeed = { readers, writers, escrows: escrows.flat(), perReader, created, paid, outboxRows: Number(outboxRows) };
  await writeFile(out, JSON.stringify(seed), { mode: 0o600 });
  console.log(
    `seed-escrows: ${readerCount} readers (${perReader} escrows each as buyer; ${created} created now, ${paid} of them paid), ` +
      `${writerCount} writers, fresh keys for all, ${cleared} Redis counters cleared, ${seed.outboxRows} outbox rows ` +
      `(${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
}

if (isMain(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    console.error(`seed-escrows failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  } finally {
    await closeBenchDb();
  }
}
