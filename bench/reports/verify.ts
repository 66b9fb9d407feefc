/**
 * The reports bench's checks before any load: the seeded workspace holds what the seed
 * says (deals with 1-3 milestones, the feed's `seq` gap-free from 1 to
 * `workspaces.last_event_seq`), and `GET /v1/enterprise/reports/summary` answers the
 * owner and a viewer with the figures Postgres computes directly from the rows for the
 * default range (deals created, the sums of the funded and released events), so the bench
 * times right answers; `GET /v1/enterprise/overview` answers 200 when the route exists.
 */
import { all, one } from '../lib/db.js';
import { call, dataOf, expect } from '../lib/http.js';
import { fmtInt } from '../lib/format.js';
import { LIST, OVERVIEW, RECONCILIATION, SUMMARY } from './load.js';
import type { ReportSeed } from './seed.js';

export async function checkSeed(seed: ReportSeed): Promise<void> {
  const r = await one<{ bad_k: number; seq_n: string; seq_min: string; seq_max: string; last: string }>(
    `SELECT (SELECT count(*)::int FROM (SELECT d.id FROM deals d LEFT JOIN deal_milestones m ON m.deal_id = d.id
                                         WHERE d.workspace_id = ? GROUP BY d.id HAVING count(m.id) NOT BETWEEN 1 AND 3) x) AS bad_k,
            count(*) AS seq_n, min(seq) AS seq_min, max(seq) AS seq_max,
            (SELECT last_event_seq FROM workspaces WHERE id = ?) AS last
       FROM workspace_events WHERE workspace_id = ?`,
    [seed.workspaceId, seed.workspaceId, seed.workspaceId],
  );
  if (r.bad_k !== 0) throw new Error(`check failed: ${r.bad_k} seeded deals have not 1-3 milestones`);
  if (!(Number(r.seq_min) === 1 && Number(r.seq_max) === Number(r.seq_n) && String(r.last) === String(r.seq_max))) {
    throw new Error(`check failed: the feed's seq is not 1..${r.seq_n} with last_event_seq at its end (min ${r.seq_min}, max ${r.seq_max}, last_event_seq ${r.last})`);
  }
  console.log(`bench: reports: ${fmtInt(seed.deals)} deals with 1-3 milestones each; the feed's seq runs 1..${fmtInt(Number(r.seq_max))} = last_event_seq`);
}

interface SummaryData {
  range?: { from?: string; to?: string };
  deals?: { created?: number };
  money?: { funded?: number; released?: number };
}

/** Whether the overview route answered (false: 404, the route is not built). */
export async function checkRoutes(base: string, seed: ReportSeed): Promise<{ overview: boolean }> {
  const [owner, viewer] = [seed.callers[0]!, seed.callers[seed.callers.length - 1]!];
  for (const c of [owner, viewer]) {
    const a = await call(`${base}${SUMMARY}`, { headers: { Cookie: c.cookie } });
    const d = dataOf<SummaryData>(a);
    expect(a.status === 200 && typeof d?.range?.from === 'string' && typeof d.range.to === 'string', `GET ${SUMMARY} as ${c.role}`, a);
    // The range is UTC days, both included: [from 00:00, to + 1 day 00:00).
    const from = `${d!.range!.from!.slice(0, 10)}T00:00:00Z`;
    const to = new Date(Date.parse(`${d!.range!.to!.slice(0, 10)}T00:00:00Z`) + 86_400_000).toISOString();
    const sql = await one<{ created: number; funded: string | null; released: string | null }>(
      `SELECT (SELECT count(*)::int FROM deals WHERE workspace_id = ? AND created_at >= ? AND created_at < ?) AS created,
              (SELECT sum(amount) FROM workspace_events WHERE workspace_id = ? AND event = 'milestone.funded' AND created_at >= ? AND created_at < ?) AS funded,
              (SELECT sum(amount) FROM workspace_events WHERE workspace_id = ? AND event = 'milestone.released' AND created_at >= ? AND created_at < ?) AS released`,
      [seed.workspaceId, from, to, seed.workspaceId, from, to, seed.workspaceId, from, to],
    );
    const same = d!.deals?.created === sql.created && Number(d!.money?.funded) === Number(sql.funded ?? 0) && Number(d!.money?.released) === Number(sql.released ?? 0);
    if (!same) {
      throw new Error(
        `check failed: GET ${SUMMARY} as ${c.role} answered created ${String(d!.deals?.created)}, funded ${String(d!.money?.funded)}, released ${String(d!.money?.released)}; ` +
          `the rows say ${sql.created}, ${sql.funded ?? 0}, ${sql.released ?? 0}`,
      );
    }
    console.log(`bench: reports: ${SUMMARY} as ${c.role}: ${fmtInt(sql.created)} deals created, funded ${fmtInt(Number(sql.funded))}, released ${fmtInt(Number(sql.released))} (as the rows say)`);
  }
  const o = await call(`${base}${OVERVIEW}`, { headers: { Cookie: owner.cookie } });
  if (o.status === 404) {
    console.log(`bench: reports: ${OVERVIEW} answers 404: the route is not built in this build; not measured`);
    return { overview: false };
  }
  expect(o.status === 200 && dataOf(o) !== undefined, `GET ${OVERVIEW} as owner`, o);
  await checkReconciliation(base, owner.cookie, seed.workspaceId);
  return { overview: true };
}

interface ReconAnswer {
  balanced?: boolean;
  currencies?: { currency: string; ledger: Record<string, number>; derived: Record<string, number> }[];
  differences?: unknown[];
}

/**
 * The reconciliation agrees with the seeded ledger (seed.ts seedLedger: the books of every
 * funded milestone, balanced with the deals): balanced, no difference, every figure equal on
 * both sides, and the funded total what the rows say.
 */
async function checkReconciliation(base: string, cookie: string, workspaceId: string): Promise<void> {
  const a = await call(`${base}${RECONCILIATION}`, { headers: { Cookie: cookie } });
  const d = dataOf<ReconAnswer>(a);
  expect(a.status === 200 && Array.isArray(d?.differences) && Array.isArray(d?.currencies), `GET ${RECONCILIATION} as owner`, a);
  const idr = d!.currencies!.find((c) => c.currency === 'IDR');
  const sql = await one<{ funded: string | null }>(
    `SELECT sum(m.funding_amount) AS funded FROM deal_milestones m JOIN deals d ON d.id = m.deal_id
      WHERE m.workspace_id = ? AND m.funded_at IS NOT NULL AND NOT d.is_test`,
    [workspaceId],
  );
  const agree = idr !== undefined && Object.keys(idr.derived).every((k) => idr.ledger[k] === idr.derived[k]);
  if (d!.balanced !== true || d!.differences!.length !== 0 || !agree || idr.ledger.funded !== Number(sql.funded ?? 0)) {
    throw new Error(
      `check failed: GET ${RECONCILIATION} should be balanced with funded ${sql.funded ?? 0} on both sides; ` +
        `answered ${JSON.stringify({ balanced: d!.balanced, differences: d!.differences!.slice(0, 5), idr })}`,
    );
  }
  console.log(`bench: reports: ${RECONCILIATION}: balanced, no difference; funded ${fmtInt(idr.ledger.funded ?? 0)} on both sides (as the rows say)`);
}

interface ListAnswer {
  data?: { id?: string; status?: string }[];
  pagination?: { total?: number };
}

/**
 * The deal list answers what the rows say (issue 42): for a status and for no filter, the
 * page's ids and the total against Postgres's own reading of every deal of the workspace
 * (the status of `deal_status_now`, computed from the milestones, not the rollup the route
 * reads), newest first by (created_at, id). Answers one line per check for the report.
 */
export async function checkList(base: string, seed: ReportSeed): Promise<string[]> {
  const viewer = seed.callers[seed.callers.length - 1]!;
  const lines: string[] = [];
  for (const status of ['completed', 'disputed', undefined]) {
    const query = `${status ? `status=${status}&` : ''}limit=20&page=3`;
    const a = await call(`${base}${LIST}?${query}`, { headers: { Cookie: viewer.cookie } });
    const d = a.body as ListAnswer | undefined;
    expect(a.status === 200 && Array.isArray(d?.data), `GET ${LIST}?${query} as viewer`, a);
    const rows = await all<{ id: string; status: string; total: string }>(
      `SELECT id, status, count(*) OVER () AS total FROM (SELECT d.id, d.created_at, deal_status_now(d.id) AS status FROM deals d WHERE d.workspace_id = ?) x
        WHERE (?::text IS NULL OR status = ?::text) ORDER BY created_at DESC, id DESC`,
      [seed.workspaceId, status ?? null, status ?? null],
    );
    const want = rows.slice(40, 60).map((r) => r.id);
    const total = rows.length;
    const got = d!.data!.map((i) => i.id);
    if (JSON.stringify(got) !== JSON.stringify(want) || d!.pagination?.total !== total) {
      throw new Error(`check failed: GET ${LIST}?${query} answered ${got.length} deals (total ${String(d!.pagination?.total)}), not the rows' ${want.length} (total ${total}) in the same order`);
    }
    lines.push(`\`GET ${LIST}?${query}\` answered the 20 deals and the total (${fmtInt(total)}) that Postgres reads from every deal's milestones`);
    console.log(`bench: reports: ${lines[lines.length - 1]}`);
  }
  return lines;
}
