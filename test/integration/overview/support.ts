/**
 * What the overview tests share: the route, a deal world whose sessions can be renewed after
 * the clock moves (sessions end after two idle hours), and the moves that build fixtures
 * through the routes (fund, submit evidence, decide, dispute, release, settle).
 */
import { expect } from 'chai';
import { clock } from '../../../shared/clock.js';
import { db } from '../../../shared/db.js';
import { headersOf, sessionOf } from '../../factories/enterprise.js';
import { DEALS, type Client, type DealWorld, type Headers } from '../../factories/deals.js';
import { disbursementsOf, instructionVia, releasePath } from '../../factories/releases.js';

export const OVERVIEW = '/v1/enterprise/overview';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** Pins the clock at an instant (hours and days then line up predictably). */
export function pinAt(iso: string): Date {
  const at = new Date(iso);
  clock.set(at);
  return at;
}

/** New sessions for every member of the world (after the clock moved past the idle limit). */
export async function renewSessions(w: DealWorld): Promise<void> {
  const again = async (user: DealWorld['owner']) => headersOf(await sessionOf(user));
  w.h = { owner: await again(w.owner), operator: await again(w.users.operator), finance: await again(w.users.finance), viewer: await again(w.users.viewer) };
}

/** Moves the clock and renews the sessions. */
export async function later(w: DealWorld, ms: number): Promise<void> {
  clock.advance(ms);
  await renewSessions(w);
}

export interface OverviewBody {
  greeting_name: string;
  generated_at: string;
  stats: Record<'active_deal_value' | 'deals_active' | 'transactions_secured' | 'released_24h' | 'need_you', number> & {
    median_approval_hours: number | null;
    avg_settlement_minutes: number | null;
  };
  series_24h: { hour: string; funded: number; approved: number; released: number; disputed: number }[];
  trends_7d: { days: string[]; automation_pct: (number | null)[]; revisions: number[] };
  outcomes_90d: { released: number; open: number; disputed: number; cancelled: number; revision_rate_pct: number | null; automation_rate_pct: number | null };
  counterparty_performance: { id: string; name: string; deals: number; on_time_pct: number | null; dispute_pct: number | null; spark: number[] }[];
  needs_you: { milestone_id: string; [k: string]: unknown }[];
  alerts: { kind: string; severity: string; title: string; detail: string; deal_id: string | null; milestone_id: string | null }[];
  recent: { seq: number; event: string; [k: string]: unknown }[];
}

/** GET /overview, expected 200. */
export async function overviewOf(client: Client, h: Headers): Promise<OverviewBody> {
  const res = await client.get(OVERVIEW).set(h);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  expect(res.headers['cache-control']).to.equal('private, no-store');
  return res.body.data as OverviewBody;
}

const milestonePath = (dealId: string, mid: string, move: string) => `${DEALS}/${dealId}/milestones/${mid}/${move}`;

async function expectOk(p: PromiseLike<{ status: number; body: unknown }>): Promise<{ status: number; body: { data: unknown } }> {
  const res = (await p) as { status: number; body: { data: unknown } };
  expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 201]);
  return res;
}

export const submit = (client: Client, h: Headers, dealId: string, mid: string) =>
  expectOk(client.post(milestonePath(dealId, mid, 'submit-evidence')).set(h).send({ summary: 'Barang diterima lengkap' }));

export const decideVia = (client: Client, h: Headers, mid: string, decision: 'approve' | 'reject' | 'revision' = 'approve') =>
  expectOk(client.post(`/v1/enterprise/approvals/${mid}/decide`).set(h).send({ decision }));

export const disputeVia = (client: Client, h: Headers, dealId: string, mid: string) =>
  expectOk(client.post(milestonePath(dealId, mid, 'dispute')).set(h).send({ reason: 'Barang rusak' }));

/** Releases an approved milestone to one new verified instruction of the deal's counterparty; answers its payouts. */
export async function releaseVia(client: Client, w: DealWorld, staff: Headers, dealId: string, mid: string) {
  const instruction = await instructionVia(client, { w, staff }, `Rekening ${mid.slice(0, 6)}`);
  const m = await db('deal_milestones').where({ id: mid }).first<{ payout_amount: number; refunded_amount: number; returned_amount: number }>('payout_amount', 'refunded_amount', 'returned_amount');
  const amount = m.returned_amount > 0 ? m.returned_amount : m.payout_amount - m.refunded_amount;
  await expectOk(client.post(releasePath(dealId, mid)).set(w.h.finance).send({ splits: [{ payout_instruction_id: instruction, amount }] }));
  return disbursementsOf(mid);
}

export const settleVia = (client: Client, staff: Headers, disbursementId: string) => expectOk(client.post(`/v1/admin/enterprise/disbursements/${disbursementId}/settle`).set(staff).send({}));
export const failVia = (client: Client, staff: Headers, disbursementId: string) =>
  expectOk(client.post(`/v1/admin/enterprise/disbursements/${disbursementId}/fail`).set(staff).send({ reason: 'Rekening ditutup' }));
