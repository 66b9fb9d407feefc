/**
 * The pending sandbox payment links of the payments bench, in its own database
 * `<bench db>_payments`. `seedPayments()` runs this file as a script (`tsx
 * bench/payments/seed.ts <out.json> <users> <warmupOrders> <orders>`, with DATABASE_URL,
 * REDIS_URL and QUEUE_PREFIX as main.ts sets them; SANDBOX_MODE is on) and reads back:
 *
 * - The sandbox gateway row (`payment_gateways`, provider `sandbox`, every method, fee
 *   0.7%, enabled), made as test/factories/payments.ts `createGateway` makes it when
 *   missing, and enabled again when a previous run (or a person) turned it off.
 * - `users` users `bench_pay_u0001`… (found by e-mail, created when missing; they need no
 *   keys: callbacks carry a gateway signature, not a user's credentials).
 * - `warmupOrders + orders` escrows, each made through the service as the API makes them
 *   (`createDirect` as the buyer, user i buying from user i+1) and then given a payment
 *   link with `pay()` (method cycling through qris, bank_transfer, gopay, shopeepay,
 *   crypto; provider `sandbox`), so every escrow is `pending_payment` with exactly one
 *   `pending` payment and one `sandbox_charges` row. The warm-up links come first. Every
 *   run makes new ones: a paid link cannot be paid again.
 * - Before seeding, the outbox rows of earlier runs are purged, so every run starts from the
 *   same outbox instead of one that grows by about six rows per payment per run: completed
 *   rows (what the worker's sweeper deletes after its 7-day retention; the bench compresses
 *   time) and the unrelayed `escrows.expire` timers of escrows that are no longer
 *   `pending_payment` (they would do nothing when they fell due, a day later).
 * - The Redis keys of earlier runs under this bench's own queue prefix are deleted (BullMQ
 *   would take a recreated database's `outbox-<id>` jobs for its old, completed ones).
 * - Then `VACUUM (ANALYZE)` of the tables the pipeline writes (autovacuum is off on the
 *   development server; pgbench vacuums its own tables before its run too).
 */
import { writeFile } from 'node:fs/promises';
import { BENCH_EMAIL_DOMAIN, benchDb, closeBenchDb, deleteRedisKeys, inPool, refuseUnlessBenchDatabase, intArg, upsertUsers } from '../lib/db.js';
import { isMain, runJsonScript } from '../lib/procs.js';

export interface SeedOrder {
  escrowId: string;
  paymentId: string;
  /** The gateway's order id: what a callback names. */
  orderId: string;
  /** What the buyer pays (escrow amount + surcharge), what the callback reports. */
  amount: number;
  escrowAmount: number;
}

export interface PaymentSeed {
  warmup: SeedOrder[];
  orders: SeedOrder[];
  users: number;
  /** Whether the sandbox gateway row was created, updated (re-enabled) or already in place. */
  gateway: 'created' | 'updated' | 'unchanged';
  /** Seconds VACUUM (ANALYZE) took. */
  vacuumSeconds: number;
  /** Outbox rows of earlier runs deleted before seeding: completed rows, timers of paid escrows. */
  purged: { completed: number; timers: number };
  /** Highest outbox id before this seed wrote anything: rows above it are this run's. */
  outboxIdBefore: number;
  startedAt: string;
  seconds: number;
}

export async function seedPayments(env: NodeJS.ProcessEnv, users: number, warmup: number, orders: number): Promise<PaymentSeed> {
  const seed = await runJsonScript<PaymentSeed>('bench/payments/seed.ts', [String(users), String(warmup), String(orders)], env, 600_000);
  if (seed.orders.length !== orders || seed.warmup.length !== warmup) throw new Error('seed wrote fewer orders than asked');
  return seed;
}

// ---- The script ------------------------------------------------------------------------

const METHODS = ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'] as const;
const PARALLEL = 8;
/** The tables the callback pipeline writes (and the relay and the worker read). */
const VACUUMED = ['outbox', 'payments', 'payment_callbacks', 'sandbox_charges', 'escrows', 'escrow_events', 'ledger_accounts', 'journal_entries', 'journal_lines', 'notifications', 'users'];

/** The sandbox gateway as createGateway (test/factories/payments.ts) makes it, enabled. */
async function ensureSandboxGateway(): Promise<PaymentSeed['gateway']> {
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
  await db('payment_gateways')
    .where({ provider: 'sandbox' })
    .update({ enabled: true, in_maintenance: false, is_manual: false, supported_methods: [...METHODS], updated_at: now });
  return 'updated';
}

/** Deletes the outbox rows of earlier runs that are done with (see the header). */
async function purgeOutbox(upToId: number): Promise<{ completed: number; timers: number }> {
  const db = await benchDb();
  const completed = await db('outbox').where('id', '<=', upToId).whereNotNull('completed_at').delete();
  const timers = await db.raw<{ rowCount: number }>(
    `DELETE FROM outbox o WHERE o.id <= ? AND o.job = 'escrows.expire' AND o.relayed_at IS NULL AND o.dead_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM escrows e WHERE e.id = (o.payload->>'escrow_id')::uuid AND e.status = 'pending_payment')`,
    [upToId],
  );
  return { completed, timers: Number(timers.rowCount) };
}

async function main(): Promise<void> {
  const [out, usersArg, warmupArg, ordersArg] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/payments/seed.ts <out.json> <users> <warmupOrders> <orders>');
  const userCount = intArg(usersArg, 'users', 2, 9999);
  const warmupCount = intArg(warmupArg, 'warmupOrders', 0, 100_000);
  const orderCount = intArg(ordersArg, 'orders', 1, 200_000);
  refuseUnlessBenchDatabase(/_bench_payments$/, 'seed');
  const { config } = await import('../../shared/config.js');
  if (!config.sandboxMode) throw new Error('seed: SANDBOX_MODE is off; the sandbox gateway would not be loaded');
  const { createDirect } = await import('../../shared/escrows/service.js');
  const { pay } = await import('../../shared/payments/service.js');
  const db = await benchDb();
  const started = new Date();
  // The queues of earlier runs, under this bench's own prefix only: a job id is its outbox
  // row's (`outbox-<id>`), and BullMQ ignores a job whose id it already holds, so after the
  // database is recreated a new row would be taken for an old, completed job and never run.
  if (config.queuePrefix !== 'escrow-bench-payments') throw new Error(`seed: unexpected QUEUE_PREFIX ${config.queuePrefix}`);
  const queueKeys = await deleteRedisKeys([`${config.queuePrefix}:*`]);
  const [{ max } = { max: null }] = await db('outbox').max<{ max: string | number | null }[]>('id as max');
  const outboxIdBefore = Number(max ?? 0);
  const purged = await purgeOutbox(outboxIdBefore);
  const gateway = await ensureSandboxGateway();
  const names = Array.from({ length: userCount }, (_, i) => `bench_pay_u${String(i + 1).padStart(4, '0')}`);
  const now = new Date();
  const ids = await upsertUsers(
    names.map((username, i) => ({
      email: `${username}@${BENCH_EMAIL_DOMAIN}`,
      username,
      full_name: `Bench payer ${i + 1}`,
      kyc_status: 'verified',
      email_verified_at: now,
      created_at: now,
      updated_at: now,
    })),
    { status: 'active', role: 'user' },
  );

  const total = warmupCount + orderCount;
  const all = await inPool(
    Array.from({ length: total }, (_, k) => k),
    PARALLEL,
    async (k): Promise<SeedOrder> => {
      const b = k % userCount;
      const actor = { userId: ids[b]!, role: 'user' as const };
      const escrow = await createDirect(undefined, actor, {
        role: 'buyer',
        counterparty_username: names[(b + 1) % userCount]!,
        item_name: `Bench payment ${started.toISOString()} #${k + 1}`,
        description: 'Seeded by bench/payments/seed.ts',
        amount: 100_000 + 1000 * (k % 50),
        category: (['goods', 'service', 'digital'] as const)[k % 3],
      });
      const payment = await pay(undefined, actor, escrow.id, { method: METHODS[k % METHODS.length], provider: 'sandbox' });
      if (payment.provider !== 'sandbox') {
        throw new Error(`seed: payment ${payment.id} is on ${payment.provider}, expected a sandbox link`);
      }
      return { escrowId: escrow.id, paymentId: payment.id, orderId: payment.gateway_order_id, amount: payment.amount, escrowAmount: payment.escrow_amount };
    },
  );

  const v0 = Date.now();
  await db.raw(`VACUUM (ANALYZE) ${VACUUMED.join(', ')}`);
  const vacuumSeconds = (Date.now() - v0) / 1000;
  const seed: PaymentSeed = {
    warmup: all.slice(0, warmupCount),
    orders: all.slice(warmupCount),
    users: userCount,
    gateway,
    vacuumSeconds,
    purged,
    outboxIdBefore,
    startedAt: started.toISOString(),
    seconds: (Date.now() - started.getTime()) / 1000,
  };
  await writeFile(out, JSON.stringify(seed), { mode: 0o600 });
  console.log(
    `seed-payments: ${userCount} users, ${total} escrows with a pending sandbox link (${warmupCount} for the warm-up), ` +
      `gateway row ${gateway}, ${purged.completed} completed outbox rows and ${purged.timers} timers of paid escrows purged, ${queueKeys} queue keys of earlier runs deleted, ` +
      `VACUUM (ANALYZE) ${vacuumSeconds.toFixed(1)} s (${seed.seconds.toFixed(1)} s in all)`,
  );
}

if (isMain(import.meta.url)) {
  try {
    await main();
  } catch (err) {
    console.error(`seed-payments failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  } finally {
    await closeBenchDb();
  }
}
