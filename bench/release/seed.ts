/**
 * The buyers and the `sent` escrows of the release-flow bench, in the bench database.
 * `seedRelease()` runs this file as a script (`tsx bench/release/seed.ts <out.json> <buyers>
 * <escrows>`, with DATABASE_URL, REDIS_URL and QUEUE_PREFIX as bench/run.sh sets them) and
 * reads back what it wrote:
 *
 * - `buyers` users `bench_release_u0001`… (found by e-mail, created when missing), each with a
 *   fresh personal key. User i buys from user i+1 (wrapping), so every user is also a seller;
 * - `escrows` escrows in `sent`, the state a buyer confirms receipt from, each made through
 *   the service exactly as the API walks it there: `createDirect` as the buyer (the escrow,
 *   its `escrow.created` event, the notice and the expiry timer), `markPaid` (the
 *   compare-and-set, the `escrow_payment` posting gateway clearing -> the escrow's account,
 *   so the escrow's money is held in the ledger, the `payment.completed` event, the notices),
 *   then `send` as the seller without tracking (the compare-and-set, `escrow.sent`, the
 *   buyer's notice and the auto-release timer). `sent` escrows of this bench left by earlier
 *   runs (a run consumes only what it reaches) are reused first; only the missing ones are
 *   made. Escrow k of a new batch is bought by user k mod buyers; amounts 150,000 to
 *   1,100,000 (k mod 20 steps of 50,000), so the fee is sometimes its Rp2.000 floor and
 *   sometimes 1%; categories cycle.
 * - the escrows handed back are ordered round-robin over the buyers, so consecutive flows
 *   have different buyers;
 * - the rate-limit counters under this run's queue prefix (the API's and the floor's) are
 *   deleted, then `VACUUM (ANALYZE)` of the tables the flow writes (autovacuum is off on the
 *   development server).
 */
import { writeFile } from 'node:fs/promises';
import { benchDb, closeBenchDb, deleteRedisKeys, inPool, intArg, refuseUnlessBenchDatabase, ringOfBuyers } from '../lib/db.js';
import { isMain, runJsonScript } from '../lib/procs.js';

export interface ReleaseItem {
  escrowId: string;
  /** Index into `buyers`. */
  buyer: number;
  sellerId: string;
  amount: number;
}

export interface ReleaseSeed {
  buyers: { id: string; key: string }[];
  items: ReleaseItem[];
  /** Escrows made by this seed run (the rest were left `sent` by earlier runs). */
  created: number;
  seconds: number;
}

export async function seedRelease(env: NodeJS.ProcessEnv, buyers: number, escrows: number): Promise<ReleaseSeed> {
  const seed = await runJsonScript<ReleaseSeed>('bench/release/seed.ts', [String(buyers), String(escrows)], env, 3_600_000);
  if (seed.items.length !== escrows || seed.buyers.length !== buyers) throw new Error('seed wrote fewer escrows or buyers than asked');
  return seed;
}

// ---- The script ------------------------------------------------------------------------

const PARALLEL = 8;
const ITEM_PREFIX = 'Bench release flow';
const VACUUMED = ['outbox', 'escrows', 'escrow_events', 'ledger_accounts', 'journal_entries', 'journal_lines', 'idempotency_keys', 'users', 'settings'];

async function main(): Promise<void> {
  const [out, buyersArg, escrowsArg] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/release/seed.ts <out.json> <buyers> <escrows>');
  const buyerCount = intArg(buyersArg, 'buyers', 2, 9999);
  const escrowCount = intArg(escrowsArg, 'escrows', 2, 500_000);
  refuseUnlessBenchDatabase(/_bench$/, 'seed');
  const { config } = await import('../../shared/config.js');
  const { createDirect, markPaid, send } = await import('../../shared/escrows/service.js');
  const db = await benchDb();
  const started = Date.now();

  const { names, ids, buyers } = await ringOfBuyers('bench_release_u', 'Bench releaser', buyerCount);
  const index = new Map(ids.map((id, i) => [id, i]));

  // `sent` escrows of earlier runs, bought by these buyers from their next user.
  const left = await db('escrows')
    .whereIn('buyer_id', ids)
    .where({ status: 'sent' })
    .where('item_name', 'like', `${ITEM_PREFIX} %`)
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select<{ id: string; buyer_id: string; seller_id: string; amount: number }[]>('id', 'buyer_id', 'seller_id', 'amount');
  const reused: ReleaseItem[] = left
    .filter((e) => e.seller_id === ids[(index.get(e.buyer_id)! + 1) % buyerCount])
    .slice(0, escrowCount)
    .map((e) => ({ escrowId: e.id, buyer: index.get(e.buyer_id)!, sellerId: e.seller_id, amount: Number(e.amount) }));

  const missing = escrowCount - reused.length;
  const stamp = new Date().toISOString();
  const made = await inPool(
    Array.from({ length: missing }, (_, k) => k),
    PARALLEL,
    async (k): Promise<ReleaseItem> => {
      const b = k % buyerCount;
      const s = (b + 1) % buyerCount;
      const created = await createDirect(undefined, { userId: ids[b]!, role: 'user' }, {
        role: 'buyer',
        counterparty_username: names[s]!,
        item_name: `${ITEM_PREFIX} ${stamp} #${k + 1}`,
        description: k % 2 === 0 ? '' : 'Seeded by bench/release/seed.ts',
        amount: 150_000 + 50_000 * (k % 20),
        category: (['goods', 'service', 'digital'] as const)[k % 3],
      });
      await markPaid(undefined, created.id, { reference: `bench-release-${created.id}`, provider: 'bench' });
      const sent = await send(undefined, { userId: ids[s]!, role: 'user' }, created.id, {});
      if (sent.status !== 'sent') throw new Error(`seed: escrow ${created.id} is ${sent.status}, not sent`);
      return { escrowId: sent.id, buyer: b, sellerId: sent.seller_id, amount: sent.amount };
    },
  );

  // Round-robin over the buyers: consecutive flows have different buyers.
  const byBuyer = new Map<number, ReleaseItem[]>();
  for (const it of [...reused, ...made]) byBuyer.set(it.buyer, [...(byBuyer.get(it.buyer) ?? []), it]);
  const queues = [...byBuyer.values()];
  const items: ReleaseItem[] = [];
  for (let round = 0; items.length < escrowCount; round++) for (const q of queues) if (q[round]) items.push(q[round]!);

  await db.raw(`VACUUM (ANALYZE) ${VACUUMED.join(', ')}`);
  const p = config.queuePrefix;
  const cleared = await deleteRedisKeys([`${p}:rl:*`, `${p}:authfail:*`, `${p}:floor:*`]);
  const seed: ReleaseSeed = { buyers, items, created: made.length, seconds: (Date.now() - started) / 1000 };
  await writeFile(out, JSON.stringify(seed), { mode: 0o600 });
  console.log(
    `seed-release: ${buyerCount} buyers with fresh keys, ${escrowCount} sent escrows (${reused.length} left by earlier runs, ${made.length} made now), ` +
      `${cleared} Redis counters cleared (${seed.seconds.toFixed(1)} s)`,
  );
}

if (isMain(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    console.error(`seed-release failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  } finally {
    await closeBenchDb();
  }
}
