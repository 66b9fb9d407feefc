/**
 * What the payments bench reads from the database besides the checks: when the callbacks
 * came and the payments were paid (the reconciliation window and per-payment latency), and
 * what the outbox relay's query costs.
 */
import type { Knex } from 'knex';
import { benchDb, one } from '../lib/db.js';
import type { SeedOrder } from './seed.js';

export interface Timing {
  firstReceived: Date;
  lastReceived: Date;
  firstPaid: Date;
  lastPaid: Date;
  /** Milliseconds from a payment's first callback (`received_at`) to its `paid_at`. */
  latency: { p50: number; p90: number; p99: number; max: number };
}

export async function timing(orders: readonly SeedOrder[]): Promise<Timing> {
  const r = await one<{ first_received: Date; last_received: Date; first_paid: Date; last_paid: Date; p50: number; p90: number; p99: number; max: number }>(
    `SELECT min(c.received_at) AS first_received, max(c.received_at) AS last_received, min(p.paid_at) AS first_paid, max(p.paid_at) AS last_paid,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) AS p90,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99, max(ms) AS max
       FROM payments p
       JOIN payment_callbacks c ON c.gateway_order_id = p.gateway_order_id AND c.source = 'callback'
       CROSS JOIN LATERAL (SELECT (extract(epoch FROM p.paid_at - c.received_at) * 1000)::float8 AS ms) l
      WHERE p.gateway_order_id = ANY(?)`,
    [orders.map((o) => o.orderId)],
  );
  return {
    firstReceived: new Date(r.first_received),
    lastReceived: new Date(r.last_received),
    firstPaid: new Date(r.first_paid),
    lastPaid: new Date(r.last_paid),
    latency: { p50: Number(r.p50), p90: Number(r.p90), p99: Number(r.p99), max: Number(r.max) },
  };
}

/** Payments of `orders` paid by `at` (ms since the epoch). */
export async function paidBy(orders: readonly SeedOrder[], at: number): Promise<number> {
  const r = await one<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE id = ANY(?::uuid[]) AND paid_at <= to_timestamp(?::float8 / 1000)`, [orders.map((o) => o.paymentId), at]);
  return r.n;
}

/** The spread of a backlog's paid_at: first, last, how many share the first (one batch), how many paid. */
export async function paidSpread(orders: readonly SeedOrder[]): Promise<{ first_paid: Date; last_paid: Date; in_first: number; paid: number }> {
  const ids = orders.map((o) => o.paymentId);
  return await one(
    `SELECT min(paid_at) AS first_paid, max(paid_at) AS last_paid, count(*) FILTER (WHERE status = 'paid')::int AS paid,
            count(*) FILTER (WHERE paid_at = (SELECT min(paid_at) FROM payments WHERE id = ANY(?::uuid[])))::int AS in_first
       FROM payments WHERE id = ANY(?::uuid[])`,
    [ids, ids],
  );
}

export interface RelayCost {
  ms: number;
  summary: string;
}

/**
 * What the relay's query costs now: relayOnce's statement (shared/outbox.ts) under EXPLAIN
 * (ANALYZE, BUFFERS), its time bound as a parameter as knex binds it. Run when nothing is
 * due, so it locks nothing; the transaction only ends the FOR UPDATE.
 */
export async function relayCost(): Promise<RelayCost | null> {
  try {
    const db = await benchDb();
    const plan = await db.transaction(async (trx) => {
      const { dueRows } = await import('../../shared/outbox.js');
      const q = dueRows(trx, 200).toSQL();
      const r = await trx.raw<{ rows: Record<string, string>[] }>(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, q.bindings as Knex.RawBinding[]);
      return r.rows.map((row) => Object.values(row)[0] ?? '');
    });
    const ms = Number(/Execution Time: ([0-9.]+) ms/.exec(plan.join('\n'))?.[1] ?? Number.NaN);
    const keep = plan
      .map((l) => l.trim().replace(/^->\s*/, ''))
      .filter((l) => /Scan|Rows Removed|Heap Blocks/.test(l))
      .map((l) => l.replace(/\(cost=[^)]*\)\s*/, ''));
    const buffers = plan.find((l) => /Buffers:/.test(l))?.trim();
    return { ms, summary: [...keep, ...(buffers ? [buffers] : [])].map((l) => `\`${l}\``).join('; ') };
  } catch {
    return null;
  }
}
