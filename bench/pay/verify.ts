/**
 * Before any load (`checkFloor`): one payment through the API and one through the floor
 * server (the flow of load.ts on two seeded escrows of different buyers), waited for until
 * paid; the two answers the same (ids, timestamps and what names the gateway order aside)
 * and the same rows written, compared column by column with ids and timestamps replaced by
 * how they relate: the payment, the sandbox charge, the callback, the escrow, the
 * `escrow_payment` journal entry and its lines (account by code), the escrow's events and
 * the outbox rows naming it, in id order (their relay state aside: the worker relays both),
 * and the idempotency key of the pay. Then a replay of each pay key answers the stored body
 * with `Idempotent-Replay` and adds no payment.
 *
 * After the load (`checkAfter`): every payment of a completed flow paid exactly once (one
 * paid link per escrow, one `escrow_payment` entry, one `payment.completed` event, the escrow
 * account holding the escrow amount, its callback processed `paid`), no money credited to a
 * buyer, no callback left unprocessed, and `checkLedger` (what `npm run ledger:check` runs).
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { all, benchDb, one } from '../lib/db.js';
import { call, expect, type JsonAnswer } from '../lib/http.js';
import { callbackBody, settle, type FlowRecord, type Target } from './load.js';
import type { PayItem, PaySeed } from './seed.js';

type Obj = Record<string, unknown>;

/** The answers of one flow, sent with the bench's own fetch (not the load generator). */
async function oneFlow(target: Target, seed: PaySeed, item: PayItem, sign: (b: string) => string, key: string): Promise<{ pay: JsonAnswer; callback: JsonAnswer; record: FlowRecord }> {
  const headers = { Authorization: `Bearer ${seed.buyers[item.buyer]!.key}`, 'Content-Type': 'application/json', 'Idempotency-Key': key };
  const pay = await call(`${target.base}/api/escrows/${item.escrowId}/pay`, { method: 'POST', headers, body: JSON.stringify({ method: item.method, provider: 'sandbox' }) });
  const d = (pay.body as { data?: { payment_link_id?: string; gateway_order_id?: string; amount?: number } } | undefined)?.data;
  expect(pay.status === 201 && !!d?.gateway_order_id && typeof d.amount === 'number', `${target.side}: keyed POST /api/escrows/:id/pay answers 201 with a link`, pay);
  const body = callbackBody(d!.gateway_order_id!, d!.amount!);
  const callback = await call(`${target.base}/api/webhooks/inbound`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Sandbox-Signature': sign(body) }, body });
  expect(callback.status === 200, `${target.side}: the signed sandbox callback answers 200`, callback);
  return { pay, callback, record: { escrowId: item.escrowId, paymentId: d!.payment_link_id!, orderId: d!.gateway_order_id!, amount: d!.amount! } };
}

/** A pay answer without what differs between two links (ids, the deadline, what carries the gateway order id). */
function payAnswerShape(a: JsonAnswer): unknown {
  const b = a.body as { success?: boolean; data?: Obj };
  const { payment_link_id: _p, gateway_order_id: order, expires_at: _e, qr_string: qr, va_number: va, ...rest } = b.data ?? {};
  const o = String(order);
  return {
    success: b.success,
    data: {
      ...rest,
      gateway_order_id_shape: /^ESC-[0-9A-Z]+-[A-Za-z0-9]{12}$/.test(o),
      qr_string: typeof qr === 'string' ? qr.replace(o, '<order>') : qr,
      va_number: typeof va === 'string' ? 'va' : va,
    },
  };
}

/** The rows one payment wrote, ids and timestamps replaced by how they relate (see the header). */
async function rowsOf(r: FlowRecord, key: string): Promise<unknown> {
  const payment = await all<Obj>(
    `SELECT p.*, p.escrow_id = ?::uuid AS of_escrow, p.buyer_id = e.buyer_id AS of_buyer, p.expires_at - p.created_at AS lifetime,
            p.next_poll_at AS next_poll, p.paid_at >= p.created_at AS paid_after_created, p.updated_at = p.paid_at AS updated_when_paid,
            p.raw_response::jsonb = jsonb_build_object('sandbox', true, 'gateway_order_id', p.gateway_order_id) AS raw_is_sandbox_answer
       FROM payments p JOIN escrows e ON e.id = p.escrow_id WHERE p.escrow_id = ?::uuid ORDER BY p.created_at`,
    [r.escrowId, r.escrowId],
  );
  const charge = await all<Obj>(
    `SELECT c.amount, c.method, c.status, c.created_at >= p.created_at AS after_link, c.updated_at = c.created_at AS untouched
       FROM sandbox_charges c JOIN payments p ON p.gateway_order_id = c.gateway_order_id WHERE p.id = ?::uuid`,
    [r.paymentId],
  );
  const callback = await all<Obj>(
    `SELECT c.provider, c.source, c.status, c.amount, c.dedupe_key = 'sandbox:' || p.gateway_order_id || ':paid:' || p.amount AS dedupe_is_order,
            c.raw_body::jsonb = jsonb_build_object('provider', 'sandbox', 'gateway_order_id', p.gateway_order_id, 'status', 'paid', 'amount', p.amount) AS body_is_report,
            c.headers, c.processed_at >= c.received_at AS processed_after_received, c.outcome, c.deliveries, c.attempts, c.last_error, c.next_attempt_at
       FROM payment_callbacks c JOIN payments p ON p.gateway_order_id = c.gateway_order_id WHERE p.id = ?::uuid ORDER BY c.id`,
    [r.paymentId],
  );
  const escrow = await all<Obj>(
    `SELECT e.status, e.paid_at >= p.paid_at AND e.paid_at - p.paid_at < interval '1 second' AS paid_with_payment, e.updated_at = e.paid_at AS updated_when_paid, e.amount, e.fee_amount
       FROM escrows e JOIN payments p ON p.escrow_id = e.id WHERE p.id = ?::uuid`,
    [r.paymentId],
  );
  const entries = await all<Obj>(
    `SELECT j.kind, j.ref_type, j.ref_id = ?::text AS ref_is_escrow, j.posting_key = 'escrow-paid:' || ?::text AS key_is_escrow, j.memo,
            j.created_at >= p.paid_at AND j.created_at - p.paid_at < interval '1 second' AS at_payment,
            (SELECT json_agg(json_build_object('account', replace(a.code, ?::text, '<escrow>'), 'amount', l.amount) ORDER BY l.id)
               FROM journal_lines l JOIN ledger_accounts a ON a.id = l.account_id WHERE l.entry_id = j.id) AS lines
       FROM journal_entries j JOIN payments p ON p.id = ?::uuid WHERE j.ref_type = 'escrow' AND j.ref_id = ?::text ORDER BY j.id`,
    [r.escrowId, r.escrowId, r.escrowId, r.paymentId, r.escrowId],
  );
  const account = await all<Obj>(`SELECT kind, allow_negative, balance, user_id FROM ledger_accounts WHERE code = 'escrow:' || ?::text`, [r.escrowId]);
  const events = await all<Obj>(
    `SELECT v.event, v.actor_id = e.buyer_id AS by_buyer, v.actor_id IS NULL AS by_nobody, v.actor_role, v.data - 'reference' AS data,
            v.data->>'reference' = ?::text AS reference_is_payment, v.created_at = e.paid_at AS at_payment
       FROM escrow_events v JOIN escrows e ON e.id = v.escrow_id WHERE v.escrow_id = ?::uuid ORDER BY v.id`,
    [r.paymentId, r.escrowId],
  );
  const outbox = await all<Obj>(
    `SELECT o.queue, o.job, replace(replace(replace(o.payload::text, e.id::text, '<escrow>'), e.buyer_id::text, '<buyer>'), e.seller_id::text, '<seller>') AS payload,
            o.available_at = o.created_at AS due_at_once, o.available_at = e.expires_at AS due_at_expiry, o.created_at >= e.paid_at AND o.created_at - e.paid_at < interval '1 second' AS at_payment, o.dead_at
       FROM outbox o JOIN escrows e ON e.id = ?::uuid
      WHERE o.payload->>'escrow_id' = ?::text OR o.payload->'notices' @> jsonb_build_array(jsonb_build_object('escrow_id', ?::text))
      ORDER BY o.id`,
    [r.escrowId, r.escrowId, r.escrowId],
  );
  const keys = await all<Obj & { response_body: string }>(
    `SELECT k.scope = 'user:' || p.buyer_id AS scope_is_buyer, k.endpoint = 'POST /api/escrows/' || p.escrow_id || '/pay' AS endpoint_is_route,
            k.request_hash, k.state, k.response_status, k.response_body, k.locked_at = k.created_at AS locked_at_creation, k.expires_at - k.created_at AS ttl,
            k.created_at >= p.created_at AS after_link
       FROM idempotency_keys k JOIN payments p ON p.id = ?::uuid WHERE k.key = ?::uuid`,
    [r.paymentId, key],
  );
  const strip = ({ id: _i, escrow_id: _e, buyer_id: _b, gateway_order_id: _g, qr_string: _q, va_number: _v, raw_response: _r, expires_at: _x, paid_at: _p, next_poll_at: _n, next_poll: np, created_at: _c, updated_at: _u, ...rest }: Obj) => ({
    ...rest,
    next_poll_cleared: np === null,
  });
  return {
    payment: payment.map(strip),
    charge,
    callback,
    escrow,
    entries,
    account,
    events,
    outbox,
    keys: keys.map((k) => ({ ...k, response_body: payAnswerShape({ status: 201, text: k.response_body, headers: new Headers(), body: JSON.parse(k.response_body) as unknown }) })),
  };
}

function same(what: string, api: unknown, floor: unknown): void {
  if (!isDeepStrictEqual(api, floor)) {
    throw new Error(`check failed: the floor differs from the API in ${what}:\n  API:   ${JSON.stringify(api)}\n  floor: ${JSON.stringify(floor)}`);
  }
}

const countPayments = async (escrowId: string) => (await one<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE escrow_id = ?::uuid`, [escrowId])).n;

/** See the header. Uses `items[0]` for the API and `items[1]` for the floor (different buyers, same method and amount). */
export async function checkFloor(api: Target, floor: Target, seed: PaySeed, items: readonly PayItem[], sign: (b: string) => string, children: Target['child'][]): Promise<FlowRecord[]> {
  const [apiKey, floorKey] = [randomUUID(), randomUUID()];
  // One side settled before the other starts: with BENCH_AGAINST both sides' callbacks go to
  // the one worker, which would otherwise reconcile the two payments in one batch (one
  // notices row naming both) and the rows would differ for that reason alone.
  const a = await oneFlow(api, seed, items[0]!, sign, apiKey);
  await settle([a.record], children, 60_000);
  const f = await oneFlow(floor, seed, items[1]!, sign, floorKey);
  await settle([f.record], children, 60_000);
  same('the pay answer (ids, deadline and order id aside)', payAnswerShape(a.pay), payAnswerShape(f.pay));
  same('the callback answer', a.callback.body, f.callback.body);
  same('the rows one payment wrote', await rowsOf(a.record, apiKey), await rowsOf(f.record, floorKey));
  for (const [t, item, key, first] of [
    [api, items[0]!, apiKey, a.pay],
    [floor, items[1]!, floorKey, f.pay],
  ] as const) {
    const before = await countPayments(item.escrowId);
    const again = await call(`${t.base}/api/escrows/${item.escrowId}/pay`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${seed.buyers[item.buyer]!.key}`, 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify({ method: item.method, provider: 'sandbox' }),
    });
    expect(
      again.status === 201 && again.text === first.text && again.headers.get('idempotent-replay') === 'true' && (await countPayments(item.escrowId)) === before,
      `the ${t.side}'s replay of a pay key answers the stored body with Idempotent-Replay and adds no link`,
      again,
    );
  }
  console.log(
    'bench: verified: one payment through the API and one through the floor answer the same pay and callback JSON (ids, deadline and order id aside) ' +
      'and wrote the same payment, sandbox charge, callback, escrow, journal entry and lines, events, outbox rows and idempotency key; each replay answers the stored body',
  );
  return [a.record, f.record];
}

export interface AfterCheck {
  payments: number;
  problems: string[];
  lost: number;
  doubled: number;
  ledgerViolations: string[];
}

/** See the header: the payments of every completed flow (and of the verification). */
export async function checkAfter(records: readonly FlowRecord[]): Promise<AfterCheck> {
  const escrowIds = records.map((r) => r.escrowId);
  const paymentIds = records.map((r) => r.paymentId);
  const n = records.length;
  const p = await one<{ paid: number; escrows: number; flagged: number }>(
    `SELECT count(*) FILTER (WHERE status = 'paid')::int AS paid, count(DISTINCT escrow_id) FILTER (WHERE status = 'paid')::int AS escrows,
            count(*) FILTER (WHERE flag IS NOT NULL)::int AS flagged FROM payments WHERE escrow_id = ANY(?::uuid[])`,
    [escrowIds],
  );
  const mine = await one<{ paid: number }>(`SELECT count(*) FILTER (WHERE status = 'paid')::int AS paid FROM payments WHERE id = ANY(?::uuid[])`, [paymentIds]);
  const e = await one<{ paid: number }>(`SELECT count(*) FILTER (WHERE status = 'paid')::int AS paid FROM escrows WHERE id = ANY(?::uuid[])`, [escrowIds]);
  const j = await one<{ entries: number; escrows: number }>(
    `SELECT count(*)::int AS entries, count(DISTINCT ref_id)::int AS escrows FROM journal_entries WHERE kind = 'escrow_payment' AND ref_type = 'escrow' AND ref_id = ANY(?)`,
    [escrowIds],
  );
  const credits = await one<{ n: number }>(`SELECT count(*)::int AS n FROM journal_entries WHERE kind = 'payment_credit' AND ref_type = 'payment' AND ref_id = ANY(?)`, [paymentIds]);
  const ev = await one<{ total: number; escrows: number }>(
    `SELECT count(*)::int AS total, count(DISTINCT escrow_id)::int AS escrows FROM escrow_events WHERE event = 'payment.completed' AND escrow_id = ANY(?::uuid[])`,
    [escrowIds],
  );
  const held = await one<{ n: number }>(
    `SELECT count(*)::int AS n FROM escrows e LEFT JOIN ledger_accounts a ON a.code = 'escrow:' || e.id::text WHERE e.id = ANY(?::uuid[]) AND COALESCE(a.balance, -1) <> e.amount`,
    [escrowIds],
  );
  const cb = await one<{ rows: number; paid: number; unprocessed: number }>(
    `SELECT count(*)::int AS rows, count(*) FILTER (WHERE outcome = 'paid')::int AS paid, count(*) FILTER (WHERE processed_at IS NULL)::int AS unprocessed
       FROM payment_callbacks WHERE gateway_order_id = ANY(?)`,
    [records.map((r) => r.orderId)],
  );
  const { checkLedger } = await import('../../shared/ledger/index.js');
  const ledgerViolations = (await checkLedger(await benchDb())).map((v) => `${v.rule}: ${v.detail}`);
  const problems: string[] = [];
  const want = (ok: boolean, what: string) => {
    if (!ok) problems.push(what);
  };
  want(mine.paid === n && p.paid === n && p.escrows === n && p.flagged === 0, `payments: ${mine.paid} of the ${n} links paid; ${p.paid} paid links on ${p.escrows} escrows, ${p.flagged} flagged`);
  want(e.paid === n, `escrows: ${e.paid} paid of ${n}`);
  want(j.entries === n && j.escrows === n, `escrow_payment entries: ${j.entries} for ${j.escrows} escrows (expected ${n})`);
  want(credits.n === 0, `${credits.n} payment_credit entries`);
  want(ev.total === n && ev.escrows === n, `payment.completed events: ${ev.total} for ${ev.escrows} escrows`);
  want(held.n === 0, `${held.n} escrow accounts not holding the escrow amount`);
  want(cb.rows === n && cb.paid === n && cb.unprocessed === 0, `callbacks: ${cb.rows} rows, ${cb.paid} paid, ${cb.unprocessed} unprocessed (expected ${n}, ${n}, 0)`);
  want(ledgerViolations.length === 0, `checkLedger: ${ledgerViolations.slice(0, 3).join('; ')}`);
  const lost = n - mine.paid;
  const doubled = Math.max(0, p.paid - p.escrows) + Math.max(0, j.entries - j.escrows) + Math.max(0, ev.total - ev.escrows) + Math.max(0, cb.rows - n) + credits.n + p.flagged;
  return { payments: n, problems, lost, doubled, ledgerViolations };
}
