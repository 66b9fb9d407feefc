/**
 * Before any load, for a spread of readers: the escrow answers 200 to its buyer and its
 * seller and 403 FORBIDDEN to a stranger; the list holds only the caller's escrows, newest
 * first, a full page; a paid escrow's public preview answers 200 without buyer data and
 * with `Access-Control-Allow-Origin: *`; one keyed POST answers 201 and adds exactly one
 * escrow, one event, two outbox rows and one idempotency key.
 *
 * Then the floor server (`checkFloor`): the same JSON as the API for a GET (and a
 * stranger's 403), a list and a keyed POST (ids and timestamps aside), the same rows
 * added by a POST (compared column by column, ids and timestamps aside, their relations
 * checked), and a replay of the floor's key answering the stored body and adding nothing.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { all, benchDb } from '../lib/db.js';
import { call, dataOf, expect, type JsonAnswer } from '../lib/http.js';
import { bearer, createBody, LIST, LIST_LIMIT, ME } from './load.js';
import type { EscrowSeed, SeedUser } from './seed.js';
import { countFlows, type CountedStep, type LeanCheck } from '../lib/statements.js';

type Obj = Record<string, unknown>;
export interface RowCounts {
  escrows: number;
  events: number;
  outbox: number;
  keys: number;
}

/** Rows the creation scenarios add to (nothing relays the outbox: no worker runs). */
export async function countRows(): Promise<RowCounts> {
  const db = await benchDb();
  const n = async (table: string) => Number(((await db(table).count<{ count: string }[]>('* as count'))[0] ?? { count: '0' }).count);
  return { escrows: await n('escrows'), events: await n('escrow_events'), outbox: await n('outbox'), keys: await n('idempotency_keys') };
}

const ONE_CREATION: RowCounts = { escrows: 1, events: 1, outbox: 2, keys: 1 };

/** A keyed `POST /api/escrows` by writer 0 naming writer 1 (the bench's creation); the answer and the rows it added. */
const postKeyed = (base: string, writers: readonly SeedUser[], key: string): Promise<JsonAnswer> =>
  call(`${base}/api/escrows`, {
    method: 'POST',
    headers: { ...bearer(writers[0]!), 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: createBody(writers, 0),
  });

async function keyedCreate(base: string, writers: readonly SeedUser[], key: string, what: string): Promise<{ answer: JsonAnswer; added: RowCounts }> {
  const before = await countRows();
  const answer = await postKeyed(base, writers, key);
  const after = await countRows();
  const added = { escrows: after.escrows - before.escrows, events: after.events - before.events, outbox: after.outbox - before.outbox, keys: after.keys - before.keys };
  const d = dataOf<Obj>(answer);
  expect(answer.status === 201 && d?.buyer_id === writers[0]!.id && d.seller_id === writers[1]!.id && d.status === 'pending_payment' && d.amount === '250000', what, answer);
  return { answer, added };
}

/** Every route answers what it should; returns the list totals seen. */
export async function checkRoutes(base: string, seed: EscrowSeed): Promise<number[]> {
  const { readers, writers, escrows, perReader } = seed;
  const n = readers.length;
  const sample = [...new Set([0, 1, Math.floor(n / 2), n - 1])];
  const listTotals: number[] = [];
  for (const i of sample) {
    const me = readers[i]!;
    const a = await call(`${base}${ME}`, { headers: bearer(me) });
    expect(a.status === 200 && dataOf<{ user?: Obj }>(a)?.user?.id === me.id, `GET ${ME} as reader ${i + 1}`, a);

    const mine = escrows.filter((e) => e.buyer === i);
    if (mine.length !== perReader) throw new Error(`reader ${i + 1} has ${mine.length} seeded escrows, expected ${perReader}`);
    const e = mine[mine.length - 1]!;
    const g = await call(`${base}/api/escrows/${e.id}`, { headers: bearer(me) });
    const gd = dataOf<Obj>(g);
    expect(g.status === 200 && gd?.id === e.id && gd.buyer_id === me.id, `GET /api/escrows/${e.id} as its buyer`, g);
    const seller = readers.find((r) => r.id === e.sellerId);
    if (seller) {
      const s = await call(`${base}/api/escrows/${e.id}`, { headers: bearer(seller) });
      expect(s.status === 200 && dataOf<Obj>(s)?.seller_id === seller.id, `GET /api/escrows/${e.id} as its seller`, s);
    }
    const stranger = readers.find((r) => r.id !== me.id && r.id !== e.sellerId)!;
    const x = await call(`${base}/api/escrows/${e.id}`, { headers: bearer(stranger) });
    expect(x.status === 403 && (x.body as { error?: { code?: string } }).error?.code === 'FORBIDDEN', `GET /api/escrows/${e.id} as a stranger is 403`, x);

    const l = await call(`${base}${LIST}`, { headers: bearer(me) });
    const rows = dataOf<Obj[]>(l);
    const total = (l.body as { pagination?: { total?: number } } | undefined)?.pagination?.total ?? -1;
    expect(
      l.status === 200 &&
        Array.isArray(rows) &&
        total >= perReader &&
        rows.length === Math.min(LIST_LIMIT, total) &&
        rows.every((r) => r.buyer_id === me.id || r.seller_id === me.id) &&
        rows.every((r, k) => k === 0 || String(rows[k - 1]!.created_at) >= String(r.created_at)),
      `GET ${LIST} as reader ${i + 1}: its own escrows, newest first, min(${LIST_LIMIT}, total) rows`,
      l,
    );
    listTotals.push(total);

    const paid = mine.find((m) => m.status === 'paid');
    if (paid) {
      const p = await call(`${base}/api/escrows/${paid.id}/preview`);
      const pd = dataOf<Obj>(p);
      expect(p.status === 200 && pd?.id === paid.id && !('buyer_id' in pd) && p.headers.get('access-control-allow-origin') === '*', `GET /api/escrows/${paid.id}/preview without credentials`, p);
    }
  }

  const { added } = await keyedCreate(base, writers, randomUUID(), 'keyed POST /api/escrows as a writer');
  if (!isDeepStrictEqual(added, ONE_CREATION)) throw new Error(`POST /api/escrows added ${JSON.stringify(added)} rows, expected ${JSON.stringify(ONE_CREATION)}`);
  console.log(
    `bench: escrows: ${sample.length} readers get their escrow (buyer and seller 200, a stranger 403), their list ` +
      `(totals ${listTotals.join(', ')}) and a paid escrow's public preview; a keyed POST made 1 escrow, 1 event, 2 outbox rows, 1 idempotency key`,
  );
  return listTotals;
}

/** An escrow answer without what differs between two creations (ids, timestamps, the URL naming the id). */
function withoutIds(data: unknown): unknown {
  if (typeof data !== 'object' || data === null) return data;
  const { id, created_at: _c, updated_at: _u, expires_at: _e, escrow_url: url, ...rest } = data as Obj;
  const ok = typeof url === 'string' && typeof id === 'string' && url.endsWith(`/pay/${id}`);
  return { ...rest, escrow_url: ok ? `${url.slice(0, -id.length)}<id>` : url };
}

/**
 * The rows a creation wrote, ids and timestamps replaced by how they relate: the escrow,
 * its events, the outbox rows naming it (in id order) and the idempotency key.
 */
async function creationRows(escrowId: string, key: string): Promise<unknown> {
  const escrow = await all<Obj>(
    `SELECT *, updated_at = created_at AS updated_at_is_created, expires_at - created_at AS payment_window FROM escrows WHERE id = ?`,
    [escrowId],
  );
  const events = await all<Obj>(
    `SELECT v.event, v.actor_id, v.actor_role, v.data, v.created_at = e.created_at AS at_creation
       FROM escrow_events v JOIN escrows e ON e.id = v.escrow_id WHERE v.escrow_id = ? ORDER BY v.id`,
    [escrowId],
  );
  const outbox = await all<Obj>(
    `SELECT o.queue, o.job, o.payload - 'escrow_id' AS payload, o.available_at = e.expires_at AS due_at_expiry,
            o.available_at = o.created_at AS due_at_once, o.relayed_at, o.completed_at, o.dead_at, o.dead_reason
       FROM outbox o JOIN escrows e ON e.id = (o.payload->>'escrow_id')::uuid WHERE o.payload->>'escrow_id' = ? ORDER BY o.id`,
    [escrowId],
  );
  const keys = await all<Obj & { response_body: string }>(
    `SELECT scope, endpoint, request_hash, state, response_status, response_body, locked_at = created_at AS locked_at_creation,
            expires_at - created_at AS ttl
       FROM idempotency_keys WHERE key = ?`,
    [key],
  );
  if (escrow.length !== 1 || events.length !== 1 || outbox.length !== 2 || keys.length !== 1) {
    throw new Error(`escrow ${escrowId} has ${escrow.length} rows, ${events.length} events, ${outbox.length} outbox rows, ${keys.length} keys; expected 1, 1, 2, 1`);
  }
  const strip = ({ id: _id, created_at: _c, updated_at: _u, expires_at: _e, ...rest }: Obj) => rest;
  return {
    escrow: escrow.map(strip),
    events,
    outbox,
    keys: keys.map((k) => {
      const body = JSON.parse(k.response_body) as { data?: Obj };
      return { ...k, response_body: { ...body, data: withoutIds(body.data) } };
    }),
  };
}

/** Throws naming both sides when the API's and the floor's versions of `what` differ. */
function same(what: string, api: unknown, floor: unknown): void {
  if (!isDeepStrictEqual(api, floor)) {
    throw new Error(`check failed: the floor differs from the API in ${what}:\n  API:   ${JSON.stringify(api)}\n  floor: ${JSON.stringify(floor)}`);
  }
}

/** The floor server answers and writes as the API does (see the file's header). */
export async function checkFloor(apiBase: string, floorBase: string, seed: EscrowSeed): Promise<void> {
  const { readers, writers, escrows, perReader } = seed;
  for (const i of [0, Math.floor(readers.length / 2)]) {
    const me = readers[i]!;
    const e = escrows[i * perReader + perReader - 1]!;
    const stranger = readers.find((r) => r.id !== me.id && r.id !== e.sellerId)!;
    for (const [path, who, label] of [
      [`/api/escrows/${e.id}`, me, `GET /api/escrows/:id as reader ${i + 1}`],
      [`/api/escrows/${e.id}`, stranger, `GET /api/escrows/:id as a stranger to it`],
      [LIST, me, `GET ${LIST} as reader ${i + 1}`],
    ] as const) {
      const [a, f] = [await call(`${apiBase}${path}`, { headers: bearer(who) }), await call(`${floorBase}${path}`, { headers: bearer(who) })];
      same(`${label} (status)`, a.status, f.status);
      same(`${label} (body)`, a.body, f.body);
    }
  }

  const [apiKey, floorKey] = [randomUUID(), randomUUID()];
  const api = await keyedCreate(apiBase, writers, apiKey, 'keyed POST /api/escrows to the API');
  const floor = await keyedCreate(floorBase, writers, floorKey, 'keyed POST /api/escrows to the floor');
  same('the rows a keyed POST adds (counts)', api.added, floor.added);
  if (!isDeepStrictEqual(floor.added, ONE_CREATION)) throw new Error(`the floor's POST added ${JSON.stringify(floor.added)} rows, expected ${JSON.stringify(ONE_CREATION)}`);
  same('the answer to a keyed POST (ids and timestamps aside)', withoutIds(dataOf(api.answer)), withoutIds(dataOf(floor.answer)));
  const idOf = (a: JsonAnswer) => String(dataOf<Obj>(a)!.id);
  same('the rows a keyed POST adds', await creationRows(idOf(api.answer), apiKey), await creationRows(idOf(floor.answer), floorKey));

  for (const [base, key, first, label] of [
    [apiBase, apiKey, api.answer, 'API'],
    [floorBase, floorKey, floor.answer, 'floor'],
  ] as const) {
    const before = await countRows();
    const again = await postKeyed(base, writers, key);
    const after = await countRows();
    expect(
      again.status === 201 && again.text === first.text && again.headers.get('idempotent-replay') === 'true' && isDeepStrictEqual(after, before),
      `the ${label}'s replay of a key answers the stored body with Idempotent-Replay and adds nothing`,
      again,
    );
  }
  console.log(
    'bench: the floor answers a GET (and a stranger\'s 403) and a list as the API does, and a keyed POST the same JSON and the ' +
      'same rows (1 escrow, 1 event, 2 outbox rows, 1 idempotency key; ids and timestamps aside); its replay answers the stored body',
  );
}

/**
 * A floor at least as lean as its route (issue 43; bench/lib/statements.ts): a counting copy
 * of the API and of the floor server each create two escrows (keyed, the first warms them),
 * and the second's statements and round trips are compared; the bench stops, reporting no
 * ratio, when the floor sends more.
 */
export async function checkLean(env: NodeJS.ProcessEnv, seed: EscrowSeed): Promise<LeanCheck> {
  const create: CountedStep[] = [
    {
      step: 'create',
      run: async (base) => {
        const a = await postKeyed(base, seed.writers, randomUUID());
        expect(a.status === 201, 'statement count: a keyed POST /api/escrows answers 201', a);
      },
    },
  ];
  return await countFlows({ tag: 'bench', env, api: [create, create], floor: [create, create] });
}
