/**
 * `tsx bench/seed-payments.ts <out.json> <users> <warmupOrders> <orders>`: the pending
 * sandbox payment links of bench/payments.ts, in its own database `<bench db>_payments`
 * (DATABASE_URL, REDIS_URL and QUEUE_PREFIX as bench/payments.ts sets them; SANDBOX_MODE
 * is on, as everywhere outside production).
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
 *   `pending` payment and one `sandbox_charges` row. The warm-up links come first.
 *   Every run makes new ones: a paid link cannot be paid again.
 * - Before seeding, the outbox rows of earlier runs are purged, so every run starts from the
 *   same outbox instead of one that grows by about six rows per payment per run: completed
 *   rows (what the worker's sweeper deletes after its 7-day retention; the bench compresses
 *   time) and the unrelayed `escrows.expire` timers of escrows that are no longer
 *   `pending_payment` (they would do nothing when they fell due, a day later).
 * - Then `VACUUM (ANALYZE)` of the tables the pipeline writes (autovacuum is off on the
 *   development server; pgbench vacuums its own tables before its run too), so every run
 *   starts from the same state instead of from the dead rows of all earlier runs.
 *
 * Writes `PaymentSeed` to the output file.
 */
import { writeFile } from 'node:fs/promises';
import { config } from '../shared/config.js';
import { db } from '../shared/db.js';
import { redis } from '../shared/redis.js';
import { createDirect } from '../shared/escrows/service.js';
import { pay } from '../shared/payments/service.js';

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

const EMAIL_DOMAIN = 'bench.invalid';
const METHODS = ['qris', 'bank_transfer', 'gopay', 'shopeepay', 'crypto'] as const;
const PARALLEL = 8;
/** The tables the callback pipeline writes (and the relay and the worker read). */
const VACUUMED = [
  'outbox',
  'payments',
  'payment_callbacks',
  'sandbox_charges',
  'escrows',
  'escrow_events',
  'ledger_accounts',
  'journal_entries',
  'journal_lines',
  'notifications',
  'users',
];

type IdEmail = { id: string; email: string };

async function upsertUsers(usernames: string[]): Promise<string[]> {
  const now = new Date();
  const rows = usernames.map((username, i) => ({
    email: `${username}@${EMAIL_DOMAIN}`,
    username,
    full_name: `Bench payer ${i + 1}`,
    kyc_status: 'verified',
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
  await db('users').whereIn('email', emails).update({ status: 'active', role: 'user' });
  return rows.map((r) => {
    const id = idByEmail.get(r.email);
    if (!id) throw new Error(`seed: user ${r.email} was not created`);
    return id;
  });
}

/** The sandbox gateway as createGateway (test/factories/payments.ts) makes it, enabled. */
async function ensureSandboxGateway(): Promise<PaymentSeed['gateway']> {
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
  const completed = await db('outbox').where('id', '<=', upToId).whereNotNull('completed_at').delete();
  const timers = Number(
    (
      await db.raw<{ rowCount: number }>(
        `DELETE FROM outbox o WHERE o.id <= ? AND o.job = 'escrows.expire' AND o.relayed_at IS NULL AND o.dead_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM escrows e WHERE e.id = (o.payload->>'escrow_id')::uuid AND e.status = 'pending_payment')`,
        [upToId],
      )
    ).rowCount,
  );
  return { completed, timers };
}

/** Runs `work` over `items` with at most `limit` in flight; results in input order. */
async function pool<T, R>(items: T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!, i);
    }
  });
  await Promise.all(runners);
  return out;
}

function intArg(raw: string | undefined, name: string, min: number, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer in ${min}..${max}`);
  return n;
}

async function main(): Promise<void> {
  const [out, usersArg, warmupArg, ordersArg] = process.argv.slice(2);
  if (!out) throw new Error('usage: tsx bench/seed-payments.ts <out.json> <users> <warmupOrders> <orders>');
  const userCount = intArg(usersArg, 'users', 2, 9999);
  const warmupCount = intArg(warmupArg, 'warmupOrders', 0, 100_000);
  const orderCount = intArg(ordersArg, 'orders', 1, 200_000);
  if (!/_bench_payments$/.test(new URL(config.databaseUrl).pathname)) {
    throw new Error(`seed: refusing to write to ${new URL(config.databaseUrl).pathname.slice(1)}; it seeds only a *_bench_payments database`);
  }
  if (!config.sandboxMode) throw new Error('seed: SANDBOX_MODE is off; the sandbox gateway would not be loaded');
  const started = new Date();
  const [{ max } = { max: null }] = await db('outbox').max<{ max: string | number | null }[]>('id as max');
  const outboxIdBefore = Number(max ?? 0);
  const purged = await purgeOutbox(outboxIdBefore);
  const gateway = await ensureSandboxGateway();
  const pad = (i: number) => String(i + 1).padStart(4, '0');
  const names = Array.from({ length: userCount }, (_, i) => `bench_pay_u${pad(i)}`);
  const ids = await upsertUsers(names);

  const total = warmupCount + orderCount;
  const all = await pool(
    Array.from({ length: total }, (_, k) => k),
    PARALLEL,
    async (k): Promise<SeedOrder> => {
      const b = k % userCount;
      const actor = { userId: ids[b]!, role: 'user' as const };
      const escrow = await createDirect(undefined, actor, {
        role: 'buyer',
        counterparty_username: names[(b + 1) % userCount]!,
        item_name: `Bench payment ${started.toISOString()} #${k + 1}`,
        description: 'Seeded by bench/seed-payments.ts',
        amount: 100_000 + 1000 * (k % 50),
        category: (['goods', 'service', 'digital'] as const)[k % 3],
      });
      const payment = await pay(undefined, actor, escrow.id, { method: METHODS[k % METHODS.length], provider: 'sandbox' });
      if (payment.status !== 'pending' || payment.provider !== 'sandbox') {
        throw new Error(`seed: payment ${payment.id} is ${payment.status} on ${payment.provider}, expected a pending sandbox link`);
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
      `gateway row ${gateway}, ${purged.completed} completed outbox rows and ${purged.timers} timers of paid escrows purged, VACUUM (ANALYZE) ${vacuumSeconds.toFixed(1)} s (${seed.seconds.toFixed(1)} s in all)`,
  );
}

try {
  await main();
} catch (err) {
  console.error(`seed-payments failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
} finally {
  await db.destroy();
  redis.disconnect();
}
