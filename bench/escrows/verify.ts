/**
 * Before any load, for a spread of readers: the escrow answers 200 to its buyer and its
 * seller and 403 FORBIDDEN to a stranger; the list holds only the caller's escrows, newest
 * first, a full page; a paid escrow's public preview answers 200 without buyer data and
 * with `Access-Control-Allow-Origin: *`; one POST answers 201 and adds exactly one escrow,
 * one event and two outbox rows.
 */
import { benchDb } from '../lib/db.js';
import { call, dataOf, expect } from '../lib/http.js';
import { bearer, createBody, LIST, LIST_LIMIT, ME } from './load.js';
import type { EscrowSeed } from './seed.js';

type Obj = Record<string, unknown>;
export interface RowCounts {
  escrows: number;
  events: number;
  outbox: number;
}

/** Rows the creation scenarios add to (nothing relays the outbox: no worker runs). */
export async function countRows(): Promise<RowCounts> {
  const db = await benchDb();
  const n = async (table: string) => Number(((await db(table).count<{ count: string }[]>('* as count'))[0] ?? { count: '0' }).count);
  return { escrows: await n('escrows'), events: await n('escrow_events'), outbox: await n('outbox') };
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

  const before = await countRows();
  const w = writers[0]!;
  const c = await call(`${base}/api/escrows`, { method: 'POST', headers: { ...bearer(w), 'Content-Type': 'application/json' }, body: createBody(writers, 0) });
  const cd = dataOf<Obj>(c);
  expect(c.status === 201 && cd?.buyer_id === w.id && cd.seller_id === writers[1]!.id && cd.status === 'pending_payment' && cd.amount === '250000', 'POST /api/escrows as a writer', c);
  const after = await countRows();
  const added = { escrows: after.escrows - before.escrows, events: after.events - before.events, outbox: after.outbox - before.outbox };
  if (added.escrows !== 1 || added.events !== 1 || added.outbox !== 2) {
    throw new Error(`POST /api/escrows added ${JSON.stringify(added)} rows, expected 1 escrow, 1 event, 2 outbox rows`);
  }
  console.log(
    `bench: escrows: ${sample.length} readers get their escrow (buyer and seller 200, a stranger 403), their list ` +
      `(totals ${listTotals.join(', ')}) and a paid escrow's public preview; a POST made 1 escrow, 1 event, 2 outbox rows`,
  );
  return listTotals;
}
