/**
 * The buyers and the `pending_payment` escrows of the pay-flow bench, in the bench database.
 * `seedPay()` runs this file as a script (`tsx bench/pay/seed.ts <out.json> <buyers>
 * <escrows>`, with DATABASE_URL, REDIS_URL and QUEUE_PREFIX as bench/run.sh sets them and
 * SANDBOX_MODE on) and reads back what it wrote:
 *
 * - the sandbox gateway row (every method, fee 0.7%, enabled), as test/factories/payments.ts
 *   `createGateway` makes it (and bench/payments/seed.ts), enabled again if someone turned it off;
 * - `buyers` users `bench_payflow_u0001`… (found by e-mail, created when missing), each with
 *   a fresh personal key;
 * - `escrows` new escrows made through the service as the API makes them (`createDirect` as
 *   the buyer: the escrow, its `escrow.created` event, the notice and expiry-timer outbox
 *   rows), escrow k bought by user k mod buyers from the next user: consecutive flows have
 *   different buyers. Every run makes new ones (a paid escrow cannot be paid again);
 * - before seeding, the outbox rows of earlier runs that are done with (completed rows, as
 *   the worker's sweeper would delete them after its retention, and the expiry timers of
 *   escrows no longer pending_payment), as bench/payments/seed.ts does; the rate-limit
 *   counters under this run's queue prefix are deleted;
 * - then `VACUUM (ANALYZE)` of the tables the flow writes (autovacuum is off on this server).
 */
import { writeFile } from 'node:fs/promises';
import { benchDb, closeBenchDb, deleteRedisKeys, inPool, intArg, refuseUnlessBenchDatabase, ringOfBuyers } from '../lib/db.js';
import { isMain, runJsonScript } from '../lib/procs.js';

export const METHODS = ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'] as const;

export interface PayItem {
  escrowId: string;
  /** Index into `buyers`. */
  buyer: number;
  method: (typeof METHODS)[number];
}

export interface PaySeed {
  buyers: { id: string; key: string }[];
  items: PayItem[];
  gateway: 'created' | 'updated' | 'unchanged';
  purged: { completed: number; timers: number };
  /** Highest outbox id after seeding: rows above it are the load's. */
  outboxIdAfter: number;
  seconds: number;
}

export async function seedPay(env: NodeJS.ProcessEnv, buyers: number, escrows: number): Promise<PaySeed> {
  const seed = await runJsonScript<PaySeed>('bench/pay/seed.ts', [String(buyers), String(escrows)], env, 1_800_000);
  if (seed.items.length !== escrows || seed.buyers.length !== buyers) throw new Error('seed wrote fewer escrows or buyers than asked');
  return seed;
}

// ---- The script ------------------------------------------------------------------------

const PARALLEL = 8;
const VACUUMED = ['outbox', 'payments', 'payment_callbacks', 'sandbox_charges', 'escrows', 'escrow_events', 'ledger_accounts', 'journal_entries', 'journal_lines', 'idempotency_keys', 'notifications', 'users'];

async function ensureSandboxGateway(): Promise<PaySeed['gateway']> {
  const db = await benchDb();
  const now = new Date();
  const row = (await db('payment_gateways').where({ provider: 'sandbox' }).first()) as
    | { enabled: boolean; in_maintenance: boolean; is_manual: boolean; supported_methods: string[] }
    | undefined;
  if (!row) {
    await db('payment_gateways').insert({
      provider: 'sandbox',
      display_name: 'sandbox',
      supported_methods: [...METHODS],
      is_manual: false,
      enabled: true,
      in_maintenance: false,
      config: null,
      fee_percent: '0.7',
      fee_fixed: 0,
      sort_order: 0,
      created_at: now,
      updated_at: now,
    });
    return 'created';
  }
  if (row.enabled && !row.in_maintenance && !row.is_manual && METHODS.every((m) => row.supported_methods.includes(m))) return 'unchanged';
  await db('payment_gateways').where({ provider: 'sandbox' }).update({ enabled: true, in_maintenance: false, is_manual: false, supported_methods: [...METHODS], updated_at: now });
  return 'updated';
}

async function main(): Promise<void> {
  const [out, buyersArg, escrowsArg] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/pay/seed.ts <out.json> <buyers> <escrows>');
  const buyerCount = intArg(buyersArg, 'buyers', 2, 9999);
  const escrowCount = intArg(escrowsArg, 'escrows', 2, 500_000);
  refuseUnlessBenchDatabase(/_bench$/, 'seed');
  const { config } = await import('../../shared/config.js');
  if (!config.sandboxMode) throw new Error('seed: SANDBOX_MODE is off; the sandbox gateway would not be loaded');
  const { createDirect } = await import('../../shared/escrows/service.js');
  const db = await benchDb();
  const started = Date.now();

  const [{ max } = { max: 0 }] = await db('outbox').max<{ max: number | null }[]>('id as max');
  const upTo = Number(max ?? 0);
  const completed = await db('outbox').where('id', '<=', upTo).whereNotNull('completed_at').delete();
  const timers = await db.raw<{ rowCount: number }>(
    `DELETE FROM outbox o WHERE o.id <= ? AND o.job = 'escrows.expire' AND o.relayed_at IS NULL AND o.dead_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM escrows e WHERE e.id = (o.payload->>'escrow_id')::uuid AND e.status = 'pending_payment')`,
    [upTo],
  );
  const gateway = await ensureSandboxGateway();

  const { names, ids, buyers } = await ringOfBuyers('bench_payflow_u', 'Bench payer', buyerCount);

  const stamp = new Date().toISOString();
  const items = await inPool(
    Array.from({ length: escrowCount }, (_, k) => k),
    PARALLEL,
    async (k): Promise<PayItem> => {
      const b = k % buyerCount;
      const escrow = await createDirect(undefined, { userId: ids[b]!, role: 'user' }, {
        role: 'buyer',
        counterparty_username: names[(b + 1) % buyerCount]!,
        item_name: `Bench pay flow ${stamp} #${k + 1}`,
        description: 'Seeded by bench/pay/seed.ts',
        amount: 100_000 + 1000 * (k % 50),
        category: (['goods', 'service', 'digital'] as const)[k % 3],
      });
      return { escrowId: escrow.id, buyer: b, method: METHODS[k % METHODS.length]! };
    },
  );

  await db.raw(`VACUUM (ANALYZE) ${VACUUMED.join(', ')}`);
  const [{ max: after } = { max: 0 }] = await db('outbox').max<{ max: number | null }[]>('id as max');
  const p = config.queuePrefix;
  const cleared = await deleteRedisKeys([`${p}:rl:*`, `${p}:authfail:*`, `${p}:floor:*`]);
  const seed: PaySeed = { buyers, items, gateway, purged: { completed, timers: Number(timers.rowCount) }, outboxIdAfter: Number(after ?? 0), seconds: (Date.now() - started) / 1000 };
  await writeFile(out, JSON.stringify(seed), { mode: 0o600 });
  console.log(
    `seed-pay: ${buyerCount} buyers with fresh keys, ${escrowCount} pending_payment escrows, gateway row ${gateway}, ` +
      `${completed} completed outbox rows and ${seed.purged.timers} timers of settled escrows purged, ${cleared} Redis counters cleared (${seed.seconds.toFixed(1)} s)`,
  );
}

if (isMain(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    console.error(`seed-pay failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  } finally {
    await closeBenchDb();
  }
}
