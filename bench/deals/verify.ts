/**
 * The deals bench's checks. Before any load (`checkRoutes`), for a spread of owners:
 * `GET /v1/enterprise/me` answers 200 for the session's user; a fee preview answers 200
 * with the total of the milestones sent and one share per milestone; one deal creation
 * answers 201 with the three milestones and adds exactly one deal and three milestones.
 * After the load (`checkDeals`): every deal the bench ever created has its three milestones,
 * their amounts add up to the total sent and their fee shares to the deal's fee; the deals
 * added by the load are at least the 201s counted (and at most that plus the requests in
 * flight when a run ended); and every ledger invariant holds (`checkLedger`, what
 * `npm run ledger:check` runs: creating a deal posts nothing, so the ledger must be as it was).
 */
import { all, benchDb } from '../lib/db.js';
import { call, dataOf, expect } from '../lib/http.js';
import { fmtInt } from '../lib/format.js';
import { createBody, DEAL_TITLE, DEALS, ME, MILESTONES, PREVIEW, previewBody, sessionHeaders } from './load.js';
import type { DealSeed } from './seed.js';

type Obj = Record<string, unknown>;
export interface RowCounts {
  deals: number;
  milestones: number;
  events: number;
}

const TOTAL = MILESTONES.reduce((a, m) => a + m.amount, 0);

export async function countRows(): Promise<RowCounts> {
  const db = await benchDb();
  const n = async (table: string) => Number(((await db(table).count<{ count: string }[]>('* as count'))[0] ?? { count: '0' }).count);
  return { deals: await n('deals'), milestones: await n('deal_milestones'), events: await n('workspace_events') };
}

export async function checkRoutes(base: string, seed: DealSeed): Promise<void> {
  const { callers } = seed;
  const n = callers.length;
  const json = { 'Content-Type': 'application/json' };
  for (const i of [...new Set([0, 1, Math.floor(n / 2), n - 1])]) {
    const c = callers[i]!;
    const me = await call(`${base}${ME}`, { headers: { Cookie: c.cookie } });
    expect(me.status === 200 && dataOf(me) !== undefined && me.text.includes(c.workspaceId), `GET ${ME} as owner ${i + 1} (its workspace)`, me);
    const p = await call(`${base}${PREVIEW}`, { method: 'POST', headers: { ...sessionHeaders(c), ...json }, body: previewBody() });
    const pd = dataOf<{ total_amount?: unknown; milestones?: unknown[]; is_test?: unknown }>(p);
    expect(p.status === 200 && Number(pd?.total_amount) === TOTAL && pd?.milestones?.length === MILESTONES.length && pd.is_test === true, `POST ${PREVIEW} as owner ${i + 1}`, p);
  }
  const c = callers[0]!;
  const before = await countRows();
  const d = await call(`${base}${DEALS}`, { method: 'POST', headers: { ...sessionHeaders(c), ...json }, body: createBody(c) });
  const dd = dataOf<{ deal?: Obj; milestones?: Obj[] }>(d);
  expect(
    d.status === 201 && dd?.deal?.title === DEAL_TITLE && dd.milestones?.length === MILESTONES.length && dd.milestones.every((m, k) => Number(m.amount) === MILESTONES[k]!.amount),
    `POST ${DEALS} as owner 1`,
    d,
  );
  const after = await countRows();
  if (after.deals - before.deals !== 1 || after.milestones - before.milestones !== MILESTONES.length) {
    throw new Error(`POST ${DEALS} added ${after.deals - before.deals} deals and ${after.milestones - before.milestones} milestones, expected 1 and ${MILESTONES.length}`);
  }
  console.log(`bench: deals: owners see ${ME}, preview a fee of ${TOTAL} over ${MILESTONES.length} milestones; a POST made 1 deal with ${MILESTONES.length} milestones (+${after.events - before.events} events)`);
}

export interface DealCheck {
  benchDeals: number;
  ledgerViolations: number;
}

/** After the load: the bench's deals and milestones agree, the count matches the 201s, the ledger holds. */
export async function checkDeals(seed: DealSeed, added: number, created201: number, runs: number, connections: number): Promise<DealCheck> {
  const workspaces = seed.callers.map((c) => c.workspaceId);
  const bad = await all<{ id: string; n: number; amount: string; buyer_fee: string; seller_fee: string; d_buyer: string; d_seller: string }>(
    `SELECT d.id, COUNT(m.id)::int AS n, COALESCE(SUM(m.amount), 0)::text AS amount,
            COALESCE(SUM(m.buyer_fee), 0)::text AS buyer_fee, COALESCE(SUM(m.seller_fee), 0)::text AS seller_fee,
            d.buyer_fee::text AS d_buyer, d.seller_fee::text AS d_seller
       FROM deals d LEFT JOIN deal_milestones m ON m.deal_id = d.id
      WHERE d.workspace_id = ANY(?::uuid[]) AND d.title = ?
      GROUP BY d.id
     HAVING COUNT(m.id) <> ? OR COALESCE(SUM(m.amount), 0) <> ? OR COALESCE(SUM(m.buyer_fee), 0) <> d.buyer_fee OR COALESCE(SUM(m.seller_fee), 0) <> d.seller_fee`,
    [workspaces, DEAL_TITLE, MILESTONES.length, TOTAL],
  );
  if (bad.length > 0) throw new Error(`check failed: ${bad.length} bench deals disagree with their milestones, e.g. ${JSON.stringify(bad[0])}`);
  const [{ count } = { count: 0 }] = await all<{ count: number }>(`SELECT COUNT(*)::int AS count FROM deals WHERE workspace_id = ANY(?::uuid[]) AND title = ?`, [workspaces, DEAL_TITLE]);
  if (added < created201 || added > created201 + runs * connections) {
    throw new Error(`check failed: the load added ${fmtInt(added)} deals for ${fmtInt(created201)} answers 201 (at most ${runs * connections} more in flight expected)`);
  }
  const { checkLedger } = await import('../../shared/ledger/index.js');
  const violations = await checkLedger(await benchDb());
  if (violations.length > 0) throw new Error(`check failed: ledger: ${violations.length} violations, e.g. [${violations[0]!.rule}] ${violations[0]!.detail}`);
  console.log(`bench: deals: ${fmtInt(count)} bench deals each with their ${MILESTONES.length} milestones, amounts and fee shares; ${fmtInt(added)} added for ${fmtInt(created201)} answers 201; ledger: all invariants hold`);
  return { benchDeals: count, ledgerViolations: 0 };
}
