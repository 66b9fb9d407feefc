/**
 * Before any load (`checkFloor`): one escrow's flow through the API and one through the
 * floor server (two seeded `sent` escrows of different buyers with the same amount, category
 * and description), sent with the bench's own fetch: both steps answer 200 with the same JSON
 * (ids and timestamps replaced by how they relate), and the rows each flow wrote are the same,
 * column by column with ids and timestamps replaced by how they relate: the escrow row, its
 * events of the flow, the `escrow_release` journal entry and its lines (account by code, in
 * id order), the outbox rows naming the escrow written by the flow (in id order), and the two
 * idempotency rows (stored answer included). Then a replay of each of the four keys answers
 * the stored body with `Idempotent-Replay: true` and adds no row.
 *
 * After the load (`checkAfter`): every escrow whose release answered 200 is released exactly
 * once with the right fee (the `escrow_fee` setting through the service's own fee function):
 * one `escrow.received` and one `escrow.released` event, one `escrow_release` entry whose
 * lines move amount - fee to the seller and the fee to the platform and empty the escrow's
 * account; no escrow a flow reached was released twice; and `checkLedger` (what
 * `npm run ledger:check` runs) finds nothing.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { all, benchDb, one } from '../lib/db.js';
import { call, expect, type JsonAnswer } from '../lib/http.js';
import { bearer, type Target } from './load.js';
import type { ReleaseItem, ReleaseSeed } from './seed.js';
import { countFlows, type CountedStep, type LeanCheck } from '../lib/statements.js';

type Obj = Record<string, unknown>;
const STEPS = ['confirm-received', 'release'] as const;
type Step = (typeof STEPS)[number];

interface Marks {
  event: number;
  outbox: number;
}

/** The highest event and outbox ids now: rows above them are the flow's. */
async function marks(): Promise<Marks> {
  return await one<Marks>('SELECT (SELECT coalesce(max(id), 0) FROM escrow_events)::bigint::int AS event, (SELECT coalesce(max(id), 0) FROM outbox)::bigint::int AS outbox');
}

async function rowCounts(): Promise<Obj> {
  return await one<Obj>(
    `SELECT (SELECT count(*) FROM escrow_events)::int AS events, (SELECT count(*) FROM outbox)::int AS outbox,
            (SELECT count(*) FROM journal_entries)::int AS entries, (SELECT count(*) FROM idempotency_keys)::int AS keys,
            (SELECT count(*) FROM escrows WHERE status = 'released')::int AS released`,
  );
}

const post = (target: Target, seed: ReleaseSeed, item: ReleaseItem, step: Step, key: string): Promise<JsonAnswer> =>
  call(`${target.base}/api/escrows/${item.escrowId}/${step}`, { method: 'POST', headers: { ...bearer(seed, item), 'Content-Type': 'application/json', 'Idempotency-Key': key }, body: '{}' });

/** Replaces the escrow's, the buyer's and the seller's ids in any string by placeholders. */
function namer(item: ReleaseItem, buyerId: string): (s: string) => string {
  return (s) => s.split(item.escrowId).join('<escrow>').split(buyerId).join('<buyer>').split(item.sellerId).join('<seller>');
}

/** An escrow answer with ids named and each timestamp told by how it relates: unchanged since before the flow, or the step's time. */
function answerShape(a: JsonAnswer, before: Obj, name: (s: string) => string): unknown {
  const b = a.body as { success?: boolean; data?: Obj } | undefined;
  const d = b?.data ?? {};
  const out: Obj = {};
  for (const [k, v] of Object.entries(d)) {
    if (typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v)) {
      const prior = before[k];
      out[k] = prior instanceof Date && prior.toISOString() === v ? 'unchanged' : v === d.updated_at ? 'the move' : 'other';
    } else if (k === 'item_name') out[k] = String(v).replace(/ \d{4}-.*$/, '');
    else out[k] = typeof v === 'string' ? name(v) : v;
  }
  return { success: b?.success, data: out };
}

/** The rows a flow wrote for `item`, ids and timestamps replaced by how they relate (see the header). */
async function rowsOf(item: ReleaseItem, buyerId: string, since: Marks, keys: Record<Step, string>): Promise<unknown> {
  const name = namer(item, buyerId);
  const [escrow] = await all<Obj>(
    `SELECT status, amount, fee_amount, category, source, extension_count, cancel_reason, courier, tracking_number, partner_ref,
            received_at > sent_at AS received_after_sent, released_at > received_at AS released_after_received,
            updated_at = released_at AS updated_when_released, paid_at IS NOT NULL AS paid, auto_release_at IS NOT NULL AS timer_kept
       FROM escrows WHERE id = ?`,
    [item.escrowId],
  );
  const events = await all<Obj>(
    `SELECT v.event, v.actor_id::text AS actor, v.actor_role, v.data,
            CASE v.created_at WHEN e.received_at THEN 'received_at' WHEN e.released_at THEN 'released_at' ELSE 'other' END AS at
       FROM escrow_events v JOIN escrows e ON e.id = v.escrow_id WHERE v.escrow_id = ? AND v.id > ? ORDER BY v.id`,
    [item.escrowId, since.event],
  );
  const entries = await all<Obj>(
    `SELECT j.kind, j.ref_type, j.ref_id, j.posting_key, j.memo, j.created_at >= e.released_at AS after_release,
            (SELECT json_agg(json_build_object('account', a.code, 'kind', a.kind, 'amount', l.amount) ORDER BY l.id)
               FROM journal_lines l JOIN ledger_accounts a ON a.id = l.account_id WHERE l.entry_id = j.id) AS lines,
            (SELECT balance FROM ledger_accounts WHERE code = 'escrow:' || e.id::text) AS escrow_account_balance
       FROM journal_entries j JOIN escrows e ON e.id::text = j.ref_id WHERE j.ref_type = 'escrow' AND j.ref_id = ? AND j.kind = 'escrow_release' ORDER BY j.id`,
    [item.escrowId],
  );
  const outbox = await all<Obj>(
    `SELECT o.queue, o.job, o.payload, o.available_at = o.created_at AS due_at_once, o.created_at >= e.received_at AS after_receipt,
            o.relayed_at, o.completed_at, o.dead_at, o.dead_reason
       FROM outbox o JOIN escrows e ON e.id = (o.payload->>'escrow_id')::uuid WHERE o.payload->>'escrow_id' = ? AND o.id > ? ORDER BY o.id`,
    [item.escrowId, since.outbox],
  );
  const keyRows = await all<Obj & { response_body: string }>(
    `SELECT k.scope, k.endpoint, k.request_hash, k.state, k.response_status, k.response_body, k.locked_at = k.created_at AS locked_at_creation,
            k.expires_at - k.created_at AS ttl, k.created_at >= e.received_at AS after_receipt
       FROM idempotency_keys k JOIN escrows e ON e.id = ?::uuid WHERE k.key = ANY(?::uuid[]) ORDER BY k.created_at`,
    [item.escrowId, [keys['confirm-received'], keys.release]],
  );
  const named = (v: unknown): unknown => JSON.parse(name(JSON.stringify(v))) as unknown;
  return {
    escrow,
    events: named(events),
    entries: named(entries),
    outbox: named(outbox),
    keys: keyRows.map((k) => {
      const body = JSON.parse(k.response_body) as { data?: Obj };
      const ts = (v: unknown) => (typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) ? 'timestamp' : v);
      const data = Object.fromEntries(Object.entries(body.data ?? {}).map(([f, v]) => [f, f === 'item_name' ? String(v).replace(/ \d{4}-.*$/, '') : ts(v)]));
      return named({ ...k, response_body: { ...body, data } });
    }),
  };
}

/** Throws naming both sides when the API's and the floor's versions of `what` differ. */
function same(what: string, api: unknown, floor: unknown): void {
  if (!isDeepStrictEqual(api, floor)) {
    throw new Error(`check failed: the floor differs from the API in ${what}:\n  API:   ${JSON.stringify(api)}\n  floor: ${JSON.stringify(floor)}`);
  }
}

/** Two seeded escrows of different buyers with the same amount, category and description. */
export async function twinItems(items: readonly ReleaseItem[]): Promise<[ReleaseItem, ReleaseItem]> {
  const head = items.slice(0, 2000);
  const rows = await all<{ id: string; amount: number; category: string; description: string }>(
    'SELECT id, amount, category, description FROM escrows WHERE id = ANY(?::uuid[])',
    [head.map((i) => i.escrowId)],
  );
  const byId = new Map(rows.map((r) => [r.id, `${r.amount}|${r.category}|${r.description}`]));
  for (const a of head) {
    const b = head.find((x) => x !== a && x.buyer !== a.buyer && x.sellerId !== a.sellerId && byId.get(x.escrowId) === byId.get(a.escrowId));
    if (b) return [a, b];
  }
  throw new Error('seed: no two escrows alike to verify the floor with (seed at least 120 escrows and 3 buyers)');
}

/** The floor answers and writes as the API does (see the header). Returns the two escrows it released. */
export async function checkFloor(api: Target, floor: Target, seed: ReleaseSeed, pair: [ReleaseItem, ReleaseItem]): Promise<string[]> {
  const shapes: Record<string, unknown>[] = [];
  const sides: { target: Target; item: ReleaseItem; keys: Record<Step, string>; answers: Record<Step, JsonAnswer> }[] = [];
  for (const [target, item] of [
    [api, pair[0]],
    [floor, pair[1]],
  ] as const) {
    const buyerId = seed.buyers[item.buyer]!.id;
    const name = namer(item, buyerId);
    const before = await one<Obj>('SELECT * FROM escrows WHERE id = ?', [item.escrowId]);
    const since = await marks();
    const keys = { 'confirm-received': randomUUID(), release: randomUUID() };
    const answers = {} as Record<Step, JsonAnswer>;
    const shape: Record<string, unknown> = {};
    for (const step of STEPS) {
      const a = await post(target, seed, item, step, keys[step]);
      const d = a.body as { data?: { status?: string } } | undefined;
      expect(a.status === 200 && d?.data?.status === (step === 'release' ? 'released' : 'received'), `${target.side}: keyed POST /api/escrows/:id/${step} answers 200`, a);
      answers[step] = a;
      shape[step] = answerShape(a, before, name);
    }
    shape.rows = await rowsOf(item, buyerId, since, keys);
    shapes.push(shape);
    sides.push({ target, item, keys, answers });
  }
  const [a, f] = shapes as [Record<string, unknown>, Record<string, unknown>];
  for (const step of STEPS) same(`the answer to a keyed POST ${step} (ids and timestamps aside)`, a[step], f[step]);
  same('the rows the flow wrote (escrow, events, ledger entry and lines, outbox, idempotency keys)', a.rows, f.rows);

  for (const s of sides) {
    for (const step of STEPS) {
      const before = await rowCounts();
      const again = await post(s.target, seed, s.item, step, s.keys[step]);
      const after = await rowCounts();
      expect(
        again.status === 200 && again.text === s.answers[step].text && again.headers.get('idempotent-replay') === 'true' && isDeepStrictEqual(after, before),
        `the ${s.target.side}'s replay of its ${step} key answers the stored body with Idempotent-Replay and adds nothing`,
        again,
      );
    }
  }
  const rows = f.rows as { events: unknown[]; entries: { lines: unknown[] }[]; outbox: unknown[]; keys: unknown[] };
  console.log(
    `bench: the floor answers confirm-received and release as the API does and writes the same rows (escrow, ${rows.events.length} events, ` +
      `${rows.entries.length} ledger entry with ${rows.entries[0]?.lines.length ?? 0} lines, ${rows.outbox.length} outbox rows, ${rows.keys.length} idempotency keys; ` +
      'ids and timestamps aside); every replay answers the stored body and adds nothing',
  );
  return pair.map((i) => i.escrowId);
}

export interface AfterCheck {
  released: number;
  reached: number;
  problems: string[];
}

/** Every escrow in `done` released once with the right fee; none of `reached` released twice; checkLedger (see the header). */
export async function checkAfter(reached: readonly string[], done: readonly string[]): Promise<AfterCheck> {
  const db = await benchDb();
  const { escrowFee, loadEscrowFeeRule } = await import('../../shared/escrows/fees.js');
  const rule = await loadEscrowFeeRule(db);
  const problems: string[] = [];
  const rows = await all<{ id: string; status: string; amount: number; fee_amount: number | null; seller_id: string; received: number; released: number; entries: number; lines: { code: string; amount: number }[] | null }>(
    `SELECT e.id, e.status, e.amount, e.fee_amount, e.seller_id,
            (SELECT count(*) FROM escrow_events v WHERE v.escrow_id = e.id AND v.event = 'escrow.received')::int AS received,
            (SELECT count(*) FROM escrow_events v WHERE v.escrow_id = e.id AND v.event = 'escrow.released')::int AS released,
            (SELECT count(*) FROM journal_entries j WHERE j.ref_type = 'escrow' AND j.ref_id = e.id::text AND j.kind = 'escrow_release')::int AS entries,
            (SELECT json_agg(json_build_object('code', a.code, 'amount', l.amount) ORDER BY l.id)
               FROM journal_entries j JOIN journal_lines l ON l.entry_id = j.id JOIN ledger_accounts a ON a.id = l.account_id
              WHERE j.posting_key = 'escrow-release:' || e.id::text) AS lines
       FROM escrows e WHERE e.id = ANY(?::uuid[])`,
    [[...new Set(reached)]],
  );
  const doneSet = new Set(done);
  let released = 0;
  for (const r of rows) {
    if (r.released > 1 || r.entries > 1) problems.push(`escrow ${r.id} released ${r.released} times with ${r.entries} entries`);
    if (!doneSet.has(r.id)) continue;
    const fee = escrowFee(Number(r.amount), rule);
    const want = [{ code: `escrow:${r.id}`, amount: -Number(r.amount) }];
    if (Number(r.amount) - fee > 0) want.push({ code: `user:${r.seller_id}`, amount: Number(r.amount) - fee });
    if (fee > 0) want.push({ code: 'platform:fees', amount: fee });
    const lines = (r.lines ?? []).map((l) => ({ code: l.code, amount: Number(l.amount) }));
    if (r.status !== 'released' || Number(r.fee_amount) !== fee || r.received !== 1 || r.released !== 1 || r.entries !== 1 || !isDeepStrictEqual(lines, want)) {
      problems.push(`escrow ${r.id}: ${r.status}, fee ${r.fee_amount} (want ${fee}), ${r.received} received and ${r.released} released events, ${r.entries} entries, lines ${JSON.stringify(lines)}`);
    } else released++;
  }
  if (released !== doneSet.size) problems.push(`${doneSet.size} releases answered 200 but ${released} escrows check out`);
  const { checkLedger } = await import('../../shared/ledger/index.js');
  const violations = await checkLedger(db);
  for (const v of violations.slice(0, 5)) problems.push(`checkLedger: ${v.rule}: ${v.detail}`);
  if (violations.length > 5) problems.push(`checkLedger: ${violations.length - 5} more violations`);
  return { released, reached: rows.length, problems: problems.slice(0, 20) };
}

/**
 * A floor at least as lean as its route (issue 43; bench/lib/statements.ts): a counting copy
 * of the API and of the floor server each run two flows (the first warms them) on escrows of
 * their own, and the second's statements and round trips are compared; the bench stops,
 * reporting no ratio, when the floor sends more. Answers the check and the escrows it released.
 */
export async function checkLean(env: NodeJS.ProcessEnv, seed: ReleaseSeed, items: readonly ReleaseItem[]): Promise<{ lean: LeanCheck; used: ReleaseItem[] }> {
  const used = items.slice(0, 4);
  if (used.length < 4) throw new Error('check failed: the seed has too few escrows for the statement count');
  const steps = (item: ReleaseItem): CountedStep[] =>
    STEPS.map((step) => ({
      step,
      run: async (base) => {
        const a = await call(`${base}/api/escrows/${item.escrowId}/${step}`, {
          method: 'POST',
          headers: { ...bearer(seed, item), 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
          body: '{}',
        });
        expect(a.status === 200, `statement count: keyed POST /api/escrows/:id/${step} answers 200`, a);
      },
    }));
  const lean = await countFlows({ tag: 'bench', env, api: [steps(used[0]!), steps(used[1]!)], floor: [steps(used[2]!), steps(used[3]!)] });
  return { lean, used };
}
