/**
 * After a run, for its orders: every link paid exactly once and unflagged, every escrow paid
 * with one `escrow_payment` journal entry, one `payment.completed` event and its held
 * balance, one stored callback per order with both deliveries counted, every callback
 * processed, the notice jobs completed, the two notices per escrow written once,
 * `checkLedger` clean; over HTTP, every answer 200 and exactly one `duplicate: false` per
 * order. Lost = links not paid + deliveries answered 200 but not counted; doubled = any
 * second effect of one payment.
 */
import { all, benchDb, one } from '../lib/db.js';
import { statusList } from '../lib/format.js';
import { COPIES, type AnswerTally } from './load.js';
import type { SeedOrder } from './seed.js';

export interface Verification {
  payments: { paid: number; pending: number; other: number; flagged: number };
  escrowsPaid: number;
  escrowNotPaid: number;
  journal: { entries: number; escrows: number; maxPerEscrow: number; credits: number };
  events: { total: number; escrows: number; maxPerEscrow: number };
  heldMismatch: number;
  callbacks: { rows: number; orders: number; deliveries: number; unprocessed: number; outcomes: Record<string, number>; byDeliveries: Record<string, number> };
  unprocessedAnywhere: number;
  /** Outbox rows of the notices written since the run began, and callbacks that needed more than one attempt. */
  jobs: { rows: number; batches: number; open: number; dead: number; retried: number };
  notices: Record<string, { rows: number; escrows: number }>;
  ledgerViolations: string[];
  lost: number;
  doubled: number;
  problems: string[];
}

export async function verify(orders: readonly SeedOrder[], outboxIdBefore: number, http: AnswerTally): Promise<Verification> {
  const paymentIds = orders.map((o) => o.paymentId);
  const escrowIds = orders.map((o) => o.escrowId);
  const orderIds = orders.map((o) => o.orderId);
  const n = orders.length;

  const p = await one<{ paid: number; pending: number; other: number; flagged: number }>(
    `SELECT count(*) FILTER (WHERE status = 'paid')::int AS paid, count(*) FILTER (WHERE status = 'pending')::int AS pending,
            count(*) FILTER (WHERE status NOT IN ('paid', 'pending'))::int AS other, count(*) FILTER (WHERE flag IS NOT NULL)::int AS flagged
       FROM payments WHERE id = ANY(?::uuid[])`,
    [paymentIds],
  );
  const e = await one<{ paid: number; not_paid: number }>(
    `SELECT count(*) FILTER (WHERE status = 'paid')::int AS paid, count(*) FILTER (WHERE status <> 'paid')::int AS not_paid
       FROM escrows WHERE id = ANY(?::uuid[])`,
    [escrowIds],
  );
  const j = await one<{ entries: number; escrows: number; max_per: number | null }>(
    `SELECT count(*)::int AS entries, count(DISTINCT ref_id)::int AS escrows, max(c)::int AS max_per
       FROM (SELECT ref_id, count(*) OVER (PARTITION BY ref_id) AS c FROM journal_entries
              WHERE kind = 'escrow_payment' AND ref_type = 'escrow' AND ref_id = ANY(?)) x`,
    [escrowIds],
  );
  const credits = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM journal_entries WHERE kind = 'payment_credit' AND ref_type = 'payment' AND ref_id = ANY(?)`,
    [paymentIds],
  );
  const ev = await one<{ total: number; escrows: number; max_per: number | null }>(
    `SELECT count(*)::int AS total, count(DISTINCT escrow_id)::int AS escrows, max(c)::int AS max_per
       FROM (SELECT escrow_id, count(*) OVER (PARTITION BY escrow_id) AS c FROM escrow_events
              WHERE event = 'payment.completed' AND escrow_id = ANY(?::uuid[])) x`,
    [escrowIds],
  );
  const held = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM escrows e LEFT JOIN ledger_accounts a ON a.code = 'escrow:' || e.id::text
      WHERE e.id = ANY(?::uuid[]) AND COALESCE(a.balance, -1) <> e.amount`,
    [escrowIds],
  );
  const cb = await one<{ rows: number; orders: number; deliveries: number; unprocessed: number }>(
    `SELECT count(*)::int AS rows, count(DISTINCT gateway_order_id)::int AS orders, COALESCE(sum(deliveries), 0)::int AS deliveries,
            count(*) FILTER (WHERE processed_at IS NULL)::int AS unprocessed
       FROM payment_callbacks WHERE gateway_order_id = ANY(?)`,
    [orderIds],
  );
  const outcomes = Object.fromEntries(
    (
      await all<{ outcome: string | null; n: number }>(
        `SELECT outcome, count(*)::int AS n FROM payment_callbacks WHERE gateway_order_id = ANY(?) GROUP BY outcome ORDER BY outcome`,
        [orderIds],
      )
    ).map((r) => [r.outcome ?? 'unprocessed', r.n]),
  );
  const byDeliveries = Object.fromEntries(
    (
      await all<{ deliveries: number; n: number }>(
        `SELECT deliveries, count(*)::int AS n FROM payment_callbacks WHERE gateway_order_id = ANY(?) GROUP BY deliveries ORDER BY deliveries`,
        [orderIds],
      )
    ).map((r) => [String(r.deliveries), r.n]),
  );
  const anywhere = await one<{ n: number }>(`SELECT count(*)::int AS n FROM payment_callbacks WHERE processed_at IS NULL`);
  const jobs = await one<{ rows: number; batches: number; open: number; dead: number; retried: number }>(
    `SELECT count(*)::int AS rows, count(*) FILTER (WHERE job = 'notifications.create-batch')::int AS batches,
            count(*) FILTER (WHERE completed_at IS NULL AND dead_at IS NULL)::int AS open,
            count(*) FILTER (WHERE dead_at IS NOT NULL)::int AS dead,
            (SELECT count(*)::int FROM payment_callbacks WHERE gateway_order_id = ANY(?) AND attempts > 0) AS retried
       FROM outbox WHERE id > ? AND job IN ('notifications.create', 'notifications.create-batch')`,
    [orderIds, outboxIdBefore],
  );
  const notices = Object.fromEntries(
    (
      await all<{ type: string; rows: number; escrows: number }>(
        `SELECT type, count(*)::int AS rows, count(DISTINCT metadata->>'escrow_id')::int AS escrows FROM notifications
          WHERE metadata->>'escrow_id' = ANY(?) AND type IN ('payment_success', 'escrow_paid') GROUP BY type ORDER BY type`,
        [escrowIds],
      )
    ).map((r) => [r.type, { rows: r.rows, escrows: r.escrows }]),
  );
  const { checkLedger } = await import('../../shared/ledger/index.js');
  const ledgerViolations = (await checkLedger(await benchDb())).map((v) => `${v.rule}: ${v.detail}`);

  const problems: string[] = [];
  const want = (ok: boolean, what: string) => {
    if (!ok) problems.push(what);
  };
  const badAnswers = [...http.bad.values()].reduce((a, b) => a + b, 0);
  want(http.sent === COPIES * n, `sent ${http.sent} callbacks, expected ${COPIES * n}`);
  want(http.ok === COPIES * n && badAnswers === 0, `${http.ok} answers 200 of ${COPIES * n} (${statusList(http.bad) || 'others unanswered'})`);
  want(http.fresh === n && http.duplicate === (COPIES - 1) * n, `answers said duplicate:false ${http.fresh}, duplicate:true ${http.duplicate} (expected ${n} and ${(COPIES - 1) * n})`);
  want(p.paid === n && p.flagged === 0, `payments: ${p.paid} paid of ${n}, ${p.flagged} flagged`);
  want(e.paid === n, `escrows: ${e.paid} paid of ${n}`);
  want(j.entries === n && j.escrows === n && (j.max_per ?? 0) === 1, `escrow_payment entries: ${j.entries} for ${j.escrows} escrows (max ${j.max_per ?? 0} per escrow)`);
  want(credits.n === 0, `${credits.n} payment_credit entries (money credited to a buyer instead of an escrow)`);
  want(ev.total === n && ev.escrows === n, `payment.completed events: ${ev.total} for ${ev.escrows} escrows`);
  want(held.n === 0, `${held.n} escrows whose ledger account does not hold the escrow amount`);
  want(cb.rows === n && cb.orders === n, `payment_callbacks: ${cb.rows} rows for ${cb.orders} orders (expected one per order)`);
  want(cb.deliveries === COPIES * n, `payment_callbacks count ${cb.deliveries} deliveries, expected ${COPIES * n}`);
  want(cb.unprocessed === 0 && anywhere.n === 0, `unprocessed callbacks: ${cb.unprocessed} of this run, ${anywhere.n} in the database`);
  want((outcomes.paid ?? 0) === n, `callback outcomes ${JSON.stringify(outcomes)}, expected paid × ${n}`);
  want(jobs.open === 0 && jobs.dead === 0, `notice jobs: ${jobs.rows} outbox rows, ${jobs.open} open, ${jobs.dead} dead`);
  for (const type of ['payment_success', 'escrow_paid']) {
    const t = notices[type];
    want(t?.rows === n && t.escrows === n, `${type} notices: ${t?.rows ?? 0} rows for ${t?.escrows ?? 0} escrows, expected ${n}`);
  }
  want(ledgerViolations.length === 0, `checkLedger: ${ledgerViolations.slice(0, 3).join('; ')}`);

  // Lost: a link that did not get paid, or a delivery answered 200 but not recorded.
  const lost = n - p.paid + Math.max(0, Math.min(http.ok, COPIES * n) - cb.deliveries);
  // Doubled: any second effect of one payment.
  const doubled =
    Math.max(0, j.entries - j.escrows) +
    Math.max(0, ev.total - ev.escrows) +
    Math.max(0, cb.rows - cb.orders) +
    credits.n +
    p.flagged +
    Object.values(notices).reduce((a, t) => a + Math.max(0, t.rows - t.escrows), 0) +
    Math.max(0, http.fresh - n);
  return {
    payments: p,
    escrowsPaid: e.paid,
    escrowNotPaid: e.not_paid,
    journal: { entries: j.entries, escrows: j.escrows, maxPerEscrow: j.max_per ?? 0, credits: credits.n },
    events: { total: ev.total, escrows: ev.escrows, maxPerEscrow: ev.max_per ?? 0 },
    heldMismatch: held.n,
    callbacks: { ...cb, outcomes, byDeliveries },
    unprocessedAnywhere: anywhere.n,
    jobs,
    notices,
    ledgerViolations,
    lost,
    doubled,
    problems,
  };
}
